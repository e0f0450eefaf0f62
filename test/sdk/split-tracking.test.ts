// "Each leg of a split settles on its own" as the SDK reads it from the taker's transactions
// (sdk/src/tracking.ts, read from the package as built), fed hand-made transactions: one
// submission offers every leg's deposit and fee legs, each fee leg assigned to its own leg and no
// deposit ever taken for a fee leg; then each deposit is paid, rejected, answered late or
// withdrawn on its own, its payout only what its own venue paid, its fee legs released or
// returned with it.
import t from 'tap';

interface Target {
  readonly party: string;
  readonly pool: string;
  readonly instrument: string;
  readonly amount: string;
  readonly memo: string;
  readonly want: string;
  readonly executeBefore: string;
  readonly notBefore: string;
  readonly feeLegs: ReadonlyArray<{ readonly receiver: string; readonly amount: string }>;
}
interface Deposit {
  readonly offerCid: string | null;
  readonly feeLegs: ReadonlyArray<{ readonly cid: string; readonly receiver: string; readonly amount: string; readonly index: number }>;
  readonly depositUpdateId: string | null;
  readonly outcome: 'COMPLETED' | 'SLIPPAGE_FAILED' | 'EXPIRED' | 'WITHDRAWN' | null;
  readonly received: bigint | null;
  readonly feeAnswers: Readonly<Record<string, 'accepted' | 'returned'>>;
}
interface Tracked {
  readonly offerUpdateId: string | null;
  readonly deposits: readonly Deposit[];
  readonly offset: number;
}
type Event =
  | { kind: 'created'; contractId: string; holding: { owner: string; instrumentId: { admin: string; id: string }; amount: string; lock: unknown } | null; transfer: unknown }
  | { kind: 'exercised'; contractId: string; choice: string; actingParties: string[] };
interface Tx {
  updateId: string;
  offset: number;
  recordTime: string;
  events: Event[];
}

const tracking = (await import(new URL('./tracking.js', import.meta.resolve('@bestex/sdk')).href)) as {
  start(offset: number): Tracked;
  track(state: Tracked, transactions: readonly Tx[], targets: readonly Target[], submittedUpdateId: string | null): Tracked;
  feesReleased(deposits: readonly Deposit[]): boolean | null;
};

const party = (hint: string, digit: string) => `${hint}::1220${digit.repeat(64)}`;
const TAKER = party('taker', '5');
const DSO = party('DSO', '1');
const USDC_ADMIN = party('usdc-admin', '2');
const ONESWAP = party('oneswap-deposit', '3');
const TRADECRAFT = party('tradecraft-pool', '4');
const SERVICE = party('bestex-fees', 'e');
const INTEGRATOR = party('wallet-co', 'a');
const REASON = 'splice.lfdecentralizedtrust.org/reason';

const EXPIRY = '2030-01-01T00:01:30.000Z';
const BEFORE = '2030-01-01T00:00:30.000Z';
const AFTER = '2030-01-01T00:02:00.000Z';

const admin = (id: string) => (id === 'Amulet' ? DSO : USDC_ADMIN);
const offer = (cid: string, receiver: string, amount: string, id: string, memo: string): Event => ({
  kind: 'created',
  contractId: cid,
  holding: null,
  transfer: { sender: TAKER, receiver, amount, instrumentId: { admin: admin(id), id }, executeBefore: EXPIRY, meta: { values: { [REASON]: memo } } },
});
const holding = (cid: string, owner: string, amount: string, id: string): Event => ({ kind: 'created', contractId: cid, holding: { owner, instrumentId: { admin: admin(id), id }, amount, lock: null }, transfer: null });
const exercised = (cid: string, choice: string, actor: string): Event => ({ kind: 'exercised', contractId: cid, choice, actingParties: [actor] });
const accept = (cid: string, actor: string) => exercised(cid, 'TransferInstruction_Accept', actor);
const reject = (cid: string, actor: string) => exercised(cid, 'TransferInstruction_Reject', actor);
const tx = (offset: number, events: Event[], recordTime = BEFORE): Tx => ({ updateId: `u${offset}`, offset, recordTime, events });

const target = (pool: string, amount: string, memo: string, feeLegs: Target['feeLegs']): Target => ({
  party: TAKER,
  pool,
  instrument: 'Amulet',
  amount,
  memo,
  want: 'USDCx',
  executeBefore: EXPIRY,
  notBefore: '2029-12-31T23:58:00.000Z',
  feeLegs,
});
/** A split of 1,000 CC: 600 to OneSwap's intent, 400 to tradecraft's pool, each leg with the same two fee receivers. */
const TARGETS = [
  target(ONESWAP, '600', 'osr-0123', [
    { receiver: SERVICE, amount: '0.03' },
    { receiver: INTEGRATOR, amount: '0.015' },
  ]),
  target(TRADECRAFT, '400', '19.9', [
    { receiver: SERVICE, amount: '0.02' },
    { receiver: INTEGRATOR, amount: '0.01' },
  ]),
];

/** The batch, as the ledger returns its events: the taker's change, then each leg's deposit and fee legs. */
const BATCH = tx(10, [
  holding('change-cc', TAKER, '9000', 'Amulet'),
  offer('dep-a', ONESWAP, '600', 'Amulet', 'osr-0123'),
  offer('fee-a1', SERVICE, '0.03', 'USDCx', 'pl_x fee-escrow-lock'),
  offer('fee-a2', INTEGRATOR, '0.015', 'USDCx', 'pl_x fee-transfer'),
  offer('dep-b', TRADECRAFT, '400', 'Amulet', '19.9'),
  offer('fee-b1', SERVICE, '0.02', 'USDCx', 'pl_x fee-escrow-lock'),
  offer('fee-b2', INTEGRATOR, '0.01', 'USDCx', 'pl_x fee-transfer'),
]);

const run = (transactions: Tx[], targets = TARGETS) => tracking.track(tracking.start(9), transactions, targets, null);
const cids = (deposit: Deposit | undefined) => deposit?.feeLegs.map((leg) => [leg.cid, leg.index]);

t.test('one submission offers every leg: each deposit found, each fee leg its own leg\'s (by receiver and amount, in order), no deposit taken for a fee leg', async (t) => {
  const state = run([BATCH]);
  t.equal(state.offerUpdateId, 'u10');
  t.strictSame(state.deposits.map((d) => d.offerCid), ['dep-a', 'dep-b']);
  t.strictSame(cids(state.deposits[0]), [['fee-a1', 0], ['fee-a2', 1]]);
  t.strictSame(cids(state.deposits[1]), [['fee-b1', 0], ['fee-b2', 1]]);
  t.notOk(state.deposits.some((d) => d.feeLegs.some((leg) => leg.cid.startsWith('dep-'))), 'another leg\'s deposit is no fee leg');

  // Fee legs of equal receiver and amount in both legs: each leg takes the first not yet taken, in the batch's order.
  const same = [TARGETS[0]!, { ...TARGETS[1]!, feeLegs: TARGETS[0]!.feeLegs }];
  const twins = tx(10, [
    offer('dep-a', ONESWAP, '600', 'Amulet', 'osr-0123'),
    offer('fee-a1', SERVICE, '0.03', 'USDCx', 'a'),
    offer('fee-a2', INTEGRATOR, '0.015', 'USDCx', 'a'),
    offer('dep-b', TRADECRAFT, '400', 'Amulet', '19.9'),
    offer('fee-b1', SERVICE, '0.03', 'USDCx', 'b'),
    offer('fee-b2', INTEGRATOR, '0.015', 'USDCx', 'b'),
  ]);
  const paired = run([twins], same);
  t.strictSame([cids(paired.deposits[0]), cids(paired.deposits[1])], [[['fee-a1', 0], ['fee-a2', 1]], [['fee-b1', 0], ['fee-b2', 1]]]);
});

t.test('"never one deposit alone for a split": a transaction with one leg\'s deposit only is not the split\'s submission', async (t) => {
  const alone = tx(10, [offer('dep-a', ONESWAP, '600', 'Amulet', 'osr-0123')]);
  const state = run([alone]);
  t.equal(state.offerUpdateId, null);
  t.strictSame(state.deposits, []);
  t.equal(run([alone, { ...BATCH, offset: 11, updateId: 'u11' }]).offerUpdateId, 'u11', 'the batch after it is');
});

t.test('"legs settle independently": one leg paid by its venue, the other rejected before expiry; each payout only its own venue\'s; each leg\'s fees released or returned with it', async (t) => {
  const transactions = [
    BATCH,
    // OneSwap's intent takes its deposit, and pays later.
    tx(11, [accept('dep-a', ONESWAP)]),
    // tradecraft's pool rejects its leg (the price moved past its floor): the deposit comes back.
    tx(12, [reject('dep-b', TRADECRAFT), holding('back-b', TAKER, '400', 'Amulet')]),
    // The service returns that leg's fee legs.
    tx(13, [reject('fee-b1', SERVICE), reject('fee-b2', SERVICE), holding('back-fees', TAKER, '0.03', 'USDCx')]),
    // OneSwap pays its leg.
    tx(14, [exercised('intent-pay', 'TransferFactory_Transfer', ONESWAP), holding('paid-a', TAKER, '29.91', 'USDCx')]),
    tx(15, [accept('fee-a1', SERVICE), accept('fee-a2', INTEGRATOR)]),
  ];
  const state = run(transactions);
  const [a, b] = state.deposits;
  t.match(a, { outcome: 'COMPLETED', depositUpdateId: 'u11', received: 299_100_000_000n, feeAnswers: { 'fee-a1': 'accepted', 'fee-a2': 'accepted' } });
  t.match(b, { outcome: 'SLIPPAGE_FAILED', depositUpdateId: 'u12', received: null, feeAnswers: { 'fee-b1': 'returned', 'fee-b2': 'returned' } });
  t.equal(tracking.feesReleased([a!]), true, 'the paid leg\'s fees released');
  t.equal(tracking.feesReleased([b!]), false, 'the returned leg\'s fees returned, not collected');
  t.equal(tracking.feesReleased(state.deposits), false, 'all of them together: not all released');
  t.equal(tracking.feesReleased(run(transactions.slice(0, 3)).deposits), null, 'none answered yet');

  // Before OneSwap pays, the fees coming back to the taker are no payout of its leg: its venue did not act there.
  const midway = run(transactions.slice(0, 4));
  t.match(midway.deposits[0], { outcome: null, depositUpdateId: 'u11', received: null });
});

t.test('a payout is the leg\'s own venue\'s: another leg\'s venue paying in its own transaction is not counted for a leg still awaiting its payout', async (t) => {
  const transactions = [
    BATCH,
    tx(11, [accept('dep-a', ONESWAP)]),
    // tradecraft accepts and pays its leg in one transaction, while OneSwap has not paid yet.
    tx(12, [accept('dep-b', TRADECRAFT), exercised('pool-pay', 'TransferFactory_Transfer', TRADECRAFT), holding('paid-b', TAKER, '19.95', 'USDCx')]),
  ];
  const state = run(transactions);
  t.match(state.deposits[1], { outcome: 'COMPLETED', depositUpdateId: 'u12', received: 199_500_000_000n });
  t.match(state.deposits[0], { outcome: null, received: null }, 'OneSwap\'s leg still awaits its own payout');
});

t.test('a leg\'s deposit rejected after its expiry is EXPIRED, a withdrawn one WITHDRAWN, each leg\'s end its own', async (t) => {
  const state = run([BATCH, tx(11, [exercised('dep-a', 'TransferInstruction_Withdraw', TAKER)]), tx(12, [reject('dep-b', TRADECRAFT)], AFTER)]);
  t.strictSame(
    state.deposits.map((d) => [d.outcome, d.depositUpdateId]),
    [
      ['WITHDRAWN', 'u11'],
      ['EXPIRED', 'u12'],
    ],
  );
});
