// The state marker (core/state/state-marker.ts): a shared state that lost its data is noticed by
// the first request that reaches it, in the same script or transaction as the request's own work
// (no round trip of its own), answered as during an outage, and said once; a marker gone or
// replaced by another instance's is a loss alike. First the marker alone, on a store of the
// test's, then on a private redis-server, then the service on it.
import t from 'tap';
import { Redis } from 'ioredis';
import { CONFIRMED_FOR_MS, StateMarker } from '../../../core/state/state-marker.js';
import { RedisSharedState } from '../../../core/state/redis.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type MarkerWatch } from '../../../core/state/shared-state.js';
import type { CoreLog } from '../../../core/log.js';
import { testApp, type TestApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { roundTripCounter } from '../../helpers/round-trips.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());

/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const LOST_LINE = 'the shared state lost its data';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A log that keeps its error lines. */
function errorLog(): CoreLog & { readonly errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, warn: () => {}, error: (_fields, message) => errors.push(message) };
}

/** This process's state, watched as a store outside it is: the test reads what the watch judges. */
class WatchedState extends InProcessSharedState {
  watch: MarkerWatch | null = null;
  watchMarker(_map: string, _field: string, watch: MarkerWatch): void {
    this.watch = watch;
  }
}

async function startedMarker(clock: () => number = Date.now) {
  const state = new WatchedState();
  const log = errorLog();
  const marker = new StateMarker(state, log, clock);
  await marker.start(3_600_000);
  t.teardown(() => marker.close());
  const known = await state.mapGet('state', 'marker');
  return { state, log, marker, known: known!, watch: state.watch! };
}

t.test('the marker is written at start and watched: the one known confirms what a request read with it', async (t) => {
  const { log, marker, known, watch } = await startedMarker();
  t.ok(known, 'written');
  t.equal(watch(known), true, 'the known marker: the work stands');
  t.equal(marker.lost, false);
  t.strictSame(log.errors, []);
});

t.test('a marker that is gone is a loss: the read that shows it first is refused, said once; the store is then used as it is', async (t) => {
  const { log, marker, watch } = await startedMarker();
  t.equal(watch(null), false, 'the first read without it: its work is answered as during an outage');
  t.equal(marker.lost, true);
  t.equal(watch(null), true, 'later work runs on the store as it is now');
  t.equal(log.errors.length, 1, 'one error line');
  t.ok(log.errors[0]!.startsWith(LOST_LINE));
});

t.test("another instance's marker is a loss, as much as a missing one (an instance started after the loss wrote its own)", async (t) => {
  const { log, marker, known, watch } = await startedMarker();
  t.equal(watch(`${known} but another`), false);
  t.equal(marker.lost, true);
  t.equal(log.errors.length, 1);
});

t.test('an instance started where another wrote the marker keeps that one: no loss', async (t) => {
  const state = new WatchedState();
  await state.mapSetIfAbsent('state', 'marker', 'written by the first instance');
  const log = errorLog();
  const marker = new StateMarker(state, log);
  await marker.start(3_600_000);
  t.teardown(() => marker.close());
  t.equal(await state.mapGet('state', 'marker'), 'written by the first instance');
  t.equal(state.watch!('written by the first instance'), true);
  t.equal(marker.lost, false);
});

t.test('the check at the probe interval notices the loss when no request reaches the store', async (t) => {
  const { state, log, marker } = await startedMarker();
  await marker.check();
  t.equal(marker.lost, false, 'the marker still there');
  await state.mapDelete('state', 'marker');
  await marker.check();
  t.equal(marker.lost, true);
  t.equal(log.errors.length, 1);
});

t.test('leased windows trust the store for CONFIRMED_FOR_MS after the marker was last read as known, and again once it is', async (t) => {
  let now = 1_000_000;
  const { marker, known, watch } = await startedMarker(() => now);
  t.equal(marker.confirmedRecently(), true, 'just written and read');
  now += CONFIRMED_FOR_MS - 1;
  t.equal(marker.confirmedRecently(), true);
  now += 1;
  t.equal(marker.confirmedRecently(), false, 'a second without a read: the next request goes to the store');
  watch(known);
  t.equal(marker.confirmedRecently(), true, 'read again with a request');
  now += CONFIRMED_FOR_MS;
  watch(null);
  t.equal(marker.confirmedRecently(), true, 'the loss known: nothing more to notice');
});

// ---------------------------------------------------------------------------------------------
// On Redis.

/** A Redis adapter on `url` whose marker is watched by a started StateMarker. */
async function watchedRedis(t: Test, url: string) {
  const state = new RedisSharedState(url, { commandTimeoutMs: 60_000 });
  const log = errorLog();
  const marker = new StateMarker(state, log);
  await marker.start(3_600_000);
  t.teardown(async () => {
    await marker.close();
    await state.close();
  });
  return { state, log, marker };
}

let databases = 0;
const nextRedisUrl = () => `${redis!.url}/${++databases}`;

t.test("on Redis, a marker replaced by another instance's is noticed by the next script: every call of it refused as lost, once", redisSkip(redis), async (t) => {
  const url = nextRedisUrl();
  const { state, log, marker } = await watchedRedis(t, url);
  const hit = { key: 'rate:ip:one', windowMs: 60_000 };
  t.equal((await state.exchange({ hits: [hit] })).hits[0]!.count, 1, 'the marker known: answered');
  const other = new Redis(url);
  t.teardown(() => other.disconnect());
  await other.hset('bestex:state', 'marker', 'another instance wrote this after a loss');
  const turn = await Promise.allSettled([state.exchange({ hits: [hit] }), state.setIfAbsent('one', 'x', 60_000), state.exchange({ reads: ['two'] })]);
  t.strictSame(
    turn.map((r) => (r.status === 'rejected' && r.reason instanceof SharedStateUnavailable ? r.reason.reason : r.status)),
    ['lost', 'lost', 'lost'],
    "every call of the script that read another instance's marker",
  );
  t.equal(marker.lost, true);
  t.equal(log.errors.length, 1);
  t.equal((await state.exchange({ hits: [hit] })).hits[0]!.count, 3, 'then the store is used as it is (the refused script had run)');
  t.equal(log.errors.length, 1, 'said once');
});

t.test('on Redis, a flushed store is noticed by a key lookup, in its own transaction', redisSkip(redis), async (t) => {
  const url = nextRedisUrl();
  const { state, marker } = await watchedRedis(t, url);
  await state.mapSet('keys', 'a-hash', 'a record');
  t.strictSame((await state.mapFields('keys', ['a-hash'], 'keys:version')).values, ['a record']);
  const other = new Redis(url);
  t.teardown(() => other.disconnect());
  await other.flushdb();
  await t.rejects(state.mapFields('keys', ['a-hash'], 'keys:version'), { name: 'SharedStateUnavailable', reason: 'lost' });
  t.equal(marker.lost, true);
});

t.test('a request reads the marker in its own script or key lookup: no round trip of its own (MONITOR)', redisSkip(redis), async (t) => {
  const url = nextRedisUrl();
  const app = await testApp({ env: { REDIS_URL: url, LIVENESS_PROBE_INTERVAL_MS: '3600000', USAGE_FLUSH_MS: '600000' } });
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore, { name: 'monitored' });
  // Warm: the scripts loaded, the quote cached here.
  t.equal((await keyedQuote(app, key)).statusCode, 200);
  const count = await roundTripCounter(t, url);
  const counted = await count(() => keyedQuote(app, key));
  t.equal(counted.status, 200, 'a keyed quote, its key kept here');
  t.equal(counted.commands, 'evalsha', 'one command');
  t.ok(counted.sent[0]!.includes('bestex:state') && counted.sent[0]!.includes('marker'), 'the script names the marker');
  t.ok(
    counted.scripted.some((args) => args[0]!.toLowerCase() === 'hget' && args[1] === 'bestex:state'),
    'and reads it',
  );
});

const keyedQuote = (app: TestApp, key: string, amount = '1') => app.server.inject({ url: `/api/quote?from=CC&to=USDCx&amount=${amount}`, headers: { 'x-api-key': key } });

/** Restarts the file's Redis empty and waits until `app` is connected to it again. */
async function restartEmpty(app: TestApp): Promise<void> {
  const reconnected = (logs: Array<Record<string, unknown>>) => logs.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('shared state reachable again')).length;
  const before = reconnected(app.logs());
  await redis!.restart();
  await app.untilLogged((logs) => reconnected(logs) > before);
}

const lostLines = (app: TestApp) => app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith(LOST_LINE));

// The tests below restart the file's Redis: every database is emptied.
t.test(
  'Redis restarted empty under a running instance: the next keyed request is answered 503 key_verification_unavailable, the status reads lost and the loss is logged once, before any probe runs',
  redisSkip(redis),
  async (t) => {
    const app = await testApp({ env: { REDIS_URL: nextRedisUrl(), LIVENESS_PROBE_INTERVAL_MS: '3600000' } });
    t.teardown(app.close);
    const { key } = await issueKey(app.core.keyStore, { name: 'before the loss' });
    t.equal((await keyedQuote(app, key)).statusCode, 200, 'before');
    await restartEmpty(app);
    t.equal(app.core.health.sharedState(), 'shared', 'reconnected, and nothing noticed yet');
    const res = await keyedQuote(app, key);
    t.equal(res.statusCode, 503, res.body);
    t.match(JSON.parse(res.body), { code: 'key_verification_unavailable' });
    t.equal(app.core.health.sharedState(), 'lost', 'the status reads lost');
    t.equal(lostLines(app).length, 1, 'one error line');
    t.equal((await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=2' })).statusCode, 200, 'keyless quotes are served');
  },
);

t.test('Redis restarted empty: the first plan to reach it is answered as during an outage (503, nothing made); the next is made, with the same planId', redisSkip(redis), async (t) => {
  const app = await testApp({ env: { REDIS_URL: nextRedisUrl(), LIVENESS_PROBE_INTERVAL_MS: '3600000' } });
  t.teardown(app.close);
  const plan = () =>
    app.server.inject({
      method: 'POST',
      url: '/api/app/plan',
      payload: { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: `alice::1220${'b'.repeat(64)}`, idempotencyKey: 'across-the-loss' },
    });
  const first = await plan();
  t.equal(first.statusCode, 200, first.body);
  await restartEmpty(app);
  const refused = await plan();
  t.equal(refused.statusCode, 503, refused.body);
  t.match(JSON.parse(refused.body), { code: 'at_capacity', error: /lost its data/ });
  t.match(refused.headers['retry-after'], /^[0-9]+$/);
  t.equal(app.core.health.sharedState(), 'lost');
  const again = await plan();
  t.equal(again.statusCode, 200, again.body);
  t.equal(JSON.parse(again.body).planId, JSON.parse(first.body).planId, 'the same plan id: the ledger runs it at most once');
  t.equal(lostLines(app).length, 1);
});

t.test('Redis restarted empty: a keyless caller served from its lease reaches Redis once a second has passed without a marker read, and that quote notices the loss (and is served)', redisSkip(redis), async (t) => {
  const app = await testApp({ env: { REDIS_URL: nextRedisUrl(), LIVENESS_PROBE_INTERVAL_MS: '3600000', QUOTE_CACHE_TTL_MS: '60000' } });
  t.teardown(app.close);
  const quote = () => app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=3' });
  // Leases of 1, 2, 4 ... hits: after these the caller holds leased hits here for many more.
  for (let i = 0; i < 20; i += 1) t.equal((await quote()).statusCode, 200);
  await restartEmpty(app);
  await sleep(CONFIRMED_FOR_MS + 100);
  const res = await quote();
  t.equal(res.statusCode, 200, 'served');
  t.equal(app.core.health.sharedState(), 'lost', 'noticed by that quote, before any probe');
  t.equal(lostLines(app).length, 1);
});
