// Partner keys' usage counters: "Usage counters live in the shared state (in-process or
// Redis, so every instance counts and the portal shows the sum), bucketed per day, expiring after 8
// days; counting costs the quote hot path no more than one in-memory increment". Over HTTP on the
// real app, and on the counter itself with a fake clock for day boundaries and expiry. Flushes are
// explicit calls: no test waits on the wall clock.
import t from 'tap';
import { Redis } from 'ioredis';
import type { FastifyRequest } from 'fastify';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Document } from 'openapi-backend';
import { generateKey } from '../../../core/keys/api-key.js';
import type { CoreLog } from '../../../core/log.js';
import { RedisSharedState } from '../../../core/state/redis.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState } from '../../../core/state/shared-state.js';
import { UsageCounter } from '../../../core/usage/usage-counter.js';
import { DAY_MS } from '../../../core/usage/utc-days.js';
import { repoRoot } from '../../../handlers/app.js';
import { keyedOperations, usageCounting } from '../../../handlers/http/usage-counting.js';
import { testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { inProcessEntries, redisEntries } from '../../helpers/stored.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());

let databases = 0;
/** A Redis database of the test's own: the service's keys are under one fixed prefix. */
const nextRedisUrl = () => `${redis!.url}/${++databases}`;

const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';
const TAKER = `alice::1220${'b'.repeat(64)}`;
let plans = 0;
const planBody = () => ({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: `usage-${++plans}` });
/** Background flushes far apart: each test flushes when it means to. */
const QUIET = { USAGE_FLUSH_MS: '600000' };

/** 2026-03-14T00:00:00Z: a UTC midnight. */
const MIDNIGHT = Date.UTC(2026, 2, 14);
const HOUR = 3_600_000;

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function started(t: Test, options: TestAppOptions = {}): Promise<TestApp> {
  const app = await testApp({ ...options, env: { ...QUIET, ...options.env } });
  t.teardown(app.close);
  return app;
}

const quote = (app: TestApp, key?: string) => app.server.inject({ url: QUOTE, headers: key === undefined ? {} : { 'x-api-key': key } });
const partnerPlan = (app: TestApp, key: string) => app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: planBody(), headers: { 'x-api-key': key } });
const today = () => new Date().toISOString().slice(0, 10);

/** A log that keeps its lines. */
function memoryLog(): CoreLog & { lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  const push = (level: string) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, message, fields });
  return { lines, info: push('info'), warn: push('warn'), error: push('error') };
}

/** A shared state (as Redis is) that can be cut off: its counts live in an in-process state. */
function flakyState(now: () => number): SharedState & { reachable: boolean; inner: InProcessSharedState } {
  const inner = new InProcessSharedState(now);
  const state = {
    reachable: true,
    inner,
    shared: true,
    hit: (key: string, windowMs: number) => inner.hit(key, windowMs),
    get: (key: string) => inner.get(key),
    exchange: (exchange: Parameters<SharedState['exchange']>[0]) => inner.exchange(exchange),
    getValues: (keys: readonly string[]) => inner.getValues(keys),
    setIfAbsent: (key: string, value: string, ttlMs: number) => inner.setIfAbsent(key, value, ttlMs),
    replaceIf: (key: string, expected: string, value: string | null, ttlMs: number) => inner.replaceIf(key, expected, value, ttlMs),
    mapGet: (map: string, field: string) => inner.mapGet(map, field),
    mapFields: (map: string, fields: readonly string[], version: string) => inner.mapFields(map, fields, version),
    mapSet: (map: string, field: string, value: string, version?: string) => inner.mapSet(map, field, value, version),
    mapSetIfAbsent: (map: string, field: string, value: string, version?: string) => inner.mapSetIfAbsent(map, field, value, version),
    mapDelete: (map: string, field: string, version?: string) => inner.mapDelete(map, field, version),
    peek: (key: string) => inner.peek(key),
    unhit: (key: string) => inner.unhit(key),
    mapEntries: (map: string) => (state.reachable ? inner.mapEntries(map) : Promise.reject(new SharedStateUnavailable('Redis at db:6379 is unreachable'))),
    incrementMaps: (increments: Parameters<SharedState['incrementMaps']>[0]) =>
      state.reachable ? inner.incrementMaps(increments) : Promise.reject(new SharedStateUnavailable('Redis at db:6379 is unreachable')),
    close: () => inner.close(),
  };
  return state;
}

// ---------------------------------------------------------------------------------------------
// Over HTTP, one instance.

t.test('"counts match the requests made": keyed quotes and plans by operationId, a 429 counted under keyed-window, shown at once by the instance that served them', async (t) => {
  const app = await started(t, { env: { RATE_LIMIT_KEYED_PER_MINUTE: '4' } });
  const { key, record } = await issueKey(app.core.keyStore);
  for (let i = 0; i < 3; i++) t.equal((await quote(app, key)).statusCode, 200);
  t.equal((await partnerPlan(app, key)).statusCode, 200);
  const refused = await quote(app, key);
  t.equal(refused.statusCode, 429, 'over the keyed window');
  const expected = [{ date: today(), requests: { getQuote: 4, createExecutePlan: 1 }, rateLimited: { 'keyed-window': 1 } }];
  t.strictSame(await app.core.usage.days(record.id), expected, 'before any flush: this instance\'s own counts');
  await app.core.usage.flush();
  t.equal(app.core.usage.pending, 0, 'the flush took every count');
  t.strictSame(await app.core.usage.days(record.id), expected, 'after the flush: the same counts, from the shared state');
});

t.test('"keyless and invalid-key requests are not counted to anyone"; nor are operations that take no key, sent with one', async (t) => {
  const app = await started(t);
  const { key, record } = await issueKey(app.core.keyStore);
  t.equal((await quote(app)).statusCode, 200, 'keyless');
  t.equal((await quote(app, generateKey())).statusCode, 401, 'a key that is no key of ours');
  t.equal((await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: planBody(), headers: { 'x-api-key': generateKey() } })).statusCode, 401);
  t.equal((await app.server.inject({ url: '/api/status', headers: { 'x-api-key': key } })).statusCode, 200, 'the status takes no key');
  t.equal((await app.server.inject({ url: '/api/liveness', headers: { 'x-api-key': key } })).statusCode, 200);
  t.equal(app.core.usage.pending, 0, 'nothing pending');
  await app.core.usage.flush();
  t.strictSame(await app.core.usage.days(record.id), []);
  const state = app.core.usage['state'] as InProcessSharedState;
  t.strictSame(
    inProcessEntries(state).filter((e) => e.key.startsWith('usage:')),
    [],
    'no usage counted in the shared state',
  );
});

t.test('"Portal operations are not API traffic": only the v1 operations that take a key are counted, whatever a request is annotated with', async (t) => {
  const definition = parse(readFileSync(path.join(repoRoot(), 'openapi', 'v1.yaml'), 'utf8')) as Document;
  t.strictSame([...keyedOperations(definition)].sort(), ['createExecutePlan', 'getQuote'], 'the keyed operations of openapi/v1.yaml');
  const recorded: Array<[string, string, string | null]> = [];
  const count = usageCounting({ record: (...args) => void recorded.push(args) }, [definition]);
  const request = (operationId: string | null, logFields: FastifyRequest['logFields']) => ({ operationId, logFields }) as FastifyRequest;
  count(request('getKey', { partnerId: 'key_portal' }));
  count(request('rotateKey', { partnerId: 'key_portal', rateLimit: 'keyed-window' }));
  count(request(null, { partnerId: 'key_portal' }));
  count(request('getQuote', null));
  count(request('getQuote', { ref: 'x' }));
  t.strictSame(recorded, [], 'a portal operation, an unrouted request and a keyless one are not counted');
  count(request('getQuote', { partnerId: 'key_a' }));
  count(request('createExecutePlan', { partnerId: 'key_a', rateLimit: 'keyed-window' }));
  t.strictSame(recorded, [
    ['key_a', 'getQuote', null],
    ['key_a', 'createExecutePlan', 'keyed-window'],
  ]);
});

// ---------------------------------------------------------------------------------------------
// The counter, on a fake clock.

t.test('"bucketed per day": counts fall in the UTC day they were made, across midnight; a reader gets the last 7 days with traffic, oldest first', async (t) => {
  let now = MIDNIGHT - 1;
  const state = new InProcessSharedState(() => now);
  const usage = new UsageCounter({ state, log: memoryLog(), flushMs: null, now: () => now });
  t.teardown(() => usage.close());
  usage.record('key_a', 'getQuote', null);
  await usage.flush();
  usage.record('key_a', 'getQuote', 'keyed-window');
  now = MIDNIGHT;
  usage.turnDay();
  usage.record('key_a', 'getQuote', null);
  usage.record('key_a', 'createExecutePlan', null);
  t.strictSame(await usage.days('key_a'), [
    { date: '2026-03-13', requests: { getQuote: 2 }, rateLimited: { 'keyed-window': 1 } },
    { date: '2026-03-14', requests: { getQuote: 1, createExecutePlan: 1 }, rateLimited: {} },
  ], 'the last millisecond of the 13th and the first of the 14th, flushed or pending');
  await usage.flush();
  t.strictSame((await usage.days('key_a')).map((d) => d.date), ['2026-03-13', '2026-03-14']);
  t.strictSame(await usage.days('key_b'), [], 'another key has none');

  // Traffic on each of the next 7 days but one: 8 days with traffic are kept, 7 shown.
  for (let day = 1; day <= 7; day++) {
    if (day === 3) continue;
    now = MIDNIGHT + day * DAY_MS + HOUR;
    usage.turnDay();
    usage.record('key_a', 'getQuote', null);
  }
  await usage.flush();
  t.strictSame(
    (await usage.days('key_a')).map((d) => d.date),
    ['2026-03-14', '2026-03-15', '2026-03-16', '2026-03-18', '2026-03-19', '2026-03-20', '2026-03-21'],
    'the last 7 with traffic, oldest first, the day without left out',
  );
});

t.test('"counting reads no clock": the day counted in turns at each UTC midnight by a timer (one fired early waits out the rest), and at each flush', async (t) => {
  let now = MIDNIGHT - 10 * HOUR;
  const timers: Array<{ turn: () => void; ms: number; cancelled: boolean }> = [];
  const schedule = (turn: () => void, ms: number) => {
    const timer = { turn, ms, cancelled: false };
    timers.push(timer);
    return () => void (timer.cancelled = true);
  };
  const state = new InProcessSharedState(() => now);
  const usage = new UsageCounter({ state, log: memoryLog(), flushMs: 600_000, now: () => now, schedule });
  t.teardown(() => usage.close());
  t.strictSame(timers.map((x) => x.ms), [10 * HOUR], 'the turn is set for the next UTC midnight');
  usage.record('key_a', 'getQuote', null);
  now = MIDNIGHT - 5;
  timers.at(-1)!.turn();
  t.strictSame(timers.map((x) => x.ms), [10 * HOUR, 5], 'a timer that fires before midnight sets one for the rest');
  usage.record('key_a', 'getQuote', null);
  now = MIDNIGHT + 2;
  usage.record('key_a', 'getQuote', null);
  t.strictSame((await usage.days('key_a')).map((d) => [d.date, d.requests.getQuote]), [['2026-03-13', 3]], 'until the turn, the day before: the clock is not read per request');
  timers.at(-1)!.turn();
  t.equal(timers.at(-1)!.ms, DAY_MS - 2, 'then the next midnight');
  usage.record('key_a', 'getQuote', null);
  t.strictSame((await usage.days('key_a')).map((d) => [d.date, d.requests.getQuote]), [['2026-03-13', 3], ['2026-03-14', 1]]);
  now = MIDNIGHT + DAY_MS + 1;
  await usage.flush();
  usage.record('key_a', 'getQuote', null);
  t.strictSame((await usage.days('key_a')).map((d) => [d.date, d.requests.getQuote]), [['2026-03-13', 3], ['2026-03-14', 1], ['2026-03-15', 1]], 'a flush finds the day too, if the timer has not');
  await usage.close();
  t.ok(timers.at(-1)!.cancelled, 'closing cancels the turn');
});

t.test('"expiring after 8 days": in-process, a day\'s counts are gone 8 days after the day began', async (t) => {
  let now = MIDNIGHT + HOUR;
  const state = new InProcessSharedState(() => now);
  const usage = new UsageCounter({ state, log: memoryLog(), flushMs: null, now: () => now });
  t.teardown(() => usage.close());
  usage.record('key_a', 'getQuote', null);
  await usage.flush();
  now = MIDNIGHT + 8 * DAY_MS - 1;
  t.strictSame((await usage.days('key_a')).map((d) => d.date), ['2026-03-14'], 'kept until the end of its 8th day');
  t.equal((await state.mapEntries('usage:key_a:2026-03-14')).size, 1);
  now = MIDNIGHT + 8 * DAY_MS;
  t.strictSame(await usage.days('key_a'), [], 'gone when the 8 days are over');
  t.equal((await state.mapEntries('usage:key_a:2026-03-14')).size, 0, 'the map reads empty');

  now = MIDNIGHT + 20 * DAY_MS;
  usage.turnDay();
  usage.record('key_b', 'getQuote', null);
  now += 8 * DAY_MS;
  await usage.flush();
  t.equal(usage.pending, 0);
  t.equal((await state.mapEntries('usage:key_b:2026-04-03')).size, 0, 'counts pending past their day\'s 8 days are dropped, not written');
});

t.test('"expiring after 8 days": in Redis, each day\'s map expires 8 days after its day began (raw keys\' TTL)', redisSkip(redis), async (t) => {
  const url = nextRedisUrl();
  let now = MIDNIGHT + 5 * HOUR;
  const state = new RedisSharedState(url);
  const usage = new UsageCounter({ state, log: memoryLog(), flushMs: null, now: () => now });
  t.teardown(async () => {
    await usage.close();
    await state.close();
  });
  usage.record('key_a', 'getQuote', null);
  usage.record('key_a', 'getQuote', 'keyed-window');
  await usage.flush();
  now = MIDNIGHT + 2 * DAY_MS + 10 * HOUR;
  usage.turnDay();
  usage.record('key_a', 'createExecutePlan', null);
  await usage.flush();
  const raw = new Redis(url);
  t.teardown(() => raw.disconnect());
  t.strictSame((await raw.keys('*')).sort(), ['bestex:usage:key_a:2026-03-14', 'bestex:usage:key_a:2026-03-16']);
  t.strictSame(await raw.hgetall('bestex:usage:key_a:2026-03-14'), { 'requests:getQuote': '2', 'rateLimited:keyed-window': '1' });
  const first = await raw.pttl('bestex:usage:key_a:2026-03-14');
  const second = await raw.pttl('bestex:usage:key_a:2026-03-16');
  // Set at the fake clock's 05:00 and 10:00: the rest of 8 days from each day's midnight.
  const slack = 60_000;
  t.ok(first <= 8 * DAY_MS - 5 * HOUR && first > 8 * DAY_MS - 5 * HOUR - slack, `the 14th's map: ${first} ms left`);
  t.ok(second <= 8 * DAY_MS - 10 * HOUR && second > 8 * DAY_MS - 10 * HOUR - slack, `the 16th's map: ${second} ms left`);
});

t.test('"shared state down: counts kept and flushed later"; flushing never throws, and the pending counts are bounded', async (t) => {
  let now = MIDNIGHT + HOUR;
  const state = flakyState(() => now);
  const log = memoryLog();
  const usage = new UsageCounter({ state, log, flushMs: null, now: () => now, maxPendingBuckets: 2 });
  t.teardown(() => usage.close());
  usage.record('key_a', 'getQuote', null);
  await usage.flush();
  state.reachable = false;
  usage.record('key_a', 'getQuote', null);
  usage.record('key_b', 'getQuote', 'keyed-window');
  await t.resolves(usage.flush(), 'a flush that cannot reach the shared state resolves');
  t.equal(usage.pending, 2, 'its counts are kept');
  usage.record('key_a', 'createExecutePlan', null);
  t.doesNotThrow(() => usage.record('key_c', 'getQuote', null), 'a key-day with no room is not counted, and the request does not see it');
  await usage.flush();
  await t.rejects(usage.days('key_a'), SharedStateUnavailable, 'a reader is told the shared state is unreachable, not shown part of the counts');
  t.strictSame(
    log.lines.filter((l) => l.level === 'warn').map((l) => l.message),
    [
      'usage counts could not be added to the shared state: they are kept in memory and added with the next flush',
      'usage counts pending for as many key-days as may be: requests of other key-days are not counted until a flush makes room',
    ],
    'said once each, not per flush or per request',
  );

  state.reachable = true;
  usage.record('key_a', 'getQuote', null);
  await usage.flush();
  t.equal(usage.pending, 0);
  t.strictSame(await usage.days('key_a'), [{ date: '2026-03-14', requests: { getQuote: 3, createExecutePlan: 1 }, rateLimited: {} }], 'every count made while it was down, once');
  t.strictSame(await usage.days('key_b'), [{ date: '2026-03-14', requests: { getQuote: 1 }, rateLimited: { 'keyed-window': 1 } }]);
  t.strictSame(await usage.days('key_c'), [], 'the one there was no room for');
  t.match(log.lines.slice(-2), [
    { level: 'info', message: 'usage counts reach the shared state again' },
    { level: 'warn', message: 'requests went uncounted while the pending usage counts were full', fields: { requests: 1 } },
  ]);
});

t.test('a flush and a read run one at a time: counts in flight are neither missed nor counted twice', async (t) => {
  const now = MIDNIGHT + HOUR;
  const state = flakyState(() => now);
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const write = state.incrementMaps;
  state.incrementMaps = async (increments) => {
    await held;
    return write(increments);
  };
  const usage = new UsageCounter({ state, log: memoryLog(), flushMs: null, now: () => now });
  t.teardown(() => usage.close());
  usage.record('key_a', 'getQuote', null);
  const flushing = usage.flush();
  const reading = usage.days('key_a');
  usage.record('key_a', 'getQuote', null);
  release();
  await flushing;
  t.strictSame(await reading, [{ date: '2026-03-14', requests: { getQuote: 2 }, rateLimited: {} }]);
});

// ---------------------------------------------------------------------------------------------
// Over HTTP, on Redis.

t.test('"every instance counts and the portal shows the sum": two app instances sharing Redis, the reader on either shows both instances\' counts', redisSkip(redis), async (t) => {
  const env = { REDIS_URL: nextRedisUrl() };
  const a = await started(t, { env });
  const b = await started(t, { env });
  const { key, record } = await issueKey(a.core.keyStore);
  for (let i = 0; i < 2; i++) t.equal((await quote(a, key)).statusCode, 200);
  for (let i = 0; i < 3; i++) t.equal((await quote(b, key)).statusCode, 200);
  t.equal((await partnerPlan(b, key)).statusCode, 200);
  t.strictSame((await a.core.usage.days(record.id))[0]?.requests, { getQuote: 2 }, 'before the flushes, each shows its own');
  t.strictSame((await b.core.usage.days(record.id))[0]?.requests, { getQuote: 3, createExecutePlan: 1 });
  await a.core.usage.flush();
  t.strictSame((await b.core.usage.days(record.id))[0]?.requests, { getQuote: 5, createExecutePlan: 1 }, "B's pending counts and A's flushed ones");
  await b.core.usage.flush();
  const sum = [{ date: today(), requests: { getQuote: 5, createExecutePlan: 1 }, rateLimited: {} }];
  t.strictSame(await a.core.usage.days(record.id), sum, 'A shows the sum');
  t.strictSame(await b.core.usage.days(record.id), sum, 'B shows the sum');
});

t.test('"graceful shutdown flushes": closing the app adds its pending counts to Redis', redisSkip(redis), async (t) => {
  const url = nextRedisUrl();
  const app = await testApp({ env: { ...QUIET, REDIS_URL: url } });
  const { key, record } = await issueKey(app.core.keyStore);
  t.equal((await quote(app, key)).statusCode, 200);
  t.equal((await partnerPlan(app, key)).statusCode, 200);
  t.equal(app.core.usage.pending, 1);
  await app.close();
  const raw = new Redis(url);
  t.teardown(() => raw.disconnect());
  t.strictSame(await raw.hgetall(`bestex:usage:${record.id}:${today()}`), { 'requests:getQuote': '1', 'requests:createExecutePlan': '1' });
});

t.test('"No party id or key in any stored key/value": the usage maps hold the key\'s id and counts, never the key or the taker', redisSkip(redis), async (t) => {
  const url = nextRedisUrl();
  const app = await started(t, { env: { REDIS_URL: url } });
  const { key, record } = await issueKey(app.core.keyStore);
  t.equal((await quote(app, key)).statusCode, 200);
  t.equal((await partnerPlan(app, key)).statusCode, 200);
  await app.core.usage.flush();
  const usage = (await redisEntries(url)).filter((e) => e.key.startsWith('bestex:usage:'));
  t.strictSame(usage.map((e) => e.key).sort(), [`bestex:usage:${record.id}:${today()} requests:createExecutePlan`, `bestex:usage:${record.id}:${today()} requests:getQuote`]);
  const taker = TAKER.slice(TAKER.indexOf('::') + 2);
  for (const entry of await redisEntries(url)) {
    t.notOk(entry.key.includes(key) || entry.value.includes(key), `${entry.key}: not the key`);
    t.notOk(entry.key.includes(taker) || entry.value.includes(taker), `${entry.key}: not the taker's party`);
  }
});
