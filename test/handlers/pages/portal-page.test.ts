// The key portal's page as the service serves it (handlers/pages/portal-page.ts): "the portal's answers
// carry strict security headers (CSP allowing only its own assets, no framing, no-store)", only
// when PORTAL_ENABLED, linked from /docs. The page's own code (portal/src/) is
// test/portal/page.test.ts; the page in a browser, test/portal/browser.test.ts.
import t from 'tap';
import { PORTAL_CSP } from '../../../handlers/pages/portal-page.js';
import { testApp } from '../../helpers/app.js';

const PAGE_URLS = ['/portal', '/portal/', '/portal/assets/portal.js', '/portal/assets/portal.css'];

t.test('"CSP allowing only its own assets, no framing, no-store": the page and its assets carry the strict headers and no Access-Control-Allow-Origin, even asked from another origin', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  t.equal(PORTAL_CSP, "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
  const types = ['text/html', 'text/html', 'text/javascript', 'text/css'];
  for (const [i, url] of PAGE_URLS.entries()) {
    const res = await app.server.inject({ url, headers: { origin: 'https://elsewhere.example' } });
    t.equal(res.statusCode, 200, url);
    t.match(res.headers['content-type'], new RegExp(`^${types[i]}; charset=utf-8$`), `${url}: its media type`);
    t.equal(res.headers['content-security-policy'], PORTAL_CSP, `${url}: CSP`);
    t.equal(res.headers['x-frame-options'], 'DENY', `${url}: no framing`);
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url}: nosniff`);
    t.equal(res.headers['referrer-policy'], 'no-referrer', `${url}: no referrer`);
    t.equal(res.headers['cache-control'], 'no-store', `${url}: never cached`);
    t.equal(res.headers['access-control-allow-origin'], undefined, `${url}: no CORS header: another origin cannot read it`);
    t.equal(res.headers['x-service-api-version'], '1', `${url}: the service's fixed headers`);
  }
});

t.test('the page names only its own two assets, by absolute path, and holds no inline script or style', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const html = (await app.server.inject({ url: '/portal' })).body;
  const urls = [...html.matchAll(/<(?:script|link|img|iframe|source)\b[^>]*?\s(?:src|href)\s*=\s*"([^"]+)"/gi)].map((m) => m[1]);
  t.strictSame(urls.sort(), ['/portal/assets/portal.css', '/portal/assets/portal.js']);
  t.notMatch(html, /<script\b[^>]*>[^<\s]/i, 'no inline script (the CSP would refuse it)');
  t.notMatch(html, /<style\b|\sstyle=/i, 'no inline style (the CSP would refuse it)');
  t.notMatch(html, /\s(?:src|href|action)="(?:[a-z]+:)?\/\//i, 'no absolute URL: nothing from another origin');
  t.match(html, /<html lang="en">/, 'its language is declared');
});

t.test('"Disabled, every /portal path is 404 not_found", and /docs then links no portal', async (t) => {
  const app = await testApp({ env: { PORTAL_ENABLED: 'false' } });
  t.teardown(app.close);
  for (const url of PAGE_URLS) {
    const res = await app.server.inject({ url });
    t.equal(res.statusCode, 404, url);
    t.equal(res.json().code, 'not_found', url);
  }
  t.notMatch((await app.server.inject({ url: '/docs' })).body, /portal-link/);
});

t.test('"linked from /docs": the reference page loads a local script that puts a link to /portal above it', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const html = (await app.server.inject({ url: '/docs' })).body;
  const script = /<script src="([^"]*portal-link\.js)"/.exec(html)?.[1];
  t.ok(script, 'the page loads the link script');
  const res = await app.server.inject({ url: new URL(script!, 'http://service/docs/static/').pathname });
  t.equal(res.statusCode, 200);
  t.match(res.body, /link\.href = '\/portal'/);
  t.match(String(res.headers['content-security-policy']), /script-src 'self'/, 'served under the docs page\'s own CSP');
});
