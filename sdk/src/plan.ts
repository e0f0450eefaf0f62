// The plan the SDK is handed, checked as a wallet should before it signs anything: every step of
// a kind it knows, the deposit exactly what the quote it came from says (the give amount in the
// give instrument, its memo the quote's floor), fee legs only when the plan collects fees, in the
// want instrument and for the disclosed amounts, and the plan not expired. Each check is named in
// PLAN_CHECKS, in the order they run, so a test can hold one tampered plan against each.
import { isDecimal, toUnits } from './decimal.js';
import { BestexError } from './errors.js';
import type { AppPlan, ExecutionPlan, PlanStep } from './contract/v1.js';

export type Plan = AppPlan | ExecutionPlan;

const PARTY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,184}::1220[0-9a-f]{64}$/;
const INSTRUMENTS = ['Amulet', 'USDCx', 'CBTC'];
const FEE_KINDS = ['b2c-fee-transfer', 'fee-escrow-lock', 'fee-transfer'];

export interface CheckedPlan {
  readonly plan: Plan;
  readonly deposit: PlanStep;
  readonly feeLegs: readonly PlanStep[];
}

const unverifiable = (why: string) => new BestexError(`the plan cannot be checked, so it is not executed: ${why}`, { status: null, code: 'plan_unverifiable' });

const time = (text: unknown): number => (typeof text === 'string' ? Date.parse(text) : Number.NaN);

/**
 * One check, by what it reads: the plan as a whole (`plan`, run before the steps are read, and
 * `batch`, once every step is known to be well-formed), each step in turn, or each fee leg in
 * turn. It answers the error that refuses the plan, or null.
 */
export type PlanCheck = { readonly id: string } & (
  | { readonly on: 'plan' | 'batch'; readonly check: (plan: Plan, now: Date) => BestexError | null }
  | { readonly on: 'step'; readonly check: (step: PlanStep, index: number, plan: Plan) => BestexError | null }
  | { readonly on: 'fee-leg'; readonly check: (leg: PlanStep, plan: Plan) => BestexError | null }
);

const feeLegsOf = (plan: Plan) => plan.steps.slice(1);

/** Every check the SDK makes before it signs, in the order it makes them. */
export const PLAN_CHECKS: readonly PlanCheck[] = [
  {
    id: 'plan-id',
    on: 'plan',
    check: (plan) => (typeof plan !== 'object' || plan === null || typeof plan.planId !== 'string' || plan.planId === '' ? unverifiable('it has no planId') : null),
  },
  { id: 'mode', on: 'plan', check: (plan) => (plan.mode !== 'managed-deposit' ? unverifiable(`mode ${JSON.stringify(plan.mode)} is not managed-deposit`) : null) },
  { id: 'expiry-date-time', on: 'plan', check: (plan) => (Number.isNaN(time(plan.expiry)) ? unverifiable('its expiry is not a date-time') : null) },
  {
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
  },
  {
    id: 'quote-ref',
    on: 'plan',
    check: ({ quoteRef: ref }) =>
      !ref || !INSTRUMENTS.includes(ref.pair?.give) || !INSTRUMENTS.includes(ref.pair?.want) || !isDecimal(ref.amount) || !isDecimal(ref.minReceive) || !isDecimal(ref.net)
        ? unverifiable('its quoteRef does not say the pair, amount, net and floor')
        : null,
  },
  { id: 'has-steps', on: 'plan', check: (plan) => (!Array.isArray(plan.steps) || plan.steps.length === 0 ? unverifiable('it has no steps') : null) },
  {
    id: 'step-kind',
    on: 'step',
    check: (step, i) => (step.kind !== 'venue-deposit' && !FEE_KINDS.includes(step.kind) ? unverifiable(`step ${i} is of a kind this SDK does not know (${JSON.stringify(step.kind)})`) : null),
  },
  { id: 'step-target', on: 'step', check: (step, i) => (!PARTY_ID.test(step.target ?? '') ? unverifiable(`step ${i}'s target is not a party id`) : null) },
  {
    id: 'step-amount',
    on: 'step',
    check: (step, i) => (!isDecimal(step.amount) || toUnits(step.amount) === 0n ? unverifiable(`step ${i}'s amount is not a positive Daml Decimal`) : null),
  },
  { id: 'step-instrument', on: 'step', check: (step, i) => (!INSTRUMENTS.includes(step.instrument) ? unverifiable(`step ${i}'s instrument is not one this SDK knows`) : null) },
  {
    id: 'step-expiry',
    on: 'step',
    check: (step, i, plan) => {
      const expiresAt = time(step.expiresAt);
      return Number.isNaN(expiresAt) || expiresAt > time(plan.expiry) ? unverifiable(`step ${i} expires after the plan`) : null;
    },
  },
  {
    id: 'one-deposit-first',
    on: 'batch',
    check: (plan) => {
      const deposits = plan.steps.filter((s) => s.kind === 'venue-deposit');
      return deposits.length !== 1 || plan.steps[0] !== deposits[0] ? unverifiable('it does not have exactly one deposit, first') : null;
    },
  },
  {
    id: 'deposit-is-the-give',
    on: 'batch',
    check: ({ steps: [deposit], quoteRef: ref }) =>
      deposit!.instrument !== ref.pair.give || toUnits(deposit!.amount) !== toUnits(ref.amount) ? unverifiable('the deposit is not the quote\'s give amount in its give instrument') : null,
  },
  {
    id: 'memo-is-the-floor',
    on: 'batch',
    check: ({ steps: [deposit], quoteRef: ref }) => (deposit!.memo !== ref.minReceive ? unverifiable('the deposit\'s memo is not the quote\'s floor (quoteRef.minReceive)') : null),
  },
  { id: 'floor-within-net', on: 'batch', check: ({ quoteRef: ref }) => (toUnits(ref.minReceive) > toUnits(ref.net) ? unverifiable('the floor is above the quote\'s net') : null) },
  { id: 'net-not-zero', on: 'batch', check: ({ quoteRef: ref }) => (toUnits(ref.net) === 0n ? unverifiable('the quote\'s net is zero') : null) },
  {
    id: 'fee-legs-collect-fees',
    on: 'batch',
    check: (plan) => (feeLegsOf(plan).length > 0 && plan.collectsFees !== true ? unverifiable('it has fee legs but does not collect fees') : null),
  },
  {
    id: 'fee-legs-disclosed',
    on: 'batch',
    check: (plan) => (feeLegsOf(plan).length > 0 && !plan.quoteRef.clientFees ? unverifiable('it has fee legs but discloses no fees (quoteRef.clientFees)') : null),
  },
  {
    id: 'one-leg-per-kind',
    on: 'batch',
    check: (plan) => {
      const kind = FEE_KINDS.find((k) => feeLegsOf(plan).filter((leg) => leg.kind === k).length > 1);
      return kind === undefined ? null : unverifiable(`it has more than one ${kind} leg`);
    },
  },
  {
    id: 'fee-leg-in-want',
    on: 'fee-leg',
    check: (leg, { quoteRef: ref }) => (leg.instrument !== ref.pair.want ? unverifiable(`the ${leg.kind} leg is not in the want instrument`) : null),
  },
  {
    // The service's fee (escrowed for a partner, or the keyless fee) is exactly the disclosed service line.
    id: 'service-fee-disclosed',
    on: 'fee-leg',
    check: (leg, { quoteRef: ref }) =>
      (leg.kind === 'fee-escrow-lock' || leg.kind === 'b2c-fee-transfer') && toUnits(leg.amount) !== toUnits(ref.clientFees!.service.amount) ? unverifiable(`the ${leg.kind} leg is not the disclosed service fee`) : null,
  },
  {
    id: 'integrator-fee-disclosed',
    on: 'fee-leg',
    check: (leg, { quoteRef: ref }) => {
      const integrator = ref.clientFees!.integrator;
      return leg.kind === 'fee-transfer' && (!integrator || toUnits(leg.amount) !== toUnits(integrator.amount) || leg.target !== integrator.recipient)
        ? unverifiable('the integrator fee leg is not the disclosed integrator fee to its recipient')
        : null;
    },
  },
];

/** The plan, checked; BestexError `plan_unverifiable` or `plan_expired` otherwise. */
export function checkPlan(value: unknown, now: Date): CheckedPlan {
  const plan = value as Plan;
  const refuse = (error: BestexError | null) => {
    if (error) throw error;
  };
  for (const c of PLAN_CHECKS) if (c.on === 'plan') refuse(c.check(plan, now));
  for (const [i, step] of plan.steps.entries()) for (const c of PLAN_CHECKS) if (c.on === 'step') refuse(c.check(step, i, plan));
  for (const c of PLAN_CHECKS) if (c.on === 'batch') refuse(c.check(plan, now));
  for (const leg of feeLegsOf(plan)) for (const c of PLAN_CHECKS) if (c.on === 'fee-leg') refuse(c.check(leg, plan));
  return { plan, deposit: plan.steps[0]!, feeLegs: feeLegsOf(plan) };
}
