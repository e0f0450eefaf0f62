// The service on shared state in Redis (REDIS_URL), end to end: two real app instances, each on
// its own loopback port, sharing one private redis-server, driven over HTTP with fetch, with keys
// issued and revoked by the real keys CLI. What it promises: "N instances behind a load
// balancer behave as one: a key revoked on one is revoked on all; a caller's window is counted
// across all", and "Redis going away mid-run must not crash the process or lose a key".
import { hash } from 'node:crypto';
import t from 'tap';
import { Redis } from 'ioredis';
import { parsePlanRequest } from '../../../core/plans/params.js';
import { RedisSharedState } from '../../../core/state/redis.js';
import type { SharedState } from '../../../core/state/shared-state.js';
import { COLLECTING, FEE_PARTIES, listen, testApp, type TestApp } from '../../helpers/app.js';
import { issueKey, runKeysCli } from '../../helpers/keys.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { roundTripCounter } from '../../helpers/round-trips.js';
import { assertRecordsPrivate, redisEntries } from '../../helpers/stored.js';
import { tempDir } from '../../helpers/temp.js';

const QUOTE = '/api/quote?from=CC&to=USDCx';

// Without redis-server these tests are skipped, loudly; with REQUIRE_REDIS=1 this throws instead.
const redis = await startRedis(t);
t.teardown(() => redis?.stop());

/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A command timeout no answer reaches: a slow Redis is no failure where a test says so. */
const AN_HOUR = 60 * 60 * 1000;

// Every test gets its own Redis database: keyless windows are per IP, and every request here
// comes from 127.0.0.1, so tests on one database would count in each other's windows.
let databases = 0;
const nextRedisUrl = () => `${redis!.url}/${++databases}`;

interface Instance {
  readonly app: TestApp;
  readonly base: string;
  readonly name: string;
}

/**
 * Two app instances on one Redis database, each listening on its own ephemeral loopback port.
 * `patient`: their shared state waits for any answer, however slow, where the service's gives up
 * after 300 ms and degrades (a 503 for a keyed request, a quote computed locally): for tests of
 * what instances agree on, not of a stall. `offsetsMs`: how far each instance's clock runs ahead.
 */
async function twoInstances(t: Test, redisUrl: string, env: Record<string, string> = {}, { patient = false, offsetsMs = [0, 0] } = {}): Promise<[Instance, Instance]> {
  const start = async (name: string, offsetMs: number): Promise<Instance> => {
    const state = patient ? new RedisSharedState(redisUrl, { commandTimeoutMs: AN_HOUR }) : undefined;
    const now = offsetMs === 0 ? undefined : () => new Date(Date.now() + offsetMs);
    const app = await testApp({ env: { REDIS_URL: redisUrl, ...env }, overrides: { ...(state && { sharedState: state }), ...(now && { now }) } });
    t.teardown(async () => {
      await app.close();
      await state?.close();
    });
    return { app, base: await listen(app.server), name };
  };
  return [await start('A', offsetsMs[0]!), await start('B', offsetsMs[1]!)];
}

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: Record<string, unknown>;
}

async function get(instance: Instance, url: string, key?: string): Promise<Reply> {
  const res = await fetch(instance.base + url, { headers: key === undefined ? {} : { 'x-api-key': key } });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Left empty: the assertions on it say what was expected.
  }
  return { status: res.status, headers: res.headers, text, body };
}

async function post(instance: Instance, url: string, body: unknown, key?: string): Promise<Reply> {
  const res = await fetch(instance.base + url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-key': key }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Record<string, unknown> };
}

const planBody = (idempotencyKey: string, amount = '100') => ({
  from: 'CC',
  to: 'USDCx',
  amount,
  venueId: 'tradecraft',
  takerParty: `alice::1220${'b'.repeat(64)}`,
  idempotencyKey,
});

/** The sandbox's tradecraft pool party for CC/USDCx: a plan's deposit goes there. */
const POOL_USDCX = `tradecraft-pool-cc-usdcx::1220${'c'.repeat(64)}`;

/** Polls `check` every 100 ms until it holds or `ms` pass; returns whether it held. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

/** Asserts a 429 rate_limited with Retry-After in whole seconds (1..60) and the limit it hit. */
function assertRateLimited(t: Test, res: Reply, limit: number, label: string): void {
  t.equal(res.status, 429, `${label}: 429`);
  t.match(res.body, { code: 'rate_limited' }, `${label}: rate_limited`);
  const retryAfter = res.headers.get('retry-after') ?? '';
  t.match(retryAfter, /^[0-9]+$/, `${label}: Retry-After is whole seconds (${retryAfter})`);
  t.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `${label}: Retry-After ${retryAfter} is within 1..60`);
  t.equal(res.headers.get('x-ratelimit-limit'), String(limit), `${label}: x-ratelimit-limit`);
  t.equal(res.headers.get('x-ratelimit-remaining'), '0', `${label}: x-ratelimit-remaining`);
}

/** A keyed quote's body: the fee block on its available venues and the schema applied. */
function assertKeyedQuote(t: Test, res: Reply, label: string): void {
  t.equal(res.status, 200, `${label}: 200`);
  t.match(res.body, { appliedSchema: { schemaId: 'partner-default' } }, `${label}: appliedSchema`);
  const venues = (res.body.venues ?? []) as Array<Record<string, unknown>>;
  t.ok(
    venues.some((v) => v.clientFees !== undefined),
    `${label}: clientFees on an available venue`,
  );
}

/** The access-log lines of `app` for the quote route, oldest first. */
const quoteLines = (app: TestApp) => app.logs().filter((l) => l.msg === 'request completed' && l.route === '/api/quote');

// ---------------------------------------------------------------------------------------------
t.test(
  'two instances "agree on keys": "a key created or revoked while the service runs takes effect within 5 seconds", and "a key revoked on one is revoked on all"',
  redisSkip(redis),
  async (t) => {
    const redisUrl = nextRedisUrl();
    const [a, b] = await twoInstances(t, redisUrl, {}, { patient: true });
    const dataDir = tempDir(t, 'bestex-cli-');
    const env = { REDIS_URL: redisUrl, DATA_DIR: dataDir };

    const created = await runKeysCli(['create', '--name', 'x'], env);
    t.equal(created.code, 0, `create exits 0 (${created.stderr.trim()})`);
    const key = created.stdout.trimEnd().split('\n').at(-1) ?? '';
    t.match(key, /^bx_/, 'the key alone on the last stdout line');

    const url = `${QUOTE}&amount=1`;
    // Keys in Redis are read at each lookup, on every instance: a key takes effect once the CLI
    // has written it, well within the rule's 5 seconds, so it is asserted at once.
    let last = [await get(a, url, key), await get(b, url, key)];
    t.strictSame(last.map((r) => r.status), [200, 200], 'the new key works on both instances');
    assertKeyedQuote(t, last[0]!, 'A');
    assertKeyedQuote(t, last[1]!, 'B');

    const revoked = await runKeysCli(['revoke', key], env);
    t.equal(revoked.code, 0, `revoke exits 0 (${revoked.stderr.trim()})`);
    t.match(revoked.stdout, /revoked at/);

    last = [await get(a, url, key), await get(b, url, key)];
    t.strictSame(last.map((r) => r.status), [401, 401], 'the revoked key is refused on both instances');
    for (const [i, res] of last.entries()) t.match(res.body, { code: 'invalid_key' }, `${i === 0 ? 'A' : 'B'}: invalid_key`);
  },
);

// ---------------------------------------------------------------------------------------------
t.test('two instances "agree on rate limits": "a caller\'s window is counted across all", keyed per key and keyless per IP', redisSkip(redis), async (t) => {
  const [a, b] = await twoInstances(t, nextRedisUrl(), { RATE_LIMIT_KEYED_PER_MINUTE: '5', RATE_LIMIT_KEYLESS_PER_MINUTE: '4' });
  const { key } = await issueKey(a.app.core.keyStore, { name: 'windowed' });
  const url = `${QUOTE}&amount=2`;

  t.test('keyed: 5 requests spread over both instances are allowed, the 6th on either is 429', async (t) => {
    const order = [a, b, a, b, a];
    for (const [i, instance] of order.entries()) {
      const res = await get(instance, url, key);
      t.equal(res.status, 200, `request ${i + 1} on ${instance.name}`);
      t.equal(res.headers.get('x-ratelimit-limit'), '5', `request ${i + 1}: x-ratelimit-limit`);
      // One window across both instances: the count goes down whichever instance answers.
      t.equal(res.headers.get('x-ratelimit-remaining'), String(4 - i), `request ${i + 1} on ${instance.name}: x-ratelimit-remaining`);
    }
    assertRateLimited(t, await get(b, url, key), 5, '6th, on B');
    assertRateLimited(t, await get(a, url, key), 5, '7th, on A');
    // The key's window is not the IP's: keyless requests from the same address are still allowed.
    t.equal((await get(a, url)).status, 200, 'a keyless request from the same IP is counted in its own window');
  });

  t.test('keyless: 4 requests per IP spread over both instances are allowed, the 5th on either is 429', async (t) => {
    // One keyless request was counted above; the window is the IP's, across both instances.
    for (const [i, instance] of [b, a, b].entries()) {
      const res = await get(instance, url);
      t.equal(res.status, 200, `request ${i + 2} on ${instance.name}`);
      t.equal(res.headers.get('x-ratelimit-remaining'), null, 'keyless successes carry no counts (a shared cache may keep them)');
    }
    assertRateLimited(t, await get(a, url), 4, '5th, on A');
    assertRateLimited(t, await get(b, url), 4, '6th, on B');
  });
});

// ---------------------------------------------------------------------------------------------
t.test('keyless windows leased on Redis: a caller\'s cached quotes at an instance cost a round trip only per lease (1, 2, 4 ... 64 hits), and two instances sharing its window still admit exactly its limit', redisSkip(redis), async (t) => {
  t.test('100 cached keyless quotes from one IP at one instance: 7 round trips', async (t) => {
    const redisUrl = nextRedisUrl();
    const app = await testApp({ env: { REDIS_URL: redisUrl, LIVENESS_PROBE_INTERVAL_MS: '3600000', USAGE_FLUSH_MS: '600000', RATE_LIMIT_KEYLESS_PER_MINUTE: '100000' } });
    t.teardown(app.close);
    const url = `${QUOTE}&amount=3`;
    t.equal((await app.server.inject(url)).statusCode, 200, 'the quote computed, and held at the instance');
    await app.core.quotes.settled();
    const count = await roundTripCounter(t, redisUrl);
    const answers: number[] = [];
    const counted = await count(async () => {
      let last = await app.server.inject(url);
      answers.push(last.statusCode);
      for (let i = 1; i < 100; i++) answers.push((last = await app.server.inject(url)).statusCode);
      return last;
    });
    t.ok(answers.every((status) => status === 200), '100 answered');
    t.equal(counted.trips, 7, `leases of 1, 2, 4, 8, 16, 32 and 64 hits (sent: ${counted.commands})`);

    // A keyed window is never leased: its count is in every answer's X-RateLimit-Remaining.
    const { key } = await issueKey(app.core.keyStore, { name: 'never-leased' });
    const keyed = () => app.server.inject({ url, headers: { 'x-api-key': key } });
    t.equal((await count(keyed)).status, 200, 'a keyed quote, its key read at its first use');
    const remaining: Array<string | undefined> = [];
    const keyedTrips = await count(async () => {
      let last = await keyed();
      remaining.push(last.headers['x-ratelimit-remaining'] as string | undefined);
      for (let i = 1; i < 5; i++) remaining.push((last = await keyed()).headers['x-ratelimit-remaining'] as string | undefined);
      return last;
    });
    t.equal(keyedTrips.trips, 5, `5 keyed cached quotes: 5 round trips (sent: ${keyedTrips.commands})`);
    const first = Number(remaining[0]);
    t.strictSame(remaining.map(Number), [first, first - 1, first - 2, first - 3, first - 4], 'each counted as it comes: X-RateLimit-Remaining one less each time');
  });

  t.test('limit 40, a caller alternating between two instances: 40 answered, then 429 on either', async (t) => {
    const [a, b] = await twoInstances(t, nextRedisUrl(), { RATE_LIMIT_KEYLESS_PER_MINUTE: '40', RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '40' });
    const url = `${QUOTE}&amount=4`;
    const statuses: number[] = [];
    for (let i = 0; i < 44; i++) statuses.push((await get(i % 2 === 0 ? a : b, url)).status);
    t.strictSame(statuses, [...Array<number>(40).fill(200), 429, 429, 429, 429], 'exactly its limit admitted');
    assertRateLimited(t, await get(a, url), 40, 'and the next on A');
  });
});

// ---------------------------------------------------------------------------------------------
t.test('the keyless fresh-quote budget is one per IP "counted across all" instances', redisSkip(redis), async (t) => {
  const [a, b] = await twoInstances(t, nextRedisUrl(), { RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '3' });
  // Each amount is a combination neither instance holds, so each draws on the budget.
  for (const [i, [instance, amount]] of ([[a, '11'], [b, '12'], [a, '13']] as const).entries()) {
    t.equal((await get(instance, `${QUOTE}&amount=${amount}`)).status, 200, `fresh quote ${i + 1} on ${instance.name}`);
  }
  const overB = await get(b, `${QUOTE}&amount=14`);
  t.equal(overB.status, 429, '4th fresh quote, on B: 429');
  t.match(overB.body, { code: 'rate_limited' });
  t.match(overB.headers.get('retry-after'), /^[0-9]+$/);
  const overA = await get(a, `${QUOTE}&amount=15`);
  t.equal(overA.status, 429, '5th fresh quote, on A: 429');
  // Only fresh quotes draw on it: a combination any instance computed is still served.
  t.equal((await get(a, `${QUOTE}&amount=11`)).status, 200, 'a combination A holds is served from its cache');
  t.equal((await get(b, `${QUOTE}&amount=12`)).status, 200, 'a combination B holds is served from its cache');
  t.equal((await get(b, `${QUOTE}&amount=11`)).status, 200, 'a combination A computed is served by B from the shared cache: no fresh quote');
});

// ---------------------------------------------------------------------------------------------
t.test('the shared quote cache: "instances serve the same bytes for a combination within its window"', redisSkip(redis), async (t) => {
  // B's clock runs a second ahead of A's, so a body B computed would carry another asOf.
  const [a, b] = await twoInstances(t, nextRedisUrl(), {}, { patient: true, offsetsMs: [0, 1000] });
  const url = `${QUOTE}&amount=7`;
  const fromA = await get(a, url);
  t.equal(fromA.status, 200);
  const fromB = await get(b, url);
  t.equal(fromB.status, 200);
  t.equal(fromB.text, fromA.text, 'byte-identical bodies from A and B');
  t.ok(typeof fromA.body.asOf === 'string', 'the body has an asOf');
  t.equal(fromB.body.asOf, fromA.body.asOf, 'including asOf: B served the body A computed');

  // B took the body from the shared level into its own cache before answering: a hit, as is
  // its second request.
  await b.app.untilLogged(() => quoteLines(b.app).length === 1);
  t.equal(quoteLines(b.app)[0]!.quoteCache, 'hit', "B's first request: quoteCache hit (from the shared level)");
  const again = await get(b, url);
  t.equal(again.text, fromA.text, 'the same bytes again');
  await b.app.untilLogged(() => quoteLines(b.app).length === 2);
  t.equal(quoteLines(b.app)[1]!.quoteCache, 'hit', "B's second request: quoteCache hit");
  await a.app.untilLogged(() => quoteLines(a.app).length === 1);
  t.equal(quoteLines(a.app)[0]!.quoteCache, 'miss', "A's request computed it: miss");
});

// ---------------------------------------------------------------------------------------------
/** `state` with every call that reaches it counted: those the service's guard lets through. */
function counted(state: SharedState): { state: SharedState; calls: () => number } {
  let calls = 0;
  const proxy = new Proxy(state, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        calls += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { state: proxy, calls: () => calls };
}

t.test('a stalled Redis (frozen, connections open): keyless quotes are still answered, without waiting out a timeout each; keyed requests get 503; it recovers when Redis answers again', redisSkip(redis), async (t) => {
  // The service's own adapter (its 300 ms command timeout), wrapped to count the calls that reach
  // Redis: the service guards it as it guards the one it builds.
  const redisUrl = nextRedisUrl();
  const redisState = counted(new RedisSharedState(redisUrl, { commandTimeoutMs: 300 }));
  const app = await testApp({ env: { REDIS_URL: redisUrl }, overrides: { sharedState: redisState.state } });
  t.teardown(async () => {
    await app.close();
    await redisState.state.close();
  });
  const a: Instance = { app, base: await listen(app.server), name: 'A' };
  const { key } = await issueKey(a.app.core.keyStore, { name: 'stall' });
  assertKeyedQuote(t, await get(a, `${QUOTE}&amount=1`, key), 'before the stall');
  redis!.freeze();
  t.teardown(() => redis!.thaw());
  const before = redisState.calls();
  const started = Date.now();
  for (let i = 0; i < 10; i++) t.equal((await get(a, `${QUOTE}&amount=${20 + i}`)).status, 200, `fresh keyless quote ${i + 1} during the stall`);
  const waited = redisState.calls() - before;
  // Each fresh quote asks the shared state up to four times (window, budget, cache read, cache
  // write): forty calls that would each wait out a timeout. Failing fast, only the first one and
  // one probe per retry interval (1 s, on the same clock as the guard's) reach the stalled Redis.
  const probes = 1 + Math.floor((Date.now() - started) / 1000);
  t.ok(waited >= 1 && waited <= 1 + probes, `${waited} calls reached the stalled Redis: the first, and at most one per second since (${probes})`);
  t.equal(a.app.core.health.sharedState(), 'unreachable');
  const keyed = await get(a, `${QUOTE}&amount=1`, key);
  t.equal(keyed.status, 503, 'a keyed request cannot be verified: 503');
  redis!.thaw();
  t.ok(await within(5000, async () => (await get(a, `${QUOTE}&amount=1`, key)).status === 200), 'once Redis answers, keyed requests work again');
  t.equal(a.app.core.health.sharedState(), 'shared');
});

t.test('idempotency records in Redis: "A record holds digests of the request and the caller and the plan\'s JSON: never the taker\'s party, key or IP", read raw from the database', redisSkip(redis), async (t) => {
  const redisUrl = nextRedisUrl();
  const app = await testApp({ env: { REDIS_URL: redisUrl } });
  t.teardown(app.close);
  const { key, record } = await issueKey(app.core.keyStore, { name: 'privacy' });
  const taker = `privacy-taker::1220${'5a'.repeat(32)}`;
  const ip = '198.51.100.77';
  const plan = (url: string, headers: Record<string, string>) =>
    app.server.inject({ method: 'POST', url, remoteAddress: ip, headers, payload: { ...planBody('privacy-1'), takerParty: taker } });
  const keyless = await plan('/api/app/plan', {});
  const keyed = await plan('/api/execute/plan', { 'x-api-key': key });
  t.strictSame([keyless.statusCode, keyed.statusCode], [200, 200], 'both plans made');
  assertRecordsPrivate(t, await redisEntries(redisUrl), { plans: [keyless.body, keyed.body], takerParty: taker, ip, apiKey: key, keyId: record.id });
});

t.test('a new plan on Redis reads its idempotency record in one round trip (this version\'s and the previous version\'s, in one script) and keeps it with one SET NX, in a script of its own', redisSkip(redis), async (t) => {
  const redisUrl = nextRedisUrl();
  const app = await testApp({ env: { REDIS_URL: redisUrl } });
  t.teardown(app.close);
  const plan = (idempotencyKey: string) => app.server.inject({ method: 'POST', url: '/api/app/plan', payload: planBody(idempotencyKey) });
  t.equal((await plan('warm-up')).statusCode, 200, 'a first plan (its quote is then cached)');
  const client = new Redis(redisUrl);
  const monitor = await client.monitor();
  t.teardown(() => {
    monitor.disconnect();
    client.disconnect();
  });
  const seen: string[][] = [];
  const scripted: string[][] = [];
  let ended: () => void = () => {};
  const end = new Promise<void>((resolve) => (ended = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0]?.toLowerCase() === 'echo' && args[1] === 'end-of-plans') ended();
    else if (args.some((arg) => arg.startsWith('bestex:idem:'))) (source === 'lua' ? scripted : seen).push(args);
  });
  t.equal((await plan('counted')).statusCode, 200, 'a new plan');
  t.equal((await plan('counted')).statusCode, 200, 'and its replay');
  // MONITOR's stream lags the replies: everything sent before this ECHO has been shown once it is.
  await client.echo('end-of-plans');
  await end;
  const commands = seen.map((args) => `${args[0]!.toLowerCase()} ${args.filter((arg) => arg.startsWith('bestex:idem:')).length}`);
  t.strictSame(commands, ['evalsha 2', 'evalsha 1', 'evalsha 2'], 'the new plan: one script reading both records and one storing it; its replay: one script');
  const sets = scripted.filter((args) => args[0]!.toLowerCase() === 'set');
  t.equal(sets.length, 1, 'one SET in all');
  t.ok(sets[0]!.includes('NX'), 'the SET takes the key only if no plan holds it');
});


t.test(
  'one Redis round trip per quote, cached or fresh (a fresh one claims the quote in it, and its body replaces the claim after the answer), keyed or keyless: a key costs its lookup only at its first use on an instance, or after a change to the keys (then refused at once if revoked); a new plan makes two, a replay one',
  redisSkip(redis),
  async (t) => {
    const redisUrl = nextRedisUrl();
    // No periodic work while counting: the marker's check, usage flushes and the plan status follower's reads run minutes apart.
    const env = { REDIS_URL: redisUrl, LIVENESS_PROBE_INTERVAL_MS: '3600000', USAGE_FLUSH_MS: '600000', PLAN_STATUS_POLL_MS: '60000' };
    const a = await testApp({ env });
    const b = await testApp({ env });
    t.teardown(a.close);
    t.teardown(b.close);
    const { key, record } = await issueKey(a.core.keyStore, { name: 'round-trips' });
    const quote = (app: TestApp, amount: number, withKey = false) => () => app.server.inject({ url: `${QUOTE}&amount=${amount}`, headers: withKey ? { 'x-api-key': key } : {} });
    const plan = (idempotencyKey: string, withKey = false) => () =>
      a.server.inject({ method: 'POST', url: withKey ? '/api/execute/plan' : '/api/app/plan', payload: planBody(idempotencyKey), headers: withKey ? { 'x-api-key': key } : {} });
    // Warm: each instance's scripts loaded (a first EVALSHA meets NOSCRIPT, then EVAL, and MONITOR
    // shows no command that failed), the plans' quote cached here.
    t.equal((await quote(a, 1)()).statusCode, 200);
    t.equal((await quote(b, 1)()).statusCode, 200);
    t.equal((await plan('warm-up')()).statusCode, 200);
    const count = await roundTripCounter(t, redisUrl);

    // A fresh quote's body is written after its answer (test/core/quotes/quote-cache.test.ts holds that it is
    // answered before): counted here once the instance says every such write is done.
    const expected: Array<[string, () => Promise<{ statusCode: number; body: string }>, number, TestApp | null]> = [
      ['keyless fresh quote', quote(a, 7), 1, a],
      ['keyless quote cached here', quote(a, 7), 1, null],
      ['keyless quote cached by another instance', quote(b, 7), 1, null],
      ['keyed fresh quote, the key\'s first use on this instance: its lookup too', quote(a, 8, true), 2, a],
      ['keyed quote cached here', quote(a, 8, true), 1, null],
      ['keyed quote cached by another instance, the key\'s first use there: its lookup too', quote(b, 8, true), 2, null],
      ['keyed fresh quote', quote(b, 9, true), 1, b],
      ['keyed quote cached by another instance', quote(a, 9, true), 1, null],
      ['keyless new plan', plan('trips-1'), 2, null],
      ['keyless replay', plan('trips-1'), 1, null],
      ['keyed new plan', plan('trips-2', true), 2, null],
      ['keyed replay', plan('trips-2', true), 1, null],
    ];
    for (const [what, request, trips, writer] of expected) {
      const counted = await count(request, writer ? () => writer.core.quotes.settled() : undefined);
      t.equal(counted.status, 200, `${what}: 200 (${counted.status === 200 ? 'a quote or plan' : counted.body})`);
      if (!writer) {
        t.equal(counted.trips, trips, `${what}: ${trips} round trip(s) (sent: ${counted.commands})`);
        continue;
      }
      t.equal(counted.trips, trips + 1, `${what}: ${trips} round trip(s), then its body's write (sent: ${counted.commands})`);
      const [claiming, written] = [counted.sent[trips - 1]!, counted.sent[trips]!];
      t.ok(claiming.some((arg) => arg.startsWith('claim:')), `${what}: its round trip claims the quote`);
      // A keyed answer is the base body with the partner's fee lines: the same quote, as its asOf says.
      // The shared record is its venues' impacts, a newline (which MONITOR shows escaped, as the two characters \n), then the body.
      const record = written.find((arg) => arg.startsWith('{') && arg.includes('\\n'));
      const body = record?.slice(record.indexOf('\\n') + 2);
      const asOf = (text: string | undefined) => (text === undefined ? undefined : (JSON.parse(text) as { asOf?: string }).asOf);
      t.ok(body !== undefined && asOf(body) === asOf(counted.body) && written.some((arg) => arg.startsWith('claim:')), `${what}: then the body answered replaces that claim`);
    }

    t.ok(await a.core.keyStore.revoke({ id: record.id }, new Date()), 'the key revoked at A');
    for (const [what, request] of [['at B', quote(b, 8, true)], ['at A', quote(a, 8, true)]] as const) {
      const refused = await count(request);
      t.equal(refused.status, 401, `${what}, the next request with it: 401, at once (${refused.body})`);
      t.match(JSON.parse(refused.body), { code: 'invalid_key' });
      t.equal(refused.trips, 2, `${what}: one round trip more than a cached quote, the key read again (sent: ${refused.commands})`);
    }
    const again = await count(quote(b, 8, true));
    t.equal(again.status, 401, 'and the next: 401');
    t.equal(again.trips, 1, 'the revoked record kept: its refusal counted in the caller\'s keyless window, nothing read');
  },
);

// ---------------------------------------------------------------------------------------------
// Last: it takes the file's Redis down and brings it back empty.
t.test(
  '"Redis going away mid-run must not crash the process": "keyed requests get 503", "rate limiting degrades to per-instance counting, and says so in the logs and status"; then it recovers',
  redisSkip(redis),
  async (t) => {
    const [a, b] = await twoInstances(t, nextRedisUrl(), { RATE_LIMIT_KEYLESS_PER_MINUTE: '3' });
    const url = `${QUOTE}&amount=3`;
    const before = await issueKey(a.app.core.keyStore, { name: 'before-outage' });
    assertKeyedQuote(t, await get(b, url, before.key), 'before the outage, B');
    t.equal(a.app.core.health.sharedState(), 'shared');
    t.equal(b.app.core.health.sharedState(), 'shared');

    await redis!.stop();
    t.ok(
      await within(5000, () => a.app.core.health.sharedState() === 'unreachable' && b.app.core.health.sharedState() === 'unreachable'),
      'both instances notice Redis is gone',
    );

    t.test('keyless quotes are still served', async (t) => {
      const res = await get(a, url);
      t.equal(res.status, 200, 'keyless quote on A (its 1st keyless request while Redis is away)');
      t.ok(Array.isArray(res.body.venues));
    });

    t.test('a keyed request with a valid key gets 503 key_verification_unavailable with Retry-After: never 401, never a keyless answer', async (t) => {
      for (const instance of [a, b]) {
        const res = await get(instance, url, before.key);
        t.equal(res.status, 503, `${instance.name}: 503`);
        t.match(res.body, { code: 'key_verification_unavailable' }, `${instance.name}: key_verification_unavailable`);
        t.notOk('venues' in res.body, `${instance.name}: no quote in the body`);
        t.match(res.headers.get('retry-after'), /^[0-9]+$/, `${instance.name}: Retry-After`);
      }
      // B read the key before the outage: its plan, like its quote, is refused for the key it cannot verify.
      const plan = await post(b, '/api/execute/plan', planBody('keyed-during-outage'), before.key);
      t.equal(plan.status, 503, 'a keyed plan at B: 503');
      t.match(plan.body, { code: 'key_verification_unavailable' }, 'key_verification_unavailable, as for a key its instance never read');
    });

    t.test('/api/status: shared-state unreachable, rate-limits per-instance, state degraded', async (t) => {
      const res = await get(a, '/api/status');
      t.equal(res.status, 200);
      t.match(res.body, { state: 'degraded' });
      const components = new Map((res.body.components as Array<{ component: string; state: string }>).map((c) => [c.component, c.state]));
      t.equal(components.get('shared-state'), 'unreachable');
      t.equal(components.get('rate-limits'), 'per-instance');
      t.equal(components.get('plans'), 'not_served', 'no plan can be made without its idempotency records');
      t.match(res.body, { mode: 'monitor' });
    });

    t.test('rate limiting keeps working, per instance', async (t) => {
      // Counted in A's IP window so far: one keyless quote (a keyed request that could not be
      // verified counts in no window, and /api/status is not rate-limited).
      t.equal((await get(a, url)).status, 200, 'A: 2nd keyless quote');
      t.equal((await get(a, url)).status, 200, 'A: 3rd keyless quote, at its limit');
      assertRateLimited(t, await get(a, url), 3, 'A: 4th keyless quote');
      // B counts its own window: A's requests are not in it while Redis is away.
      t.equal((await get(b, url)).status, 200, 'B: its 1st keyless request is allowed');
    });

    t.test('a plan is refused with 503 at_capacity and Retry-After, as the contract has it, nothing created, rather than made without its idempotency record', async (t) => {
      const res = await post(b, '/api/app/plan', planBody('during-outage'));
      t.equal(res.status, 503);
      t.match(res.body, { code: 'at_capacity', error: 'plans cannot be made right now: the shared state is unreachable; nothing was created; retry in 5 seconds' });
      t.equal(res.headers.get('retry-after'), '5');
    });

    t.test('the logs say the shared state is unreachable and rate limits are counted per instance', async (t) => {
      for (const instance of [a, b]) {
        const lines = instance.app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('shared state unreachable'));
        t.equal(lines.length, 1, `${instance.name}: said once, not once per request or retry`);
        t.equal(lines[0]?.level, 40, `${instance.name}: at warn`);
        t.match(lines[0]?.msg, /per instance/, `${instance.name}: names the degradation`);
        t.notOk(
          instance.app.logs().some((l) => typeof l.level === 'number' && l.level >= 50),
          `${instance.name}: no error lines (nothing unexpected was thrown)`,
        );
      }
    });

    t.test('when Redis is back: status shared again, an info line, and a newly issued key works on both', async (t) => {
      await redis!.restart();
      t.ok(
        await within(10_000, () => a.app.core.health.sharedState() === 'shared' && b.app.core.health.sharedState() === 'shared'),
        'both instances reconnect',
      );
      for (const instance of [a, b]) {
        const res = await get(instance, '/api/status');
        t.equal(res.status, 200);
        const components = new Map((res.body.components as Array<{ component: string; state: string }>).map((c) => [c.component, c.state]));
        t.equal(components.get('shared-state'), 'shared', `${instance.name}: shared-state shared`);
        t.equal(components.get('rate-limits'), 'shared', `${instance.name}: rate-limits shared`);
        const back = instance.app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('shared state reachable again'));
        t.equal(back.length, 1, `${instance.name}: one "reachable again" line`);
        t.equal(back[0]?.level, 30, `${instance.name}: at info`);
      }
      // The restarted test Redis keeps no data (the helper runs it without persistence): the key
      // issued before the outage is gone with it, and the service says so with a 503 (the store
      // lost its data), never a 401 that would tell the partner its key is bad. Each instance
      // notices the loss at its first request that reaches the store.
      for (const instance of [a, b]) {
        const lost = await get(instance, url, before.key);
        t.equal(lost.status, 503, `${instance.name}: a key the store lost is 503 key_verification_unavailable`);
        t.match(lost.body, { code: 'key_verification_unavailable' });
        t.equal(instance.app.core.health.sharedState(), 'lost', `${instance.name}: the loss noticed by that request`);
      }
      const after = await issueKey(b.app.core.keyStore, { name: 'after-outage' });
      assertKeyedQuote(t, await get(a, url, after.key), 'after recovery, A');
      assertKeyedQuote(t, await get(b, url, after.key), 'after recovery, B');
      for (const instance of [a, b]) {
        const res = await get(instance, '/api/status');
        t.equal(res.body.state, 'degraded', `${instance.name}: still degraded: what was lost is not back because the store answers again`);
      }
    });
  },
);

t.test('plans on two instances: "Records live in the shared-state port, so replay works across instances"; "Concurrent identical requests produce exactly one plan"', redisSkip(redis), async (t) => {
  const [a, b] = await twoInstances(t, nextRedisUrl());
  const { key } = await issueKey(a.app.core.keyStore, { name: 'plans' });
  for (const [route, send] of [
    ['/api/execute/plan', (i: Instance, body: unknown) => post(i, '/api/execute/plan', body, key)],
    ['/api/app/plan', (i: Instance, body: unknown) => post(i, '/api/app/plan', body)],
  ] as const) {
    const made = await send(a, planBody(`${route}-1`));
    t.equal(made.status, 200, `${route}: made on A`);
    const replayed = await send(b, planBody(`${route}-1`));
    t.equal(replayed.text, made.text, `${route}: replayed on B, byte for byte`);
    if (route === '/api/execute/plan') t.equal(replayed.headers.get('x-ratelimit-remaining'), null, `${route}: a replay carries no rate-limit headers`);
    const conflict = await send(b, planBody(`${route}-1`, '5'));
    t.equal(conflict.status, 409, `${route}: another amount under the key, on B`);
    t.match(conflict.body, { code: 'idempotency_conflict' });
    const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i % 2 ? a : b, planBody(`${route}-2`))));
    t.strictSame([...new Set(racing.map((r) => r.status))], [200], `${route}: all answered`);
    t.equal(new Set(racing.map((r) => r.text)).size, 1, `${route}: concurrent identical requests on both instances get one plan`);
  }
});

t.test('keyed plans on two instances: X-RateLimit-Remaining falls by exactly one for each new plan (and for a refused one, as for any 4xx) and not at all for a replay, which carries no rate-limit headers', redisSkip(redis), async (t) => {
  const [a, b] = await twoInstances(t, nextRedisUrl(), { RATE_LIMIT_KEYED_PER_MINUTE: '20' }, { patient: true });
  const { key } = await issueKey(a.app.core.keyStore, { name: 'plan-window' });
  const made = new Map<string, string>();
  const seen: string[] = [];
  const steps: Array<[Instance, 'new' | 'replay' | 'conflict', string]> = [
    [a, 'new', 'window-1'],
    [b, 'replay', 'window-1'],
    [b, 'new', 'window-2'],
    [a, 'replay', 'window-2'],
    [a, 'replay', 'window-1'],
    [a, 'new', 'window-3'],
    [b, 'conflict', 'window-1'],
    [b, 'replay', 'window-3'],
    [b, 'new', 'window-4'],
    [a, 'replay', 'window-4'],
    [a, 'new', 'window-5'],
  ];
  for (const [instance, what, idempotencyKey] of steps) {
    const res = await post(instance, '/api/execute/plan', planBody(idempotencyKey, what === 'conflict' ? '5' : '100'), key);
    if (what === 'new') made.set(idempotencyKey, res.text);
    if (what === 'replay') t.equal(res.text, made.get(idempotencyKey), `${idempotencyKey} replayed on ${instance.name}, byte for byte`);
    seen.push(`${what} ${idempotencyKey} on ${instance.name}: ${res.status}, limit ${res.headers.get('x-ratelimit-limit')}, remaining ${res.headers.get('x-ratelimit-remaining')}`);
  }
  t.strictSame(seen, [
    'new window-1 on A: 200, limit 20, remaining 19',
    'replay window-1 on B: 200, limit null, remaining null',
    'new window-2 on B: 200, limit 20, remaining 18',
    'replay window-2 on A: 200, limit null, remaining null',
    'replay window-1 on A: 200, limit null, remaining null',
    'new window-3 on A: 200, limit 20, remaining 17',
    'conflict window-1 on B: 409, limit 20, remaining 16',
    'replay window-3 on B: 200, limit null, remaining null',
    'new window-4 on B: 200, limit 20, remaining 15',
    'replay window-4 on A: 200, limit null, remaining null',
    'new window-5 on A: 200, limit 20, remaining 14',
  ], 'one window across both instances: one less per new or refused plan, the same after any number of replays');
});

t.test('the plan-record share on two instances: plans refused before a record is made (400 and 409, past the share as many as sent, the venue\'s refusal at quote time too) spend none of it, nor do replays; made plans spend it, and past it a new plan is 429 rate_limited, which spends none either', redisSkip(redis), async (t) => {
  const share = { PLAN_RECORDS_PER_IP: '2', PLAN_RECORDS_PER_KEY: '2' };
  const redisUrl = nextRedisUrl();
  const [a, b] = await twoInstances(t, redisUrl, { ...COLLECTING, TRADECRAFT_POOL_PARTIES: `CC/USDCx=${POOL_USDCX}`, ...share }, { patient: true });
  const reader = new Redis(redisUrl);
  t.teardown(() => reader.disconnect());
  // Its schema caps the integrator fee at 0 bps: any feeBps is over this key's cap.
  const { key } = await issueKey(a.app.core.keyStore, { name: 'share', schemaId: 'b2c-default' });
  const routes = [
    { route: '/api/app/plan', apiKey: undefined, caller: 'address', feeRefusal: 'bad_request', takerRefusal: 'bad_request', feeParty: FEE_PARTIES.B2C_FEE_PARTY },
    { route: '/api/execute/plan', apiKey: key, caller: 'key', feeRefusal: 'bad_fee_params', takerRefusal: 'bad_party', feeParty: FEE_PARTIES.SERVICE_FEE_PARTY },
  ] as const;
  for (const { route, apiKey, caller, feeRefusal, takerRefusal, feeParty } of routes) {
    const send = (instance: Instance, body: Record<string, unknown>) => post(instance, route, body, apiKey);
    const refusals: Array<[string, Record<string, unknown>, number, string]> = [
      ['slippageBps out of range', { slippageBps: 5001 }, 400, 'bad_request'],
      ['an unknown venue', { venueId: 'nope' }, 400, 'bad_request'],
      ['a venue not executable in v1', { venueId: 'cantex' }, 409, 'venue_unavailable'],
      ['a pair without a CC leg', { from: 'USDCx', to: 'CBTC' }, 409, 'unsupported_pair'],
      ['a pair without a pool party', { to: 'CBTC' }, 400, 'no_pool'],
      ['the taker is the pool', { takerParty: POOL_USDCX }, 400, takerRefusal],
      ['the taker is a fee party', { takerParty: feeParty }, 400, takerRefusal],
      ['fee params (keyless: none taken; keyed: over the key\'s cap of 0 bps)', { feeBps: 5, feeRecipient: `wallet-co::1220${'a'.repeat(64)}` }, 400, feeRefusal],
      // Counted before the venue is asked, then taken back.
      ['an amount the venue does not quote, refused at quote time', { amount: '0.0000000001' }, 409, 'venue_unavailable'],
    ];
    for (const [i, [what, change, status, code]] of refusals.entries()) {
      const instance = i % 2 === 0 ? a : b;
      const res = await send(instance, { ...planBody(`${route}-refused-${i}`), ...change });
      t.equal(res.status, status, `${route}, ${what}, on ${instance.name}: ${status}`);
      t.match(res.body, { code }, `${route}, ${what}: ${code}`);
    }
    const first = await send(a, planBody(`${route}-share-1`));
    t.equal(first.status, 200, `${route}: after ${refusals.length} refused plans, the first new plan is made, on A (${first.status === 200 ? 'a plan' : first.text})`);
    for (const instance of [b, a, b]) {
      const conflict = await send(instance, planBody(`${route}-share-1`, '5'));
      t.equal(conflict.status, 409, `${route}: another request under the first plan's key, on ${instance.name}: 409`);
      t.match(conflict.body, { code: 'idempotency_conflict' }, `${route}: idempotency_conflict`);
      t.equal((await send(instance, planBody(`${route}-share-1`))).text, first.text, `${route}: the first plan replayed on ${instance.name}`);
    }
    const second = await send(b, planBody(`${route}-share-2`));
    t.equal(second.status, 200, `${route}: the second new plan is made, on B: the share is 2 (${second.status === 200 ? 'a plan' : second.text})`);
    const over = await send(a, planBody(`${route}-share-3`));
    t.equal(over.status, 429, `${route}: the third new plan, on A, is past the share: 429`);
    t.equal((await send(b, planBody(`${route}-share-4`))).status, 429, `${route}: and the fourth, on B`);
    const windowKey = route === '/api/app/plan' ? 'bestex:rate:plans:ip:127.0.0.1' : (await reader.keys('bestex:rate:plans:key:*'))[0]!;
    t.equal(await reader.get(windowKey), '2', `${route}: the share's window counts the two plans made, nothing refused`);
    t.match(over.body, { code: 'rate_limited', error: new RegExp(`^this ${caller} has made 2 plans in the last 5 minutes`) }, `${route}: rate_limited, the share named`);
    const retryAfter = Number(over.headers.get('retry-after'));
    t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 300, `${route}: Retry-After within the 5-minute window (${over.headers.get('retry-after')})`);
    t.equal((await send(b, planBody(`${route}-share-2`))).text, second.text, `${route}: past the share, a made plan still replays`);
  }
});

t.test('"Idempotency records fingerprint the taker with a keyed hash", in Redis: the raw keys and values hold no plain digest of the taker, the request or the caller; an instance with another secret cannot read them; a record of the previous version still replays', redisSkip(redis), async (t) => {
  const redisUrl = nextRedisUrl();
  const [a] = await twoInstances(t, redisUrl);
  const body = planBody('hmac-1');
  const made = await post(a, '/api/app/plan', body);
  t.equal(made.status, 200);
  const reader = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  t.teardown(() => reader.quit());
  const keys = await reader.keys('bestex:idem:*');
  t.equal(keys.length, 1, 'one record');
  const raw = `${keys[0]}\n${await reader.get(keys[0]!)}`;
  const plainDigests = (text: string) => [hash('sha256', text, 'hex'), hash('sha256', text, 'base64url'), hash('sha256', text, 'base64')];
  const fingerprint = parsePlanRequest(body, 'app').fingerprint;
  for (const guess of [...plainDigests(body.takerParty), ...plainDigests('caller\0app:127.0.0.1'), ...plainDigests('app:127.0.0.1'), fingerprint]) {
    t.notOk(raw.includes(guess), `no plain digest ${guess.slice(0, 12)}... in the stored key or record`);
  }
  t.match(raw, /\nplan-record\/3\n/, 'the record\'s digests are keyed (plan-record/3)');

  const stranger = await testApp({ env: { REDIS_URL: redisUrl, IDEMPOTENCY_SECRET: 'another-secret-0123456789abcdef-0123' } });
  t.teardown(stranger.close);
  const elsewhere = await post({ app: stranger, base: await listen(stranger.server), name: 'C' }, '/api/app/plan', body);
  t.equal(elsewhere.status, 200);
  t.not(elsewhere.text, made.text, 'under another secret the record is not found: its digests cannot be tested without the secret');

  // As the previous version stored a record: plain digests under a plain key.
  const plain = (text: string) => hash('sha256', text, 'base64url');
  const boundTo = plain('caller\0app:127.0.0.1');
  const legacyBody = planBody('written-by-the-previous-version');
  const legacyPlan = '{"planId":"pl_previous_version"}';
  await reader.set(`bestex:idem:${plain(`${boundTo}\0${legacyBody.idempotencyKey}`)}`, `plan-record/2\n${parsePlanRequest(legacyBody, 'app').fingerprint}\n${boundTo}\n${legacyPlan}`, 'PX', 60_000);
  const replayed = await post(a, '/api/app/plan', legacyBody);
  t.equal(replayed.status, 200);
  t.equal(replayed.text, legacyPlan, 'a retry reaching a new instance during a rolling deploy replays the plan the old one made');
  t.equal((await post(a, '/api/app/plan', { ...legacyBody, amount: '5' })).status, 409, 'another request under that key is still a conflict');
});

t.test('Redis coming back empty is noticed: one error line, shared-state lost in the status (which the bestex_status_component metric mirrors), keyed requests 503 with the reason; a plan retried after its record was lost has the same planId', redisSkip(redis), async (t) => {
  const redisUrl = nextRedisUrl();
  // The marker is read at the probe interval.
  const app = await testApp({ env: { REDIS_URL: redisUrl, LIVENESS_PROBE_INTERVAL_MS: '100' } });
  t.teardown(app.close);
  const a: Instance = { app, base: await listen(app.server), name: 'A' };
  const { key } = await issueKey(a.app.core.keyStore, { name: 'before the loss' });
  assertKeyedQuote(t, await get(a, `${QUOTE}&amount=1`, key), 'before the loss');
  const first = await post(a, '/api/app/plan', planBody('lost-and-retried'));
  t.equal(first.status, 200, first.text);
  t.equal(a.app.core.health.sharedState(), 'shared');

  await redis!.restart();
  t.ok(await within(10_000, () => a.app.core.health.sharedState() === 'lost'), 'the status reads shared-state lost');
  const status = await get(a, '/api/status');
  t.match(status.body, { state: 'degraded', components: [{}, {}, {}, {}, {}, {}, { component: 'shared-state', state: 'lost' }] });
  const lines = a.app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('the shared state lost its data'));
  t.equal(lines.length, 1, 'one error line');
  t.equal(lines[0]?.level, 50);

  const keyed = await get(a, `${QUOTE}&amount=1`, key);
  t.equal(keyed.status, 503, 'the keys went with the data: a keyed request cannot be verified');
  const again = await post(a, '/api/app/plan', planBody('lost-and-retried'));
  t.equal(again.status, 200, again.text);
  t.equal(again.body.planId, first.body.planId, 'the same plan id: the ledger runs it at most once (commandId = planId)');
  await sleep(300);
  t.equal(a.app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('the shared state lost its data')).length, 1, 'said once, not at every check');
});
