// The key portal's operations over HTTP (openapi/portal.yaml): a key is created and shown
// once, signed in with, rotated, revoked and bound to origins, each taking effect on the swap API's
// next keyed request; creation is limited per IP and per day; the portal is first-party only and
// never logs a key; and on two instances sharing Redis a rotation or revocation holds on both.
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { isWellFormedKey } from '../../../../core/keys/api-key.js';
import { FileKeyStore } from '../../../../core/keys/file-store.js';
import { keysFile } from '../../../../core/keys/open-store.js';
import { KeyStoreUnavailable, type KeyStore } from '../../../../core/keys/partner-keys.js';
import { SharedStateKeyStore } from '../../../../core/keys/shared-store.js';
import { InProcessSharedState } from '../../../../core/state/in-process.js';
import { RateWindows } from '../../../../core/state/rate-windows.js';
import { CreationLimits } from '../../../../core/portal/creation-limits.js';
import { DomainError } from '../../../../core/errors.js';
import type { UsageDay } from '../../../../core/usage/usage.js';
import { listen, testApp, type TestApp, type TestAppOptions } from '../../../helpers/app.js';
import { issueKey, runKeysCli } from '../../../helpers/keys.js';
import { rawExchange } from '../../../helpers/raw-http.js';
import { redisSkip, startRedis } from '../../../helpers/redis.js';
import { tempDir } from '../../../helpers/temp.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';

async function portalApp(t: Test, options: TestAppOptions = {}): Promise<TestApp> {
  const app = await testApp({ probed: false, ...options });
  t.teardown(app.close);
  return app;
}

const create = (app: TestApp, payload: unknown, remoteAddress?: string) =>
  app.server.inject({ method: 'POST', url: '/portal/api/keys', payload: payload as object, ...(remoteAddress ? { remoteAddress } : {}) });

const signedIn = (app: TestApp, key: string, method: 'GET' | 'POST', url: string, payload?: object, headers: Record<string, string> = {}) =>
  app.server.inject({ method, url, headers: { 'x-api-key': key, ...headers }, ...(payload ? { payload } : {}) });

const quote = (app: TestApp, key: string, origin?: string) => app.server.inject({ url: QUOTE, headers: { 'x-api-key': key, ...(origin ? { origin } : {}) } });

/** Creates a key through the portal; fails the test unless it is a 201. */
async function created(t: Test, app: TestApp, payload: object = { name: 'Example Wallet' }): Promise<{ id: string; key: string; body: Record<string, unknown> }> {
  const res = await create(app, payload);
  t.equal(res.statusCode, 201, 'created', { body: res.body });
  const body = res.json() as Record<string, unknown>;
  return { id: body.id as string, key: body.key as string, body };
}

const keysIn = (text: string): string[] => text.match(/bx_[0-9A-Za-z]{38}/g) ?? [];

t.test('creation: "the key is shown once": the 201 carries it with its curl, no later answer carries it, and the log never has it', async (t) => {
  const app = await portalApp(t);
  const { id, key, body } = await created(t, app, { name: 'Example Wallet', origins: ['https://wallet.example'] });
  t.ok(isWellFormedKey(key), 'a well-formed key');
  t.match(body, { id: /^key_[0-9a-f]{12}$/, name: 'Example Wallet', schemaId: 'partner-default', origins: ['https://wallet.example'] });
  t.equal(body.curl, `curl -H 'x-api-key: ${key}' 'http://localhost:80/api/quote?from=CC&to=USDCx&amount=100'`, 'the curl is a keyed quote with the key, at the address the page used');

  const later = [
    await signedIn(app, key, 'GET', '/portal/api/key'),
    await signedIn(app, key, 'POST', '/portal/api/key/origins', { origins: ['https://wallet.example', 'http://localhost:5173'] }),
    await signedIn(app, key, 'GET', '/portal/api/key'),
  ];
  for (const res of later) {
    t.equal(res.statusCode, 200, res.body);
    t.notOk(res.body.includes(key), 'no later answer carries the key');
    t.strictSame(keysIn(res.body), [], 'nor any key');
    t.strictSame(Object.keys(res.headers).filter((h) => h.toLowerCase().includes('key')), [], 'nor a header naming one');
  }
  const view = later[0]!.json() as Record<string, unknown>;
  t.match(view, { id, name: 'Example Wallet', status: 'active', origins: ['https://wallet.example'], feeTerms: { schemaId: 'partner-default', overrideId: null, serviceBps: 5, integratorCapBps: 10 } });

  const record = (await app.core.keyStore.list()).find((r) => r.id === id);
  t.match(record, { name: 'Example Wallet', schemaId: 'partner-default', issuedBy: 'portal', status: 'active' }, 'stored as a portal-made key under the default schema');
  t.notOk(JSON.stringify(record).includes(key), 'the store keeps its hash, not the key');

  await app.server.close();
  t.notOk(app.rawLogs().includes(key), 'the log never has the key');
  const lines = app.logs();
  t.ok(lines.some((l) => l.msg === 'portal: key created' && l.keyId === id), 'the creation is logged with the key id');
  t.ok(lines.some((l) => l.route === '/portal/api/keys' && l.keyId === id && l.portalAction === 'created' && l.status === 201), 'its access line names the new key id');
  t.ok(lines.some((l) => l.route === '/portal/api/key' && l.keyId === id && l.portalAction === 'viewed'), 'a view\'s access line names the key id');
  t.ok(lines.some((l) => l.msg === 'portal: key origins set' && l.keyId === id), 'an origin edit is logged with the key id');
  t.notOk(lines.some((l) => String(l.route).startsWith('/portal') && ('partnerId' in l || 'billable' in l)), 'portal traffic is not attributed API traffic');
});

t.test('signing in: a missing, malformed, unknown or revoked key is 401 invalid_key on every portal operation', async (t) => {
  const app = await portalApp(t);
  const revoked = await issueKey(app.core.keyStore, { name: 'revoked' });
  await app.core.keyStore.revoke({ id: revoked.record.id }, new Date());
  // Issued into another store: well-formed, and unknown to this one.
  const unknown = (await issueKey(new SharedStateKeyStore(new InProcessSharedState()))).key;
  const operations: Array<['GET' | 'POST', string, object | undefined]> = [
    ['GET', '/portal/api/key', undefined],
    ['POST', '/portal/api/key/rotate', undefined],
    ['POST', '/portal/api/key/revoke', undefined],
    ['POST', '/portal/api/key/origins', { origins: [] }],
  ];
  for (const [method, url, payload] of operations) {
    const none = await app.server.inject({ method, url, ...(payload ? { payload } : {}) });
    t.equal(none.statusCode, 401, `${method} ${url} without a key`);
    t.match(none.json(), { code: 'invalid_key' });
    for (const [what, key] of [['malformed', 'bx_nope'], ['unknown', unknown], ['revoked', revoked.key]] as const) {
      const res = await signedIn(app, key, method, url, payload);
      t.equal(res.statusCode, 401, `${method} ${url} with a ${what} key`);
      t.match(res.json(), { code: 'invalid_key' });
      t.equal(res.headers['cache-control'], 'no-store');
    }
  }
  const bearer = await issueKey(app.core.keyStore, { name: 'bearer' });
  t.equal((await app.server.inject({ url: '/portal/api/key', headers: { authorization: `Bearer ${bearer.key}` } })).statusCode, 200, 'Authorization: Bearer signs in too');
});

t.test('rotation: "a new key with the same id, name, schema and origins; the old one refused" on the swap API, the new accepted', async (t) => {
  const app = await portalApp(t);
  const { id, key: old } = await created(t, app, { name: 'Rotating', origins: ['https://wallet.example'] });
  const origin = 'https://wallet.example';
  t.equal((await quote(app, old, origin)).statusCode, 200, 'the old key quotes before');
  const rotated = await signedIn(app, old, 'POST', '/portal/api/key/rotate');
  t.equal(rotated.statusCode, 200);
  const body = rotated.json() as Record<string, unknown>;
  const fresh = body.key as string;
  t.ok(isWellFormedKey(fresh) && fresh !== old, 'a new key');
  t.match(body, { id, name: 'Rotating', schemaId: 'partner-default', origins: ['https://wallet.example'] }, 'the same record');
  t.equal(body.curl, `curl -H 'x-api-key: ${fresh}' 'http://localhost:80/api/quote?from=CC&to=USDCx&amount=100'`);

  const refused = await quote(app, old, origin);
  t.equal(refused.statusCode, 401, 'the old key is refused on /api/quote');
  t.match(refused.json(), { code: 'invalid_key' });
  t.equal((await signedIn(app, old, 'GET', '/portal/api/key')).statusCode, 401, 'and at the portal');
  const accepted = await quote(app, fresh, origin);
  t.equal(accepted.statusCode, 200, 'the new key is accepted');
  t.ok(accepted.json().appliedSchema, 'as a keyed quote');
  t.equal((await signedIn(app, fresh, 'GET', '/portal/api/key')).json().id, id, 'the same id');
  t.equal((await app.core.keyStore.list()).length, 1, 'one record, no new one');
  await app.server.close();
  for (const key of [old, fresh]) t.notOk(app.rawLogs().includes(key), 'neither key is logged');
  t.ok(app.logs().some((l) => l.msg === 'portal: key rotated' && l.keyId === id));
});

t.test('revocation: "refused from then on (401 invalid_key)", its record kept for the keys CLI', async (t) => {
  const app = await portalApp(t);
  const { id, key } = await created(t, app);
  t.equal((await quote(app, key)).statusCode, 200);
  const res = await signedIn(app, key, 'POST', '/portal/api/key/revoke');
  t.equal(res.statusCode, 200);
  t.match(res.json(), { id, status: 'revoked', revokedAt: /Z$/ });
  t.equal((await quote(app, key)).statusCode, 401, 'refused by the swap API');
  t.equal((await signedIn(app, key, 'POST', '/portal/api/key/revoke')).statusCode, 401, 'and by the portal');
  t.match((await app.core.keyStore.list())[0], { id, status: 'revoked' }, 'the record stays');
  await app.server.close();
  t.ok(app.logs().some((l) => l.msg === 'portal: key revoked' && l.keyId === id));
});

t.test('rotation and revocation "take no body": whatever body is sent (not JSON, empty, another or an unreadable type, over the size limit) is not read, and the operation answers as without one', async (t) => {
  const app = await portalApp(t);
  const bodies: Array<[string, string, string]> = [
    ['invalid JSON', 'application/json', '{"from": '],
    ['an empty JSON body', 'application/json', ''],
    ['text', 'text/plain', 'rotate please'],
    ['an unreadable Content-Type', '\u00e9/\u00e9', '{}'],
    ['a body over 16 KiB', 'application/json', JSON.stringify({ pad: 'x'.repeat(20_000) })],
  ];
  for (const [label, type, payload] of bodies) {
    const { id, key } = await created(t, app, { name: label });
    const rotated = await app.server.inject({ method: 'POST', url: '/portal/api/key/rotate', headers: { 'x-api-key': key, 'content-type': type }, payload });
    t.equal(rotated.statusCode, 200, `rotation with ${label}`, { body: rotated.body });
    const fresh = (rotated.json() as { key: string }).key;
    const revoked = await app.server.inject({ method: 'POST', url: '/portal/api/key/revoke', headers: { 'x-api-key': fresh, 'content-type': type }, payload });
    t.equal(revoked.statusCode, 200, `revocation with ${label}`, { body: revoked.body });
    t.match(revoked.json(), { id, status: 'revoked' });
  }
  const unsigned = await app.server.inject({ method: 'POST', url: '/portal/api/key/rotate', headers: { 'content-type': 'application/json' }, payload: '{"from": ' });
  t.equal(unsigned.statusCode, 401, 'without a key, such a request is the 401 any is, not a complaint about its body');
  t.match(unsigned.json(), { code: 'invalid_key' });
  const create = await app.server.inject({ method: 'POST', url: '/portal/api/keys', headers: { 'content-type': 'application/json' }, payload: '{"name": ' });
  t.equal(create.statusCode, 400, 'an operation that takes a body still reads it: creation refuses invalid JSON');
});

t.test('origins: "the swap API applies the change from its next keyed request"; the portal itself takes the key from any origin', async (t) => {
  const app = await portalApp(t);
  const { id, key } = await created(t, app);
  t.equal((await quote(app, key, 'https://elsewhere.example')).statusCode, 200, 'a server-to-server key: any Origin');

  const bound = await signedIn(app, key, 'POST', '/portal/api/key/origins', { origins: ['https://wallet.example', 'https://wallet.example/'] });
  t.equal(bound.statusCode, 200);
  t.strictSame(bound.json(), { id, origins: ['https://wallet.example'] }, 'stored as origins, once each');
  t.equal((await quote(app, key, 'https://wallet.example')).statusCode, 200, 'its origin: taken');
  t.equal((await quote(app, key, 'https://elsewhere.example')).statusCode, 401, 'another origin: refused at once');
  t.equal((await quote(app, key)).statusCode, 401, 'no Origin: refused');
  t.equal((await signedIn(app, key, 'GET', '/portal/api/key', undefined, { origin: 'http://localhost:8080' })).statusCode, 200, 'the portal takes it from its own page');

  const cleared = await signedIn(app, key, 'POST', '/portal/api/key/origins', { origins: [] });
  t.strictSame(cleared.json(), { id, origins: null }, 'none: a server-to-server key again');
  t.equal((await quote(app, key, 'https://elsewhere.example')).statusCode, 200);
  t.equal((await quote(app, key)).statusCode, 200);

  const bad = await signedIn(app, key, 'POST', '/portal/api/key/origins', { origins: ['https://wallet.example/app'] });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { code: 'bad_request', error: /origins\[0\] must be an origin/ });
  t.equal((await app.core.keyStore.list())[0]!.origins, undefined, 'a refused edit changes nothing');
});

t.test('creation: a malformed body is 400 naming the field and, in words, what is wrong with it (the limit and the count, the items repeated, the characters refused; never a pattern), and stores nothing', async (t) => {
  const app = await portalApp(t);
  for (const [what, payload, pattern] of [
    ['an origin with a path', { name: 'W', origins: ['https://wallet.example/app'] }, /origins\[0\] must be an origin/],
    ['no name', { origins: [] }, /name/],
    ['a blank name', { name: '   ' }, /name must not be blank/],
    ['a control character', { name: 'a\u0007b' }, /^body field 'name' must be text without control characters \(such as a tab or a line break\)$/],
    ['an unknown field', { name: 'W', schemaId: 'gold' }, /schemaId/],
    ['eleven origins', { name: 'W', origins: Array.from({ length: 11 }, (_, i) => `https://w${i}.example`) }, /^body field 'origins' must have at most 10 items; it has 11$/],
    ['an origin twice', { name: 'W', origins: ['https://a.example', 'https://b.example', 'https://a.example'] }, /^body field 'origins' must not repeat an item: origins\[0\] and origins\[2\] are the same$/],
  ] as const) {
    const res = await create(app, payload);
    t.equal(res.statusCode, 400, what);
    t.match(res.json(), { code: 'bad_request', error: pattern }, what);
    t.notMatch(res.json().error, /\\u|\^\[| is invalid$/, `${what}: said in words, never a pattern or a bare "invalid"`);
  }
  t.strictSame(await app.core.keyStore.list(), [], 'nothing stored');
});

t.test('creation limit: "per client IP per hour" and "in total per day": 429 rate_limited with Retry-After, and a refused creation stores nothing', async (t) => {
  const app = await portalApp(t, { env: { PORTAL_KEYS_PER_IP_PER_HOUR: '2', PORTAL_KEYS_PER_DAY: '3' } });
  for (let i = 0; i < 2; i++) t.equal((await create(app, { name: `k${i}` }, '10.0.0.1')).statusCode, 201, `10.0.0.1's key ${i + 1} of 2`);
  const overIp = await create(app, { name: 'one too many' }, '10.0.0.1');
  t.equal(overIp.statusCode, 429);
  t.match(overIp.json(), { code: 'rate_limited', error: /^too many keys created from this address: at most 2 keys an hour$/ }, 'the message names the limit; Retry-After says when');
  const ipRetry = Number(overIp.headers['retry-after']);
  t.ok(ipRetry >= 1 && ipRetry <= 3600, `Retry-After ${ipRetry}: within the hour`);
  t.equal(overIp.headers['cache-control'], 'no-store');
  t.equal((await app.core.keyStore.list()).length, 2, 'the refused creation stored nothing');

  t.equal((await create(app, { name: 'k2' }, '10.0.0.2')).statusCode, 201, 'another IP has its own allowance');
  const overDay = await create(app, { name: 'k3' }, '10.0.0.3');
  t.equal(overDay.statusCode, 429, 'the day\'s total is used up, whatever the IP');
  t.match(overDay.json(), { code: 'rate_limited', error: /^the portal has created as many keys as it may today: at most 3 keys a UTC day, from every address$/ });
  const dayRetry = Number(overDay.headers['retry-after']);
  t.ok(dayRetry >= 1 && dayRetry <= 86_400, `Retry-After ${dayRetry}: by the next UTC midnight`);
  t.equal((await app.core.keyStore.list()).length, 3);
  await app.server.close();
  t.ok(app.logs().some((l) => l.route === '/portal/api/keys' && l.status === 429 && l.code === 'rate_limited'));
});

t.test('creation limits: "per IP and per /64 per day, with the global cap only as a last guard": callers from a hundred addresses cannot take the day\'s keys from everyone else', async (t) => {
  const now = new Date('2026-11-27T10:00:00.000Z');
  const limits = new CreationLimits(new RateWindows(new InProcessSharedState()), { perIpPerHour: 100, perIpPerDay: 3, perDay: 1000 }, () => now);
  let refusedByIp = 0;
  for (let ip = 0; ip < 101; ip++) {
    for (let n = 0; n < 5; n++) {
      const refusal = await limits.admit(`198.51.100.${ip}`).then(() => null, (err: unknown) => err as DomainError);
      if (refusal) {
        t.match(refusal, { code: 'rate_limited', message: /from this address today/ });
        refusedByIp++;
      }
    }
  }
  t.equal(refusedByIp, 101 * 2, 'each address got its three keys of the day, no more');
  await t.resolves(limits.admit('192.0.2.1'), 'a newcomer still gets a key: the day\'s total is far from used up');
  const v6 = async (address: string) => limits.admit(address).then(() => 'created', (err: DomainError) => err.code);
  // The service hands the portal a caller's /64 (handlers/http/rate-limits.ts clientIp): one /64, one caller.
  t.strictSame([await v6('2001:db8:9:9::'), await v6('2001:db8:9:9::'), await v6('2001:db8:9:9::'), await v6('2001:db8:9:9::')], ['created', 'created', 'created', 'rate_limited']);
});

t.test('creation limits: the day\'s total is "per UTC day": its Retry-After runs to the next UTC midnight, and the next day starts a new count', async (t) => {
  let now = new Date('2026-11-26T23:59:30.000Z');
  const limits = new CreationLimits(new RateWindows(new InProcessSharedState()), { perIpPerHour: 100, perIpPerDay: 100, perDay: 1 }, () => now);
  await limits.admit('10.0.0.1');
  const refusal = await limits.admit('10.0.0.2').then(() => null, (err: unknown) => err);
  t.ok(refusal instanceof DomainError && refusal.code === 'rate_limited', 'the second key of the day is refused');
  t.equal((refusal as DomainError).retryAfterSeconds, 30, '30 seconds to midnight');
  now = new Date('2026-11-27T00:00:01.000Z');
  await t.resolves(limits.admit('10.0.0.3'), 'a new UTC day, a new count');
});

t.test('no other portal operation is rate-limited: the keyed window is read, "without counting this request"', async (t) => {
  const app = await portalApp(t, { env: { RATE_LIMIT_KEYED_PER_MINUTE: '5' } });
  const { key } = await created(t, app);
  const window = async () => (await signedIn(app, key, 'GET', '/portal/api/key')).json().window as { limit: number; remaining: number; resetsInSeconds: number };
  t.strictSame(await window(), { limit: 5, remaining: 5, resetsInSeconds: 60 }, 'no window running: all of it');
  for (let i = 0; i < 3; i++) t.equal((await quote(app, key)).statusCode, 200);
  const after = await window();
  t.equal(after.remaining, 2, 'three quotes counted');
  t.ok(after.resetsInSeconds >= 1 && after.resetsInSeconds <= 60);
  for (let i = 0; i < 10; i++) t.equal((await signedIn(app, key, 'GET', '/portal/api/key')).statusCode, 200, 'views are never refused');
  t.equal((await window()).remaining, 2, 'and never counted');
  const res = await signedIn(app, key, 'GET', '/portal/api/key');
  t.equal(res.headers['x-ratelimit-limit'], undefined, 'no X-RateLimit headers on the portal');
});

t.test('"the key store cannot be read or written now; nothing was changed": 503 key_verification_unavailable with Retry-After, never a 500', async (t) => {
  const inner = new SharedStateKeyStore(new InProcessSharedState());
  let writable = true;
  const unwritable = () => Promise.reject(new KeyStoreUnavailable('disk full'));
  // Lookups still read: the key verifies, and each operation's own read or write fails.
  const store: KeyStore = {
    findByHash: (hash) => inner.findByHash(hash),
    list: () => (writable ? inner.list() : unwritable()),
    add: (record) => (writable ? inner.add(record) : unwritable()),
    revoke: (selector, at) => (writable ? inner.revoke(selector, at) : unwritable()),
    rotate: (id, hash) => (writable ? inner.rotate(id, hash) : unwritable()),
    setOrigins: (id, origins) => (writable ? inner.setOrigins(id, origins) : unwritable()),
  };
  const app = await portalApp(t, { overrides: { keyStore: store } });
  const { key } = await created(t, app);
  writable = false;
  for (const res of [
    await create(app, { name: 'W' }),
    await signedIn(app, key, 'GET', '/portal/api/key'),
    await signedIn(app, key, 'POST', '/portal/api/key/rotate'),
    await signedIn(app, key, 'POST', '/portal/api/key/revoke'),
    await signedIn(app, key, 'POST', '/portal/api/key/origins', { origins: [] }),
  ]) {
    t.equal(res.statusCode, 503, res.body);
    t.match(res.json(), { code: 'key_verification_unavailable', error: /nothing was changed/ });
    t.equal(res.headers['retry-after'], '5');
    t.notOk(res.body.includes('disk full'), 'the store\'s own message stays in the server');
  }
  writable = true;
  t.equal((await inner.list()).length, 1, 'nothing was created');
  t.equal((await quote(app, key)).statusCode, 200, 'the key is untouched');
});

t.test('"see, for that key: requests per day and per operation", and the ref-free attribution: the view shows the keyed quotes the swap API counted for the key, a 429 under its limit, and nothing of another key', async (t) => {
  const app = await portalApp(t, { env: { RATE_LIMIT_KEYED_PER_MINUTE: '3' } });
  const mine = await created(t, app);
  const other = await created(t, app, { name: 'Another Wallet' });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await quote(app, mine.key)).statusCode);
  t.strictSame(statuses, [200, 200, 200, 429], 'three quotes in the window, the fourth refused');
  t.equal((await quote(app, other.key)).statusCode, 200);
  await app.server.inject({ url: QUOTE }); // keyless: counted to no key

  const view = (await signedIn(app, mine.key, 'GET', '/portal/api/key')).json() as { usage: { days: UsageDay[] }; window: { limit: number; remaining: number }; attribution: string };
  t.strictSame(Object.keys(view).sort(), ['attribution', 'createdAt', 'feeTerms', 'id', 'name', 'origins', 'status', 'usage', 'window']);
  t.match(view.attribution, /no ref parameter/);
  const today = new Date().toISOString().slice(0, 10);
  t.strictSame(view.usage.days, [{ date: today, requests: { getQuote: 4 }, rateLimited: { 'keyed-window': 1 } }], 'four requests today, one refused by the keyed window');
  t.match(view.window, { limit: 3, remaining: 0 }, 'and the window they used up');
  const theirs = (await signedIn(app, other.key, 'GET', '/portal/api/key')).json() as { usage: { days: UsageDay[] } };
  t.strictSame(theirs.usage.days, [{ date: today, requests: { getQuote: 1 }, rateLimited: {} }], "the other key's one quote, apart");
});

t.test('"first-party only": no Access-Control-Allow-Origin on any portal answer; every one no-store with strict security headers', async (t) => {
  const app = await portalApp(t);
  const { key } = await created(t, app);
  const answers: Array<[string, LightMyRequestResponse]> = [
    ['201', await app.server.inject({ method: 'POST', url: '/portal/api/keys', payload: { name: 'W' }, headers: { origin: 'https://evil.example' } })],
    ['200', await signedIn(app, key, 'GET', '/portal/api/key', undefined, { origin: 'https://evil.example' })],
    ['400', await create(app, { nope: 1 })],
    ['401', await app.server.inject({ url: '/portal/api/key', headers: { origin: 'https://evil.example' } })],
    ['404', await app.server.inject({ url: '/portal/api/nothing-here' })],
    ['405', await app.server.inject({ method: 'DELETE', url: '/portal/api/key' })],
    ['preflight', await app.server.inject({ method: 'OPTIONS', url: '/portal/api/keys', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } })],
  ];
  for (const [what, res] of answers) {
    t.equal(res.headers['access-control-allow-origin'], undefined, `${what}: no ACAO`);
    t.equal(res.headers['cache-control'], 'no-store', `${what}: no-store`);
    t.equal(res.headers['x-frame-options'], 'DENY', `${what}: no framing`);
    t.equal(res.headers['x-content-type-options'], 'nosniff', what);
    t.equal(res.headers['referrer-policy'], 'no-referrer', what);
    t.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", `${what}: a JSON answer's CSP`);
    t.equal(res.headers['x-service-api-version'], '1', what);
  }
  const [, notFound] = answers[4]!;
  t.equal(notFound.statusCode, 404);
  t.match(notFound.json(), { code: 'not_found' });
  const [, notAllowed] = answers[5]!;
  t.equal(notAllowed.statusCode, 405);
  t.equal(notAllowed.headers.allow, 'GET, HEAD');
  t.match(notAllowed.json(), { code: 'method_not_allowed' });
  t.not(answers[6]![1].statusCode, 204, 'a preflight is not answered: no other origin may call the portal');
  t.equal((await app.server.inject({ url: QUOTE })).headers['access-control-allow-origin'], '*', 'while the swap API stays open to every page');
});

t.test('"first-party only" whatever form the request target takes: an absolute-form target (GET http://host/portal/..., as a proxy sends) gets the portal\'s headers, and none of the swap API\'s CORS', async (t) => {
  const app = await portalApp(t);
  const { key } = await created(t, app);
  const port = Number(new URL(await listen(app.server)).port);
  for (const [path, status] of [['/portal/api/key', 200], ['/portal/api/nothing-here', 404]] as const) {
    const res = await rawExchange(port, `GET http://127.0.0.1:${port}${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`);
    t.equal(res.status, status, path);
    t.equal(res.headers['access-control-allow-origin'], undefined, `${path}: no ACAO`);
    t.equal(res.headers['cache-control'], 'no-store', `${path}: no-store`);
    t.equal(res.headers['x-frame-options'], 'DENY', `${path}: no framing`);
    t.equal(res.headers['x-content-type-options'], 'nosniff', path);
    t.equal(res.headers['referrer-policy'], 'no-referrer', path);
    t.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", path);
  }
});

t.test('"PORTAL_ENABLED": off, every /portal path is 404 not_found, and nothing is created', async (t) => {
  const app = await portalApp(t, { env: { PORTAL_ENABLED: 'false' } });
  const key = (await issueKey(app.core.keyStore)).key;
  for (const [method, url] of [
    ['POST', '/portal/api/keys'],
    ['GET', '/portal/api/key'],
    ['POST', '/portal/api/key/rotate'],
    ['POST', '/portal/api/key/revoke'],
    ['POST', '/portal/api/key/origins'],
    ['GET', '/openapi/portal.yaml'],
  ] as const) {
    const res = await app.server.inject({ method, url, headers: { 'x-api-key': key }, ...(method === 'POST' ? { payload: { name: 'W', origins: [] } } : {}) });
    t.equal(res.statusCode, 404, `${method} ${url}`);
    t.match(res.json(), { code: 'not_found' });
  }
  t.strictSame((await app.core.keyStore.list()).length, 1, 'nothing created');
  t.equal((await quote(app, key)).statusCode, 200, 'the swap API is served as ever');
});

t.test('the portal\'s contract is served beside the swap API\'s: GET /openapi/portal.yaml and /openapi/portal.json', async (t) => {
  const app = await portalApp(t);
  const yaml = await app.server.inject({ url: '/openapi/portal.yaml' });
  t.equal(yaml.statusCode, 200);
  t.match(yaml.headers['content-type'], /^application\/yaml/);
  t.match(yaml.body, /operationId: createPortalKey/);
  const json = await app.server.inject({ url: '/openapi/portal.json' });
  t.equal(json.statusCode, 200);
  t.equal((json.json() as { info: { title: string } }).info.title.startsWith('bestex key portal'), true);
});

t.test('"the keys CLI can list and revoke portal-made keys like any other"', async (t) => {
  // The service's store is on the DATA_DIR the CLI writes to, its refresh interval on a clock the test moves.
  const dataDir = tempDir(t, 'bestex-portal-');
  let clockMs = 0;
  const app = await portalApp(t, { env: { DATA_DIR: dataDir }, overrides: { keyStore: new FileKeyStore(keysFile({ dataDir }), { now: () => clockMs }) } });
  const { id, key } = await created(t, app, { name: 'From the portal' });
  const cli = await issueKey(app.core.keyStore, { name: 'From the CLI' });
  const env = { DATA_DIR: app.config.dataDir };
  const table = await runKeysCli(['list'], env);
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /\bVIA$/);
  t.match(lines.find((l) => l.startsWith(id)), /From the portal .* portal$/, 'the portal-made key, marked so');
  t.match(lines.find((l) => l.startsWith(cli.record.id)), /From the CLI .* cli$/);
  t.notOk(table.stdout.includes(key));
  const json = JSON.parse((await runKeysCli(['list', '--json'], env)).stdout) as Array<Record<string, unknown>>;
  t.strictSame(json.map((r) => [r.id, r.issuedBy]), [[id, 'portal'], [cli.record.id, 'cli']]);

  const revoked = await runKeysCli(['revoke', id], env);
  t.equal(revoked.code, 0, revoked.stderr);
  t.match(revoked.stdout, new RegExp(`^${id} \\("From the portal"\\) revoked at`));
  // The service sees the file change once its refresh interval has passed.
  clockMs += 60_000;
  t.equal((await quote(app, key)).statusCode, 401, 'the revoked portal key is refused');
  t.equal((await signedIn(app, key, 'GET', '/portal/api/key')).statusCode, 401);
});

const redis = await startRedis(t);
t.teardown(() => redis?.stop());

t.test('shared state: on two instances sharing Redis, a rotation or revocation at one is refused "at once" at the other, and creations count once for both', redisSkip(redis), async (t) => {
  const env = { REDIS_URL: `${redis!.url}/7`, PORTAL_KEYS_PER_IP_PER_HOUR: '3', RATE_LIMIT_KEYED_PER_MINUTE: '100' };
  const a = await portalApp(t, { env });
  const b = await portalApp(t, { env });
  const [baseA, baseB] = [await listen(a.server), await listen(b.server)];
  const post = (base: string, url: string, key?: string, body?: object) =>
    fetch(base + url, { method: 'POST', headers: { ...(key ? { 'x-api-key': key } : {}), ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const get = (base: string, url: string, key: string) => fetch(base + url, { headers: { 'x-api-key': key } });

  const made = (await (await post(baseA, '/portal/api/keys', undefined, { name: 'Shared' })).json()) as { id: string; key: string };
  t.equal((await get(baseB, QUOTE, made.key)).status, 200, 'a key made at A quotes at B');
  t.equal((await get(baseA, QUOTE, made.key)).status, 200, 'and at A');
  const window = (await (await get(baseB, '/portal/api/key', made.key)).json()) as { window: { remaining: number } };
  t.equal(window.window.remaining, 98, 'the window B shows is the one both instances count, read without counting');

  const rotated = (await (await post(baseB, '/portal/api/key/rotate', made.key)).json()) as { id: string; key: string };
  t.equal(rotated.id, made.id, 'rotated at B: the same id');
  t.equal((await get(baseA, QUOTE, made.key)).status, 401, 'the old key is refused at A at once');
  t.equal((await get(baseA, QUOTE, rotated.key)).status, 200, 'the new key is taken at A');
  t.equal((await get(baseA, '/portal/api/key', rotated.key)).status, 200);

  const bound = await post(baseA, '/portal/api/key/origins', rotated.key, { origins: ['https://wallet.example'] });
  t.equal(bound.status, 200);
  t.equal((await fetch(baseB + QUOTE, { headers: { 'x-api-key': rotated.key, origin: 'https://elsewhere.example' } })).status, 401, 'an origin set at A holds at B');

  t.equal((await post(baseA, '/portal/api/key/revoke', rotated.key)).status, 200, 'revoked at A');
  t.equal((await fetch(baseB + QUOTE, { headers: { 'x-api-key': rotated.key, origin: 'https://wallet.example' } })).status, 401, 'refused at B at once');
  t.equal((await get(baseB, '/portal/api/key', rotated.key)).status, 401);

  t.equal((await post(baseB, '/portal/api/keys', undefined, { name: 'Second' })).status, 201, 'the IP\'s second creation, at B');
  t.equal((await post(baseA, '/portal/api/keys', undefined, { name: 'Third' })).status, 201, 'its third, at A');
  const over = await post(baseB, '/portal/api/keys', undefined, { name: 'Fourth' });
  t.equal(over.status, 429, 'the fourth is over the allowance both instances count');
  t.ok(Number(over.headers.get('retry-after')) >= 1);
  t.equal((await a.core.keyStore.list()).length, 3, 'three records in the shared store');
  await Promise.all([a.server.close(), b.server.close()]);
  for (const key of [made.key, rotated.key]) t.notOk(a.rawLogs().includes(key) || b.rawLogs().includes(key), 'no key in either log');
});
