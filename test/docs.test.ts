// The contract as integrators reach for it: "GET /docs renders the served spec ... with its assets
// served by the service itself (no CDN: a deployment may have no internet)", "GET /openapi/v1.json
// beside the YAML", both linked from the 404 body and the README.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { repoRoot } from '../handlers/app.js';
import { listen, testApp } from './helpers/app.js';
import { chromiumPresent, launchChromium } from './helpers/chromium.js';
import { SPEC_PATH } from './helpers/spec.js';

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
  // The page reads the spec from its own origin, then renders it.
  const initializer = await app.server.inject({ url: '/docs/static/swagger-initializer.js' });
  t.equal(initializer.statusCode, 200);
  t.match(initializer.body, /resolveUrl\('\.\/json'\)/, 'the page asks its own origin for the spec');
  t.match(initializer.body, /"validatorUrl":null/, 'no badge from the public validator');
  const spec = await app.server.inject({ url: '/docs/json' });
  t.strictSame(spec.json(), parse(readFileSync(SPEC_PATH, 'utf8')), 'what the page renders is the served spec');
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

t.test('"curl /docs renders the reference with no request leaving the machine": in Chromium, the page renders the operations and asks only its own origin', async (t) => {
  if (!chromiumPresent('the docs page browser test')) return;
  const app = await testApp();
  t.teardown(app.close);
  const base = await listen(app.server);
  const browser = await launchChromium();
  t.teardown(() => browser.close());
  const page = await browser.newPage();
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
