// The rules a plan's status is derived by: the plan's state from its legs', the figures that
// recompute from each other, and the capability only the service's secret makes.
import t from 'tap';
import { eventOf, planState, PlanSecrets, statusOf, UNREAD, type LegReading, type PlanState, type TrackedPlan } from '../../../core/plan-status/status.js';

const leg = (state: PlanState, received: string | null = null): LegReading => ({ ...UNREAD, state, received });

t.test('"a split is completed when every leg is, partially completed when some legs are paid and others not"', async (t) => {
  t.equal(planState([leg('planned'), leg('planned')]), 'planned');
  t.equal(planState([leg('deposit_seen'), leg('planned')]), 'deposit_seen', 'one deposit seen');
  t.equal(planState([leg('completed', '1'), leg('planned')]), 'deposit_seen', 'one leg paid, the other not final yet');
  t.equal(planState([leg('completed', '1'), leg('completed', '2')]), 'completed');
  t.equal(planState([leg('completed', '1'), leg('slippage_failed')]), 'partially_completed');
  t.equal(planState([leg('completed', '1'), leg('expired')]), 'partially_completed');
});

t.test('"with no leg paid, the worst fate among them"', async (t) => {
  t.equal(planState([leg('slippage_failed'), leg('slippage_failed')]), 'slippage_failed');
  t.equal(planState([leg('slippage_failed'), leg('expired')]), 'slippage_failed');
  t.equal(planState([leg('venue_failed'), leg('slippage_failed')]), 'venue_failed');
  t.equal(planState([leg('withdrawn'), leg('expired')]), 'withdrawn');
  t.equal(planState([leg('expired')]), 'expired');
});

t.test('"a leg the service cannot observe makes the outcome the taker\'s to read"', async (t) => {
  t.equal(planState([leg('completed', '1'), leg('unobserved')]), 'unobserved');
  t.equal(planState([leg('unobserved')]), 'unobserved');
});

const plan: TrackedPlan = {
  planId: 'pl_AAAAAAAAAAAAAAAAAAAAAA',
  partnerId: null,
  takerHash: 'h',
  createdAtMs: Date.parse('2026-01-01T00:00:00Z'),
  expiryMs: Date.parse('2026-01-01T00:01:30Z'),
  pair: { give: 'Amulet', want: 'USDCx' },
  amount: '1000',
  minReceive: '140',
  legs: [
    { leg: 0, venueId: 'oneswap', amount: '400', minReceive: '55', basis: 'venue', escrow: null, memo: null },
    { leg: 1, venueId: 'tradecraft', amount: '600', minReceive: '85', basis: 'ledger', escrow: 'pool::1220ab', memo: '85' },
  ],
  awaitingSignature: false,
};

t.test('"every figure recomputes: received is the paid legs\' sum, each leg as read"', async (t) => {
  const history = [
    { state: 'planned' as const, seq: 1, at: '2026-01-01T00:00:00.000Z' },
    { state: 'partially_completed' as const, seq: 2, at: '2026-01-01T00:00:20.000Z' },
  ];
  const status = statusOf(plan, [leg('completed', '56.0000000001'), { ...leg('slippage_failed'), depositUpdateId: '12', settlementUpdateId: '34' }], history);
  t.match(status, { state: 'partially_completed', terminal: true, seq: 2, updatedAt: '2026-01-01T00:00:20.000Z', expiry: '2026-01-01T00:01:30.000Z', received: '56.0000000001' });
  t.strictSame(status.legs.map((l) => [l.leg, l.venueId, l.state, l.basis, l.received]), [[0, 'oneswap', 'completed', 'venue', '56.0000000001'], [1, 'tradecraft', 'slippage_failed', 'ledger', null]]);
  t.equal(status.legs[1]!.settlementUpdateId, '34');
  t.equal(statusOf(plan, null, history.slice(0, 1)).received, null, 'nothing paid: null');
  t.match(eventOf(status), { type: 'plan.partially_completed', planId: plan.planId, seq: 2, at: status.updatedAt, status });
});

t.test('"a keyless plan\'s capability is the service\'s alone: bound to its plan, checked in constant time, never the taker\'s hash"', async (t) => {
  const secrets = new PlanSecrets('one-secret');
  const token = secrets.statusToken(plan.planId);
  t.match(token, /^st_[A-Za-z0-9_-]{43}$/);
  t.ok(secrets.tokenMatches(plan.planId, token));
  t.notOk(secrets.tokenMatches('pl_BBBBBBBBBBBBBBBBBBBBBB', token), "another plan's token");
  t.notOk(secrets.tokenMatches(plan.planId, token.slice(0, -1)), 'a shorter one');
  t.notOk(new PlanSecrets('another-secret').tokenMatches(plan.planId, token), "another deployment's secret");
  t.not(secrets.takerHash('alice::1220' + 'a'.repeat(64)), new PlanSecrets('another-secret').takerHash('alice::1220' + 'a'.repeat(64)), 'the taker hash is keyed');
  t.notOk(secrets.takerHash(plan.planId) === token.slice(3), 'the two hashes are keyed apart');
});
