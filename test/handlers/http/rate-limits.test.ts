// Rate limits: the spec's Limits rules, on one instance (two instances sharing Redis:
// test/core/state/redis-service.test.ts).
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { generateKey } from '../../../core/keys/api-key.js';
import { keysFile } from '../../../core/keys/open-store.js';
import { ComponentHealth } from '../../../core/health/component-health.js';
import { RateWindows } from '../../../core/state/rate-windows.js';
import { GuardedSharedState } from '../../../core/state/guard.js';
import { MAX_LEASES, WindowLeases } from '../../../core/state/window-leases.js';
import { ExpiringMap, type Expiring } from '../../../core/state/expiring-map.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState } from '../../../core/state/shared-state.js';
import { testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import type { Deadline, Venue, VenueQuoteRequest } from '../../../core/venues/venue.js';

const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';

async function limitedApp(t: { teardown(fn: () => unknown): void }, env: Record<string, string>, options: TestAppOptions = {}): Promise<TestApp> {
  const app = await testApp({ ...options, env: { RATE_LIMIT_KEYLESS_PER_MINUTE: '1000', RATE_LIMIT_KEYED_PER_MINUTE: '1000', RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '1000', RATE_LIMIT_KEYED_FRESH_QUOTES_PER_MINUTE: '1000', ...env } });
  t.teardown(app.close);
  return app;
}

t.test('"keyless callers per IP": over the limit, 429 rate_limited with Retry-After, in the error shape, no-store', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '3' });
  for (let i = 0; i < 2; i++) t.equal((await app.server.inject(QUOTE)).statusCode, 200);
  t.equal((await app.server.inject('/api/liveness')).statusCode, 200, 'one window across the keyless operations');
  const res = await app.server.inject(QUOTE);
  t.equal(res.statusCode, 429);
  t.match(res.json(), { code: 'rate_limited', error: /^rate limit exceeded; retry in [0-9]+ seconds$/, action: 'back off until Retry-After' });
  t.match(res.headers['retry-after'], /^[1-9][0-9]*$/);
  t.ok(Number(res.headers['retry-after']) <= 60, 'within the one-minute window');
  t.equal(res.headers['cache-control'], 'no-store');
  t.equal(res.headers['x-ratelimit-limit'], '3');
  t.equal(res.headers['x-ratelimit-remaining'], '0');
  t.equal((await app.server.inject({ url: QUOTE, remoteAddress: '10.0.0.9' })).statusCode, 200, 'another IP has its own window');
  t.equal((await app.server.inject('/api/status')).statusCode, 200, 'the status, which documents no 429, is not limited');
});

t.test('keyless successes carry no X-RateLimit headers: a shared cache may keep them', async (t) => {
  const app = await limitedApp(t, {});
  const res = await app.server.inject(QUOTE);
  t.equal(res.headers['x-ratelimit-limit'], undefined);
  t.equal(res.headers['x-ratelimit-remaining'], undefined);
});

t.test('"keyed callers per key; a key raises the window"; keyed responses carry X-RateLimit-Limit and X-RateLimit-Remaining', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '1', RATE_LIMIT_KEYED_PER_MINUTE: '3' });
  const first = await issueKey(app.core.keyStore);
  const second = await issueKey(app.core.keyStore);
  t.equal((await app.server.inject(QUOTE)).statusCode, 200);
  t.equal((await app.server.inject(QUOTE)).statusCode, 429, 'the IP\'s keyless window is used up');
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await app.server.inject({ url: QUOTE, headers: { 'x-api-key': first.key } });
    t.equal(res.statusCode, 200, 'the key has its own, larger window');
    t.equal(res.headers['x-ratelimit-limit'], '3');
    remaining.push(String(res.headers['x-ratelimit-remaining']));
  }
  t.strictSame(remaining, ['2', '1', '0']);
  const over = await app.server.inject({ url: QUOTE, headers: { authorization: `Bearer ${first.key}` } });
  t.equal(over.statusCode, 429, 'both ways of sending the key count in one window');
  t.match(over.json(), { code: 'rate_limited' });
  t.equal(over.headers['x-ratelimit-limit'], '3', 'keyed 429s carry X-RateLimit-Limit');
  t.equal(over.headers['x-ratelimit-remaining'], '0', 'and X-RateLimit-Remaining');
  t.match(over.headers['retry-after'], /^[1-9][0-9]*$/);
  t.equal((await app.server.inject({ url: QUOTE, headers: { 'x-api-key': second.key } })).statusCode, 200, 'another key has its own window');
});

t.test('"Retry-After = whole seconds to the window\'s end"; a new window starts after it (fixed one-minute windows, fake clock)', async (t) => {
  let now = 1_000_000;
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '2' }, { overrides: { sharedState: new InProcessSharedState(() => now) } });
  t.equal((await app.server.inject(QUOTE)).statusCode, 200);
  now += 17_500;
  t.equal((await app.server.inject(QUOTE)).statusCode, 200);
  const over = await app.server.inject(QUOTE);
  t.equal(over.statusCode, 429);
  t.equal(over.headers['retry-after'], '43', '42.5 s left, rounded up to whole seconds');
  t.match(over.json(), { error: 'rate limit exceeded; retry in 43 seconds' });
  now += 42_499;
  t.equal((await app.server.inject(QUOTE)).statusCode, 429, 'still in the window 1 ms before its end');
  t.equal((await app.server.inject(QUOTE)).headers['retry-after'], '1', 'never 0 while the window lasts');
  now += 1;
  t.equal((await app.server.inject(QUOTE)).statusCode, 200, 'the window is fixed: it ends a minute after it began, however many requests were refused');
});

t.test('"Keyless quotes that miss the cache also draw from a separate per-IP fresh-quote budget, so varying amount on every request is limited by design"', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '2' });
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=1')).statusCode, 200);
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=2')).statusCode, 200);
  const fresh = await app.server.inject('/api/quote?from=CC&to=USDCx&amount=3');
  t.equal(fresh.statusCode, 429, 'a third fresh combination');
  t.match(fresh.json(), { code: 'rate_limited' });
  t.match(fresh.headers['retry-after'], /^[1-9][0-9]*$/);
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=1.0')).statusCode, 200, 'a cached combination is not a fresh quote');
  t.equal((await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=4', remoteAddress: '10.0.0.9' })).statusCode, 200, 'another IP has its own budget');
  const { key } = await issueKey(app.core.keyStore);
  t.equal((await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=5', headers: { 'x-api-key': key } })).statusCode, 200, 'keyed quotes draw on their key\'s budget, not the IP\'s');
});

t.test('"keyed fresh quotes draw on a per-key fresh budget": a key (a free portal key included) cannot ask every venue more often than RATE_LIMIT_KEYED_FRESH_QUOTES_PER_MINUTE; cached combinations and other keys are not charged', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYED_FRESH_QUOTES_PER_MINUTE: '2' });
  const { key } = await issueKey(app.core.keyStore);
  const keyed = (amount: string, which = key) => app.server.inject({ url: `/api/quote?from=CC&to=USDCx&amount=${amount}`, headers: { 'x-api-key': which } });
  t.equal((await keyed('11')).statusCode, 200);
  t.equal((await keyed('12')).statusCode, 200);
  const over = await keyed('13');
  t.equal(over.statusCode, 429, 'a third fresh combination from the key');
  t.match(over.json(), { code: 'rate_limited' });
  t.match(over.headers['retry-after'], /^[1-9][0-9]*$/);
  t.equal(over.headers['x-ratelimit-limit'], '2', 'the limit that refused it');
  t.equal((await keyed('11')).statusCode, 200, 'a cached combination is not a fresh quote');
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=14')).statusCode, 200, 'keyless callers have their own budget');
  const other = (await issueKey(app.core.keyStore, { name: 'another' })).key;
  t.equal((await keyed('15', other)).statusCode, 200, 'another key has its own budget');
  t.ok(app.logs().some((l) => l.status === 429 && l.rateLimit === 'keyed-fresh-quote-budget'), 'the access line names the limit');
});

t.test('"only a quote this request computes draws on" the fresh-quote budget: requests for a combination already being computed are not charged', async (t) => {
  let computing!: () => void;
  const started = new Promise<void>((resolve) => (computing = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  // Tradecraft's quotes wait for the test; the venue deadline is far off, so only the release ends them.
  const held = (venue: Venue): Venue =>
    Object.assign(Object.create(venue) as Venue, {
      quote: async (request: VenueQuoteRequest, deadline: Deadline) => {
        computing();
        await released;
        return venue.quote(request, deadline);
      },
    });
  const app = await limitedApp(t, { RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '2', VENUE_TIMEOUT_MS: '30000' }, { overrides: (sandbox) => ({ venues: sandbox.adapters(30_000).map((v) => (v.id === 'tradecraft' ? held(v) : v)) }) });
  // Each request that reaches the quote service is known: past that point its charge is decided.
  const quotes = app.core.quotes;
  let reached = 0;
  const baseQuote = quotes.baseQuote.bind(quotes);
  quotes.baseQuote = (...args) => {
    reached += 1;
    return baseQuote(...args);
  };
  const url = '/api/quote?from=CC&to=USDCx&amount=21';
  let answered = 0;
  const send = () => app.server.inject(url).finally(() => (answered += 1));
  const first = send();
  await started;
  const joining = [send(), send(), send()];
  while (reached < 4 && answered === 0) await new Promise((resolve) => setImmediate(resolve));
  t.equal(answered, 0, 'no request was answered while the quote was being computed');
  release();
  t.strictSame((await Promise.all([first, ...joining])).map((r) => r.statusCode), [200, 200, 200, 200], 'the three that joined it are not charged');
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=22')).statusCode, 200, 'the budget has one fresh quote left');
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=23')).statusCode, 429, 'and then none');
});

t.test('"a keyed-only request without a key" counts in no window: 400 missing_key, the IP\'s keyless window untouched', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '2' });
  const plan = { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: `alice::1220${'b'.repeat(64)}`, idempotencyKey: 'no-key' };
  for (let i = 0; i < 3; i++) {
    const res = await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: plan });
    t.equal(res.statusCode, 400);
    t.match(res.json(), { code: 'missing_key' });
  }
  t.equal((await app.server.inject(QUOTE)).statusCode, 200, 'the first keyless request of the window');
  t.equal((await app.server.inject(QUOTE)).statusCode, 200, 'the second, at the limit');
  t.equal((await app.server.inject(QUOTE)).statusCode, 429, 'the third is over it: the window counts, and counted none of the keyless-sent keyed requests');
});

t.test('"Over-limit requests are blocked and never counted as billable traffic"', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYED_PER_MINUTE: '1' });
  const { key, record } = await issueKey(app.core.keyStore);
  await app.server.inject({ url: QUOTE, headers: { 'x-api-key': key } });
  await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=7', headers: { 'x-api-key': key } });
  const [served, blocked] = app.logs().filter((l) => l.msg === 'request completed');
  t.match(served, { status: 200, partnerId: record.id, billable: true, quoteCache: 'miss' });
  t.match(blocked, { status: 429, partnerId: record.id, billable: false });
  t.notOk('quoteCache' in blocked!, 'the blocked request never reached the quote');
});

t.test('a key that cannot be verified (503) is answered as it is, and counted in no window', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '1' });
  const { key } = await issueKey(app.core.keyStore);
  await app.core.keyStore.list();
  writeFileSync(keysFile(app.config), 'damaged');
  await new Promise((resolve) => setTimeout(resolve, 1100));
  for (let i = 0; i < 3; i++) t.equal((await app.server.inject({ url: QUOTE, headers: { 'x-api-key': key } })).statusCode, 503);
  t.equal((await app.server.inject(QUOTE)).statusCode, 200, 'the IP\'s keyless window is untouched');
});

t.test('a refused key counts in its IP\'s keyless window, so guessing keys is limited like keyless traffic', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '2' });
  for (let i = 0; i < 2; i++) t.equal((await app.server.inject({ url: QUOTE, headers: { 'x-api-key': generateKey() } })).statusCode, 401);
  const guessing = await app.server.inject({ url: QUOTE, headers: { 'x-api-key': generateKey() } });
  t.equal(guessing.statusCode, 429, 'the third guess from the IP is over its window');
  t.match(guessing.json(), { code: 'rate_limited' });
  t.equal((await app.server.inject(QUOTE)).statusCode, 429, 'and so is its keyless traffic');
  const { key } = await issueKey(app.core.keyStore);
  t.equal((await app.server.inject({ url: QUOTE, headers: { 'x-api-key': key } })).statusCode, 200, 'a valid key counts in its own window');
});

t.test('"The client IP honours X-Forwarded-For only when TRUST_PROXY is set", and then only the hops our own proxies appended', async (t) => {
  const forwarded = (xff: string) => ({ url: QUOTE, headers: { 'x-forwarded-for': xff } });
  const direct = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '1' });
  t.equal((await direct.server.inject(forwarded('203.0.113.1'))).statusCode, 200);
  t.equal((await direct.server.inject(forwarded('203.0.113.2'))).statusCode, 429, 'without TRUST_PROXY a forged header buys no new window');

  const proxied = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '1', TRUST_PROXY: 'true' });
  t.equal((await proxied.server.inject(forwarded('203.0.113.1'))).statusCode, 200);
  t.equal((await proxied.server.inject(forwarded('203.0.113.2'))).statusCode, 200, 'behind a trusted proxy each client has its own window');
  t.equal((await proxied.server.inject(forwarded('203.0.113.1'))).statusCode, 429);
  // Our proxy appends the address it saw; whatever the client wrote before it is not trusted.
  t.equal((await proxied.server.inject(forwarded('198.51.100.7, 203.0.113.1'))).statusCode, 429, 'a client-written hop in front of the proxy\'s own buys no new window');
  t.equal((await proxied.server.inject(forwarded('198.51.100.8, 203.0.113.1'))).statusCode, 429);

  const twoHops = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '1', TRUST_PROXY: '2' });
  t.equal((await twoHops.server.inject(forwarded('198.51.100.7, 203.0.113.1, 10.0.0.2'))).statusCode, 200);
  t.equal((await twoHops.server.inject(forwarded('198.51.100.8, 203.0.113.1, 10.0.0.3'))).statusCode, 429, 'with two proxies, the address the outer one saw');
});

t.test('RateWindows: "rate limiting degrades to per-instance counting, and says so in the logs and status" while the shared state is unreachable', async (t) => {
  const shared = new InProcessSharedState();
  let reachable = true;
  // A shared store (as Redis is) whose windows live in another in-process state, and that can be cut off.
  const flaky: SharedState = {
    shared: true,
    hit: (key, windowMs) => (reachable ? shared.hit(key, windowMs) : Promise.reject(new SharedStateUnavailable('Redis at db:6379 is unreachable'))),
    unhit: (key) => shared.unhit(key),
    peek: (key) => shared.peek(key),
    get: (key) => shared.get(key),
    exchange: (exchange) => shared.exchange(exchange),
    getValues: (keys) => shared.getValues(keys),
    setIfAbsent: (key, value, ttlMs) => shared.setIfAbsent(key, value, ttlMs),
    replaceIf: (key, expected, value, ttlMs) => shared.replaceIf(key, expected, value, ttlMs),
    mapGet: (map, field) => shared.mapGet(map, field),
    mapFields: (map, fields, version) => shared.mapFields(map, fields, version),
    mapSet: (map, field, value, version) => shared.mapSet(map, field, value, version),
    mapSetIfAbsent: (map, field, value, version) => shared.mapSetIfAbsent(map, field, value, version),
    mapDelete: (map, field, version) => shared.mapDelete(map, field, version),
    mapEntries: (map) => shared.mapEntries(map),
    incrementMaps: (increments) => shared.incrementMaps(increments),
    close: () => shared.close(),
  };
  const lines: Array<[string, string]> = [];
  const log = { warn: (_f: object, msg: string) => void lines.push(['warn', msg]), info: (_f: object, msg: string) => void lines.push(['info', msg]) };
  const health = new ComponentHealth('shared-state', log, { down: 'shared state unreachable', up: 'shared state reachable again' });
  let now = 0;
  const windows = new RateWindows(new GuardedSharedState(flaky, health, 1000, () => now));
  t.equal((await windows.hit('k', 60_000)).count, 1);
  t.ok(health.isUp);
  reachable = false;
  t.equal((await windows.hit('k', 60_000)).count, 1, 'counted in this instance\'s own window');
  t.equal((await windows.hit('k', 60_000)).count, 2, 'which still limits');
  t.notOk(health.isUp, 'the status says so');
  reachable = true;
  t.equal((await windows.hit('k', 60_000)).count, 3, 'while down, the shared state is not asked until the retry interval passes');
  now += 1000;
  t.equal((await windows.hit('k', 60_000)).count, 2, 'then a probe finds it back, and the shared window counts again');
  t.ok(health.isUp);
  t.strictSame(lines.map(([level]) => level), ['warn', 'info'], 'one line per change, not per request');

  const refusing: SharedState = { ...flaky, hit: () => Promise.reject(new SharedStateUnavailable('Redis refused the command: OOM', 'refused')) };
  const guarded = new GuardedSharedState(refusing, health, 1000, () => now);
  await t.rejects(guarded.hit('k', 60_000), { message: /refused the command/ });
  t.ok(health.isUp, 'a command the store refused (out of memory) does not mark the whole store down');
});

t.test('in-process windows: a busy minute of distinct callers costs each new window no scan of the live ones, and expired windows are swept', async (t) => {
  let visited = 0;
  class Counted extends ExpiringMap<number> {
    override *[Symbol.iterator](): MapIterator<[string, Expiring<number>]> {
      for (const entry of super[Symbol.iterator]()) {
        visited += 1;
        yield entry;
      }
    }
  }
  const map = new Counted();
  for (let i = 0; i < 80_000; i++) map.add(`ip:${i}`, { value: 1, expiresAt: 60_000 }, 0);
  t.equal(map.size, 80_000, 'every live window is kept');
  t.ok(visited < 2 * 80_000, `sweeping visited ${visited} entries for 80,000 new windows: O(1) each`);
  map.add('late', { value: 1, expiresAt: 120_000 }, 60_000);
  t.equal(map.size, 1, 'windows that ended are swept as new ones come');
});

t.test('"where the window is this process\'s own" it is counted at once, and answers exactly as the shared windows counted through @fastify/rate-limit do', async (t) => {
  let now = 1_000_000;
  /** This process's memory, presented as a store other instances share: its windows go through the plugin. */
  const sharedInProcess = Object.defineProperty(new InProcessSharedState(() => now), 'shared', { value: true });
  const own = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '3', RATE_LIMIT_KEYED_PER_MINUTE: '2', RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '2' }, { overrides: { sharedState: new InProcessSharedState(() => now) } });
  const shared = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '3', RATE_LIMIT_KEYED_PER_MINUTE: '2', RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '2' }, { overrides: { sharedState: sharedInProcess } });
  t.equal(own.core.rateWindows.isLocal, true);
  t.equal(shared.core.rateWindows.isLocal, false);
  const keys = await Promise.all([own, shared].map(async (app) => (await issueKey(app.core.keyStore)).key));
  const answers = async (app: TestApp, key: string): Promise<unknown[]> => {
    const seen: unknown[] = [];
    const ask = async (url: string, headers: Record<string, string> = {}) => {
      const res = await app.server.inject({ url, headers });
      const { 'retry-after': retryAfter, 'x-ratelimit-limit': limit, 'x-ratelimit-remaining': remaining } = res.headers;
      seen.push({ url, status: res.statusCode, retryAfter, limit, remaining, code: res.statusCode === 200 ? null : (res.json() as { code: string }).code });
    };
    for (let i = 1; i <= 4; i++) await ask(`/api/quote?from=CC&to=USDCx&amount=${i}`);
    now += 12_345;
    for (let i = 0; i < 3; i++) await ask(QUOTE, { 'x-api-key': key });
    await ask(QUOTE, { 'x-api-key': generateKey() });
    now += 60_000;
    await ask(QUOTE);
    await ask(QUOTE, { 'x-api-key': key });
    return seen;
  };
  const [fromOwn, fromShared] = [await answers(own, keys[0]!), await answers(shared, keys[1]!)];
  t.strictSame(fromOwn, fromShared);
  t.strictSame(
    fromOwn.map((a) => (a as { status: number }).status),
    [200, 200, 429, 429, 200, 200, 429, 429, 200, 200],
    'the fresh budget, the keyless window, the keyed window and a refused key, then a new window',
  );
});

t.test('"Bounded memory": at STATE_MAX_RATE_WINDOWS a caller without a window is refused 429 until a window ends; callers with one keep their counts', async (t) => {
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '100', STATE_MAX_RATE_WINDOWS: '2' });
  const from = (remoteAddress: string) => app.server.inject({ url: QUOTE, remoteAddress });
  // A keyless quote counts in its IP's window, and a fresh one in its IP's fresh-quote budget too.
  t.equal((await from('198.51.100.1')).statusCode, 200, 'the first caller gets its windows');
  const newcomer = await from('198.51.100.2');
  t.equal(newcomer.statusCode, 429, 'a new caller, with no room for its window');
  t.match(newcomer.json(), { code: 'rate_limited' });
  t.match(newcomer.headers['retry-after'], /^[1-9][0-9]*$/);
  t.equal((await from('198.51.100.1')).statusCode, 200, 'the caller with a window still answers');
  t.equal(app.logs().filter((l) => l.bound === 'rate-windows').length, 1, 'logged once');
});

t.test('"a map holds its live entries": expired ones go as new ones come, without a scan of the live ones, and entries replaced again and again behind a long-lived one do not pile up', async (t) => {
  const map = new ExpiringMap<number>();
  // A steady flow, a minute's life each, one a millisecond: the map holds about a minute's worth.
  let most = 0;
  for (let ms = 0; ms < 300_000; ms++) {
    map.add(`caller:${ms}`, { value: 1, expiresAt: ms + 60_000 }, ms);
    most = Math.max(most, map.size);
  }
  t.ok(most <= 60_001, `at most the live entries are held (${most} at most, for 60,000 live)`);
  // One entry for a day, then a few entries replaced every second for an hour behind it.
  const mixed = new ExpiringMap<number>();
  mixed.add('a-day', { value: 1, expiresAt: 86_400_000 }, 0);
  for (let second = 1; second <= 3600; second++) for (const key of ['k1', 'k2', 'k3']) mixed.add(key, { value: second, expiresAt: second * 1000 + 60_000 }, second * 1000);
  t.equal(mixed.size, 4);
  const queued = (mixed as unknown as { queue: unknown[]; head: number }).queue.length - (mixed as unknown as { head: number }).head;
  t.ok(queued < 2 * 4 + 1024 + 3, `${queued} queue records for 4 entries after 10,800 replacements: bounded`);
});

/** RateWindows over a store other instances share (this process's memory standing in for Redis), its exchanges counted. */
function leasingInstances(count: number, clock: () => number) {
  const store = new InProcessSharedState(clock);
  let exchanges = 0;
  // An object of its own, not the store: RateWindows takes an InProcessSharedState for its own windows.
  const shared = { shared: true, exchange: (e: Parameters<SharedState['exchange']>[0]) => (exchanges++, store.exchange(e)) } as unknown as SharedState;
  const instances = Array.from({ length: count }, () => new RateWindows(shared, new InProcessSharedState(clock), clock));
  /** One request's count in `key`'s window of `max`, as the quote service makes it: its lease first, else an exchange. */
  const request = async (windows: RateWindows, key: string, max: number, leasable = true): Promise<{ admitted: boolean; count: number; resetInMs: number }> => {
    let verdict = { admitted: false, count: 0, resetInMs: 0 };
    const pending = { hit: { key, windowMs: 60_000, max }, leasable, counted: false, judge: (c: { count: number; resetInMs: number }) => void (verdict = { admitted: c.count <= max, count: c.count, resetInMs: c.resetInMs }) };
    if (windows.countLeased(pending)) return verdict;
    const hit = windows.leasing(pending);
    windows.judgeLeasing(pending, hit, (await windows.exchange({ hits: [hit] }))!.hits[0]!);
    return verdict;
  };
  return { store, instances, request, exchanges: () => exchanges };
}

t.test('leases: "a caller that keeps coming back to this instance is counted here, with no round trip"; each lease asks twice the last, up to 64', async (t) => {
  const now = 1_000_000;
  const { store, instances: [a], request, exchanges } = leasingInstances(1, () => now);
  const counts = [];
  for (let i = 0; i < 100; i++) counts.push(await request(a!, 'rate:ip:1', 1_000_000));
  t.strictSame(counts.map((c) => c.count), Array.from({ length: 100 }, (_, i) => i + 1), 'each request its own count, in order');
  t.ok(counts.every((c) => c.admitted && c.resetInMs === 60_000), 'all admitted, with the window\'s end');
  t.equal(exchanges(), 7, '7 round trips for 100 requests: leases of 1, 2, 4, 8, 16, 32, 64');
  t.equal((await store.peek('rate:ip:1'))?.count, 127, 'the store counted every hit leased');

  const before = exchanges();
  for (let i = 0; i < 3; i++) await request(a!, 'rate:key:k', 1_000_000, false);
  t.equal(exchanges() - before, 3, 'a window that is not leasable (a keyed one, whose count X-RateLimit-Remaining shows) makes its round trip every time');
});

t.test('leases: "a window never admits more than its limit", and a caller whose requests spread evenly over the instances is admitted exactly its limit', async (t) => {
  const now = 1_000_000;
  const { store, instances: [a, b], request } = leasingInstances(2, () => now);
  const answers = [];
  for (let i = 0; i < 120; i++) answers.push(await request(i % 2 === 0 ? a! : b!, 'rate:ip:2', 100));
  t.equal(answers.filter((r) => r.admitted).length, 100, '100 admitted of 120');
  t.ok(answers.slice(0, 100).every((r) => r.admitted) && answers.slice(100).every((r) => !r.admitted), 'the first 100, then none');
  t.ok((await store.peek('rate:ip:2'))!.count >= 100, 'the window full in the store');
});

t.test('leases: concurrent requests that each ask for a lease keep every hit leased, so a caller is still admitted exactly its limit', async (t) => {
  const now = 1_000_000;
  const { instances: [a], request, exchanges } = leasingInstances(1, () => now);
  const answers = [];
  for (let batch = 0; batch < 250; batch++) answers.push(...(await Promise.all(Array.from({ length: 5 }, () => request(a!, 'rate:ip:5', 1000)))));
  t.equal(answers.filter((r) => r.admitted).length, 1000, '1000 of 1250 admitted');
  t.ok(answers.slice(0, 1000).every((r) => r.admitted), 'every one up to the limit');
  const admittedCounts = answers.filter((r) => r.admitted).map((r) => r.count);
  t.equal(new Set(admittedCounts).size, 1000, 'each admitted with a count of its own');
  t.ok(exchanges() < 250, `fewer round trips than batches: ${exchanges()}`);
});

t.test('leases: a caller that leaves one instance for another is refused early by at most the hits leased to the first, a sixteenth of the room left when they were', async (t) => {
  const now = 1_000_000;
  const { instances: [a, b], request } = leasingInstances(2, () => now);
  for (let i = 0; i < 50; i++) await request(a!, 'rate:ip:3', 1000);
  let admittedAtB = 0;
  for (let i = 0; i < 1000; i++) if ((await request(b!, 'rate:ip:3', 1000)).admitted) admittedAtB++;
  const unused = 1000 - 50 - admittedAtB;
  t.ok(unused > 0 && unused <= Math.floor((1000 - 63) / 16), `the hits left leased at A, ${unused}, at most a sixteenth of the room when leased`);
  t.equal((await request(a!, 'rate:ip:3', 1000)).admitted, true, 'A still admits them');
});

t.test('leases: a window "known to be over its limit is refused here until it ends", with no round trip; then counted anew', async (t) => {
  let now = 1_000_000;
  const { instances: [a], request, exchanges } = leasingInstances(1, () => now);
  for (let i = 0; i < 4; i++) t.equal((await request(a!, 'rate:ip:4', 4)).admitted, true);
  const refused = await request(a!, 'rate:ip:4', 4);
  t.strictSame({ admitted: refused.admitted, count: refused.count }, { admitted: false, count: 5 }, 'the fifth over the limit of 4');
  const before = exchanges();
  now += 30_000;
  const again = await request(a!, 'rate:ip:4', 4);
  t.strictSame({ admitted: again.admitted, resetInMs: again.resetInMs }, { admitted: false, resetInMs: 30_000 }, 'refused again, with the time its window has left');
  t.equal(exchanges(), before, 'without a round trip');
  now += 30_000;
  const next = await request(a!, 'rate:ip:4', 4);
  t.strictSame({ admitted: next.admitted, count: next.count }, { admitted: true, count: 1 }, 'its window ended: counted anew, in the store');
  t.equal(exchanges(), before + 1);
});

t.test('leases: an instance keeps those of at most MAX_LEASES callers, the longest unused going first', async (t) => {
  const leases = new WindowLeases(() => 0, 3);
  const hit = (key: string) => ({ key, windowMs: 60_000, max: 1000, lease: 4 });
  for (const key of ['a', 'b', 'c', 'd']) leases.keep(hit(key), { count: 1, resetInMs: 60_000, leased: 3 });
  t.equal(leases.size, 3);
  t.equal(leases.take(hit('a')), undefined, 'the first caller\'s lease gone');
  t.strictSame(leases.take(hit('d')), { count: 2, resetInMs: 60_000 }, 'the newest held');
  t.equal(MAX_LEASES, 10_000);
});
