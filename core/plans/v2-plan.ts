// A plan in v2's shape: the plan the v1 core assembled and the guardrail passed, each step saying
// exactly what the wallet signs (the receiver, the instrument with its admin party, the amount, the
// memo the venue requires, the time it must be accepted by) and the deposit how the venue settles,
// with the registry of each instrument the steps move, so a wallet or SDK needs no registry
// configuration of its own. Pure: every number and party is the assembled plan's.
import type { AppPlan, PlanStep } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { InstrumentRegistries } from '../execution/tokens.js';
import type { VenueExecution } from '../execution/venues.js';
import type { VenueDepositTerms } from './assembly.js';
import { TOKENS, type Token } from '../tokens.js';

const tokenOf = (instrument: string): Token => {
  const token = TOKENS.find((t) => t.instrument === instrument);
  if (!token) throw new Error(`a plan step in an instrument this service does not know: ${instrument}`);
  return token;
};

/** A v2 plan whose steps are all transfers: every plan but an intent plan before its message is signed. */
export type V2TransferPlan = Omit<V2.AppPlan, 'steps'> & { steps: V2.PlanStep[] };

/**
 * `plan` in v2's shape; `execution`: the venue's (executable), `registries`: where each
 * instrument's admin and registry are, `venueTerms`: the deposit's terms where the venue set them.
 */
export function v2Plan(plan: AppPlan, execution: VenueExecution, registries: InstrumentRegistries, venueTerms?: VenueDepositTerms): V2TransferPlan {
  if (!execution.executable || execution.settlement === null) throw new Error('a v2 plan for a venue that is not executable');
  const settlement = execution.settlement;
  const instruments = [...new Set(plan.steps.map((step) => step.instrument))].map((instrument) => registries.of(tokenOf(instrument)));
  const adminOf = new Map(instruments.map((r) => [r.instrument, r.admin]));
  const step = (s: PlanStep): V2.PlanStep => ({
    kind: s.kind,
    target: s.target,
    instrument: { id: s.instrument, admin: adminOf.get(s.instrument as Token['instrument']) ?? null },
    amount: s.amount,
    // The memo the venue requires: on the deposit, the floor (memo-floor) or the venue's own memo; a fee leg has none.
    memo: s.memo ?? null,
    // memo-floor's deposit is bound to its memo, the floor; a venue that sets its own terms, to its own minimum.
    minOut: s.kind === 'venue-deposit' ? (venueTerms?.minOut ?? plan.quoteRef.minReceive) : null,
    expiresAt: s.expiresAt,
    settlement: s.kind === 'venue-deposit' ? settlement : null,
    ...(s.beneficiary === undefined ? {} : { beneficiary: s.beneficiary }),
  });
  const shaped: V2TransferPlan = {
    planId: plan.planId,
    quoteRef: plan.quoteRef,
    settlement,
    steps: plan.steps.map(step),
    registries: instruments.map(({ instrument, admin, registryUrl }) => ({ instrument, admin, registryUrl })),
    expiry: plan.expiry,
    idempotencyKey: plan.idempotencyKey,
    trustWindow: plan.trustWindow,
    collectsFees: plan.collectsFees,
  };
  if (plan.b2cFee !== undefined) shaped.b2cFee = plan.b2cFee;
  return shaped;
}
