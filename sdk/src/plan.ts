// The plan the SDK is handed, checked as a wallet should before it signs anything: every step of
// a kind it knows, the deposit exactly what the quote it came from says (the give amount in the
// give instrument, its memo the quote's floor), fee legs only when the plan collects fees, in the
// want instrument and for the disclosed amounts, and the plan not expired. A version 2 plan
// (told apart by its shape: `settlement`, no `mode`) is checked the same way, and also for how its
// venue settles (a settlement this SDK executes, its memo and minOut as that settlement says),
// each instrument's admin, and a registry named for every instrument it moves. A version 2 plan
// made with a sign-message step (OneSwap's: the wallet signs the venue's challenge, then the
// service completes the plan) is checked as a whole and for that step; the plan the service
// completes it into must be the plan signed for, and is checked as any other. A split plan (told
// apart by its `split`) is checked leg by leg: the legs' figures recompute, each leg has one
// deposit, first, for its amount, its memo and minOut as its settlement says against its own
// floor, then its own fee legs for its own disclosed fees. Each check is named in PLAN_CHECKS
// (version 1), PLAN_CHECKS_V2 or PLAN_CHECKS_SPLIT, in the order they run, so a test can hold one
// tampered plan against each.
import { isDecimal, toUnits } from './decimal.js';
import { BestexError } from './errors.js';
import type { AppPlan, ExecutionPlan, PlanStep } from './contract/v1.js';
import type * as V2 from './contract/v2.js';

export type PlanV1 = AppPlan | ExecutionPlan;
export type PlanV2 = V2.AppPlan | V2.ExecutionPlan;
/** A version 2 plan split across venues: one deposit per leg, all in one batch. */
export type SplitPlan = V2.SplitPlan;
/** A plan `execute` takes: version 1's, version 2's, or a split plan, told apart by their shapes (`isPlanV2`, `isSplitPlan`). */
export type Plan = PlanV1 | PlanV2 | SplitPlan;
/** A step that moves funds: a deposit or a fee leg, in either version. */
export type AnyPlanStep = PlanStep | V2.PlanStep;
/** A version 2 plan's first step when the venue needs the wallet's signature before the service can complete the plan (OneSwap's sign-in challenge). */
export type SignMessageStep = V2.SignMessageStep;

type WithSteps<P, S> = P extends unknown ? Omit<P, 'steps'> & { readonly steps: S[] } : never;
/** A version 2 plan whose steps move funds: every v2 plan but one made with a sign-message step. */
export type DepositPlanV2 = WithSteps<PlanV2, V2.PlanStep>;
/** A version 2 plan made with a sign-message step: the wallet signs, then `signPlan` answers the complete plan. */
export type SigningPlanV2 = WithSteps<PlanV2, SignMessageStep>;
/** A split plan whose steps move funds: each leg's deposit, then its fee legs. */
export type DepositSplitPlan = WithSteps<SplitPlan, V2.PlanStep>;
/** A split plan made with a sign-message step (one of its legs is OneSwap's): `signPlan` answers the complete split plan. */
export type SigningSplitPlan = WithSteps<SplitPlan, SignMessageStep>;

/** The settlements this SDK executes: a transfer offer to the venue's party carrying the memo. */
export const EXECUTED_SETTLEMENTS: readonly V2.Settlement[] = ['memo-floor', 'swap-address-memo', 'intent-deposit-reference'];

const PARTY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,184}::1220[0-9a-f]{64}$/;
const INSTRUMENTS = ['Amulet', 'USDCx', 'CBTC'];
const FEE_KINDS = ['b2c-fee-transfer', 'fee-escrow-lock', 'fee-transfer'];

/** Whether `plan` has version 2's shape: a `settlement` and no `mode`. */
export const isPlanV2 = (plan: unknown): plan is PlanV2 => typeof plan === 'object' && plan !== null && 'settlement' in plan && !('mode' in plan);

/** Whether `plan` is a split plan: a `split`, and neither a `settlement` nor a `mode`. */
export const isSplitPlan = (plan: unknown): plan is SplitPlan => typeof plan === 'object' && plan !== null && 'split' in plan && !('settlement' in plan) && !('mode' in plan);

/** Whether `plan` (a single-venue or a split plan) is made with a sign-message step, which the wallet signs before the service completes it. */
export const isSigningPlan = (plan: unknown): plan is SigningPlanV2 | SigningSplitPlan =>
  (isPlanV2(plan) || isSplitPlan(plan)) && Array.isArray(plan.steps) && (plan.steps[0] as { kind?: unknown } | undefined)?.kind === 'sign-message';

/** A step's instrument id: v1 names it by id, v2 by `{id, admin}`. */
export const instrumentOf = (step: AnyPlanStep): string | undefined => (typeof step.instrument === 'string' ? step.instrument : (step.instrument as { id?: string } | null)?.id);

export interface CheckedPlan {
  readonly plan: Plan;
  /** The deposit (a split plan's first leg's); null for a plan made with a sign-message step, which has none until the service completes it. */
  readonly deposit: AnyPlanStep | null;
  /** Every deposit, one per leg, in leg order (a single-venue plan's one). */
  readonly deposits: readonly AnyPlanStep[];
  readonly feeLegs: readonly AnyPlanStep[];
}

const unverifiable = (why: string) => new BestexError(`the plan cannot be checked, so it is not executed: ${why}`, { status: null, code: 'plan_unverifiable' });

const time = (text: unknown): number => (typeof text === 'string' ? Date.parse(text) : Number.NaN);

/**
 * One check, by what it reads: the plan as a whole (`plan`, run before the steps are read, and
 * `batch`, once every step is known to be well-formed), each step in turn, or each fee leg in
 * turn. It answers the error that refuses the plan, or null.
 */
export type PlanCheck<P extends PlanV1 | DepositPlanV2 | DepositSplitPlan = PlanV1> = { readonly id: string } & (
  | { readonly on: 'plan' | 'batch'; readonly check: (plan: P, now: Date) => BestexError | null }
  | { readonly on: 'step'; readonly check: (step: P['steps'][number], index: number, plan: P) => BestexError | null }
  | { readonly on: 'fee-leg'; readonly check: (leg: P['steps'][number], plan: P) => BestexError | null }
);

type DepositPlan = PlanV1 | DepositPlanV2 | DepositSplitPlan;
const stepsOf = (plan: DepositPlan): readonly AnyPlanStep[] => plan.steps;
/** The steps that are not deposits: a single-venue plan's after its deposit, a split plan's each after its leg's. */
const feeLegsOf = (plan: DepositPlan) => stepsOf(plan).filter((s) => s.kind !== 'venue-deposit');

type Check = PlanCheck<DepositPlan>;
/** A check of a single-venue plan's quoteRef or its one deposit. */
type Single = PlanCheck<PlanV1 | DepositPlanV2>;
/** A check of what version 2 adds, made of single-venue and split plans alike. */
type CheckV2 = PlanCheck<DepositPlanV2 | DepositSplitPlan>;

// The checks every plan shape makes, each written once.
const planId: Check = {
  id: 'plan-id',
  on: 'plan',
  check: (plan) => (typeof plan !== 'object' || plan === null || typeof plan.planId !== 'string' || plan.planId === '' ? unverifiable('it has no planId') : null),
};
const expiryDateTime: Check = { id: 'expiry-date-time', on: 'plan', check: (plan) => (Number.isNaN(time(plan.expiry)) ? unverifiable('its expiry is not a date-time') : null) };
const notExpired: Check = {
  // First of the plan's substance: an expired plan is refused whatever else it says.
  id: 'not-expired',
  on: 'plan',
  check: (plan, now) => {
    const expiry = time(plan.expiry);
    if (now.getTime() < expiry) return null;
    return new BestexError(`the plan expired at ${plan.expiry}, ${Math.ceil((now.getTime() - expiry) / 1000)} s ago; its floor no longer matches the market: re-plan with a new idempotencyKey`, {
      status: null,
      code: 'plan_expired',
      action: 're-plan with a new idempotencyKey',
    });
  },
};
const quoteRef: Single = {
  id: 'quote-ref',
  on: 'plan',
  check: ({ quoteRef: ref }) =>
    !ref || !INSTRUMENTS.includes(ref.pair?.give) || !INSTRUMENTS.includes(ref.pair?.want) || !isDecimal(ref.amount) || !isDecimal(ref.minReceive) || !isDecimal(ref.net)
      ? unverifiable('its quoteRef does not say the pair, amount, net and floor')
      : null,
};
const hasSteps: Check = { id: 'has-steps', on: 'plan', check: (plan) => (!Array.isArray(plan.steps) || plan.steps.length === 0 ? unverifiable('it has no steps') : null) };
const stepKind: Check = {
  id: 'step-kind',
  on: 'step',
  check: (step, i) => (step.kind !== 'venue-deposit' && !FEE_KINDS.includes(step.kind) ? unverifiable(`step ${i} is of a kind this SDK does not know (${JSON.stringify(step.kind)})`) : null),
};
const stepTarget: Check = { id: 'step-target', on: 'step', check: (step, i) => (!PARTY_ID.test(step.target ?? '') ? unverifiable(`step ${i}'s target is not a party id`) : null) };
const stepAmount: Check = {
  id: 'step-amount',
  on: 'step',
  check: (step, i) => (!isDecimal(step.amount) || toUnits(step.amount) === 0n ? unverifiable(`step ${i}'s amount is not a positive Daml Decimal`) : null),
};
const stepExpiry: Check = {
  id: 'step-expiry',
  on: 'step',
  check: (step, i, plan) => {
    const expiresAt = time(step.expiresAt);
    return Number.isNaN(expiresAt) || expiresAt > time(plan.expiry) ? unverifiable(`step ${i} expires after the plan`) : null;
  },
};
const oneDepositFirst: Single = {
  id: 'one-deposit-first',
  on: 'batch',
  check: (plan) => {
    const deposits = stepsOf(plan).filter((s) => s.kind === 'venue-deposit');
    return deposits.length !== 1 || plan.steps[0] !== deposits[0] ? unverifiable('it does not have exactly one deposit, first') : null;
  },
};
const depositIsTheGive: Single = {
  id: 'deposit-is-the-give',
  on: 'batch',
  check: ({ steps: [deposit], quoteRef: ref }) =>
    instrumentOf(deposit!) !== ref.pair.give || toUnits(deposit!.amount) !== toUnits(ref.amount) ? unverifiable('the deposit is not the quote\'s give amount in its give instrument') : null,
};
const floorWithinNet: Single = { id: 'floor-within-net', on: 'batch', check: ({ quoteRef: ref }) => (toUnits(ref.minReceive) > toUnits(ref.net) ? unverifiable('the floor is above the quote\'s net') : null) };
const netNotZero: Single = { id: 'net-not-zero', on: 'batch', check: ({ quoteRef: ref }) => (toUnits(ref.net) === 0n ? unverifiable('the quote\'s net is zero') : null) };
const feeLegsCollectFees: Single = {
  id: 'fee-legs-collect-fees',
  on: 'batch',
  check: (plan) => (feeLegsOf(plan).length > 0 && plan.collectsFees !== true ? unverifiable('it has fee legs but does not collect fees') : null),
};
const feeLegsDisclosed: Single = {
  id: 'fee-legs-disclosed',
  on: 'batch',
  check: (plan) => (feeLegsOf(plan).length > 0 && !plan.quoteRef.clientFees ? unverifiable('it has fee legs but discloses no fees (quoteRef.clientFees)') : null),
};
const oneLegPerKind: Single = {
  id: 'one-leg-per-kind',
  on: 'batch',
  check: (plan) => {
    const kind = FEE_KINDS.find((k) => feeLegsOf(plan).filter((leg) => leg.kind === k).length > 1);
    return kind === undefined ? null : unverifiable(`it has more than one ${kind} leg`);
  },
};
const feeLegInWant: Single = {
  id: 'fee-leg-in-want',
  on: 'fee-leg',
  check: (leg, { quoteRef: ref }) => (instrumentOf(leg) !== ref.pair.want ? unverifiable(`the ${leg.kind} leg is not in the want instrument`) : null),
};
const serviceFeeDisclosed: Single = {
  // The service's fee (escrowed for a partner, or the keyless fee) is exactly the disclosed service line.
  id: 'service-fee-disclosed',
  on: 'fee-leg',
  check: (leg, { quoteRef: ref }) =>
    (leg.kind === 'fee-escrow-lock' || leg.kind === 'b2c-fee-transfer') && toUnits(leg.amount) !== toUnits(ref.clientFees!.service.amount) ? unverifiable(`the ${leg.kind} leg is not the disclosed service fee`) : null,
};
const integratorFeeDisclosed: Single = {
  id: 'integrator-fee-disclosed',
  on: 'fee-leg',
  check: (leg, { quoteRef: ref }) => {
    const integrator = ref.clientFees!.integrator;
    return leg.kind === 'fee-transfer' && (!integrator || toUnits(leg.amount) !== toUnits(integrator.amount) || leg.target !== integrator.recipient)
      ? unverifiable('the integrator fee leg is not the disclosed integrator fee to its recipient')
      : null;
  },
};

/** Every check the SDK makes before it signs a version 1 plan, in the order it makes them. */
export const PLAN_CHECKS: readonly PlanCheck[] = [
  planId,
  { id: 'mode', on: 'plan', check: (plan) => (plan.mode !== 'managed-deposit' ? unverifiable(`mode ${JSON.stringify(plan.mode)} is not managed-deposit`) : null) },
  expiryDateTime,
  notExpired,
  quoteRef,
  hasSteps,
  stepKind,
  stepTarget,
  stepAmount,
  { id: 'step-instrument', on: 'step', check: (step, i) => (!INSTRUMENTS.includes(step.instrument) ? unverifiable(`step ${i}'s instrument is not one this SDK knows`) : null) },
  stepExpiry,
  oneDepositFirst,
  depositIsTheGive,
  {
    id: 'memo-is-the-floor',
    on: 'batch',
    check: ({ steps: [deposit], quoteRef: ref }) => (deposit!.memo !== ref.minReceive ? unverifiable('the deposit\'s memo is not the quote\'s floor (quoteRef.minReceive)') : null),
  },
  floorWithinNet,
  netNotZero,
  feeLegsCollectFees,
  feeLegsDisclosed,
  oneLegPerKind,
  feeLegInWant,
  serviceFeeDisclosed,
  integratorFeeDisclosed,
];

const REGISTRY_URL = /^https?:\/\/\S+$/;

const nonEmpty = (text: unknown): text is string => typeof text === 'string' && text.trim() !== '';

// The checks of what version 2 adds, made of single-venue and split plans alike.
const stepInstrumentV2: CheckV2 = {
  id: 'step-instrument',
  on: 'step',
  check: (step, i) =>
    typeof step.instrument !== 'object' || step.instrument === null || !INSTRUMENTS.includes(step.instrument.id) || (step.instrument.admin !== null && !PARTY_ID.test(step.instrument.admin ?? ''))
      ? unverifiable(`step ${i}'s instrument is not one this SDK knows, with its admin party (or null)`)
      : null,
};
const oneAdminPerInstrument: CheckV2 = {
  // The holdings a batch spends are chosen by instrument: one instrument, one admin.
  id: 'one-admin-per-instrument',
  on: 'batch',
  check: (plan) => {
    const admins = new Map<string, string | null>();
    for (const { instrument } of plan.steps) {
      if (admins.has(instrument.id) && admins.get(instrument.id) !== instrument.admin) return unverifiable(`it names ${instrument.id} under two admins`);
      admins.set(instrument.id, instrument.admin);
    }
    return null;
  },
};
const registriesCover: CheckV2 = {
  // Null is a registry the deployment does not name: the caller's options must then (registry_unconfigured otherwise).
  id: 'registries-cover',
  on: 'batch',
  check: (plan) => {
    const named: readonly unknown[] = Array.isArray(plan.registries) ? plan.registries : [];
    const covers = (entry: unknown, { id, admin }: V2.PlanStep['instrument']) => {
      const r = entry as Partial<V2.InstrumentRegistry> | null;
      return r?.instrument === id && r.admin === admin && (r.registryUrl === null || (typeof r.registryUrl === 'string' && REGISTRY_URL.test(r.registryUrl)));
    };
    const missing = plan.steps.find(({ instrument }) => !named.some((entry) => covers(entry, instrument)));
    return missing ? unverifiable(`its registries name none for ${missing.instrument.id} under its admin`) : null;
  },
};
const feeLegBare: CheckV2 = {
  id: 'fee-leg-bare',
  on: 'fee-leg',
  check: (leg) => (leg.memo !== null || leg.minOut !== null ? unverifiable(`the ${leg.kind} leg carries a memo or a minOut`) : null),
};

/**
 * A plan made with a sign-message step is that step alone, for a settlement whose venue asks for
 * it (`asks`: the venue that does, or why none does), saying what is signed and why, expiring
 * with the plan. Null when the plan has no such step, or the step is as it must be.
 */
function signMessageStep(plan: { readonly steps: readonly unknown[]; readonly expiry: string }, asks: (venueId: unknown) => string | null): BestexError | null {
  const steps = plan.steps;
  const step = steps[0] as Partial<SignMessageStep>;
  if (step?.kind !== 'sign-message') return null;
  if (steps.length !== 1) return unverifiable('its sign-message step is not its only step');
  const refusal = asks(step.venueId);
  if (refusal !== null) return unverifiable(refusal);
  if (!nonEmpty(step.venueId) || !nonEmpty(step.message) || !nonEmpty(step.purpose)) return unverifiable('its sign-message step does not say the venue, the message and why it is signed');
  const expiresAt = time(step.expiresAt);
  return Number.isNaN(expiresAt) || expiresAt > time(plan.expiry) ? unverifiable('its sign-message step expires after the plan') : null;
}

/** The venue's memo (Nightly's quote memo, OneSwap's depositReference) is its own, opaque: what the SDK holds the venue to is its guarantee, never below the floor. */
const venueMemo = (settlement: V2.Settlement): PlanCheck<DepositPlanV2> => ({
  id: settlement,
  on: 'batch',
  check: ({ settlement: planned, steps: [deposit], quoteRef: ref }) => {
    if (planned !== settlement) return null;
    if (typeof deposit!.memo !== 'string' || deposit!.memo === '') return unverifiable('the deposit carries no venue memo');
    return !isDecimal(deposit!.minOut) || toUnits(deposit!.minOut) < toUnits(ref.minReceive) ? unverifiable('the deposit\'s minOut is below the quote\'s floor (quoteRef.minReceive)') : null;
  },
});

/** Every check the SDK makes before it signs a version 2 plan, in the order it makes them. */
export const PLAN_CHECKS_V2: readonly PlanCheck<DepositPlanV2>[] = [
  planId,
  {
    id: 'settlement',
    on: 'plan',
    check: (plan) =>
      !EXECUTED_SETTLEMENTS.includes(plan.settlement) ? unverifiable(`settlement ${JSON.stringify(plan.settlement)} is not one this SDK executes (${EXECUTED_SETTLEMENTS.join(', ')})`) : null,
  },
  expiryDateTime,
  notExpired,
  quoteRef,
  hasSteps,
  {
    id: 'sign-message',
    on: 'plan',
    check: (plan) => signMessageStep(plan, () => (plan.settlement !== 'intent-deposit-reference' ? `it asks for a signed message, which settlement ${JSON.stringify(plan.settlement)} does not` : null)),
  },
  stepKind,
  stepTarget,
  stepAmount,
  stepInstrumentV2,
  {
    // The deposit says how its venue settles it, as the plan does; a fee leg is a plain transfer.
    id: 'step-settlement',
    on: 'step',
    check: (step, i, plan) => {
      const expected = step.kind === 'venue-deposit' ? plan.settlement : null;
      return step.settlement !== expected ? unverifiable(`step ${i}'s settlement is ${JSON.stringify(step.settlement)}, not ${JSON.stringify(expected)}`) : null;
    },
  },
  stepExpiry,
  oneDepositFirst,
  depositIsTheGive,
  {
    // The venue reads the floor from the memo: it must be the floor the quote pinned, and minOut with it.
    id: 'memo-floor',
    on: 'batch',
    check: ({ settlement, steps: [deposit], quoteRef: ref }) =>
      settlement === 'memo-floor' && (deposit!.memo !== ref.minReceive || deposit!.minOut !== ref.minReceive)
        ? unverifiable('the deposit\'s memo and minOut are not the quote\'s floor (quoteRef.minReceive)')
        : null,
  },
  venueMemo('swap-address-memo'),
  venueMemo('intent-deposit-reference'),
  floorWithinNet,
  netNotZero,
  feeLegsCollectFees,
  feeLegsDisclosed,
  oneLegPerKind,
  oneAdminPerInstrument,
  registriesCover,
  feeLegInWant,
  feeLegBare,
  serviceFeeDisclosed,
  integratorFeeDisclosed,
];

// A split plan's checks. Each step's `leg` is known good (`step-leg`) before a batch or fee-leg
// check reads the leg it names.
type SplitCheck = PlanCheck<DepositSplitPlan>;
type Leg = V2.SplitPlanLeg;

const legOf = (plan: DepositSplitPlan, step: V2.PlanStep): Leg => plan.split.legs[step.leg!]!;
/** Each leg with its deposit (the first of its steps) and its fee legs. */
const legSteps = (plan: DepositSplitPlan) =>
  plan.split.legs.map((leg, index) => {
    const steps = plan.steps.filter((s) => s.leg === index);
    return { leg, index, deposit: steps[0]!, feeLegs: steps.slice(1) };
  });
const sum = (amounts: readonly string[]) => amounts.reduce((total, amount) => total + toUnits(amount), 0n);

const feesReadable = (fees: Partial<V2.SplitPlanLeg['clientFees']> | null | undefined) =>
  typeof fees === 'object' &&
  fees !== null &&
  isDecimal(fees.userReceives) &&
  isDecimal(fees.service?.amount) &&
  (fees.integrator === null || (isDecimal(fees.integrator?.amount) && PARTY_ID.test(fees.integrator?.recipient ?? '')));
const legReadable = (leg: Partial<Leg> | null) =>
  typeof leg === 'object' && leg !== null && nonEmpty(leg.venueId) && isDecimal(leg.amount) && isDecimal(leg.net) && isDecimal(leg.minReceive) && feesReadable(leg.clientFees);

/** A check of each leg with its steps: the first refusal, or null. */
const eachLeg = (id: string, check: (leg: ReturnType<typeof legSteps>[number], plan: DepositSplitPlan) => BestexError | null): SplitCheck => ({
  id,
  on: 'batch',
  check: (plan) => {
    for (const leg of legSteps(plan)) {
      const refusal = check(leg, plan);
      if (refusal) return refusal;
    }
    return null;
  },
});

/** A venue memo leg's deposit: the venue's own memo, and its guarantee never below the leg's floor. */
const legVenueMemo = (settlement: V2.Settlement): SplitCheck =>
  eachLeg(settlement, ({ leg, index, deposit }) => {
    if (leg.settlement !== settlement) return null;
    if (typeof deposit.memo !== 'string' || deposit.memo === '') return unverifiable(`leg ${index}'s deposit carries no venue memo`);
    return !isDecimal(deposit.minOut) || toUnits(deposit.minOut) < toUnits(leg.minReceive) ? unverifiable(`leg ${index}'s deposit's minOut is below its floor (split.legs[${index}].minReceive)`) : null;
  });

/** Every check the SDK makes before it signs a split plan, in the order it makes them. */
export const PLAN_CHECKS_SPLIT: readonly SplitCheck[] = [
  planId,
  expiryDateTime,
  notExpired,
  {
    id: 'split',
    on: 'plan',
    check: ({ split }) => {
      const legs: unknown = split?.legs;
      const readable =
        typeof split === 'object' &&
        split !== null &&
        INSTRUMENTS.includes(split.pair?.give) &&
        INSTRUMENTS.includes(split.pair?.want) &&
        isDecimal(split.amount) &&
        isDecimal(split.net) &&
        isDecimal(split.minReceive) &&
        Array.isArray(legs) &&
        legs.length >= 2 &&
        legs.length <= 6 &&
        legs.every(legReadable);
      return readable ? null : unverifiable('its split does not say the pair, amount, net and floor, and two to six legs, each with its venue, amount, net, floor and fees');
    },
  },
  {
    id: 'leg-venues',
    on: 'plan',
    check: ({ split }) => (new Set(split.legs.map((leg) => leg.venueId)).size !== split.legs.length ? unverifiable('its split names a venue in more than one leg') : null),
  },
  {
    id: 'leg-settlement',
    on: 'plan',
    check: ({ split }) => {
      const index = split.legs.findIndex((leg) => !EXECUTED_SETTLEMENTS.includes(leg.settlement));
      return index < 0 ? null : unverifiable(`leg ${index}'s settlement ${JSON.stringify(split.legs[index]!.settlement)} is not one this SDK executes (${EXECUTED_SETTLEMENTS.join(', ')})`);
    },
  },
  hasSteps,
  {
    id: 'sign-message',
    on: 'plan',
    check: (plan) =>
      signMessageStep(plan, (venueId) =>
        plan.split.legs.some((leg) => leg.settlement === 'intent-deposit-reference' && leg.venueId === venueId) ? null : 'it asks for a signed message for no leg whose settlement asks for one',
      ),
  },
  stepKind,
  stepTarget,
  stepAmount,
  stepInstrumentV2,
  {
    id: 'step-leg',
    on: 'step',
    check: (step, i, plan) => (!Number.isInteger(step.leg) || step.leg! < 0 || step.leg! >= plan.split.legs.length ? unverifiable(`step ${i} names no leg of the split`) : null),
  },
  {
    // A deposit settles as its leg's venue does; a fee leg is a plain transfer.
    id: 'step-settlement',
    on: 'step',
    check: (step, i, plan) => {
      const expected = step.kind === 'venue-deposit' ? legOf(plan, step).settlement : null;
      return step.settlement !== expected ? unverifiable(`step ${i}'s settlement is ${JSON.stringify(step.settlement)}, not ${JSON.stringify(expected)}`) : null;
    },
  },
  stepExpiry,
  {
    // In leg order, each leg's deposit first, then its fee legs: the batch runs them so, and a leg's fees follow its deposit.
    id: 'legs-in-order',
    on: 'batch',
    check: (plan) => {
      const ordered = plan.steps.every((step, i) => i === 0 || step.leg! >= plan.steps[i - 1]!.leg!);
      const each = legSteps(plan).every(({ deposit, feeLegs }) => deposit?.kind === 'venue-deposit' && feeLegs.every((s) => s.kind !== 'venue-deposit'));
      return ordered && each ? null : unverifiable('its steps are not in leg order, each leg with exactly one deposit, first');
    },
  },
  {
    id: 'legs-sum',
    on: 'batch',
    check: ({ split }) =>
      sum(split.legs.map((l) => l.amount)) !== toUnits(split.amount) || sum(split.legs.map((l) => l.net)) !== toUnits(split.net) || sum(split.legs.map((l) => l.minReceive)) !== toUnits(split.minReceive)
        ? unverifiable('its legs\' amounts, nets and floors do not sum to the split\'s amount, net and floor')
        : null,
  },
  eachLeg('deposit-is-the-leg', ({ index, leg, deposit }, { split }) =>
    deposit.instrument.id !== split.pair.give || toUnits(deposit.amount) !== toUnits(leg.amount) ? unverifiable(`leg ${index}'s deposit is not its amount in the give instrument`) : null,
  ),
  eachLeg('memo-floor', ({ index, leg, deposit }) =>
    leg.settlement === 'memo-floor' && (deposit.memo !== leg.minReceive || deposit.minOut !== leg.minReceive) ? unverifiable(`leg ${index}'s deposit's memo and minOut are not its floor (split.legs[${index}].minReceive)`) : null,
  ),
  legVenueMemo('swap-address-memo'),
  legVenueMemo('intent-deposit-reference'),
  eachLeg('floor-within-net', ({ index, leg }) => (toUnits(leg.minReceive) > toUnits(leg.net) ? unverifiable(`leg ${index}'s floor is above its net`) : null)),
  eachLeg('net-not-zero', ({ index, leg }) => (toUnits(leg.net) === 0n ? unverifiable(`leg ${index}'s net is zero`) : null)),
  eachLeg('leg-fees-recompute', ({ index, leg: { net, clientFees: fees } }) =>
    toUnits(fees.userReceives) !== toUnits(net) - toUnits(fees.service.amount) - (fees.integrator ? toUnits(fees.integrator.amount) : 0n)
      ? unverifiable(`leg ${index}'s fees do not recompute: userReceives is not its net less its fee lines`)
      : null,
  ),
  {
    id: 'fee-legs-collect-fees',
    on: 'batch',
    check: (plan) => (feeLegsOf(plan).length > 0 && plan.collectsFees !== true ? unverifiable('it has fee legs but does not collect fees') : null),
  },
  eachLeg('one-leg-per-kind', ({ index, feeLegs }) => {
    const kind = FEE_KINDS.find((k) => feeLegs.filter((leg) => leg.kind === k).length > 1);
    return kind === undefined ? null : unverifiable(`leg ${index} has more than one ${kind} leg`);
  }),
  oneAdminPerInstrument,
  registriesCover,
  {
    id: 'fee-leg-in-want',
    on: 'fee-leg',
    check: (leg, { split }) => (leg.instrument.id !== split.pair.want ? unverifiable(`leg ${leg.leg}'s ${leg.kind} leg is not in the want instrument`) : null),
  },
  feeLegBare,
  {
    // A leg's service fee (escrowed for a partner, or the keyless fee) is exactly its own disclosed service line.
    id: 'service-fee-disclosed',
    on: 'fee-leg',
    check: (step, plan) =>
      (step.kind === 'fee-escrow-lock' || step.kind === 'b2c-fee-transfer') && toUnits(step.amount) !== toUnits(legOf(plan, step).clientFees.service.amount)
        ? unverifiable(`leg ${step.leg}'s ${step.kind} leg is not its disclosed service fee`)
        : null,
  },
  {
    id: 'integrator-fee-disclosed',
    on: 'fee-leg',
    check: (step, plan) => {
      const integrator = legOf(plan, step).clientFees.integrator;
      return step.kind === 'fee-transfer' && (!integrator || toUnits(step.amount) !== toUnits(integrator.amount) || step.target !== integrator.recipient)
        ? unverifiable(`leg ${step.leg}'s integrator fee leg is not its disclosed integrator fee to its recipient`)
        : null;
    },
  },
  {
    // The edge a widget shows the user: floor(10000 x (net - bestExecutable.net) / bestExecutable.net), at least 5.
    id: 'edge-recomputes',
    on: 'batch',
    check: ({ split }) => {
      const best = isDecimal(split.bestExecutable?.net) ? toUnits(split.bestExecutable.net) : 0n;
      const gain = toUnits(split.net) - best;
      const holds = best > 0n && gain > 0n && Number.isInteger(split.edgeBps) && split.edgeBps >= 5 && BigInt(split.edgeBps) === (gain * 10_000n) / best;
      return holds ? null : unverifiable("its edgeBps is not floor(10000 x (net - bestExecutable.net) / bestExecutable.net), at least 5: the split's gain over the best single venue is not what it says");
    },
  },
];

const refuse = (error: BestexError | null) => {
  if (error) throw error;
};

function run<P extends DepositPlan>(checks: readonly PlanCheck<P>[], plan: P, now: Date): void {
  const steps = plan.steps as readonly P['steps'][number][];
  for (const c of checks) if (c.on === 'plan') refuse(c.check(plan, now));
  for (const [i, step] of steps.entries()) for (const c of checks) if (c.on === 'step') refuse(c.check(step, i, plan));
  for (const c of checks) if (c.on === 'batch') refuse(c.check(plan, now));
  for (const leg of steps) if (leg.kind !== 'venue-deposit') for (const c of checks) if (c.on === 'fee-leg') refuse(c.check(leg, plan));
}

/**
 * The plan, checked (by PLAN_CHECKS_SPLIT when it is a split plan, PLAN_CHECKS_V2 when it has
 * version 2's shape; a plan made with a sign-message step by the checks of the plan as a whole,
 * its one step included); BestexError `plan_unverifiable` or `plan_expired` otherwise.
 */
export function checkPlan(value: unknown, now: Date): CheckedPlan {
  if (isSigningPlan(value)) {
    const checks = (isSplitPlan(value) ? PLAN_CHECKS_SPLIT : PLAN_CHECKS_V2) as readonly PlanCheck<DepositPlan>[];
    for (const c of checks) if (c.on === 'plan') refuse(c.check(value as unknown as DepositPlan, now));
    return { plan: value, deposit: null, deposits: [], feeLegs: [] };
  }
  const plan = value as DepositPlan;
  if (isSplitPlan(plan)) run(PLAN_CHECKS_SPLIT, plan as DepositSplitPlan, now);
  else if (isPlanV2(plan)) run(PLAN_CHECKS_V2, plan as DepositPlanV2, now);
  else run(PLAN_CHECKS, plan as PlanV1, now);
  const deposits = stepsOf(plan).filter((s) => s.kind === 'venue-deposit');
  return { plan, deposit: deposits[0]!, deposits, feeLegs: feeLegsOf(plan) };
}

const completedUnverifiable = (why: string) => new BestexError(`the plan the service completed cannot be checked, so it is not executed: ${why}`, { status: null, code: 'plan_unverifiable' });

/**
 * The plan the service completed from `made` (a plan made with a sign-message step), checked: the
 * plan signed for (its planId and expiry, and its quoteRef or split block, unchanged), its
 * deposit to the venue's swap intent (a split plan's OneSwap leg's), then every check of its
 * shape; BestexError `plan_unverifiable` or `plan_expired` otherwise.
 */
export function checkCompleted(made: SigningPlanV2 | SigningSplitPlan, completed: unknown, now: Date): CheckedPlan {
  const plan = completed as Partial<DepositPlanV2 & DepositSplitPlan> | null;
  const split = isSplitPlan(made);
  const block = (p: object | null) => JSON.stringify(split ? (p as { split?: unknown } | null)?.split : (p as { quoteRef?: unknown } | null)?.quoteRef);
  if (plan?.planId !== made.planId || plan.expiry !== made.expiry || block(plan) !== block(made) || isSplitPlan(plan) !== split) {
    throw completedUnverifiable(`it is not the plan that was signed for (its planId, ${split ? 'split' : 'quoteRef'} or expiry differ)`);
  }
  const intentDeposit = !isSigningPlan(plan) && Array.isArray(plan.steps) && plan.steps.some((s) => s?.kind === 'venue-deposit' && s.settlement === 'intent-deposit-reference');
  if (!intentDeposit || (!split && plan.settlement !== 'intent-deposit-reference')) throw completedUnverifiable('it is not a deposit to the venue\'s swap intent');
  return checkPlan(plan, now);
}
