// The party-isolation guardrail: before a plan leaves the server, every step is checked against
// the plan's inputs, independently of how the plan was assembled. Funds may move only from the
// taker to the venue's pool for the pair (or the address the venue's own terms name for this swap)
// or to a configured fee party (or the integrator's recipient), in the amounts the quote gives,
// with the floor the memo carries (or the venue's own memo, binding it to at least the floor), in
// a plan bound to the caller that asked (its record, core/plans/idempotency.ts). A v2 plan is
// checked again in its own shape: the same steps, and the deposit's minOut. An intent plan
// (OneSwap) is checked so before its message is signed, on a stand-in receiver, and answered as
// the one message to sign; once signed, its deposit is checked against the intent's own terms. A
// violation names the rule, never a party.
import { isDeepStrictEqual } from 'node:util';
import { dec, toWire } from '../decimal.js';
import { planFigures, type PlanFigures, type PlanInputs } from './assembly.js';
import type { AppPlan } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { Settlement } from '../execution/venues.js';

/** Whether the amount `value` is at least `floor`; false for anything that is no amount. */
function atLeast(value: unknown, floor: string): boolean {
  if (typeof value !== 'string') return false;
  try {
    return dec(value).gte(dec(floor));
  } catch {
    return false;
  }
}

/** Fee-leg kinds each route may carry, and whose fee each pays. */
const FEE_LEGS = {
  app: { 'b2c-fee-transfer': 'service' },
  partner: { 'fee-escrow-lock': 'service', 'fee-transfer': 'integrator' },
} as const;

/**
 * Every rule `plan` breaks, as sentences free of party ids; empty when it may be stored and
 * returned. (Its binding to the caller is its record's: kept under the caller's digest and naming
 * it, checked on every read, core/plans/service.ts.)
 */
export function planViolations(plan: AppPlan, inputs: PlanInputs, figures: PlanFigures = planFigures(inputs)): string[] {
  const { route, params, parties, collecting, venueTerms } = inputs;
  const { give, want, amount } = params.request;
  const violations: string[] = [];
  const rule = (holds: boolean, violation: string) => {
    if (!holds) violations.push(violation);
  };

  const ref = plan.quoteRef;
  rule(ref.venueId === params.venueId, 'quoteRef.venueId is not the chosen venue');
  rule(ref.pair.give === give.instrument && ref.pair.want === want.instrument, 'quoteRef.pair is not the requested pair');
  rule(ref.amount === toWire(amount), 'quoteRef.amount is not the requested amount');
  rule(ref.net === toWire(inputs.net), "quoteRef.net is not the venue's quoted net");
  rule(ref.minReceive === figures.minReceive, 'quoteRef.minReceive is not floor(net × (1 - slippageBps/10000))');
  rule(isDeepStrictEqual(ref.clientFees, figures.fees), "quoteRef.clientFees is not the applied schema's disclosure");
  rule(ref.appliedSchema.schemaId === inputs.terms.schemaId && ref.appliedSchema.overrideId === inputs.terms.overrideId, 'quoteRef.appliedSchema is not the terms applied');
  rule(plan.expiry === figures.expiry, 'expiry is not 90 seconds after creation');
  rule(plan.mode === 'managed-deposit', 'mode is not managed-deposit');
  rule(plan.idempotencyKey === params.idempotencyKey, 'idempotencyKey is not the request\'s');

  const [deposit, ...legs] = plan.steps;
  rule(deposit?.kind === 'venue-deposit', 'the first step is not the venue deposit');
  if (deposit?.kind === 'venue-deposit') {
    rule(deposit.target === parties.pool, venueTerms ? "the deposit's target is not the address the venue's terms name" : "the deposit's target is not the venue's pool party for the pair");
    rule(deposit.instrument === give.instrument, "the deposit's instrument is not the give instrument");
    rule(deposit.amount === toWire(amount), "the deposit's amount is not the give amount");
    if (venueTerms) {
      rule(deposit.memo === venueTerms.memo && venueTerms.memo !== '', "the deposit's memo is not the venue's own memo");
    } else {
      rule(deposit.memo === ref.minReceive && deposit.memo === figures.minReceive, "the deposit's memo is not the pinned floor");
    }
  }
  // The venue's guarantee is what binds its memo: never below the floor the plan discloses.
  if (venueTerms) rule(atLeast(venueTerms.minOut, figures.minReceive), "the venue's minimum is below the pinned floor");

  const allowedLegs: Readonly<Record<string, string>> = FEE_LEGS[route];
  const paid = new Set<string>();
  for (const [i, step] of plan.steps.entries()) {
    const at = `step ${i} (${step.kind})`;
    rule(step.target !== params.takerParty, `${at} sends funds back to the taker`);
    rule(step.expiresAt === figures.expiry, `${at} does not expire with the plan`);
    if (i === 0) continue;
    const beneficiary = allowedLegs[step.kind];
    if (beneficiary === undefined) {
      violations.push(`${at} is not a fee leg this route may carry`);
      continue;
    }
    rule(collecting, `${at} collects a fee while fee collection is off`);
    rule(!paid.has(beneficiary), `${at} pays the ${beneficiary} fee a second time`);
    paid.add(beneficiary);
    rule(step.instrument === want.instrument, `${at} is not in the want instrument`);
    rule(route === 'app' ? step.beneficiary === undefined : step.beneficiary === beneficiary, `${at} does not name its beneficiary as its kind says`);
    const [target, expected] =
      beneficiary === 'service'
        ? [route === 'app' ? parties.b2cFee : parties.serviceFee, figures.fees.service.amount]
        : [figures.fees.integrator?.recipient ?? null, figures.fees.integrator?.amount];
    rule(target !== null && step.target === target, `${at} does not go to the configured ${beneficiary} fee party`);
    rule(step.amount === expected && expected !== '0', `${at} does not pay the disclosed ${beneficiary} fee`);
  }
  if (collecting) {
    rule(figures.fees.service.amount === '0' || paid.has('service'), 'a disclosed service fee has no leg');
    rule((figures.fees.integrator?.amount ?? '0') === '0' || paid.has('integrator'), 'a disclosed integrator fee has no leg');
  }
  rule(plan.collectsFees === legs.length > 0, 'collectsFees does not say whether the plan has fee legs');
  rule(route === 'app' || plan.b2cFee === undefined, 'a partner plan carries a b2cFee block');
  rule(route === 'partner' || (plan.b2cFee !== undefined) === plan.collectsFees, 'the b2cFee block is not present exactly when fees are collected');
  if (plan.b2cFee) rule(isDeepStrictEqual(plan.b2cFee, figures.b2cFee), "the b2cFee block is not the service line's rate and the fee's size in CC on the swap's CC leg");
  return violations;
}

/**
 * Every rule the v2 shape of `plan` breaks: the steps the guardrail checked, unchanged (receiver,
 * instrument, amount, memo, expiry), the deposit bound to at least the floor (`minOut`: the
 * venue's own minimum where its terms set one, else the floor its memo carries) and settled as
 * the venue settles; empty when it may be stored and returned.
 */
export function v2PlanViolations(shaped: V2.AppPlan, plan: AppPlan, inputs: PlanInputs, settlement: Settlement, figures: PlanFigures = planFigures(inputs)): string[] {
  const violations: string[] = [];
  const rule = (holds: boolean, violation: string) => {
    if (!holds) violations.push(violation);
  };
  rule(shaped.settlement === settlement, "settlement is not how the venue settles");
  rule(isDeepStrictEqual(shaped.quoteRef, plan.quoteRef), 'quoteRef is not the checked plan\'s');
  rule(shaped.steps.length === plan.steps.length, 'the steps are not the checked plan\'s');
  for (const [i, step] of shaped.steps.entries()) {
    const checked = plan.steps[i];
    const at = `step ${i} (${step.kind})`;
    if (!checked) continue;
    if (step.kind === 'sign-message') {
      violations.push(`${at} is not the checked plan's step`);
      continue;
    }
    rule(
      step.kind === checked.kind && step.target === checked.target && step.instrument.id === checked.instrument && step.amount === checked.amount && step.memo === (checked.memo ?? null) && step.expiresAt === checked.expiresAt,
      `${at} is not the checked plan's step`,
    );
    if (step.kind === 'venue-deposit') {
      rule(step.settlement === settlement, `${at} does not settle as the venue settles`);
      rule(step.minOut === (inputs.venueTerms?.minOut ?? figures.minReceive) && atLeast(step.minOut, figures.minReceive), `${at} is not bound to at least the pinned floor`);
    } else {
      rule(step.settlement === null && step.minOut === null, `${at} is a fee leg with a venue's settlement or minimum`);
    }
  }
  return violations;
}

/**
 * Every rule an intent plan's first answer breaks: it is the checked v2 plan (`checked`) in every
 * figure, party and registry, with its steps the one message to sign, to be signed by the plan's
 * expiry, and no transfer at all; empty when it may be stored and returned.
 */
export function signMessagePlanViolations(shaped: V2.AppPlan, checked: V2.AppPlan): string[] {
  const violations: string[] = [];
  const rule = (holds: boolean, violation: string) => {
    if (!holds) violations.push(violation);
  };
  const { steps, trustWindow: _words, ...figures } = shaped;
  const { steps: _checkedSteps, trustWindow: _checkedWords, ...checkedFigures } = checked;
  rule(isDeepStrictEqual(figures, checkedFigures), "the plan is not the checked plan's figures, registries and expiry");
  rule(shaped.settlement === 'intent-deposit-reference', 'a plan with a message to sign does not settle by intent');
  const [step, ...more] = steps;
  rule(step?.kind === 'sign-message' && more.length === 0, 'the plan is not one message to sign');
  if (step?.kind === 'sign-message') rule(Date.parse(step.expiresAt) <= Date.parse(shaped.expiry), 'the message is to be signed after the plan expires');
  return violations;
}

/**
 * Every rule a completed intent plan breaks beyond the v2 plan's: its deposit goes where the
 * intent says (`inputs.parties.pool`, the intent's deposit address), carries the intent's own
 * reference and minimum (`inputs.venueTerms`), and the plan names that intent.
 */
export function intentPlanViolations(complete: V2.AppPlan, inputs: PlanInputs, intentId: string): string[] {
  const violations: string[] = [];
  const rule = (holds: boolean, violation: string) => {
    if (!holds) violations.push(violation);
  };
  const [deposit] = complete.steps;
  rule(complete.settlement === 'intent-deposit-reference', 'a completed intent plan does not settle by intent');
  rule(inputs.venueTerms !== undefined, "an intent plan's deposit is not bound to its intent's reference and minimum");
  rule(
    deposit?.kind === 'venue-deposit' && deposit.target === inputs.parties.pool && deposit.memo === inputs.venueTerms?.memo && deposit.minOut === inputs.venueTerms?.minOut,
    "the deposit is not the intent's: its address, its reference as the memo, its minimum",
  );
  rule(complete.intent?.intentId === intentId && complete.intent.venueId === inputs.params.venueId, 'the plan does not name its intent');
  return violations;
}
