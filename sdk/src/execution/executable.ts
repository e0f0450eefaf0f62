// A plan as the executor runs it, whichever version it came in: each step's instrument by id with
// its admin party where the plan names it (version 2), and the token registries the plan names.
// Version 1 names no admin (the holdings spent say it) and no registry (the caller's options do).
import type { AppPlan } from '../contract/v1.js';
import { isPlanV2, isSigningPlan, type DepositPlanV2, type Plan, type PlanV1 } from '../plan.js';

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

export interface Executable {
  readonly planId: string;
  readonly expiry: string;
  readonly quoteRef: Pick<AppPlan['quoteRef'], 'pair' | 'amount' | 'net' | 'minReceive'>;
  readonly steps: readonly ExecutableStep[];
  /** Each admin's token registry URL as the plan names it (a null URL left out). */
  readonly registries: Readonly<Record<string, string>>;
}

/** `plan`, checked already (checkPlan), as the executor runs it: one that moves funds, not one still awaiting its signature. */
export function executable(given: Plan): Executable {
  if (isSigningPlan(given)) throw new TypeError('a plan made with a sign-message step moves no funds until the service completes it');
  const plan = given as PlanV1 | DepositPlanV2;
  const { planId, expiry, quoteRef } = plan;
  if (!isPlanV2(plan)) {
    const steps = plan.steps.map((s) => ({ kind: s.kind, target: s.target, instrument: s.instrument, admin: null, amount: s.amount, memo: s.memo ?? null, expiresAt: s.expiresAt }));
    return { planId, expiry, quoteRef, steps, registries: {} };
  }
  const steps = plan.steps.map((s) => ({ kind: s.kind, target: s.target, instrument: s.instrument.id, admin: s.instrument.admin, amount: s.amount, memo: s.memo, expiresAt: s.expiresAt }));
  const registries: Record<string, string> = {};
  for (const { admin, registryUrl } of plan.registries) if (admin !== null && registryUrl !== null) registries[admin] = registryUrl;
  return { planId, expiry, quoteRef, steps, registries };
}
