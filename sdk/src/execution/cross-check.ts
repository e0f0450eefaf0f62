// The service's reading of the same swap (GET /api/outcome, or /api/v2/outcome through a version 2
// client), asked once the execution ends and compared with the wallet's: a cross-check, so it
// holds the result back a few seconds at most.
import type { BestexClient, BestexClientV2 } from '../client.js';
import type { Outcome } from '../contract/v1.js';
import { isPlanV2, type Plan } from '../plan.js';
import type { AbortSignalLike } from '../platform.js';
import { PLAN_VALIDITY_MS, sleep } from './timing.js';
import type { ExecutionResult } from './types.js';

const CROSS_CHECK_BUDGET_MS = 6_000;

/** The service's reading of the swap, polled while it is pending (briefly), compared with the SDK's. */
export async function crossCheck(client: BestexClient | BestexClientV2, plan: Plan, party: string, depositUpdateId: string | null, signal?: AbortSignalLike): Promise<ExecutionResult['outcome']> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The service's reading is a cross-check: it may hold the final status back this long at most.
  const budget = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), CROSS_CHECK_BUDGET_MS)));
  try {
    return await Promise.race([readOutcome(client, plan, party, depositUpdateId, signal), budget]);
  } finally {
    clearTimeout(timer);
  }
}

async function readOutcome(client: BestexClient | BestexClientV2, plan: Plan, party: string, depositUpdateId: string | null, signal?: AbortSignalLike): Promise<ExecutionResult['outcome']> {
  const deposit = plan.steps[0]!;
  const since = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS).toISOString();
  const query = { party, since, deadline: plan.expiry, escrow: deposit.target, amount: deposit.amount, minReceive: plan.quoteRef.minReceive, want: plan.quoteRef.pair.want };
  let outcome: Outcome | null = null;
  for (let i = 0; i < 20 && !signal?.aborted; i++) {
    try {
      outcome = await client.outcome(query);
    } catch {
      return null;
    }
    if (outcome.status !== 'pending') break;
    await sleep(250, signal);
  }
  // The service reads the ledger as the venues' parties it is configured with; a venue settling at
  // a swap address is no party it can read as (docs/api-v2.md), so its not finding the deposit is
  // no reading at all, not a disagreement with the taker's own view.
  if (outcome?.status === 'not_found' && isPlanV2(plan) && plan.settlement === 'swap-address-memo') return null;
  return outcome ? { status: outcome.status, depositUpdateId: outcome.depositUpdateId, agrees: outcome.depositUpdateId === depositUpdateId } : null;
}
