// The rate windows beneath the spec's Limits rules, without HTTP (core/state/): RateWindows
// counting in this process's own windows while the shared state is unreachable (the guard,
// core/state/guard.ts), the in-process windows' map (core/state/expiring-map.ts), and the leases
// that count a caller coming back to an instance without a round trip (core/state/window-leases.ts).
// The rules over HTTP: test/handlers/http/rate-limits.test.ts.
import t from 'tap';
import { ComponentHealth } from '../../../core/health/component-health.js';
import { RateWindows } from '../../../core/state/rate-windows.js';
import { GuardedSharedState } from '../../../core/state/guard.js';
import { MAX_LEASES, WindowLeases } from '../../../core/state/window-leases.js';
import { ExpiringMap, type Expiring } from '../../../core/state/expiring-map.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState } from '../../../core/state/shared-state.js';

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
