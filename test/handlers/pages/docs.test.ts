// The contract as integrators reach for it: "GET /docs renders the served spec ... with its assets
// served by the service itself (no CDN: a deployment may have no internet)", "GET /openapi/v1.json
// beside the YAML", both linked from the 404 body and the README; the page selects the swap API or
// the key portal's API, under bestex's own name, and its "Try it out" works unedited.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Browser } from 'playwright-core';
import { parse } from 'yaml';
import { repoRoot } from '../../../handlers/app.js';
import { DOCS_SPECS, DOCS_TITLE } from '../../../handlers/pages/docs.js';
import { listen, testApp } from '../../helpers/app.js';
import { chromiumSkip, launchChromium } from '../../helpers/chromium.js';
import { loadSpec, PORTAL_SPEC_PATH, SPEC_PATH, V2_SPEC_PATH } from '../../helpers/spec.js';

/** Every URL the page names in a script, stylesheet, link or image. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/<(?:script|link|img|style|iframe|source)\b[^>]*?\s(?:src|href|srcset)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
}

t.test('"GET /openapi/v1.json beside the YAML": the same document, parsed from the YAML served byte for byte', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const yaml = await app.server.inject({ url: '/openapi/v1.yaml' });
  t.equal(yaml.statusCode, 200);
  t.equal(yaml.body, readFileSync(SPEC_PATH, 'utf8'), 'the YAML is the file, byte for byte');
  const json = await app.server.inject({ url: '/openapi/v1.json' });
  t.equal(json.statusCode, 200);
  t.match(json.headers['content-type'], /^application\/json/);
  t.equal(json.headers['access-control-allow-origin'], '*', 'readable by any page, as the YAML is');
  t.strictSame(json.json(), parse(yaml.body), 'the JSON equals the YAML parsed');
});

t.test('"GET /docs renders the served spec": HTML whose every script, style, link and image is local and served 200', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const page = await app.server.inject({ url: '/docs' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  const urls = assetUrls(page.body);
  t.ok(urls.some((u) => u.endsWith('.js')) && urls.some((u) => u.endsWith('.css')), `the page loads scripts and styles: ${urls.join(', ')}`);
  t.notMatch(page.body, /https?:\/\//, 'the page names no absolute URL: nothing from another origin');
  for (const url of urls) {
    t.notMatch(url, /^([a-z]+:)?\/\//i, `${url} is on the service's own origin`);
    const asset = await app.server.inject({ url: new URL(url, 'http://service/docs').pathname });
    t.equal(asset.statusCode, 200, `${url} is served`);
  }
  // The page reads the specs from its own origin, then renders the one selected.
  const initializer = await app.server.inject({ url: '/docs/static/swagger-initializer.js' });
  t.equal(initializer.statusCode, 200);
  t.match(initializer.body, /"validatorUrl":null/, 'no badge from the public validator');
  for (const [{ url }, document] of [[DOCS_SPECS.v1, parse(readFileSync(SPEC_PATH, 'utf8'))], [DOCS_SPECS.v2, loadSpec(V2_SPEC_PATH).document], [DOCS_SPECS.portal, parse(readFileSync(PORTAL_SPEC_PATH, 'utf8'))]] as const) {
    t.ok(initializer.body.includes(JSON.stringify(url)), `the page asks its own origin for ${url}`);
    const spec = await app.server.inject({ url });
    t.equal(spec.statusCode, 200, `${url} is served`);
    t.strictSame(spec.json(), document, `what the page renders from ${url} is the served spec`);
  }
});

t.test('"/docs browses both specs" under bestex\'s own title, logo and icon, none of @fastify/swagger-ui\'s', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const page = (await app.server.inject({ url: '/docs' })).body;
  t.match(page, `<title>${DOCS_TITLE}</title>`, 'the tab reads bestex\'s title');
  const icons = [...page.matchAll(/<link rel="icon"[^>]*href="([^"]+)"/g)].map((m) => m[1]!);
  t.strictSame(icons.map((u) => path.posix.basename(u)), ['bestex.svg'], 'one icon, bestex\'s');
  const icon = await app.server.inject({ url: new URL(icons[0]!, 'http://service/docs').pathname });
  t.equal(icon.statusCode, 200);
  t.match(icon.headers['content-type'], /^image\/svg\+xml/);
  const initializer = (await app.server.inject({ url: '/docs/static/swagger-initializer.js' })).body;
  const packageLogo = readFileSync(path.join(repoRoot(), 'node_modules', '@fastify', 'swagger-ui', 'static', 'logo.svg')).toString('base64');
  t.notOk(initializer.includes(packageLogo), 'the top bar does not show the package\'s fastify logo');
  const logo = /img\.src = 'data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)'/.exec(initializer)?.[1];
  t.match(Buffer.from(logo ?? '', 'base64').toString('utf8'), />bestex<\/text>/, 'it shows bestex\'s');
  const urls = (initializer: string) => [...initializer.matchAll(/"url":"([^"]+)","name":"([^"]+)"/g)].map((m) => ({ url: m[1], name: m[2] }));
  t.strictSame(urls(initializer), [DOCS_SPECS.v1, DOCS_SPECS.v2, DOCS_SPECS.portal], 'the top bar selects the swap API v1, v2 beside it, then the key portal\'s');

  const portalOff = await testApp({ env: { PORTAL_ENABLED: 'false' } });
  t.teardown(portalOff.close);
  t.strictSame(urls((await portalOff.server.inject({ url: '/docs/static/swagger-initializer.js' })).body), [DOCS_SPECS.v1, DOCS_SPECS.v2], 'without the portal, the swap API\'s two versions alone');
  t.equal((await portalOff.server.inject({ url: DOCS_SPECS.portal.url })).statusCode, 404, 'and no portal spec is served');
});

t.test('the docs page is sent with security headers that keep it to its own origin', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const url of ['/docs', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js', '/docs/json']) {
    const res = await app.server.inject({ url });
    t.equal(res.statusCode, 200, url);
    const csp = String(res.headers['content-security-policy']);
    t.match(csp, /default-src 'none'/, `${url}: CSP`);
    t.match(csp, /script-src 'self'(;|$)/, `${url}: scripts from its own origin only, none inline`);
    t.match(csp, /connect-src 'self'/, `${url}: requests to its own origin only`);
    t.match(csp, /frame-ancestors 'none'/, `${url}: not framed`);
    t.equal(res.headers['x-content-type-options'], 'nosniff', url);
    t.equal(res.headers['referrer-policy'], 'no-referrer', url);
    t.equal(res.headers['x-service-api-version'], '1', `${url}: the version headers`);
  }
  const missing = await app.server.inject({ url: '/docs/static/nope.js' });
  t.equal(missing.statusCode, 404);
  t.match(missing.json(), { code: 'not_found' }, 'a missing asset is the contract\'s 404');
});

t.test('"both linked from the README and from the 404 body"', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject({ url: '/no/such/path' });
  t.equal(res.statusCode, 404);
  const body = res.json<{ action: string }>();
  t.match(body.action, /\/docs\b/);
  t.match(body.action, /\/openapi\/v1\.json/);
  const readme = readFileSync(path.join(repoRoot(), 'README.md'), 'utf8');
  t.match(readme, /\/docs\b/);
  t.match(readme, /\/openapi\/v1\.json/);
});

// One Chromium for the file, launched by the first browser test that runs (a skipped run launches
// none) and closed when the file's tests end; each test browses in a context of its own.
let launched: Promise<Browser> | undefined;
t.teardown(async () => {
  await (await launched)?.close();
});

/** The service on a port of its own and a Chromium page to open its /docs with, both closed after `t`. */
async function docsInBrowser(t: { teardown(fn: () => unknown): void }) {
  const app = await testApp();
  t.teardown(app.close);
  const base = await listen(app.server);
  const context = await (await (launched ??= launchChromium())).newContext();
  t.teardown(() => context.close());
  return { base, page: await context.newPage() };
}

t.test('"curl /docs renders the reference with no request leaving the machine": in Chromium, the page renders the operations and asks only its own origin', chromiumSkip('the docs page browser test'), async (t) => {
  const { base, page } = await docsInBrowser(t);
  const requested: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => void requested.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (err) => void problems.push(err.message));
  await page.goto(`${base}/docs`);
  await page.locator('.opblock-summary-path', { hasText: '/api/quote' }).first().waitFor({ timeout: 30_000 });
  t.ok(await page.locator('.opblock-summary-path', { hasText: '/api/execute/plan' }).count(), 'every operation is rendered');
  const origin = new URL(base).origin;
  const elsewhere = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'));
  t.strictSame(elsewhere, [], `every request went to ${origin} (${requested.length} requests)`);
  t.strictSame(problems, [], 'no console error: nothing refused by the page\'s CSP');
});

t.test('"docs that work when tried": in Chromium, "Try it out" then Execute, unedited, plans on the sandbox, and the top bar switches to the key portal\'s API', chromiumSkip('the docs page browser test'), async (t) => {
  const { base, page } = await docsInBrowser(t);
  await page.goto(`${base}/docs`);
  const operation = (method: string, p: string) =>
    page.locator(`.opblock-${method}`, { has: page.locator('.opblock-summary-path', { hasText: new RegExp(`^${p.replaceAll('/', '\\/')}$`) }) }).first();
  const plan = operation('post', '/api/app/plan');
  await plan.locator('.opblock-summary').click();
  await plan.locator('button.try-out__btn').click();
  const answered = page.waitForResponse((response) => response.url() === `${base}/api/app/plan`);
  await plan.locator('button.execute').click();
  const response = await answered;
  t.equal(response.status(), 200, `POST /api/app/plan as documented: ${await response.text()}`);
  t.match(await response.json(), { quoteRef: { venueId: 'tradecraft', pair: { give: 'Amulet', want: 'USDCx' }, amount: '100' }, mode: 'managed-deposit' });

  const select = page.locator('.topbar select');
  t.strictSame(await select.locator('option').allTextContents(), [DOCS_SPECS.v1.name, DOCS_SPECS.v2.name, DOCS_SPECS.portal.name], 'the top bar names the three specs');
  await select.selectOption({ label: DOCS_SPECS.portal.name });
  await operation('post', '/portal/api/keys').waitFor({ timeout: 30_000 });
  t.equal(await operation('post', '/api/app/plan').count(), 0, 'the swap API\'s operations make way for the portal\'s');
});
