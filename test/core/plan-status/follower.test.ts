// The follower's turn, against a ledger with nothing on it and a store that fails when told: one
// plan whose event cannot be kept is looked at again next turn, and never strands the plans after it;
// a plan made between two reads is learnt from the store's changes alone.
import t from 'tap';
import type { PlanStatusEvent } from '../../../core/contract/v2.js';
import type { Ledger } from '../../../core/ledger/ledger.js';
import { PlanFollower } from '../../../core/plan-status/follower.js';
import { SqlitePlanStore } from '../../../core/plan-status/sqlite-store.js';
import { PlanSecrets, type TrackedPlan } from '../../../core/plan-status/status.js';
import { tempDir } from '../../helpers/temp.js';

const nowMs = Date.now();
/** Past its expiry and the ledger's tolerance: due, and expired at the first look. */
const expiredPlan = (n: number): TrackedPlan => ({
  planId: `pl_${String(n).padStart(22, 'F')}`,
  partnerId: null,
  takerHash: 'h',
  createdAtMs: nowMs - 600_000,
  expiryMs: nowMs - 300_000,
  pair: { give: 'Amulet', want: 'USDCx' },
  amount: '100',
  minReceive: '14',
  legs: [{ leg: 0, venueId: 'tradecraft', amount: '100', minReceive: '14', basis: 'ledger', escrow: 'pool::1220aa', memo: '14' }],
  awaitingSignature: false,
});

const emptyLedger: Ledger = {
  ledgerEnd: async () => 0,
  prunedUpTo: async () => 0,
  transactions: async function* () {},
};

class FailingOnce extends SqlitePlanStore {
  readonly failFor = new Set<string>();
  override async append(event: PlanStatusEvent, terminal: boolean): Promise<boolean> {
    if (this.failFor.delete(event.planId)) throw new Error('the store is unreachable');
    return super.append(event, terminal);
  }
}

function follower(store: SqlitePlanStore) {
  const warned: string[] = [];
  const f = new PlanFollower({
    store,
    ledger: emptyLedger,
    pools: new Map(),
    secrets: new PlanSecrets('s'.repeat(32)),
    intents: null,
    sink: null,
    now: () => new Date(nowMs),
    log: { info: () => {}, warn: (_f, m) => warned.push(m), error: () => {} },
    pollMs: 50,
    holder: 'me',
    pageSize: 100,
  });
  return { f, warned };
}

const states = async (store: SqlitePlanStore, plan: TrackedPlan) => (await store.events(plan.planId, 0)).map((e) => e.status.state);

t.test('"a plan whose event cannot be kept is looked at again next turn; the plans after it are not stranded"', async (t) => {
  const store = new FailingOnce(tempDir(t, 'bestex-follower-'), 3_600_000);
  t.teardown(() => store.close());
  const [a, b] = [expiredPlan(1), expiredPlan(2)];
  for (const plan of [a, b]) await store.add(plan);
  store.failFor.add(a.planId);
  const { f } = follower(store);
  await t.rejects(f.step(), /unreachable/, 'the turn says it failed');
  t.strictSame(await states(store, b), ['planned', 'expired'], 'the plan after the failing one moved on');
  t.strictSame(await states(store, a), ['planned'], 'the failing one not yet');
  await f.step();
  t.strictSame(await states(store, a), ['planned', 'expired'], 'looked at again next turn: expired');
  t.equal(f.size, 0, 'both over: neither followed');
});

t.test('"a plan made between two turns is learnt from the changes alone"', async (t) => {
  const store = new SqlitePlanStore(tempDir(t, 'bestex-follower-'), 3_600_000);
  t.teardown(() => store.close());
  const { f } = follower(store);
  await f.step();
  const late = expiredPlan(3);
  await store.add(late);
  await f.step();
  t.strictSame(await states(store, late), ['planned', 'expired']);
});
