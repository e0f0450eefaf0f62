// A plan as the executor runs it, whichever shape it came in: each step's instrument by id with
// its admin party where the plan names it (version 2), the token registries the plan names, and
// its legs: a split plan's, each with its deposit and its own fee legs, or a single-venue plan's
// one. Version 1 names no admin (the holdings spent say it) and no registry (the caller's options do).
import type { AppPlan } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import { isPlanV2, isSigningPlan, isSplitPlan, type DepositPlanV2, type DepositSplitPlan, type Plan, type PlanV1 } from '../plan.js';

export interface ExecutableStep {
  readonly kind: AppPlan['steps'][number]['kind'];
  readonly target: string;
  readonly instrument: string;
  /** The instrument's admin party; null where the plan does not name it. */
  readonly admin: string | null;
  readonly amount: string;
  readonly memo: string | null;
  readonly expiresAt: string;
}

/** One venue's part of the plan: a split plan's leg, or a single-venue plan's whole. */
export interface ExecutableLeg {
  readonly index: number;
  readonly venueId: string;
  /** How its venue settles (null for a version 1 plan, whose venue reads the floor from the memo). */
  readonly settlement: V2.Settlement | null;
  /** Given, in the give instrument. */
  readonly amount: string;
  /** What the venue quoted for it, and its floor, in the want instrument. */
  readonly net: string;
  readonly minReceive: string;
  /** The step index of its deposit, and of its fee legs. */
  readonly deposit: number;
  readonly feeLegs: readonly number[];
}

export interface Executable {
  readonly planId: string;
  readonly expiry: string;
  /** The whole plan's pair, amount, net and floor (a split plan's: its legs' sums). */
  readonly quoteRef: Pick<AppPlan['quoteRef'], 'pair' | 'amount' | 'net' | 'minReceive'>;
  readonly steps: readonly ExecutableStep[];
  readonly legs: readonly ExecutableLeg[];
  /** Whether the plan is split across venues (its legs then settle each on its own, and must ride one batch). */
  readonly split: boolean;
  /** Each admin's token registry URL as the plan names it (a null URL left out). */
  readonly registries: Readonly<Record<string, string>>;
}

function registriesOf(named: readonly V2.InstrumentRegistry[]): Record<string, string> {
  const registries: Record<string, string> = {};
  for (const { admin, registryUrl } of named) if (admin !== null && registryUrl !== null) registries[admin] = registryUrl;
  return registries;
}

const v2Step = (s: V2.PlanStep): ExecutableStep => ({ kind: s.kind, target: s.target, instrument: s.instrument.id, admin: s.instrument.admin, amount: s.amount, memo: s.memo, expiresAt: s.expiresAt });

/** `plan`, checked already (checkPlan), as the executor runs it: one that moves funds, not one still awaiting its signature. */
export function executable(given: Plan): Executable {
  if (isSigningPlan(given)) throw new TypeError('a plan made with a sign-message step moves no funds until the service completes it');
  if (isSplitPlan(given)) {
    const plan = given as DepositSplitPlan;
    const { split } = plan;
    const legs = split.legs.map((leg, index) => {
      const indexes = plan.steps.flatMap((s, i) => (s.leg === index ? [i] : []));
      return { index, venueId: leg.venueId, settlement: leg.settlement, amount: leg.amount, net: leg.net, minReceive: leg.minReceive, deposit: indexes[0]!, feeLegs: indexes.slice(1) };
    });
    const quoteRef = { pair: split.pair, amount: split.amount, net: split.net, minReceive: split.minReceive };
    return { planId: plan.planId, expiry: plan.expiry, quoteRef, steps: plan.steps.map(v2Step), legs, split: true, registries: registriesOf(plan.registries) };
  }
  const plan = given as PlanV1 | DepositPlanV2;
  const { planId, expiry, quoteRef } = plan;
  const v2 = isPlanV2(plan);
  const leg: ExecutableLeg = {
    index: 0,
    venueId: quoteRef.venueId,
    settlement: v2 ? plan.settlement : null,
    amount: quoteRef.amount,
    net: quoteRef.net,
    minReceive: quoteRef.minReceive,
    deposit: 0,
    feeLegs: plan.steps.slice(1).map((_, i) => i + 1),
  };
  if (!v2) {
    const steps = plan.steps.map((s) => ({ kind: s.kind, target: s.target, instrument: s.instrument, admin: null, amount: s.amount, memo: s.memo ?? null, expiresAt: s.expiresAt }));
    return { planId, expiry, quoteRef, steps, legs: [leg], split: false, registries: {} };
  }
  return { planId, expiry, quoteRef, steps: plan.steps.map(v2Step), legs: [leg], split: false, registries: registriesOf(plan.registries) };
}
