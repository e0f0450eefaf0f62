// The plan status store's rules, held by both adapters (SQLite in the data folder, Redis): a live
// plan kept once, its events appended only in seq order and published, the live plans those not yet
// terminal, the retention, and one lease holder at a time.
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import t from 'tap';
import type { PlanStatusEvent } from '../../../core/contract/v2.js';
import { RedisPlanStore } from '../../../core/plan-status/redis-store.js';
import { SqlitePlanStore } from '../../../core/plan-status/sqlite-store.js';
import { eventOf, statusOf, type PlanState, type TrackedPlan } from '../../../core/plan-status/status.js';
import type { PlanStatusStore } from '../../../core/plan-status/store.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { tempDir } from '../../helpers/temp.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());

let plans = 0;
const tracked = (): TrackedPlan => ({
  planId: `pl_${String(++plans).padStart(22, 'A')}`,
  partnerId: 'key_x',
  takerHash: 'h',
  createdAtMs: 0,
  expiryMs: 90_000,
  pair: { give: 'Amulet', want: 'USDCx' },
  amount: '100',
  minReceive: '14',
  legs: [{ leg: 0, venueId: 'tradecraft', amount: '100', minReceive: '14', basis: 'ledger', escrow: 'pool::1220aa', memo: '14' }],
  awaitingSignature: false,
});
const event = (plan: TrackedPlan, states: PlanState[]): PlanStatusEvent =>
  eventOf(statusOf(plan, null, states.map((state, i) => ({ state, seq: i + 1, at: new Date(i * 1000).toISOString() }))));

function rules(name: string, open: (now: () => number) => PlanStatusStore, skip: { skip?: string } = {}) {
  t.test(`${name}: "a plan is kept once; its events only in seq order, each published"`, skip, async (t) => {
    const store = open(Date.now);
    t.teardown(() => store.close());
    const heard: number[] = [];
    store.subscribe((e) => heard.push(e.seq));
    await store.listening();
    const plan = tracked();
    t.ok(await store.add(plan));
    t.notOk(await store.add(plan), 'the same plan again: not kept twice');
    t.notOk(await store.append(event(plan, ['planned', 'deposit_seen', 'completed']), true), 'seq 3 before seq 2: refused');
    t.ok(await store.append(event(plan, ['planned', 'deposit_seen']), false));
    t.notOk(await store.append(event(plan, ['planned', 'deposit_seen']), false), 'seq 2 again: refused');
    t.strictSame((await store.changes(null)).plans.map((p) => p.planId), [plan.planId], 'live while not terminal');
    t.ok(await store.append(event(plan, ['planned', 'deposit_seen', 'completed']), true));
    t.strictSame((await store.changes(null)).plans, [], 'terminal: no longer live');
    t.strictSame((await store.events(plan.planId, 0)).map((e) => e.seq), [1, 2, 3]);
    t.strictSame((await store.events(plan.planId, 1)).map((e) => e.seq), [2, 3], 'after a seq');
    t.strictSame(await store.plan(plan.planId), plan);
    for (let i = 0; i < 50 && heard.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    t.strictSame(heard, [1, 2, 3], 'every event published, in order');
    t.ok(await store.add(plan), 'made again under its id once over (the same request, its idempotency record gone): kept afresh');
    t.strictSame((await store.events(plan.planId, 0)).map((e) => e.status.state), ['planned'], 'its events start again');
  });

  t.test(`${name}: "a plan's first event is its record's: published when it is kept, answered the same, an intent plan's awaiting_signature kept once its message is signed"`, skip, async (t) => {
    const store = open(Date.now);
    t.teardown(() => store.close());
    const heard: PlanStatusEvent[] = [];
    store.subscribe((e) => heard.push(e));
    await store.listening();
    const plan: TrackedPlan = { ...tracked(), createdAtMs: 1_234, awaitingSignature: true, firstState: 'awaiting_signature', legs: [{ ...tracked().legs[0]!, basis: 'venue', escrow: null, memo: null }] };
    const first = eventOf(statusOf(plan, null, [{ state: 'awaiting_signature', seq: 1, at: new Date(1_234).toISOString() }]));
    t.ok(await store.add(plan));
    t.strictSame(await store.events(plan.planId, 0), [first]);
    await store.update({ ...plan, awaitingSignature: false, legs: [{ ...plan.legs[0]!, escrow: 'oneswap::1220bb', memo: 'm' }] });
    t.strictSame(await store.events(plan.planId, 0), [first], 'its deposits known: its first event unchanged');
    t.strictSame(await store.events(plan.planId, 1), [], 'none after it');
    for (let i = 0; i < 50 && heard.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    t.strictSame(heard, [first], 'published once, as answered');
  });

  t.test(`${name}: "nothing is kept after the retention"`, skip, async (t) => {
    let nowMs = Date.now();
    const store = open(() => nowMs);
    t.teardown(() => store.close());
    const plan = tracked();
    await store.add(plan);
    nowMs += 2_000;
    // Redis keeps its own time.
    if (store.shared) await new Promise((resolve) => setTimeout(resolve, 1_200));
    t.equal(await store.plan(plan.planId), null, 'gone once its retention has passed');
  });

  t.test(`${name}: "the follower reads the live plans changed since its cursor, or every live plan when it has none"`, skip, async (t) => {
    const store = open(Date.now);
    t.teardown(() => store.close());
    const [a, b, c] = [tracked(), tracked(), tracked()];
    await store.add(a);
    await store.add(b);
    const all = await store.changes(null);
    t.ok(all.full, 'no cursor: every live plan');
    t.ok([a, b].every((p) => all.plans.some((q) => q.planId === p.planId)));
    const none = await store.changes(all.cursor);
    t.strictSame([none.plans, none.full], [[], false], 'nothing changed: nothing read');
    await store.add(c);
    const reported = { ...a, reports: { 0: { outcome: 'completed' as const, settlementUpdateId: 'u1', received: '15', atMs: 1 } } };
    await store.update(reported);
    await store.update(reported);
    const next = await store.changes(none.cursor);
    t.notOk(next.full);
    t.strictSame(next.plans.map((p) => p.planId).sort(), [a.planId, c.planId].sort(), 'the new plan and the changed one, each once');
    t.strictSame(next.plans.find((p) => p.planId === a.planId), reported, 'as changed');
    await store.append(event(b, ['planned', 'expired']), true);
    await store.update({ ...b });
    t.strictSame((await store.changes(next.cursor)).plans, [], 'a plan over is not read, even changed');
  });

  t.test(`${name}: "one lease holder at a time"`, skip, async (t) => {
    const store = open(Date.now);
    t.teardown(() => store.close());
    const first = await store.lease('a', 1_000);
    const second = await store.lease('b', 1_000);
    if (store.shared) {
      t.ok(first);
      t.notOk(second, 'another holder is refused while it runs');
      t.ok(await store.lease('a', 1_000), 'its holder renews it');
    } else t.ok(first && second, 'one instance alone always holds it');
  });
}

rules('SQLite', (now) => new SqlitePlanStore(tempDir(t, 'bestex-store-'), 1_000, now));
rules('Redis', () => new RedisPlanStore(`${redis?.url}/5`, 1_000), redisSkip(redis));

t.test('SQLite: "a process killed with the file open leaves its lock; the next one takes it over, and a live owner keeps it"', async (t) => {
  const dir = tempDir(t, 'bestex-store-');
  const first = new SqlitePlanStore(dir, 60_000);
  const plan = tracked();
  await first.add(plan);
  t.throws(() => new SqlitePlanStore(dir, 60_000), /in use|open already/, 'a second store on a file held: refused');
  await first.close();
  // What a kill -9 leaves: the library's lock directory and an owner file naming a process that is gone.
  mkdirSync(join(dir, 'plan-status.sqlite.lock'), { recursive: true });
  writeFileSync(join(dir, 'plan-status.sqlite.owner'), JSON.stringify({ pid: 2 ** 22 + 7, host: hostname() }));
  const next = new SqlitePlanStore(dir, 60_000);
  t.teardown(() => next.close());
  t.strictSame(await next.plan(plan.planId), plan, 'taken over, its plans kept');
});

t.test('SQLite: "a plan\'s first event is not written but derived from its record: the file holds a row only for each later event, and a restart answers the same events"', async (t) => {
  const dir = tempDir(t, 'bestex-store-');
  const store = new SqlitePlanStore(dir, 60_000);
  const [done, live] = [tracked(), tracked()];
  for (const plan of [done, live]) await store.add(plan);
  await store.append(event(done, ['planned', 'completed']), true);
  await store.append(event(live, ['planned', 'deposit_seen']), false);
  const before = [await store.events(done.planId, 0), await store.events(live.planId, 0)];
  t.strictSame(before.map((events) => events.map((e) => e.seq)), [[1, 2], [1, 2]]);
  t.strictSame(before[1]![0], event(live, ['planned']), 'the first as published');
  await store.close();
  const db = new sqlite.Database(join(dir, 'plan-status.sqlite'));
  t.strictSame(db.all('SELECT plan_id AS planId, seq FROM events ORDER BY plan_id'), [{ planId: done.planId, seq: 2 }, { planId: live.planId, seq: 2 }], 'no row for a first event');
  db.close();
  const again = new SqlitePlanStore(dir, 60_000);
  t.teardown(() => again.close());
  t.strictSame([await again.events(done.planId, 0), await again.events(live.planId, 0)], before, 'restarted: the same events, a plan over and a live one');
  t.ok(await again.append(event(live, ['planned', 'deposit_seen', 'completed']), true), 'the live one goes on at seq 3');
});

t.test('SQLite: "a file whose first events were written (by an earlier version) answers each first event once, as written, before and after a restart"', async (t) => {
  const dir = tempDir(t, 'bestex-store-');
  const plan = tracked();
  // An intent plan signed under that version: its record no longer awaits the signature, and has no firstState.
  const signed: TrackedPlan = { ...tracked(), legs: [{ ...tracked().legs[0]!, basis: 'venue', escrow: 'oneswap::1220bb', memo: 'm' }] };
  const intentEvents = [event(signed, ['awaiting_signature']), event(signed, ['awaiting_signature', 'planned'])];
  await new SqlitePlanStore(dir, 60_000).close();
  const db = new sqlite.Database(join(dir, 'plan-status.sqlite'));
  for (const [kept, events] of [[plan, [{ ...event(plan, ['planned']), at: 'as written' }]], [signed, intentEvents]] as const) {
    db.run('INSERT INTO plans (plan_id, body, live, keep_until) VALUES (?, ?, 1, ?)', [kept.planId, JSON.stringify(kept), Date.now() + 60_000]);
    for (const e of events) db.run('INSERT INTO events (plan_id, seq, body) VALUES (?, ?, ?)', [kept.planId, e.seq, JSON.stringify(e)]);
  }
  db.close();
  const store = new SqlitePlanStore(dir, 60_000);
  t.strictSame(await store.events(plan.planId, 0), [{ ...event(plan, ['planned']), at: 'as written' }], 'the row written, not a derived one beside it');
  t.strictSame(await store.events(signed.planId, 0), intentEvents, 'the signed intent plan\'s first event still awaiting_signature');
  t.ok(await store.append(event(plan, ['planned', 'deposit_seen']), false), 'its next event is seq 2');
  t.ok(await store.append(event(signed, ['awaiting_signature', 'planned', 'completed']), true), 'the intent plan\'s is seq 3');
  await store.close();
  const again = new SqlitePlanStore(dir, 60_000);
  t.teardown(() => again.close());
  t.strictSame((await again.events(plan.planId, 0)).map((e) => [e.seq, e.at]), [[1, 'as written'], [2, new Date(1000).toISOString()]], 'restarted: live, the same');
  t.strictSame((await again.events(signed.planId, 0)).map((e) => e.status.state), ['awaiting_signature', 'planned', 'completed'], 'restarted: over, the same');
});
