// Rate limits: the spec's Limits rules, on one instance (two instances sharing Redis:
// test/core/state/redis-service.test.ts). The windows beneath them, without HTTP:
// test/core/state/rate-windows.test.ts.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateKey } from '../../../core/keys/api-key.js';
import { FileKeyStore } from '../../../core/keys/file-store.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { tempDir } from '../../helpers/temp.js';
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
  // A key store whose refresh interval runs on a clock the test moves, not the wall's.
  let clockMs = 0;
  const store = new FileKeyStore(path.join(tempDir(t, 'bestex-keys-'), 'keys.json'), { now: () => clockMs });
  const app = await limitedApp(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '1' }, { overrides: { keyStore: store } });
  const { key } = await issueKey(app.core.keyStore);
  await app.core.keyStore.list();
  writeFileSync(store.file, 'damaged');
  // Past its refresh interval: the next look at the file finds it damaged.
  clockMs += 60_000;
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
