// A split plan in v2's shape, from its legs' plans: each leg assembled and guarded as a plan on its
// venue alone would be (its amount, its net, its floor, its fee legs on its own net), then its
// steps in leg order, each naming its leg, under one plan id, expiry and batch. Pure: every number
// and party is the legs' plans'.
import { isDeepStrictEqual } from 'node:util';
import { dec, toWire, ZERO, type Decimal } from '../decimal.js';
import type * as V1 from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { V2TransferPlan } from './v2-plan.js';

/** What a split plan says of itself beyond its legs' plans. */
export interface SplitBasis {
  readonly edgeBps: number;
  readonly bestExecutable: NonNullable<V1.QuoteResponse['best']>;
  /** The whole amount given, in wire form. */
  readonly amount: string;
}

/** A split plan whose steps are all transfers: every split plan but one with an intent leg before its message is signed. */
export type SplitTransferPlan = Omit<V2.SplitPlan, 'steps'> & { steps: V2.PlanStep[] };

const sum = (values: readonly string[]): Decimal => values.reduce((total, value) => total.plus(value), ZERO);

/** A venue's name in the words a plan shows the user; a venue not listed goes by its id. */
const VENUE_NAMES: Readonly<Record<string, string>> = { oneswap: 'OneSwap', tradecraft: 'Tradecraft', nightly: 'Nightly' };
export const venueName = (venueId: string): string => VENUE_NAMES[venueId] ?? venueId;

/** The split plan of its legs' plans (each the plan its venue alone would be, in the split's leg order), under their plan id, expiry and key. */
export function splitPlan(legs: readonly V2TransferPlan[], basis: SplitBasis): SplitTransferPlan {
  const first = legs[0]!;
  const registries = new Map<string, V2.SplitPlan['registries'][number]>();
  for (const plan of legs) for (const registry of plan.registries) if (!registries.has(registry.instrument)) registries.set(registry.instrument, registry);
  const refs = legs.map((plan) => plan.quoteRef);
  const split: V2.SplitPlanRef = {
    pair: first.quoteRef.pair,
    amount: basis.amount,
    asOf: first.quoteRef.asOf,
    net: toWire(sum(refs.map((ref) => ref.net))),
    minReceive: toWire(sum(refs.map((ref) => ref.minReceive))),
    edgeBps: basis.edgeBps,
    bestExecutable: basis.bestExecutable,
    legs: legs.map((plan) => ({
      venueId: plan.quoteRef.venueId,
      amount: plan.quoteRef.amount,
      net: plan.quoteRef.net,
      minReceive: plan.quoteRef.minReceive,
      clientFees: plan.quoteRef.clientFees,
      settlement: plan.settlement,
    })),
    appliedSchema: first.quoteRef.appliedSchema,
  };
  const steps = legs.flatMap((plan, leg) => plan.steps.map((step) => ({ ...step, leg })));
  return {
    planId: first.planId,
    split,
    steps,
    registries: [...registries.values()],
    expiry: first.expiry,
    idempotencyKey: first.idempotencyKey,
    trustWindow: splitTrustWindow(split, steps, first.expiry),
    collectsFees: legs.some((plan) => plan.collectsFees),
  };
}

/** What the user trusts and for how long, in plain words, from the split's legs and steps. */
function splitTrustWindow(split: V2.SplitPlanRef, steps: readonly V2.PlanStep[], expiry: string): string {
  const { give, want } = split.pair;
  const deposits = steps.filter((step) => step.kind === 'venue-deposit');
  const feeLegs = steps.filter((step) => step.kind !== 'venue-deposit');
  let text =
    `Your ${split.amount} ${give} go in one batch of ${deposits.length} deposits, each a transfer offer locked in your own wallet until its venue accepts it: ` +
    deposits.map((step) => `${step.amount} ${give} to ${venueName(split.legs[step.leg!]!.venueId)}, paid at least ${step.minOut} ${want} or returned`).join('; ') +
    `. Each venue settles its own deposit, so some may be paid and others returned. An offer not accepted by ${expiry} expires and its funds stay yours.`;
  // As a single plan's words say it: the service's fee waits on its deposit's payout, an integrator's on the integrator alone.
  const service = feeLegs.filter((step) => step.kind !== 'fee-transfer');
  const integrator = feeLegs.filter((step) => step.kind === 'fee-transfer');
  if (service.length > 0) {
    text += ` The service's fees (${toWire(sum(service.map((step) => step.amount)))} ${want} in all, one with each deposit) are offered in the same batch and stay locked in your wallet; the service accepts a deposit's fee only once its venue has paid you at least its floor, so a returned deposit's service fee stays yours.`;
  }
  if (integrator.length > 0) {
    text += ` Your integrator's fees (${toWire(sum(integrator.map((step) => step.amount)))} ${want} in all, one with each deposit) are offered in the same batch and stay locked in your wallet until your integrator accepts them; one not accepted by ${expiry} stays yours.`;
  }
  return text;
}

/**
 * Every rule the split plan breaks, against the legs' plans it was made of, which the guardrail
 * has checked one by one: the same steps in leg order, the legs' figures summing to the split's,
 * distinct venues, at least two, and one deposit heading each leg.
 */
export function splitPlanViolations(plan: SplitTransferPlan, legs: readonly V2TransferPlan[], basis: SplitBasis): string[] {
  const violations: string[] = [];
  if (legs.length < 2 || legs.length > 6) violations.push('a split has two to six legs');
  const venues = legs.map((leg) => leg.quoteRef.venueId);
  if (new Set(venues).size !== venues.length) violations.push("a split's legs are on distinct venues");
  const expected = legs.flatMap((leg, index) => leg.steps.map((step) => ({ ...step, leg: index })));
  if (!isDeepStrictEqual(plan.steps, expected)) violations.push("a split plan's steps are its legs' checked steps, in leg order");
  plan.steps.forEach((step, i) => {
    const opens = i === 0 || plan.steps[i - 1]!.leg !== step.leg;
    if (opens !== (step.kind === 'venue-deposit')) violations.push("each leg's steps are its deposit, then its fee legs");
  });
  if (!dec(plan.split.amount).eq(sum(plan.split.legs.map((leg) => leg.amount)))) violations.push("the legs' amounts sum to the split's amount");
  if (plan.split.amount !== basis.amount) violations.push("the split's amount is the request's");
  if (!dec(plan.split.net).eq(sum(plan.split.legs.map((leg) => leg.net)))) violations.push("the legs' nets sum to the split's net");
  if (!dec(plan.split.minReceive).eq(sum(plan.split.legs.map((leg) => leg.minReceive)))) violations.push("the legs' floors sum to the split's floor");
  const best = dec(basis.bestExecutable.net);
  if (dec(plan.split.net).minus(best).times(10_000).dividedToIntegerBy(best).toNumber() < plan.split.edgeBps) violations.push("the split's edge is not overstated");
  for (const leg of legs) {
    if (leg.planId !== plan.planId || leg.expiry !== plan.expiry) violations.push('every leg is of the same plan id and expiry');
  }
  return violations;
}

/**
 * Every rule a split plan's first answer breaks when a leg settles by intent: it is the checked
 * split plan (`checked`) in every figure, registry and expiry, its steps the one message to sign,
 * to be signed by the plan's expiry, and no transfer at all.
 */
export function signMessageSplitViolations(shaped: V2.SplitPlan, checked: SplitTransferPlan): string[] {
  const violations: string[] = [];
  const { steps, trustWindow: _words, ...figures } = shaped;
  const { steps: _checkedSteps, trustWindow: _checkedWords, ...checkedFigures } = checked;
  if (!isDeepStrictEqual(figures, checkedFigures)) violations.push("the plan is not the checked plan's figures, registries and expiry");
  if (!checked.split.legs.some((leg) => leg.settlement === 'intent-deposit-reference')) violations.push('a split with a message to sign has no leg settling by intent');
  const [step, ...more] = steps;
  if (step?.kind !== 'sign-message' || more.length > 0) violations.push('the plan is not one message to sign');
  else if (Date.parse(step.expiresAt) > Date.parse(shaped.expiry)) violations.push('the message is to be signed after the plan expires');
  return violations;
}
