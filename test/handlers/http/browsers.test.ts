// Browsers: CORS (a preflight answered, every answer readable by a page, the headers a client needs
// exposed) and partner keys kept to browser origins, "so a key copied out of a page is useless
// elsewhere", while server-to-server keys keep working as before.
import path from 'node:path';
import t from 'tap';
import { FileKeyStore } from '../../../core/keys/file-store.js';
import { hashKey } from '../../../core/keys/api-key.js';
import { newKey, parseKeyRecord, parseOrigin } from '../../../core/keys/partner-keys.js';
import { listen, testApp } from '../../helpers/app.js';
import { issueKey, runKeysCli } from '../../helpers/keys.js';
import { rawExchange } from '../../helpers/raw-http.js';
import { tempDir } from '../../helpers/temp.js';

const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';
const WALLET = 'https://wallet.example';

t.test('"preflights answered": 204 with the methods and headers a page may send, never counted in a window', async (t) => {
  const app = await testApp({ env: { RATE_LIMIT_KEYLESS_PER_MINUTE: '1' } });
  t.teardown(app.close);
  for (const url of [QUOTE, '/api/execute/plan', '/api/app/plan']) {
    const res = await app.server.inject({ method: 'OPTIONS', url, headers: { origin: WALLET, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key' } });
    t.equal(res.statusCode, 204, url);
    t.match(res.headers, { 'access-control-allow-origin': '*', 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'content-type, x-api-key, authorization', 'access-control-max-age': '600' });
  }
  t.equal((await app.server.inject({ url: QUOTE, headers: { origin: WALLET } })).statusCode, 200, 'the one-request window is still whole');
});

t.test('"keyless reads open to any origin"; every answer, errors included, readable by a page, with the headers a browser client needs exposed', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const [url, status] of [[QUOTE, 200], ['/api/quote?from=CC&to=ETH&amount=1', 400], ['/api/status', 200]] as const) {
    const res = await app.server.inject({ url, headers: { origin: 'https://anyone.example' } });
    t.equal(res.statusCode, status, url);
    t.equal(res.headers['access-control-allow-origin'], '*');
    t.equal(res.headers['access-control-expose-headers'], 'retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-service-api-version, x-service-build, x-request-id');
  }
});

t.test('"every answer carries Access-Control-Allow-Origin: *", whatever form the request target takes: an absolute-form one (GET http://host/api/..., as a proxy sends) too', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const port = Number(new URL(await listen(app.server)).port);
  for (const [url, status] of [[QUOTE, 200], ['/api/status', 200], ['/api/nothing-here', 404]] as const) {
    const res = await rawExchange(port, `GET http://127.0.0.1:${port}${url} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    t.equal(res.status, status, url);
    t.equal(res.headers['access-control-allow-origin'], '*', url);
  }
});

t.test('an OPTIONS that is no preflight stays in the contract: 405 method_not_allowed, never a plain-text answer', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject({ method: 'OPTIONS', url: QUOTE });
  t.equal(res.statusCode, 405);
  t.match(res.json(), { code: 'method_not_allowed', error: String, action: String });
});

t.test('"keyed requests only from origins allowed for that key": another origin, or none, is invalid_key; a server-to-server key is taken from anywhere', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const browser = newKey('wallet-co web', 'partner-default', new Date(), [WALLET, 'http://localhost:3000']);
  await app.core.keyStore.add(browser.record);
  const server = await issueKey(app.core.keyStore, { name: 'wallet-co backend' });
  const keyed = (key: string, origin?: string) => app.server.inject({ url: QUOTE, headers: { 'x-api-key': key, ...(origin ? { origin } : {}) } });
  for (const origin of [WALLET, 'http://localhost:3000']) {
    const ok = await keyed(browser.key, origin);
    t.equal(ok.statusCode, 200, origin);
    t.ok(ok.json<{ venues: Array<{ clientFees?: unknown }> }>().venues.some((v) => v.clientFees), 'a keyed answer');
  }
  for (const origin of ['https://evil.example', 'https://wallet.example:8443', undefined]) {
    const refused = await keyed(browser.key, origin);
    t.equal(refused.statusCode, 401, String(origin));
    t.match(refused.json(), { code: 'invalid_key', error: 'the API key is not valid from this origin' });
    t.equal(refused.headers['access-control-allow-origin'], '*', 'the page reads why');
  }
  for (const origin of [WALLET, 'https://evil.example', undefined]) t.equal((await keyed(server.key, origin)).statusCode, 200, `server-to-server key, origin ${String(origin)}`);
});

t.test('key records: origins are kept by the store; records written before origins existed still read, as server-to-server keys', async (t) => {
  const dir = tempDir(t, 'bestex-origins-');
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  const { key, record } = newKey('web', 'partner-default', new Date(), [WALLET]);
  await store.add(record);
  t.strictSame((await store.findByHash(hashKey(key)))?.origins, [WALLET]);
  const { record: old } = newKey('old', 'partner-default');
  t.notOk('origins' in old, 'a server-to-server record has no origins field, as before');
  t.strictSame(parseKeyRecord(old), old);
  t.equal(parseKeyRecord({ ...old, origins: ['https://wallet.example/path'] }), null, 'an origin with a path is no origin');
  t.equal(parseKeyRecord({ ...old, origins: [] }), null, 'an empty list would refuse everything: not a record');
  t.equal(parseOrigin('https://wallet.example/'), WALLET);
  for (const bad of ['wallet.example', 'ftp://wallet.example', 'https://u:p@wallet.example', 'https://wallet.example/app', 'https://wallet.example?x=1', 'https://WALLET.example']) t.equal(parseOrigin(bad), null, bad);
});

t.test('CLI: "keys create --origin https://wallet.example ..." issues a key for web pages; a malformed origin is a usage error', async (t) => {
  const dir = tempDir(t, 'bestex-origins-cli-');
  const created = await runKeysCli(['create', '--name', 'Web', '--origin', WALLET, '--origin', 'http://localhost:3000'], { DATA_DIR: dir });
  t.equal(created.code, 0, created.stderr);
  t.match(created.stderr, /only from https:\/\/wallet\.example, http:\/\/localhost:3000/);
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  t.strictSame((await store.findByHash(hashKey(created.stdout.trim())))?.origins, [WALLET, 'http://localhost:3000']);
  const listed = await runKeysCli(['list'], { DATA_DIR: dir });
  t.match(listed.stdout, /https:\/\/wallet\.example,http:\/\/localhost:3000/);
  const bad = await runKeysCli(['create', '--name', 'Bad', '--origin', 'https://wallet.example/app'], { DATA_DIR: dir });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--origin "https:\/\/wallet\.example\/app" is not an origin/);
});

t.test('GET /demo is for the sandbox only: "never with VENUES=live"; its key is for the service\'s own origin, a forged Host gets none, and no other site may read the page', async (t) => {
  const sandbox = await testApp();
  t.teardown(sandbox.close);
  const base = await listen(sandbox.server);
  const own = new URL(base).host;
  const demo = await sandbox.server.inject({ url: '/demo', headers: { host: own, origin: 'https://evil.example' } });
  t.equal(demo.statusCode, 200);
  t.match(demo.headers['content-type'], /text\/html/);
  t.match(demo.body, /<bestex-swap id="swap"/);
  t.equal(demo.headers['access-control-allow-origin'], undefined, 'the page holds the sandbox\'s token: no CORS for other sites');
  t.equal(demo.headers['content-security-policy'], "frame-ancestors 'none'", 'and no other site may frame it');
  t.equal(demo.headers['x-frame-options'], 'DENY');
  const forged = await sandbox.server.inject({ url: '/demo', headers: { host: 'evil.example' } });
  t.equal(forged.statusCode, 404, 'a forged Host gets no page and no key');
  t.strictSame((await sandbox.core.keyStore.list()).filter((k) => k.name === 'demo (sandbox)').map((k) => k.origins), [[`http://${own}`]]);
  const live = await testApp({ env: { VENUES: 'live', LEDGER_URL: 'http://127.0.0.1:1', TRADECRAFT_POOL_PARTIES: `CC/USDCx=tc-pool::1220${'e'.repeat(64)}`, CANTEX_ENABLED: 'false', ONESWAP_ENABLED: 'false', NIGHTLY_ENABLED: 'false', TEMPLE_ENABLED: 'false' }, probed: false });
  t.teardown(live.close);
  const refused = await live.server.inject({ url: '/demo' });
  t.equal(refused.statusCode, 404);
  t.match(refused.json(), { code: 'not_found' });
  t.strictSame(await live.core.keyStore.list(), []);
});

t.test('a same-origin GET carries no Origin: the browser\'s Sec-Fetch-Site: same-origin stands for the request\'s own origin', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const base = await listen(app.server);
  const { key, record } = newKey('own-page', 'partner-default', new Date(), [base]);
  await app.core.keyStore.add(record);
  const host = new URL(base).host;
  t.equal((await app.server.inject({ url: QUOTE, headers: { host, 'x-api-key': key, 'sec-fetch-site': 'same-origin' } })).statusCode, 200);
  t.equal((await app.server.inject({ url: QUOTE, headers: { host, 'x-api-key': key, 'sec-fetch-site': 'cross-site' } })).statusCode, 401, 'another site\'s request without Origin is refused');
});
