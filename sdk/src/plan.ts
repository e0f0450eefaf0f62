// The plan the SDK is handed, checked as a wallet should before it signs anything: every step of
// a kind it knows, the deposit exactly what the quote it came from says (the give amount in the
// give instrument, its memo the quote's floor), fee legs only when the plan collects fees, in the
// want instrument and for the disclosed amounts, and the plan not expired.
import { isDecimal, toUnits } from './decimal.js';
import { BestexError } from './errors.js';
import type { AppPlan, ExecutionPlan, PlanStep } from './client.js';

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

/** The plan, checked; BestexError `plan_unverifiable` or `plan_expired` otherwise. */
export function checkPlan(value: unknown, now: Date): CheckedPlan {
  const plan = value as Plan;
  if (typeof plan !== 'object' || plan === null || typeof plan.planId !== 'string' || plan.planId === '') throw unverifiable('it has no planId');
  if (plan.mode !== 'managed-deposit') throw unverifiable(`mode ${JSON.stringify(plan.mode)} is not managed-deposit`);
  const expiry = time(plan.expiry);
  if (Number.isNaN(expiry)) throw unverifiable('its expiry is not a date-time');
  // First: an expired plan is refused whatever else it says.
  if (now.getTime() >= expiry) {
    throw new BestexError(`the plan expired at ${plan.expiry}, ${Math.ceil((now.getTime() - expiry) / 1000)} s ago; its floor no longer matches the market: re-plan with a new idempotencyKey`, {
      status: null,
      code: 'plan_expired',
      action: 're-plan with a new idempotencyKey',
    });
  }
  const ref = plan.quoteRef;
  if (!ref || !INSTRUMENTS.includes(ref.pair?.give) || !INSTRUMENTS.includes(ref.pair?.want) || !isDecimal(ref.amount) || !isDecimal(ref.minReceive) || !isDecimal(ref.net)) {
    throw unverifiable('its quoteRef does not say the pair, amount, net and floor');
  }
  if (!Array.isArray(plan.steps) || plan.steps.length === 0) throw unverifiable('it has no steps');
  for (const [i, step] of plan.steps.entries()) {
    if (step.kind !== 'venue-deposit' && !FEE_KINDS.includes(step.kind)) throw unverifiable(`step ${i} is of a kind this SDK does not know (${JSON.stringify(step.kind)})`);
    if (!PARTY_ID.test(step.target ?? '')) throw unverifiable(`step ${i}'s target is not a party id`);
    if (!isDecimal(step.amount) || toUnits(step.amount) === 0n) throw unverifiable(`step ${i}'s amount is not a positive Daml Decimal`);
    if (!INSTRUMENTS.includes(step.instrument)) throw unverifiable(`step ${i}'s instrument is not one this SDK knows`);
    const expiresAt = time(step.expiresAt);
    if (Number.isNaN(expiresAt) || expiresAt > expiry) throw unverifiable(`step ${i} expires after the plan`);
  }
  const deposits = plan.steps.filter((s) => s.kind === 'venue-deposit');
  if (deposits.length !== 1 || plan.steps[0] !== deposits[0]) throw unverifiable('it does not have exactly one deposit, first');
  const deposit = deposits[0]!;
  if (deposit.instrument !== ref.pair.give || toUnits(deposit.amount) !== toUnits(ref.amount)) throw unverifiable('the deposit is not the quote\'s give amount in its give instrument');
  if (deposit.memo !== ref.minReceive) throw unverifiable('the deposit\'s memo is not the quote\'s floor (quoteRef.minReceive)');
  if (toUnits(ref.minReceive) > toUnits(ref.net)) throw unverifiable('the floor is above the quote\'s net');
  if (toUnits(ref.net) === 0n) throw unverifiable('the quote\'s net is zero');
  const feeLegs = plan.steps.slice(1);
  if (feeLegs.length > 0 && plan.collectsFees !== true) throw unverifiable('it has fee legs but does not collect fees');
  const fees = ref.clientFees;
  if (feeLegs.length > 0 && !fees) throw unverifiable('it has fee legs but discloses no fees (quoteRef.clientFees)');
  for (const kind of FEE_KINDS) {
    if (feeLegs.filter((leg) => leg.kind === kind).length > 1) throw unverifiable(`it has more than one ${kind} leg`);
  }
  for (const leg of feeLegs) {
    if (leg.instrument !== ref.pair.want) throw unverifiable(`the ${leg.kind} leg is not in the want instrument`);
    // The service's fee (escrowed for a partner, or the keyless fee) is exactly the disclosed service line.
    if ((leg.kind === 'fee-escrow-lock' || leg.kind === 'b2c-fee-transfer') && toUnits(leg.amount) !== toUnits(fees!.service.amount)) {
      throw unverifiable(`the ${leg.kind} leg is not the disclosed service fee`);
    }
    if (leg.kind === 'fee-transfer' && (!fees!.integrator || toUnits(leg.amount) !== toUnits(fees!.integrator.amount) || leg.target !== fees!.integrator.recipient)) {
      throw unverifiable('the integrator fee leg is not the disclosed integrator fee to its recipient');
    }
  }
  return { plan, deposit, feeLegs };
}
