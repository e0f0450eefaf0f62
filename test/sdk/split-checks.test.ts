// "A split plan is checked as a wallet should before it signs" (sdk/src/plan.ts, read from the
// package as built): a hand-made split plan, OneSwap's leg and tradecraft's, each with its fee
// legs, passes every check; tampered one way per check the SDK makes, it is refused by that check;
// a split made with a sign-message step is checked as a whole, and the plan the service completes
// it into must be the one signed for.
import t from 'tap';
import { BestexError, checkPlan, isPlanV2, isSigningPlan, isSplitPlan, type DepositSplitPlan, type SigningSplitPlan, type V2 } from '@bestex/sdk';

const plans = (await import(new URL('./plan.js', import.meta.resolve('@bestex/sdk')).href)) as {
  PLAN_CHECKS_SPLIT: ReadonlyArray<{ readonly id: string }>;
  checkCompleted(made: SigningSplitPlan, completed: unknown, now: Date): { deposits: readonly V2.PlanStep[] };
};

const party = (hint: string, digit: string) => `${hint}::1220${digit.repeat(64)}`;
const DSO = party('DSO', '1');
const USDC_ADMIN = party('usdc-admin', '2');
const ONESWAP_DEPOSIT = party('oneswap-deposit', '3');
const TRADECRAFT_POOL = party('tradecraft-pool', '4');
const SERVICE = party('bestex-fees', 'e');
const INTEGRATOR = party('wallet-co', 'a');
const ANOTHER = party('someone-else', 'b');

const NOW = new Date();
const EXPIRY = new Date(NOW.getTime() + 60_000).toISOString();
const later = (ms: number) => new Date(Date.parse(EXPIRY) + ms).toISOString();
const CC = { id: 'Amulet' as const, admin: DSO };
const USDCX = { id: 'USDCx' as const, admin: USDC_ADMIN };

const fees = (service: string, integrator: string, userReceives: string) => ({
  integrator: { bps: 5, amount: integrator, recipient: INTEGRATOR },
  service: { bps: 10, amount: service },
  userReceives,
});
type Step = V2.PlanStep;
const step = (change: Partial<Step> & Pick<Step, 'kind' | 'target' | 'amount'>): Step => ({
  instrument: USDCX,
  memo: null,
  minOut: null,
  settlement: null,
  expiresAt: EXPIRY,
  ...change,
});

/** A partner's split of 1,000 CC: 600 to OneSwap's intent, 400 to tradecraft's pool, each leg with its escrowed service fee and its integrator fee. */
const PLAN: DepositSplitPlan = {
  planId: `pl_${'s'.repeat(22)}`,
  split: {
    pair: { give: 'Amulet', want: 'USDCx' },
    amount: '1000',
    asOf: NOW.toISOString(),
    net: '50',
    minReceive: '49.75',
    edgeBps: 12,
    bestExecutable: { venueId: 'tradecraft', net: '49.94' } as V2.SplitPlanRef['bestExecutable'],
    legs: [
      { venueId: 'oneswap', amount: '600', net: '30', minReceive: '29.85', clientFees: fees('0.03', '0.015', '29.955'), settlement: 'intent-deposit-reference' },
      { venueId: 'tradecraft', amount: '400', net: '20', minReceive: '19.9', clientFees: fees('0.02', '0.01', '19.97'), settlement: 'memo-floor' },
    ],
    appliedSchema: { schemaId: 'default', overrideId: null },
  },
  steps: [
    step({ kind: 'venue-deposit', target: ONESWAP_DEPOSIT, instrument: CC, amount: '600', memo: 'osr-0123456789abcdef', minOut: '29.9', settlement: 'intent-deposit-reference', leg: 0 }),
    step({ kind: 'fee-escrow-lock', target: SERVICE, amount: '0.03', beneficiary: 'service', leg: 0 }),
    step({ kind: 'fee-transfer', target: INTEGRATOR, amount: '0.015', beneficiary: 'integrator', leg: 0 }),
    step({ kind: 'venue-deposit', target: TRADECRAFT_POOL, instrument: CC, amount: '400', memo: '19.9', minOut: '19.9', settlement: 'memo-floor', leg: 1 }),
    step({ kind: 'fee-escrow-lock', target: SERVICE, amount: '0.02', beneficiary: 'service', leg: 1 }),
    step({ kind: 'fee-transfer', target: INTEGRATOR, amount: '0.01', beneficiary: 'integrator', leg: 1 }),
  ],
  registries: [
    { instrument: 'Amulet', admin: DSO, registryUrl: 'http://registry.test/dso' },
    { instrument: 'USDCx', admin: USDC_ADMIN, registryUrl: 'http://registry.test/usdc' },
  ],
  expiry: EXPIRY,
  idempotencyKey: 'split-checks',
  trustWindow: 'two deposits, each with its floor, until the expiry',
  collectsFees: true,
  intent: { venueId: 'oneswap', intentId: 'intent-1', expiresAt: later(86_400_000) },
};

/** The same split as made, before its signature: one sign-message step, for its OneSwap leg. */
const SIGNING: SigningSplitPlan = (() => {
  const { intent: _intent, ...made } = PLAN;
  return { ...made, steps: [{ kind: 'sign-message', venueId: 'oneswap', message: 'OneSwap wallet authentication\nNonce: 00', purpose: 'to prove the party is yours', expiresAt: EXPIRY }] };
})();

type Tamper = (plan: DepositSplitPlan) => DepositSplitPlan;
const withStep = (index: number, change: Partial<Step>): Tamper => (plan) => ({ ...plan, steps: plan.steps.map((s, i) => (i === index ? { ...s, ...change } : s)) });
const withSplit = (change: Partial<DepositSplitPlan['split']>): Tamper => (plan) => ({ ...plan, split: { ...plan.split, ...change } });
const withLeg = (index: number, change: Partial<V2.SplitPlanLeg>): Tamper => (plan) => withSplit({ legs: plan.split.legs.map((leg, i) => (i === index ? { ...leg, ...change } : leg)) })(plan);
const all = (...tampers: Tamper[]): Tamper => (plan) => tampers.reduce((p, tamper) => tamper(p), plan);
const signing = (change: Partial<V2.SignMessageStep>, extra: readonly Step[] = []): Tamper => () => ({ ...SIGNING, steps: [{ ...SIGNING.steps[0]!, ...change }, ...extra] }) as never;
const order = (...indexes: number[]): Tamper => (plan) => ({ ...plan, steps: indexes.map((i) => plan.steps[i]!) });

/** One tampered split per check, each refused by that check (a check may have more than one row). */
const TAMPERED: ReadonlyArray<{ check: string; what: string; tamper: Tamper; refusal: { code: string; message: RegExp } }> = [
  { check: 'plan-id', what: 'no planId', tamper: (plan) => ({ ...plan, planId: '' }), refusal: { code: 'plan_unverifiable', message: /it has no planId/ } },
  { check: 'expiry-date-time', what: 'an expiry that is no date-time', tamper: (plan) => ({ ...plan, expiry: 'soon' }), refusal: { code: 'plan_unverifiable', message: /its expiry is not a date-time/ } },
  { check: 'not-expired', what: 'an expired plan', tamper: (plan) => ({ ...plan, expiry: new Date(NOW.getTime() - 5_000).toISOString() }), refusal: { code: 'plan_expired', message: /expired at \S+, 5 s ago/ } },
  { check: 'split', what: 'no split block', tamper: (plan) => ({ ...plan, split: undefined as never }), refusal: { code: 'plan_unverifiable', message: /its split does not say the pair, amount, net and floor, and two to six legs/ } },
  { check: 'split', what: 'one leg', tamper: (plan) => withSplit({ legs: plan.split.legs.slice(0, 1) })(plan), refusal: { code: 'plan_unverifiable', message: /two to six legs/ } },
  { check: 'split', what: 'a leg without its fees', tamper: withLeg(1, { clientFees: undefined as never }), refusal: { code: 'plan_unverifiable', message: /each with its venue, amount, net, floor and fees/ } },
  { check: 'split', what: 'a leg\'s floor that is no decimal', tamper: withLeg(0, { minReceive: '-1' }), refusal: { code: 'plan_unverifiable', message: /its split does not say/ } },
  { check: 'split', what: 'an unknown give instrument', tamper: withSplit({ pair: { give: 'DOGE' as never, want: 'USDCx' } }), refusal: { code: 'plan_unverifiable', message: /its split does not say/ } },
  { check: 'leg-venues', what: 'one venue in two legs', tamper: withLeg(1, { venueId: 'oneswap' }), refusal: { code: 'plan_unverifiable', message: /its split names a venue in more than one leg/ } },
  { check: 'leg-settlement', what: 'a leg on a settlement this SDK does not execute', tamper: withLeg(1, { settlement: 'account-intent' }), refusal: { code: 'plan_unverifiable', message: /leg 1's settlement "account-intent" is not one this SDK executes/ } },
  { check: 'has-steps', what: 'no steps', tamper: (plan) => ({ ...plan, steps: [] }), refusal: { code: 'plan_unverifiable', message: /it has no steps/ } },
  { check: 'sign-message', what: 'a sign-message step beside a deposit', tamper: (plan) => signing({}, [plan.steps[3]!])(plan), refusal: { code: 'plan_unverifiable', message: /its sign-message step is not its only step/ } },
  { check: 'sign-message', what: 'a message for a leg whose venue asks none', tamper: signing({ venueId: 'tradecraft' }), refusal: { code: 'plan_unverifiable', message: /it asks for a signed message for no leg whose settlement asks for one/ } },
  { check: 'sign-message', what: 'no message', tamper: signing({ message: '' }), refusal: { code: 'plan_unverifiable', message: /does not say the venue, the message and why it is signed/ } },
  { check: 'sign-message', what: 'a step expiring after the plan', tamper: signing({ expiresAt: later(1) }), refusal: { code: 'plan_unverifiable', message: /its sign-message step expires after the plan/ } },
  { check: 'step-kind', what: 'an unknown step kind', tamper: withStep(4, { kind: 'mystery' as never }), refusal: { code: 'plan_unverifiable', message: /step 4 is of a kind this SDK does not know/ } },
  { check: 'step-target', what: 'a target that is no party', tamper: withStep(3, { target: 'tradecraft' }), refusal: { code: 'plan_unverifiable', message: /step 3's target is not a party id/ } },
  { check: 'step-amount', what: 'a zero amount', tamper: withStep(5, { amount: '0' }), refusal: { code: 'plan_unverifiable', message: /step 5's amount is not a positive Daml Decimal/ } },
  { check: 'step-instrument', what: 'an instrument by id alone', tamper: withStep(3, { instrument: 'Amulet' as never }), refusal: { code: 'plan_unverifiable', message: /step 3's instrument is not one this SDK knows/ } },
  { check: 'step-leg', what: 'a step naming a leg the split has not', tamper: withStep(4, { leg: 2 }), refusal: { code: 'plan_unverifiable', message: /step 4 names no leg of the split/ } },
  { check: 'step-leg', what: 'a step naming no leg', tamper: withStep(1, { leg: undefined }), refusal: { code: 'plan_unverifiable', message: /step 1 names no leg of the split/ } },
  { check: 'step-settlement', what: 'a deposit settling otherwise than its leg', tamper: withStep(3, { settlement: 'swap-address-memo' }), refusal: { code: 'plan_unverifiable', message: /step 3's settlement is "swap-address-memo", not "memo-floor"/ } },
  { check: 'step-settlement', what: 'a fee leg with a settlement', tamper: withStep(2, { settlement: 'memo-floor' }), refusal: { code: 'plan_unverifiable', message: /step 2's settlement is "memo-floor", not null/ } },
  { check: 'step-expiry', what: 'a step expiring after the plan', tamper: withStep(5, { expiresAt: later(1) }), refusal: { code: 'plan_unverifiable', message: /step 5 expires after the plan/ } },
  { check: 'legs-in-order', what: 'a leg\'s fee leg before its deposit', tamper: order(0, 1, 2, 4, 3, 5), refusal: { code: 'plan_unverifiable', message: /its steps are not in leg order, each leg with exactly one deposit, first/ } },
  { check: 'legs-in-order', what: 'the second leg\'s steps first', tamper: order(3, 4, 5, 0, 1, 2), refusal: { code: 'plan_unverifiable', message: /not in leg order/ } },
  {
    check: 'legs-in-order',
    what: 'a second deposit in a leg, the other leg with none',
    tamper: all(withStep(3, { leg: 0, settlement: 'intent-deposit-reference' }), withStep(4, { leg: 0 }), withStep(5, { leg: 0 })),
    refusal: { code: 'plan_unverifiable', message: /each leg with exactly one deposit, first/ },
  },
  { check: 'legs-sum', what: 'legs\' amounts not summing to the amount', tamper: withSplit({ amount: '1000.0000000001' }), refusal: { code: 'plan_unverifiable', message: /its legs' amounts, nets and floors do not sum to the split's amount, net and floor/ } },
  { check: 'legs-sum', what: 'legs\' nets not summing to the net', tamper: withSplit({ net: '50.5' }), refusal: { code: 'plan_unverifiable', message: /do not sum to the split's/ } },
  { check: 'legs-sum', what: 'legs\' floors not summing to the floor', tamper: withSplit({ minReceive: '49' }), refusal: { code: 'plan_unverifiable', message: /do not sum to the split's/ } },
  { check: 'deposit-is-the-leg', what: 'a deposit bigger than its leg', tamper: withStep(3, { amount: '400.0000000001' }), refusal: { code: 'plan_unverifiable', message: /leg 1's deposit is not its amount in the give instrument/ } },
  { check: 'deposit-is-the-leg', what: 'a deposit in the want instrument', tamper: withStep(0, { instrument: USDCX }), refusal: { code: 'plan_unverifiable', message: /leg 0's deposit is not its amount in the give instrument/ } },
  { check: 'memo-floor', what: 'a memo-floor deposit whose memo is not its leg\'s floor', tamper: withStep(3, { memo: '19.8' }), refusal: { code: 'plan_unverifiable', message: /leg 1's deposit's memo and minOut are not its floor/ } },
  { check: 'memo-floor', what: 'the whole split\'s floor as one leg\'s memo', tamper: withStep(3, { memo: '49.75', minOut: '49.75' }), refusal: { code: 'plan_unverifiable', message: /leg 1's deposit's memo and minOut are not its floor/ } },
  {
    check: 'swap-address-memo',
    what: 'a swap-address leg without the venue\'s memo',
    tamper: all(withLeg(1, { settlement: 'swap-address-memo' }), withStep(3, { settlement: 'swap-address-memo', memo: '' })),
    refusal: { code: 'plan_unverifiable', message: /leg 1's deposit carries no venue memo/ },
  },
  {
    check: 'swap-address-memo',
    what: 'a swap-address leg\'s guarantee below its floor',
    tamper: all(withLeg(1, { settlement: 'swap-address-memo' }), withStep(3, { settlement: 'swap-address-memo', memo: 'nswap-0123', minOut: '19.8999999999' })),
    refusal: { code: 'plan_unverifiable', message: /leg 1's deposit's minOut is below its floor/ },
  },
  { check: 'intent-deposit-reference', what: 'an intent deposit without its reference', tamper: withStep(0, { memo: null }), refusal: { code: 'plan_unverifiable', message: /leg 0's deposit carries no venue memo/ } },
  { check: 'intent-deposit-reference', what: 'an intent\'s minOutput below its leg\'s floor', tamper: withStep(0, { minOut: '29.8499999999' }), refusal: { code: 'plan_unverifiable', message: /leg 0's deposit's minOut is below its floor/ } },
  {
    check: 'floor-within-net',
    what: 'a leg\'s floor above its net (its memo and the split\'s floor with it)',
    tamper: all(withLeg(1, { minReceive: '20.0000000001' }), withSplit({ minReceive: '49.8500000001' }), withStep(3, { memo: '20.0000000001', minOut: '20.0000000001' })),
    refusal: { code: 'plan_unverifiable', message: /leg 1's floor is above its net/ },
  },
  {
    check: 'net-not-zero',
    what: 'a leg with a net of zero',
    tamper: all(withLeg(1, { net: '0', minReceive: '0' }), withSplit({ net: '30', minReceive: '29.85' }), withStep(3, { memo: '0', minOut: '0' })),
    refusal: { code: 'plan_unverifiable', message: /leg 1's net is zero/ },
  },
  { check: 'leg-fees-recompute', what: 'a leg\'s userReceives not its net less its fees', tamper: withLeg(0, { clientFees: fees('0.03', '0.015', '29.956') }), refusal: { code: 'plan_unverifiable', message: /leg 0's fees do not recompute/ } },
  { check: 'fee-legs-collect-fees', what: 'fee legs on a plan that collects none', tamper: (plan) => ({ ...plan, collectsFees: false }), refusal: { code: 'plan_unverifiable', message: /it has fee legs but does not collect fees/ } },
  { check: 'one-leg-per-kind', what: 'a leg\'s integrator fee twice', tamper: order(0, 1, 2, 2, 3, 4, 5), refusal: { code: 'plan_unverifiable', message: /leg 0 has more than one fee-transfer leg/ } },
  { check: 'one-admin-per-instrument', what: 'a fee leg\'s USDCx under another admin', tamper: withStep(4, { instrument: { id: 'USDCx', admin: ANOTHER } }), refusal: { code: 'plan_unverifiable', message: /it names USDCx under two admins/ } },
  { check: 'registries-cover', what: 'no registry for the fee legs\' instrument', tamper: (plan) => ({ ...plan, registries: plan.registries.filter((r) => r.instrument !== 'USDCx') }), refusal: { code: 'plan_unverifiable', message: /its registries name none for USDCx under its admin/ } },
  { check: 'fee-leg-in-want', what: 'a fee leg in the give instrument', tamper: withStep(4, { instrument: CC }), refusal: { code: 'plan_unverifiable', message: /leg 1's fee-escrow-lock leg is not in the want instrument/ } },
  { check: 'fee-leg-bare', what: 'a fee leg with a memo', tamper: withStep(1, { memo: 'pay me' }), refusal: { code: 'plan_unverifiable', message: /the fee-escrow-lock leg carries a memo or a minOut/ } },
  { check: 'service-fee-disclosed', what: 'a leg\'s escrowed fee the other leg\'s', tamper: withStep(4, { amount: '0.03' }), refusal: { code: 'plan_unverifiable', message: /leg 1's fee-escrow-lock leg is not its disclosed service fee/ } },
  { check: 'integrator-fee-disclosed', what: 'a leg\'s integrator fee to another recipient', tamper: withStep(5, { target: ANOTHER }), refusal: { code: 'plan_unverifiable', message: /leg 1's integrator fee leg is not its disclosed integrator fee to its recipient/ } },
  { check: 'integrator-fee-disclosed', what: 'a leg\'s integrator fee above its line', tamper: withStep(2, { amount: '0.0150000001' }), refusal: { code: 'plan_unverifiable', message: /leg 0's integrator fee leg is not its disclosed integrator fee/ } },
  { check: 'edge-recomputes', what: 'an edge overstated by one bp', tamper: withSplit({ edgeBps: 13 }), refusal: { code: 'plan_unverifiable', message: /its edgeBps is not floor\(10000 x \(net - bestExecutable.net\)/ } },
  { check: 'edge-recomputes', what: 'a split that does not beat the best single venue', tamper: withSplit({ bestExecutable: { venueId: 'tradecraft', net: '50' } as V2.SplitPlanRef['bestExecutable'], edgeBps: 0 }), refusal: { code: 'plan_unverifiable', message: /the split's gain over the best single venue is not what it says/ } },
];

const refusalOf = (plan: unknown): unknown => {
  try {
    checkPlan(plan, NOW);
    return null;
  } catch (err) {
    return err;
  }
};

t.test('a split plan is told apart by its shape: a split, no settlement, no mode; one made with a sign-message step is a signing plan', async (t) => {
  t.ok(isSplitPlan(PLAN));
  t.notOk(isPlanV2(PLAN), 'not a single-venue v2 plan');
  t.notOk(isSigningPlan(PLAN));
  t.ok(isSplitPlan(SIGNING) && isSigningPlan(SIGNING));
  t.notOk(isSplitPlan({ ...PLAN, settlement: 'memo-floor' }), 'a settlement makes it a single-venue plan\'s shape');
});

t.test('the split as made passes every check: its deposits one per leg, in leg order, its fee legs each leg\'s', async (t) => {
  const checked = checkPlan(PLAN, NOW);
  t.strictSame(checked.deposits, [PLAN.steps[0], PLAN.steps[3]]);
  t.equal(checked.deposit, PLAN.steps[0]);
  t.strictSame(checked.feeLegs, [PLAN.steps[1], PLAN.steps[2], PLAN.steps[4], PLAN.steps[5]]);
  t.strictSame(checkPlan(SIGNING, NOW), { plan: SIGNING, deposit: null, deposits: [], feeLegs: [] }, 'made with a sign-message step: checked as a whole, no deposit yet');
});

t.test('"the SDK re-checks the split it is handed": a split tampered against each of its checks is refused by that check', async (t) => {
  t.strictSame([...new Set(TAMPERED.map((row) => row.check))].sort(), plans.PLAN_CHECKS_SPLIT.map((c) => c.id).sort(), 'a row for every check the SDK makes of a split, and none for a check it does not');
  for (const row of TAMPERED) t.match(refusalOf(row.tamper(PLAN)), { name: 'BestexError', ...row.refusal }, `${row.check}: ${row.what}`);
});

t.test('"the completed plan is the plan signed for": the same planId, expiry and split block, a deposit to the OneSwap leg\'s intent, and every check of a split', async (t) => {
  t.strictSame(plans.checkCompleted(SIGNING, PLAN, NOW).deposits, [PLAN.steps[0], PLAN.steps[3]], 'the service\'s completion, checked');
  const differs = /the plan the service completed cannot be checked, so it is not executed: it is not the plan that was signed for \(its planId, split or expiry differ\)/;
  const refused = (completed: unknown) => {
    try {
      plans.checkCompleted(SIGNING, completed, NOW);
      return null;
    } catch (err) {
      return err;
    }
  };
  t.match(refused({ ...PLAN, planId: `pl_${'t'.repeat(22)}` }), { code: 'plan_unverifiable', message: differs }, 'another planId');
  t.match(refused({ ...PLAN, expiry: later(-1) }), { code: 'plan_unverifiable', message: differs }, 'another expiry');
  t.match(refused(withLeg(1, { minReceive: '19.8', clientFees: PLAN.split.legs[1]!.clientFees })(PLAN)), { code: 'plan_unverifiable', message: differs }, 'a leg\'s floor changed');
  const { split: _split, ...rest } = PLAN;
  t.match(refused({ ...rest, quoteRef: {}, settlement: 'intent-deposit-reference' }), { code: 'plan_unverifiable', message: differs }, 'a single-venue plan in its place');
  const noIntent = /it is not a deposit to the venue's swap intent/;
  t.match(refused(SIGNING), { code: 'plan_unverifiable', message: noIntent }, 'still awaiting a signature');
  t.match(refused(withStep(0, { settlement: 'memo-floor' })(PLAN)), { code: 'plan_unverifiable', message: noIntent }, 'no deposit to an intent');
  t.match(refused(withStep(4, { amount: '0.03' })(PLAN)), { code: 'plan_unverifiable', message: /leg 1's fee-escrow-lock leg is not its disclosed service fee/ }, 'then every check of a split');
  t.type(refused(withStep(4, { amount: '0.03' })(PLAN)), BestexError);
});
