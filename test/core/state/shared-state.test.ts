// The shared-state port (core/state/shared-state.ts): one contract both adapters keep, the in-process
// one and Redis on a private server; then what only Redis has to promise: N clients act as one,
// and Redis going away degrades every call to a prompt SharedStateUnavailable, never a crash.
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import t from 'tap';
import { StateCapacity } from '../../../core/state/capacity.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateFull, SharedStateUnavailable, type SharedState, type WindowCount } from '../../../core/state/shared-state.js';
import { RedisSharedState } from '../../../core/state/redis.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());

let prefixes = 0;
/** A key prefix no other test uses, so tests sharing the server never see each other's keys. */
const uniquePrefix = () => `test-${process.pid}-${++prefixes}:`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** A command timeout no answer reaches: a slow store is no failure here. */
const AN_HOUR = 60 * 60 * 1000;

interface Adapter {
  readonly name: string;
  readonly skip: { skip?: string };
  open(): SharedState;
  /**
   * The adapter, and `pass(ms)`: `ms` passing for its values' lifetimes, so a test checks expiry
   * without waiting for it or racing it (a short lifetime can end before a slow store's next answer).
   */
  clocked(): { state: SharedState; pass(ms: number): Promise<void> };
}

const adapters: Adapter[] = [
  {
    name: 'in-process',
    skip: {},
    open: () => new InProcessSharedState(),
    clocked: () => {
      let now = 1_000_000;
      return { state: new InProcessSharedState(() => now), pass: async (ms) => void (now += ms) };
    },
  },
  {
    name: 'redis',
    skip: redisSkip(redis),
    open: () => new RedisSharedState(redis!.url, { keyPrefix: uniquePrefix(), commandTimeoutMs: AN_HOUR }),
    clocked: () => {
      const prefix = uniquePrefix();
      return { state: new RedisSharedState(redis!.url, { keyPrefix: prefix, commandTimeoutMs: AN_HOUR }), pass: (ms) => expireWithin(prefix, ms) };
    },
  },
];

/**
 * `ms` passing on Redis's own clock, which no test can move: each key under `prefix` with at most
 * `ms` left to live is given 1 ms, and this resolves once Redis has expired every one of them, as
 * it would have `ms` later. Redis expires a key whose time is up when it is read, so reading them
 * until none exists waits for exactly that, with no notification that could be missed.
 */
async function expireWithin(prefix: string, ms: number): Promise<void> {
  const admin = new Redis(redis!.url);
  try {
    const due: string[] = [];
    for (const key of await admin.keys(`${prefix}*`)) {
      const ttl = await admin.pttl(key);
      if (ttl >= 0 && ttl <= ms) due.push(key);
    }
    for (const key of due) await admin.pexpire(key, 1);
    while (due.length > 0 && (await admin.exists(...due)) > 0) await new Promise((resolve) => setTimeout(resolve, 2));
  } finally {
    admin.disconnect();
  }
}

/** The part of a tap test the helpers below use. */
type Test = Pick<typeof t, 'ok' | 'teardown'>;

/** An adapter that is closed when the test ends. */
function open(t: Test, adapter: { open(): SharedState }): SharedState {
  const state = adapter.open();
  t.teardown(() => state.close());
  return state;
}

/** A clocked adapter that is closed when the test ends. */
function clocked(t: Test, adapter: Adapter): ReturnType<Adapter['clocked']> {
  const opened = adapter.clocked();
  t.teardown(() => opened.state.close());
  return opened;
}

/** A lifetime no store's answer takes: the values given it outlive every call a test makes before it moves time on. */
const MINUTE = 60_000;

// ---------------------------------------------------------------------------------------------
for (const adapter of adapters) {
  const name = (rule: string) => `${adapter.name}: ${rule}`;

  t.test(name('"the window starts with its first hit and lasts windowMs; the count starts over after it"'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    const window = MINUTE;
    const first = await state.hit('w', window);
    t.equal(first.count, 1);
    t.ok(first.resetInMs > 0 && first.resetInMs <= window, `resetInMs ${first.resetInMs} is within (0, ${window}]`);
    t.equal((await state.hit('w', window)).count, 2);
    const third = await state.hit('w', window);
    t.equal(third.count, 3);
    t.ok(third.resetInMs > 0 && third.resetInMs <= first.resetInMs, 'later hits do not extend the window');
    await pass(window);
    const again = await state.hit('w', window);
    t.equal(again.count, 1, 'the first hit after the window starts a new one');
    t.ok(again.resetInMs > 0 && again.resetInMs <= window);
  });

  t.test(name('unhit takes one hit back while the window runs, never below none, and starts no window that ended or never ran'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    await state.hit('u', MINUTE);
    await state.hit('u', MINUTE);
    await state.unhit('u');
    t.equal((await state.peek('u'))?.count, 1, 'one taken back');
    await state.unhit('u');
    await state.unhit('u');
    t.equal((await state.peek('u'))?.count ?? 0, 0, 'never below none');
    t.equal((await state.hit('u', MINUTE)).count, 1, 'the next hit counts from there');
    await pass(MINUTE);
    await state.unhit('u');
    t.equal(await state.peek('u'), null, 'a window that ended is not started again');
    await state.unhit('never');
    t.equal(await state.peek('never'), null, 'nor one that never ran');
    t.equal((await state.hit('never', MINUTE)).count, 1, 'its first hit counts one');
  });

  t.test(name('concurrent hits are each counted exactly once'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const counts = (await Promise.all(Array.from({ length: 50 }, () => state.hit('burst', 10_000)))).map((w) => w.count);
    t.strictSame(
      counts.sort((a, b) => a - b),
      Array.from({ length: 50 }, (_, i) => i + 1),
    );
  });

  t.test(name("each key has its own window"), adapter.skip, async (t) => {
    const state = open(t, adapter);
    await state.hit('a', 10_000);
    await state.hit('a', 10_000);
    t.equal((await state.hit('b', 10_000)).count, 1);
  });

  t.test(name('"stores value under key for ttlMs unless the key holds a value"'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    t.equal(await state.get('v'), null, 'a missing key reads as null');
    t.equal(await state.setIfAbsent('v', 'first', MINUTE), true);
    t.equal(await state.setIfAbsent('v', 'second', MINUTE), false, 'a held key is not replaced');
    const stored = await state.get('v');
    t.equal(stored?.value, 'first');
    t.ok(stored?.ttlMs !== null && stored!.ttlMs! > 0 && stored!.ttlMs! <= MINUTE, `ttlMs ${stored?.ttlMs} is within (0, ${MINUTE}]`);
    await pass(MINUTE);
    t.equal(await state.get('v'), null, 'an expired value is gone');
    t.equal(await state.setIfAbsent('v', 'third', MINUTE), true, 'an expired key can be set again');
    t.equal((await state.get('v'))?.value, 'third');
  });

  t.test(name('getValues: "the values under keys, in their order (null where there is none)", expired ones none'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    t.strictSame(await state.getValues(['a', 'b']), [null, null], 'nothing stored: null for each');
    await state.setIfAbsent('a', 'first', MINUTE);
    await state.setIfAbsent('c', 'third', 60 * MINUTE);
    t.strictSame(await state.getValues(['c', 'b', 'a']), ['third', null, 'first'], 'in the order asked');
    t.strictSame(await state.getValues(['a']), ['first'], 'one key');
    await pass(MINUTE);
    t.strictSame(await state.getValues(['a', 'c']), [null, 'third'], 'an expired value is gone');
  });

  t.test(name('map fields: set replaces, setIfAbsent does not, entries lists them all'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    t.equal(await state.mapGet('m', 'x'), null);
    t.strictSame([...(await state.mapEntries('m'))], [], 'a missing map has no entries');
    await state.mapSet('m', 'x', '1');
    await state.mapSet('m', 'x', '2');
    t.equal(await state.mapGet('m', 'x'), '2');
    t.equal(await state.mapSetIfAbsent('m', 'x', '3'), false);
    t.equal(await state.mapSetIfAbsent('m', 'y', '4'), true);
    t.equal(await state.mapGet('m', 'x'), '2', 'setIfAbsent left the set field alone');
    const entries = await state.mapEntries('m');
    t.strictSame(new Map([...entries].sort()), new Map([['x', '2'], ['y', '4']]));
    t.equal(await state.mapGet('other', 'x'), null, 'maps are separate');
    await state.mapDelete('m', 'x');
    await state.mapDelete('m', 'absent');
    t.strictSame([...(await state.mapEntries('m'))], [['y', '4']], '"deletes a field of a map, if set"');
  });

  t.test(name('peek: "the window as it stands, without counting a hit"; null when none is running'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    t.equal(await state.peek('p'), null, 'no window yet');
    await state.hit('p', MINUTE);
    await state.hit('p', MINUTE);
    const seen = await state.peek('p');
    t.equal(seen?.count, 2);
    t.ok(seen !== null && seen.resetInMs > 0 && seen.resetInMs <= MINUTE, `resetInMs ${seen?.resetInMs} is within (0, ${MINUTE}]`);
    t.equal((await state.peek('p'))?.count, 2, 'peeking counted nothing');
    t.equal((await state.hit('p', MINUTE)).count, 3, 'nor did it for the next hit');
    await pass(MINUTE);
    t.equal(await state.peek('p'), null, 'an ended window is none');
  });

  t.test(name('"incrementMaps adds each increment to its map\'s fields and sets the map\'s expiry": a field not set counts from 0; the map expires, each increment setting its expiry again'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    await state.incrementMaps([
      { map: 'c1', fields: new Map([['a', 2], ['b', 1]]), ttlMs: 60 * MINUTE },
      { map: 'c2', fields: new Map([['a', 5]]), ttlMs: MINUTE },
    ]);
    await state.incrementMaps([{ map: 'c1', fields: new Map([['a', 3], ['c', 1]]), ttlMs: 60 * MINUTE }]);
    t.strictSame(new Map([...(await state.mapEntries('c1'))].sort()), new Map([['a', '5'], ['b', '1'], ['c', '1']]));
    t.equal(await state.mapGet('c1', 'a'), '5');
    t.strictSame([...(await state.mapEntries('c2'))], [['a', '5']]);
    await state.incrementMaps([]);
    await pass(MINUTE);
    t.strictSame([...(await state.mapEntries('c2'))], [], 'the map with the short expiry is gone');
    t.equal(await state.mapGet('c2', 'a'), null);
    t.equal((await state.mapEntries('c1')).size, 3, 'the other is kept');
    await state.incrementMaps([{ map: 'c2', fields: new Map([['a', 1]]), ttlMs: 60_000 }]);
    t.strictSame([...(await state.mapEntries('c2'))], [['a', '1']], 'an expired map counts from 0 again');
  });
}

t.test('"shared": only the Redis adapter is seen by other instances', async (t) => {
  t.equal(new InProcessSharedState().shared, false);
  const state = new RedisSharedState('redis://127.0.0.1:1', { commandTimeoutMs: 50 });
  t.equal(state.shared, true);
  await state.close();
});

t.test('in-process: "a documented cap (records and rate windows)": at the bound a new value is refused and a new window counts as over any limit, held ones still answer, expired ones make room; logged once, each refusal counted', async (t) => {
  let now = 1_000_000;
  const logged: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const entry = (level: string) => (fields: Record<string, unknown>, message: string) => void logged.push({ level, fields, message });
  const capacity = new StateCapacity({ maxPlanRecords: 10, maxRateWindows: 10 }, { info: entry('info'), warn: entry('warn'), error: entry('error') });
  const state = new InProcessSharedState(() => now, capacity);
  for (let i = 0; i < 10; i++) {
    t.equal(await state.setIfAbsent(`v${i}`, `value ${i}`, 60_000), true);
    now += 1000;
    t.equal(state.hitNow(`w${i}`, 30_000).count, 1);
  }
  now += 1000;
  for (let i = 0; i < 3; i++) {
    await t.rejects(state.setIfAbsent('v-new', 'x', 60_000), SharedStateFull, `refusal ${i + 1}: a new value at the bound`);
    t.strictSame(state.hitNow('w-new', 30_000), { count: Number.MAX_SAFE_INTEGER, resetInMs: 20_000 }, `refusal ${i + 1}: a new window is over any limit until the first window ends`);
  }
  const full = await state.setIfAbsent('v-new', 'x', 60_000).catch((e: unknown) => e);
  t.equal((full as SharedStateFull).retryInMs, 49_000, 'a refused value is told when the oldest value expires');
  t.equal((await state.get('v0'))?.value, 'value 0', 'held values still answer');
  t.equal(await state.setIfAbsent('v0', 'again', 60_000), false, 'and still win against a second claim');
  t.equal(state.hitNow('w0', 30_000).count, 2, 'held windows keep counting');
  t.equal(capacity.refusals('plan-records'), 4, 'each refused value counted');
  t.equal(capacity.refusals('rate-windows'), 3, 'each refused window counted');
  t.strictSame(logged.filter((l) => l.level === 'warn').map((l) => l.fields), [{ bound: 'plan-records', max: 10 }, { bound: 'rate-windows', max: 10 }], 'each bound logged once, not per refusal');
  t.match(logged.find((l) => l.fields.bound === 'plan-records')?.message, /STATE_MAX_PLAN_RECORDS/);

  now += 20_000; // the first window, w0, ends
  t.equal(state.hitNow('w-new', 30_000).count, 1, 'a window that ended makes room for a new one');
  now += 35_000; // v0..v6 expired
  t.equal(await state.setIfAbsent('v-new', 'x', 60_000), true, 'an expired value makes room for a new one');
  t.equal(await state.get('v0'), null);
  t.ok(logged.some((l) => l.level === 'info' && l.fields.bound === 'plan-records'), 'room again, logged once the bound is well below');
});

t.test('in-process: a window or value stored again goes last, so the expired entries dropped at the bound are all at the front', async (t) => {
  let now = 0;
  const state = new InProcessSharedState(() => now, new StateCapacity({ maxPlanRecords: 2, maxRateWindows: 2 }));
  state.hitNow('a', 1000);
  now = 10;
  state.hitNow('b', 1000);
  now = 1500; // a and b ended
  state.hitNow('a', 1000); // a restarts, ending at 2500: last in order
  t.equal(state.hitNow('c', 1000).count, 1, 'b, expired at the front, made room');
  now = 2000;
  t.equal(state.hitNow('d', 1000).count, Number.MAX_SAFE_INTEGER, 'a and c hold until 2500: no room');
});

// ---------------------------------------------------------------------------------------------
t.test('redis: two clients on one Redis share windows, values and maps (N instances act as one)', redisSkip(redis), async (t) => {
  const keyPrefix = uniquePrefix();
  const a = open(t, { open: () => new RedisSharedState(redis!.url, { keyPrefix }) });
  const b = open(t, { open: () => new RedisSharedState(redis!.url, { keyPrefix }) });
  const hits = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hit('w', 10_000)));
  t.strictSame(
    hits.map((w) => w.count).sort((x, y) => x - y),
    Array.from({ length: 40 }, (_, i) => i + 1),
    'one window across both clients',
  );
  t.equal(await a.setIfAbsent('v', 'from-a', 10_000), true);
  t.equal(await b.setIfAbsent('v', 'from-b', 10_000), false);
  t.equal((await b.get('v'))?.value, 'from-a');
  await a.mapSet('m', 'k', '1');
  t.equal(await b.mapSetIfAbsent('m', 'k', '2'), false);
  t.strictSame([...(await b.mapEntries('m'))], [['k', '1']]);
});

t.test('redis: every key carries the prefix', redisSkip(redis), async (t) => {
  const keyPrefix = uniquePrefix();
  const state = open(t, { open: () => new RedisSharedState(redis!.url, { keyPrefix }) });
  const raw = new Redis(redis!.url);
  t.teardown(() => raw.quit());
  await state.hit('w', 10_000);
  await state.setIfAbsent('v', 'x', 10_000);
  await state.mapSet('m', 'f', 'x');
  t.strictSame((await raw.keys(`${keyPrefix}*`)).sort(), [`${keyPrefix}m`, `${keyPrefix}v`, `${keyPrefix}w`]);
});

t.test('redis: a window key left without expiry gets one on its next hit', redisSkip(redis), async (t) => {
  const keyPrefix = uniquePrefix();
  const state = open(t, { open: () => new RedisSharedState(redis!.url, { keyPrefix }) });
  const raw = new Redis(redis!.url);
  t.teardown(() => raw.quit());
  await raw.set(`${keyPrefix}w`, '7');
  const hit = await state.hit('w', 300);
  t.equal(hit.count, 8);
  t.ok(hit.resetInMs > 0 && hit.resetInMs <= 300);
  t.ok((await raw.pttl(`${keyPrefix}w`)) > 0, 'the key now expires');
});

t.test('redis: "ttlMs null when the value does not expire"', redisSkip(redis), async (t) => {
  const keyPrefix = uniquePrefix();
  const state = open(t, { open: () => new RedisSharedState(redis!.url, { keyPrefix }) });
  const raw = new Redis(redis!.url);
  t.teardown(() => raw.quit());
  await raw.set(`${keyPrefix}v`, 'forever');
  t.strictSame(await state.get('v'), { value: 'forever', ttlMs: null });
});

t.test('redis: calls made before the first connection completes wait for it', redisSkip(redis), async (t) => {
  const state = open(t, { open: () => new RedisSharedState(redis!.url, { keyPrefix: uniquePrefix() }) });
  t.equal((await state.hit('w', 10_000)).count, 1);
  t.equal(await state.setIfAbsent('v', 'x', 10_000), true);
});

/** Every method of the port, each with a label. */
function everyMethod(state: SharedState): Array<[string, () => Promise<unknown>]> {
  return [
    ['hit', () => state.hit('w', 10_000)],
    ['unhit', () => state.unhit('w')],
    ['get', () => state.get('v')],
    ['getValues', () => state.getValues(['v', 'w'])],
    ['setIfAbsent', () => state.setIfAbsent('v', 'x', 10_000)],
    ['mapGet', () => state.mapGet('m', 'f')],
    ['mapSet', () => state.mapSet('m', 'f', 'x')],
    ['mapSetIfAbsent', () => state.mapSetIfAbsent('m', 'f', 'x')],
    ['mapEntries', () => state.mapEntries('m')],
    ['incrementMaps', () => state.incrementMaps([{ map: 'c', fields: new Map([['f', 1]]), ttlMs: 10_000 }])],
    ['mapDelete', () => state.mapDelete('m', 'f')],
    ['mapFields', () => state.mapFields('m', ['f'], 'version')],
    ['mapSet with a version', () => state.mapSet('m', 'f', 'x', 'version')],
    ['exchange', () => state.exchange({ hits: [{ key: 'w', windowMs: 10_000 }], version: 'version' })],
    ['peek', () => state.peek('w')],
  ];
}

/**
 * A command timeout longer than any test may run: a call that waited for Redis to answer, or to
 * come back, would outlast the test and fail it. That every call settles under it shows each
 * failed at once, without a clock in the assertion.
 */

/** Asserts every method rejects with SharedStateUnavailable; returns the errors. */
async function assertAllUnavailable(t: Test, state: SharedState): Promise<Error[]> {
  const errors: Error[] = [];
  for (const [method, call] of everyMethod(state)) {
    const err = await call().then(
      () => null,
      (e: unknown) => e as Error,
    );
    t.ok(err instanceof SharedStateUnavailable, `${method} rejects with SharedStateUnavailable (got ${String(err)})`);
    if (err) errors.push(err);
  }
  return errors;
}

t.test('redis: with no Redis at the address, every call fails at once and the error never carries the password', async (t) => {
  // A port that was just free: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 1));
    });
  });
  const changes: boolean[] = [];
  const state = open(t, {
    open: () =>
      new RedisSharedState(`redis://:s3cret-pw@127.0.0.1:${port}`, { commandTimeoutMs: AN_HOUR, onConnectionChange: (up) => changes.push(up) }),
  });
  const errors = await assertAllUnavailable(t, state);
  for (const err of errors) {
    t.match(err.message, /unreachable/);
    t.notMatch(err.message, /s3cret-pw/, 'no password in the message');
  }
  await sleep(1000);
  t.strictSame(changes, [false], 'one "down" for the whole run of retries, no "up"');
});

t.test('redis: close is idempotent, and calls after it fail as unavailable', redisSkip(redis), async (t) => {
  const state = new RedisSharedState(redis!.url, { keyPrefix: uniquePrefix(), commandTimeoutMs: AN_HOUR });
  await state.hit('w', 10_000);
  await state.close();
  await state.close();
  await assertAllUnavailable(t, state);
});

// Last: it takes the shared server down and brings it back empty.
t.test('redis: when Redis goes away every call fails at once, the process lives on, and it recovers when Redis is back', redisSkip(redis), async (t) => {
  const changes: Array<[boolean, string | undefined]> = [];
  let upAgain: () => void = () => {};
  const reconnected = new Promise<void>((resolve) => (upAgain = resolve));
  const state = open(t, {
    open: () =>
      new RedisSharedState(redis!.url, {
        keyPrefix: uniquePrefix(),
        commandTimeoutMs: AN_HOUR,
        onConnectionChange: (up, err) => {
          changes.push([up, err?.message]);
          if (up && changes.length > 1) upAgain();
        },
      }),
  });
  t.equal((await state.hit('w', 10_000)).count, 1);
  t.strictSame(changes.map(([up]) => up), [true], 'reported up once connected');

  await redis!.stop();
  await assertAllUnavailable(t, state);
  await sleep(1500); // several reconnect attempts fail meanwhile
  t.strictSame(changes.map(([up]) => up), [true, false], 'reported down once, not once per retry');

  await redis!.restart();
  await reconnected;
  t.strictSame(changes.map(([up]) => up), [true, false, true], 'reported up again after the restart');
  t.equal((await state.hit('w', 10_000)).count, 1, 'commands work again (on the restarted, empty server)');
  t.equal(await state.setIfAbsent('v', 'x', 10_000), true);
});

// ---------------------------------------------------------------------------------------------
for (const adapter of adapters) {
  const name = (rule: string) => `${adapter.name}: ${rule}`;

  t.test(name('exchange: "hits are counted first, then values read; hitsOnMiss are counted only when every read finds nothing"'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const minute = 60_000;
    await state.setIfAbsent('held', 'a body', minute);
    const missed = await state.exchange({ hits: [{ key: 'window', windowMs: minute }], reads: ['none-1', 'none-2'], hitsOnMiss: [{ key: 'budget', windowMs: minute }] });
    t.equal(missed.hits[0]?.count, 1, 'the hit counted');
    t.ok(missed.hits[0]!.resetInMs > 0 && missed.hits[0]!.resetInMs <= minute, 'with the time its window has left');
    t.strictSame(missed.reads, [null, null], 'nothing under either key');
    t.equal(missed.hitsOnMiss?.[0]?.count, 1, 'every read missed: the hit on a miss counted');

    const found = await state.exchange({ hits: [{ key: 'window', windowMs: minute }], reads: ['none-1', 'held'], hitsOnMiss: [{ key: 'budget', windowMs: minute }] });
    t.equal(found.hits[0]?.count, 2, 'the hit counted again');
    t.equal(found.reads[0], null);
    t.equal(found.reads[1]?.value, 'a body', 'the value held');
    t.ok(found.reads[1]!.ttlMs !== null && found.reads[1]!.ttlMs > 0 && found.reads[1]!.ttlMs <= minute, 'with its time left');
    t.equal(found.hitsOnMiss, null, 'a read found a value: no hit on a miss counted');
    t.equal((await state.peek('budget'))?.count, 1, 'the budget holds its one count');

    const onlyHits = await state.exchange({ hits: [{ key: 'window', windowMs: minute }, { key: 'other', windowMs: minute }] });
    t.strictSame(onlyHits.hits.map((c) => c.count), [3, 1], 'several hits, each in its own window');
  });

  t.test(name('versions: "set to a new random value with the change", read with map fields and in an exchange, where it "never makes the request a hit"'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const minute = 60_000;
    t.strictSame(await state.mapFields('m', ['x', 'y'], 'v'), { values: [null, null], version: null }, 'nothing set: no fields, no version');
    const seen = new Set<string>();
    const changes: Array<[string, () => Promise<unknown>]> = [
      ['mapSetIfAbsent', () => state.mapSetIfAbsent('m', 'x', '1', 'v')],
      ['mapSetIfAbsent of a set field', () => state.mapSetIfAbsent('m', 'x', '2', 'v')],
      ['mapSet', () => state.mapSet('m', 'y', '3', 'v')],
      ['mapDelete', () => state.mapDelete('m', 'y', 'v')],
    ];
    for (const [what, change] of changes) {
      await change();
      const { version } = await state.mapFields('m', ['x'], 'v');
      t.ok(version !== null && !seen.has(version), `${what}: a version never read before`);
      seen.add(version!);
    }
    t.strictSame((await state.mapFields('m', ['x', 'y'], 'v')).values, ['1', null], 'the fields as the changes left them');
    await state.mapSet('m', 'x', '4');
    t.ok(seen.has((await state.mapFields('m', ['x'], 'v')).version!), 'a change without a version key leaves it as it was');

    const [version] = [...seen].slice(-1);
    const exchanged = await state.exchange({ hits: [{ key: 'window', windowMs: minute }], reads: ['none'], hitsOnMiss: [{ key: 'budget', windowMs: minute }], version: 'v' });
    t.equal(exchanged.version, version, 'the exchange reads the version');
    t.equal(exchanged.hitsOnMiss?.[0]?.count, 1, 'and, the version being no read, every read missed: the hit on a miss counted');
    t.equal((await state.exchange({ hits: [{ key: 'window', windowMs: minute }], version: 'absent' })).version, null, 'a version key never set: null');
    t.equal((await state.exchange({ hits: [{ key: 'window', windowMs: minute }] })).version, null, 'none asked: null');
  });

  t.test(name('a leasing hit: "count up to this many hits at once ... only while the window has room for LEASE_SHARE times as many; never past max"'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const minute = 60_000;
    const leasing = (lease: number, max = 200) => ({ key: 'window', windowMs: minute, max, lease });
    const first = (await state.exchange({ hits: [leasing(8)] })).hits[0]!;
    t.strictSame({ count: first.count, leased: first.leased }, { count: 1, leased: 7 }, 'room for 200: the hit is the window\'s first, the 7 after it leased');
    t.ok(first.resetInMs > 0 && first.resetInMs <= minute, 'with the time its window has left');
    t.equal((await state.peek('window'))?.count, 8, 'all 8 counted in the window');
    const capped = (await state.exchange({ hits: [leasing(64)] })).hits[0]!;
    t.strictSame({ count: capped.count, leased: capped.leased }, { count: 9, leased: 11 }, '192 left: a sixteenth of the room, 12 hits, its own and 11 after it');
    t.equal((await state.exchange({ hits: [{ key: 'window', windowMs: minute, max: 200 }] })).hits[0]?.leased, undefined, 'a hit asking no lease counts one, as ever');

    const near = { key: 'near', windowMs: minute, max: 20 };
    const counted = [];
    for (let i = 0; i < 21; i++) counted.push((await state.exchange({ hits: [{ ...near, lease: 64 }] })).hits[0]!);
    t.ok(counted.every((c) => c.leased === undefined), 'room for fewer than 32 hits: one hit each, every count its own');
    t.strictSame(counted.map((c) => c.count), Array.from({ length: 21 }, (_, i) => i + 1), 'so the 21st is over the max of 20, as without leases');
    t.equal((await state.peek('near'))?.count, 21);

    const noMax = (await state.exchange({ hits: [{ key: 'unlimited', windowMs: minute, lease: 64 }] })).hits[0]!;
    t.strictSame({ count: noMax.count, leased: noMax.leased }, { count: 1, leased: undefined }, 'a window with no max leases nothing');
    const onMiss = await state.exchange({ reads: ['none'], hitsOnMiss: [{ key: 'budget', windowMs: minute, max: 1000, lease: 64 }] });
    t.strictSame(onMiss.hitsOnMiss?.map((c) => [c.count, c.leased]), [[1, 61]], 'a hit on a miss leases as a hit does: a sixteenth of 1000, 62 hits, its own and 61 after it');
  });

  t.test(name('a lease asked near the limit is granted from the room left, not from the limit: a sixteenth of max - count hits, at least 1; at the limit and past it, one hit, over it'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const window = { key: 'near', windowMs: MINUTE, max: 100 };
    // Plain hits, which lease nothing, one at a time: `key`'s count moves by exactly `n`.
    const fill = async (n: number, key = window.key) => {
      for (let i = 0; i < n; i++) await state.exchange({ hits: [{ ...window, key }] });
    };
    const leasing = async (lease: number) => {
      const { count, leased } = (await state.exchange({ hits: [{ ...window, lease }] })).hits[0]!;
      return { count, leased, window: (await state.peek('near'))?.count };
    };
    await fill(52);
    t.strictSame(await leasing(64), { count: 53, leased: 2, window: 55 }, '52 counted, 48 left: 3 hits (48 / 16), its own and 2 after it; a sixteenth of the max would be 6');
    t.strictSame(await leasing(4), { count: 56, leased: 1, window: 57 }, '55 counted, 45 left: 2 hits of the 4 asked');
    await fill(33);
    t.strictSame(await leasing(64), { count: 91, leased: undefined, window: 91 }, '90 counted, 10 left: room for less than 16, so the hit alone');
    await fill(9);
    t.strictSame(await leasing(64), { count: 101, leased: undefined, window: 101 }, 'at the limit (100 counted, none left): the hit alone, over the max');
    t.strictSame(await leasing(64), { count: 102, leased: undefined, window: 102 }, 'past the limit: the hit alone, over it again');

    const budget = { key: 'budget', windowMs: MINUTE, max: 100 };
    await fill(90, budget.key);
    const onMiss = await state.exchange({ reads: ['none'], hitsOnMiss: [{ ...budget, lease: 64 }] });
    t.strictSame(onMiss.hitsOnMiss?.map(({ count, leased }) => ({ count, leased })), [{ count: 91, leased: undefined }], 'a hit on a miss with 10 left: the hit alone');
    t.equal((await state.peek('budget'))?.count, 91, 'the budget counted that one hit');
  });

  t.test(name('exchange: "a request refused by one window spends nothing in the others": a count over its max stops the windows after it'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const minute = 60_000;
    const window = { key: 'window', windowMs: minute, max: 1 };
    const share = { key: 'share', windowMs: minute, max: 1 };
    const budget = { key: 'budget', windowMs: minute };
    t.equal((await state.exchange({ hits: [window], reads: ['none'], hitsOnMiss: [budget] })).hitsOnMiss?.length, 1, 'within its max: counted on');
    const over = await state.exchange({ hits: [window], reads: ['none'], hitsOnMiss: [budget] });
    t.equal(over.hits[0]?.count, 2, 'the hit over its max is counted, and said to be');
    t.equal(over.hitsOnMiss, null, 'nothing after it is counted');
    t.equal((await state.peek('budget'))?.count, 1, 'the budget is not spent');

    const first = await state.exchange({ reads: ['none'], hitsOnMiss: [share, budget] });
    t.strictSame(first.hitsOnMiss?.map((c) => c.count), [1, 2], 'hits on a miss within their max: all counted');
    const stopped = await state.exchange({ reads: ['none'], hitsOnMiss: [share, budget] });
    t.strictSame(stopped.hitsOnMiss?.map((c) => c.count), [2], 'the hit on a miss over its max is the last counted');
    t.equal((await state.peek('budget'))?.count, 2, 'the one after it is not spent');
  });

  t.test(name('claimOnMiss: "taken when hitsOnMiss are counted and none is over its limit", in the same round trip; whoever reads the key meanwhile "finds the claim, not nothing"'), adapter.skip, async (t) => {
    const state = open(t, adapter);
    const budget = { key: 'budget', windowMs: MINUTE, max: 2 };
    const claim = (value: string) => ({ key: 'q', value, ttlMs: MINUTE });
    const first = await state.exchange({ reads: ['q'], hitsOnMiss: [budget], claimOnMiss: claim('claim-1') });
    t.equal(first.claimed, true, 'every read missed, the budget within its max: claimed');
    t.equal(first.hitsOnMiss?.[0]?.count, 1, 'and the budget counted');
    const second = await state.exchange({ reads: ['q'], hitsOnMiss: [budget], claimOnMiss: claim('claim-2') });
    t.equal(second.claimed, false, 'the key holds the first claim: not claimed again');
    t.equal(second.reads[0]?.value, 'claim-1', 'the read finds the first claim');
    t.equal(second.hitsOnMiss, null, 'a read found a value: nothing counted');
    t.equal((await state.peek('budget'))?.count, 1, 'the budget still holds one count');

    t.equal(await state.replaceIf('q', 'claim-2', 'a body', MINUTE), false, 'replaceIf with a value the key does not hold: nothing replaced');
    t.equal((await state.get('q'))?.value, 'claim-1');
    t.equal(await state.replaceIf('q', 'claim-1', 'a body', MINUTE), true, 'with the value it holds: replaced');
    const body = await state.get('q');
    t.equal(body?.value, 'a body', 'the key holds the new value');
    t.ok(body!.ttlMs !== null && body!.ttlMs > 0 && body!.ttlMs <= MINUTE, 'for the time to live given');
    t.equal(await state.replaceIf('q', 'claim-1', null, MINUTE), false, 'the claim is no longer there to drop');
    t.equal((await state.get('q'))?.value, 'a body');

    await state.exchange({ reads: ['r'], hitsOnMiss: [budget], claimOnMiss: { key: 'r', value: 'claim-3', ttlMs: MINUTE } });
    t.equal(await state.replaceIf('r', 'claim-3', null, MINUTE), true, 'a value of null drops the claim');
    t.equal(await state.get('r'), null, 'the key holds nothing');

    const over = await state.exchange({ reads: ['s'], hitsOnMiss: [budget], claimOnMiss: { key: 's', value: 'claim-4', ttlMs: MINUTE } });
    t.equal(over.hitsOnMiss?.[0]?.count, 3, 'the budget counted over its max');
    t.equal(over.claimed, false, 'a hit on a miss over its limit: no claim');
    t.equal(await state.get('s'), null, 'nothing set');
    const window = { key: 'window', windowMs: MINUTE, max: 0 };
    const refused = await state.exchange({ hits: [window], reads: ['s'], hitsOnMiss: [{ key: 'other', windowMs: MINUTE }], claimOnMiss: { key: 's', value: 'claim-5', ttlMs: MINUTE } });
    t.equal(refused.claimed, false, 'a hit over its limit: no claim either');
    t.equal(await state.get('s'), null);
  });

  t.test(name('a claim lasts its ttlMs: once it has passed the key holds nothing, and can be claimed again'), adapter.skip, async (t) => {
    const { state, pass } = clocked(t, adapter);
    const first = await state.exchange({ reads: ['q'], hitsOnMiss: [{ key: 'budget', windowMs: 10 * MINUTE }], claimOnMiss: { key: 'q', value: 'claim-1', ttlMs: 1000 } });
    t.equal(first.claimed, true);
    await pass(1000);
    t.equal(await state.get('q'), null, 'the claim lapsed');
    const again = await state.exchange({ reads: ['q'], hitsOnMiss: [{ key: 'budget', windowMs: 10 * MINUTE }], claimOnMiss: { key: 'q', value: 'claim-2', ttlMs: 1000 } });
    t.equal(again.claimed, true, 'claimed again');
    t.equal(again.hitsOnMiss?.[0]?.count, 2, 'the budget counted again');
  });
}

t.test('redis: a leasing hit counts as the in-process adapter counts it, for every count around a limit and every lease asked: the same count, hits leased and window after', redisSkip(redis), async (t) => {
  const prefix = uniquePrefix();
  const state = new RedisSharedState(redis!.url, { keyPrefix: prefix, commandTimeoutMs: AN_HOUR });
  t.teardown(() => state.close());
  const raw = new Redis(redis!.url);
  t.teardown(() => raw.disconnect());
  const local = new InProcessSharedState();
  const cases: Array<{ readonly key: string; readonly max: number; readonly before: number; readonly lease: number }> = [];
  for (const max of [1, 15, 16, 17, 31, 32, 33, 100, 1000]) {
    const befores = new Set([0, 1, max - 33, max - 32, max - 31, max - 17, max - 16, max - 15, max - 1, max, max + 1].filter((n) => n >= 0));
    for (const before of befores) for (const lease of [1, 2, 3, 16, 33, 64]) cases.push({ key: `grid-${max}-${before}-${lease}`, max, before, lease });
  }
  // Each window starts with `before` hits: set so in Redis, counted so in process.
  const setUp = raw.pipeline();
  for (const { key, before } of cases) {
    if (before === 0) continue;
    setUp.set(prefix + key, String(before), 'PX', MINUTE);
    for (let i = 0; i < before; i++) local.hitNow(key, MINUTE);
  }
  await setUp.exec();
  const hit = ({ key, max, lease }: (typeof cases)[number]) => ({ key, windowMs: MINUTE, max, lease });
  // 32 calls a turn: each turn's calls fit one script (more than one carries is a test of its own).
  const counted = async (store: SharedState) => {
    const counts: WindowCount[] = [];
    for (let i = 0; i < cases.length; i += 32) counts.push(...(await Promise.all(cases.slice(i, i + 32).map(async (c) => (await store.exchange({ hits: [hit(c)] })).hits[0]!))));
    return counts;
  };
  const fromRedis = await counted(state);
  const fromProcess = await counted(local);
  const redisWindows = await raw.mget(cases.map(({ key }) => prefix + key));
  const described = (counts: readonly WindowCount[], windows: ReadonlyArray<number | undefined>) =>
    cases.map(({ key }, i) => `${key}: count ${counts[i]!.count}, leased ${counts[i]!.leased ?? 'none'}, window ${windows[i]}`);
  t.strictSame(described(fromRedis, redisWindows.map(Number)), described(fromProcess, cases.map(({ key }) => local.peekNow(key)?.count)), `${cases.length} windows (max, count before, lease asked): Redis answers and counts as the in-process adapter`);
});

t.test('redis: calls issued in one turn of the event loop go as one script, each answered as it would be alone, in order', redisSkip(redis), async (t) => {
  const prefix = uniquePrefix();
  const state = new RedisSharedState(redis!.url, { keyPrefix: prefix, commandTimeoutMs: AN_HOUR });
  t.teardown(() => state.close());
  // Its script loaded: a first call meets NOSCRIPT and is sent again as EVAL.
  await state.exchange({ hits: [{ key: 'warm', windowMs: MINUTE }] });
  const client = new Redis(redis!.url);
  const monitor = await client.monitor();
  t.teardown(() => {
    monitor.disconnect();
    client.disconnect();
  });
  const sent: string[] = [];
  let ended: () => void = () => {};
  const end = new Promise<void>((resolve) => (ended = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0]?.toLowerCase() === 'echo' && args[1] === `${prefix}end`) ended();
    else if (source !== 'lua' && args.some((arg) => arg.startsWith(prefix))) sent.push(args[0]!.toLowerCase());
  });
  const window = { key: 'window', windowMs: MINUTE };
  const claim = { key: 'q', value: 'claim-1', ttlMs: MINUTE };
  const [first, second, stored, third, replaced] = await Promise.all([
    state.exchange({ hits: [window], reads: ['q'], hitsOnMiss: [{ key: 'budget', windowMs: MINUTE }], claimOnMiss: claim }),
    state.exchange({ hits: [window], reads: ['q'], hitsOnMiss: [{ key: 'budget', windowMs: MINUTE }], claimOnMiss: { ...claim, value: 'claim-2' } }),
    state.setIfAbsent('record', 'a record', MINUTE),
    state.exchange({ hits: [window], reads: ['record'] }),
    state.replaceIf('q', 'claim-1', 'a body', MINUTE),
  ]);
  t.strictSame([first.hits[0]?.count, second.hits[0]?.count, third.hits[0]?.count], [1, 2, 3], "one window, counted once per call, in the calls' order");
  t.equal(first.claimed, true, 'the first call claims');
  t.equal(second.claimed, false, 'the second does not');
  t.equal(second.reads[0]?.value, 'claim-1', "and reads the first's claim, as it would after it");
  t.equal(stored, true, 'the record stored');
  t.equal(third.reads[0]?.value, 'a record', 'the call after it reads the record');
  t.equal(replaced, true, 'the claim replaced');
  await client.echo(`${prefix}end`);
  await end;
  t.strictSame(sent, ['evalsha'], 'the five calls: one command, one script');
  t.equal((await state.get('q'))?.value, 'a body', 'the body in place of the claim');
});

t.test('redis: a turn with more calls than one script carries (64) sends them as ceil(n / 64) scripts of at most 64, and every call is answered with its own answer, in the order made', redisSkip(redis), async (t) => {
  const prefix = uniquePrefix();
  const state = new RedisSharedState(redis!.url, { keyPrefix: prefix, commandTimeoutMs: AN_HOUR });
  t.teardown(() => state.close());
  const raw = new Redis(redis!.url);
  t.teardown(() => raw.disconnect());
  // Its script loaded: a first call meets NOSCRIPT and is sent again as EVAL.
  await state.exchange({ hits: [{ key: 'warm', windowMs: MINUTE }] });
  const n = 150;
  // Exchanges at even places, so the first call of every script is one: a call sent twice, or
  // scripts sent out of order, change the counts of the window every exchange shares.
  const kind = (i: number) => (i % 2 === 0 ? 'x' : i % 4 === 1 ? 's' : 'r');
  // What each call finds makes its right answer its own: window i holds i hits and value i its
  // own text; half the keys to set hold a value already, and half those to replace the one expected.
  const setUp = raw.pipeline();
  for (let i = 0; i < n; i++) {
    if (kind(i) === 'x') setUp.set(`${prefix}call-w${i}`, String(i), 'PX', MINUTE).set(`${prefix}call-v${i}`, `value ${i}`, 'PX', MINUTE);
    else if (kind(i) === 's' && i % 8 === 1) setUp.set(`${prefix}call-s${i}`, `held ${i}`, 'PX', MINUTE);
    else if (kind(i) === 'r') setUp.set(`${prefix}call-r${i}`, i % 8 === 3 ? `expected ${i}` : `other ${i}`, 'PX', MINUTE);
  }
  await setUp.exec();

  const client = new Redis(redis!.url);
  const monitor = await client.monitor();
  t.teardown(() => {
    monitor.disconnect();
    client.disconnect();
  });
  const scripts: number[] = [];
  let ended: () => void = () => {};
  const end = new Promise<void>((resolve) => (ended = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0]?.toLowerCase() === 'echo' && args[1] === `${prefix}end`) ended();
    // EVALSHA sha numkeys key... ARGV...: BATCH's first argument is its number of calls.
    else if (source !== 'lua' && args[0]?.toLowerCase() === 'evalsha' && args.some((arg) => arg.startsWith(`${prefix}call-`))) scripts.push(Number(args[3 + Number(args[2])]));
  });

  const answered: string[] = [];
  for (let i = 0; i < n; i++) {
    const call =
      kind(i) === 'x'
        ? state
            .exchange({ hits: [{ key: `call-w${i}`, windowMs: MINUTE }, { key: 'call-turn', windowMs: MINUTE }], reads: [`call-v${i}`] })
            .then(({ hits, reads }) => `count ${hits[0]?.count}, turn ${hits[1]?.count}, read ${reads[0]?.value}`)
        : kind(i) === 's'
          ? state.setIfAbsent(`call-s${i}`, `set ${i}`, MINUTE)
          : state.replaceIf(`call-r${i}`, `expected ${i}`, `replaced ${i}`, MINUTE);
    call.then(
      (answer) => (answered[i] = `${i} ${kind(i)}: ${String(answer)}`),
      (err: unknown) => (answered[i] = `${i} ${kind(i)}: failed, ${String(err)}`),
    );
  }
  // A call of a later turn goes after that turn's scripts on the one connection, so it is
  // answered after them: once it is, every call of the turn has its answer, or never gets one.
  await new Promise((resolve) => setImmediate(resolve));
  await state.exchange({ hits: [{ key: 'later', windowMs: MINUTE }] });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(answered.filter((answer) => answer !== undefined).length, n, `all ${n} calls answered`);
  t.strictSame(
    Array.from({ length: n }, (_, i) => answered[i] ?? `${i} ${kind(i)}: no answer`),
    Array.from({ length: n }, (_, i) =>
      kind(i) === 'x' ? `${i} x: count ${i + 1}, turn ${i / 2 + 1}, read value ${i}` : kind(i) === 's' ? `${i} s: ${i % 8 !== 1}` : `${i} r: ${i % 8 === 3}`,
    ),
    'each with its own answer, the shared window counted in the order the calls were made',
  );

  const windows = await raw.mget(Array.from({ length: n }, (_, i) => `${prefix}call-w${i}`));
  const values = await raw.mget(Array.from({ length: n }, (_, i) => `${prefix}call-${kind(i)}${i}`));
  t.strictSame(
    Array.from({ length: n }, (_, i) => (kind(i) === 'x' ? `${i}: window ${windows[i]}` : `${i}: ${values[i]}`)),
    Array.from({ length: n }, (_, i) =>
      kind(i) === 'x' ? `${i}: window ${i + 1}` : kind(i) === 's' ? `${i}: ${i % 8 === 1 ? 'held' : 'set'} ${i}` : `${i}: ${i % 8 === 3 ? 'replaced' : 'other'} ${i}`,
    ),
    'each call ran once: every window counted once, every value set or replaced as its answer says',
  );
  t.equal(await raw.get(`${prefix}call-turn`), String(n / 2), 'the shared window counted once per exchange');
  await client.echo(`${prefix}end`);
  await end;
  t.strictSame(scripts, [64, 64, 22], `${n} calls: ceil(${n} / 64) = 3 scripts, of 64, 64 and 22 calls`);
});

t.test('redis: a call of a turn that fails (a key of another type) fails alone, as "refused"; the others of its turn are answered', redisSkip(redis), async (t) => {
  const prefix = uniquePrefix();
  const state = new RedisSharedState(redis!.url, { keyPrefix: prefix, commandTimeoutMs: AN_HOUR });
  t.teardown(() => state.close());
  await state.mapSet('a-map', 'field', 'value');
  const [bad, good] = await Promise.allSettled([state.exchange({ hits: [{ key: 'a-map', windowMs: MINUTE }] }), state.exchange({ hits: [{ key: 'window', windowMs: MINUTE }] })]);
  t.equal(bad.status, 'rejected', 'a hit on a map: refused');
  const reason = (bad as PromiseRejectedResult).reason as SharedStateUnavailable;
  t.ok(reason instanceof SharedStateUnavailable, 'as SharedStateUnavailable');
  t.equal(reason.reason, 'refused', 'refused, not unreachable: Redis answered');
  t.match(reason.message, /WRONGTYPE/, "with Redis's reason");
  t.equal(good.status === 'fulfilled' && good.value.hits[0]?.count, 1, 'the other call of its turn counted and answered');
});

t.test('redis: close sends the calls of its turn before it quits', redisSkip(redis), async (t) => {
  const prefix = uniquePrefix();
  const state = new RedisSharedState(redis!.url, { keyPrefix: prefix, commandTimeoutMs: AN_HOUR });
  await state.hit('warm', MINUTE);
  const stored = state.setIfAbsent('last', 'written', MINUTE);
  await state.close();
  t.equal(await stored, true, 'the call made just before close was answered');
  const reader = new Redis(redis!.url);
  t.teardown(() => reader.disconnect());
  t.equal(await reader.get(`${prefix}last`), 'written', 'and its value is in Redis');
});
