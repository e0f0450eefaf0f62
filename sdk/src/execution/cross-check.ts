// The service's reading of the same swap (GET /api/outcome, or /api/v2/outcome through a version 2
// client), asked once the execution ends and compared with the wallet's, deposit by deposit (a
// split plan's legs each read as any deposit is): a cross-check, so it holds the result back a
// few seconds at most. For a deposit to a swap intent (OneSwap's), the service is asked by planId
// and answers from the venue's own status of the intent (`basis: venue`): that reading agrees when
// it names the same end as the taker's view. The service reads the venue every few seconds, so it
// is waited for longer; still pending then, it is no reading yet (null), not a disagreement.
import type { BestexClient, BestexClientV2 } from '../client.js';
import type { Outcome } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { Executable, ExecutableLeg } from './executable.js';
import { sleep, type AbortSignalLike } from '../platform.js';
import { PLAN_VALIDITY_MS } from './timing.js';
import type { ExecutionStatus, ServiceReading } from './types.js';

const CROSS_CHECK_BUDGET_MS = 6_000;
/** The service reads a swap intent's status every INTENT_POLL_INTERVAL_MS (5 s by default): one read, and a margin. */
const INTENT_CROSS_CHECK_BUDGET_MS = 12_000;
const POLL_MS = 250;
/** The service's reading of an intent changes once per INTENT_POLL_INTERVAL_MS at most: asked every second, not four times (a keyless caller's window counts each). */
const INTENT_POLL_MS = 1_000;

/** The service's statuses of an intent each end of the taker's view agrees with. */
const SAME_END: Partial<Record<ExecutionStatus, V2.Outcome['status']>> = { COMPLETED: 'completed', SLIPPAGE_FAILED: 'slippage_failed', EXPIRED: 'expired', VENUE_FAILED: 'venue_failed' };

/** Whether `leg` is a deposit to a swap intent, whose outcome the service reads from the venue. */
export const isIntentLeg = (leg: ExecutableLeg): boolean => leg.settlement === 'intent-deposit-reference';

/** The service's reading of `leg`'s deposit, polled while it is pending (briefly), compared with the SDK's. */
export async function crossCheck(
  client: BestexClient | BestexClientV2,
  plan: Executable,
  leg: ExecutableLeg,
  party: string,
  status: ExecutionStatus,
  depositUpdateId: string | null,
  signal?: AbortSignalLike,
): Promise<ServiceReading | null> {
  // A deposit the taker withdrew never reached the venue: its intent's status says nothing of it.
  if (isIntentLeg(leg) && status === 'WITHDRAWN') return null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The service's reading is a cross-check: it may hold the final status back this long at most.
  const ms = isIntentLeg(leg) ? INTENT_CROSS_CHECK_BUDGET_MS : CROSS_CHECK_BUDGET_MS;
  const budget = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([readOutcome(client, plan, leg, party, status, depositUpdateId, Date.now() + ms, signal), budget]);
  } finally {
    clearTimeout(timer);
  }
}

const since = (plan: Executable) => new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS).toISOString();

/** The service's reading of an intent leg's outcome, by the plan's id, once (null when it cannot be asked). */
export async function intentOutcome(client: BestexClient | BestexClientV2, plan: Executable, leg: ExecutableLeg, party: string): Promise<V2.Outcome | null> {
  const deposit = plan.steps[leg.deposit]!;
  try {
    return (await (client as BestexClientV2).outcome({ party, since: since(plan), deadline: plan.expiry, planId: plan.planId, amount: deposit.amount, want: plan.quoteRef.pair.want })) as V2.Outcome;
  } catch {
    return null;
  }
}

async function readOutcome(
  client: BestexClient | BestexClientV2,
  plan: Executable,
  leg: ExecutableLeg,
  party: string,
  status: ExecutionStatus,
  depositUpdateId: string | null,
  until: number,
  signal?: AbortSignalLike,
): Promise<ServiceReading | null> {
  const intent = isIntentLeg(leg);
  const deposit = plan.steps[leg.deposit]!;
  const query = { party, since: since(plan), deadline: plan.expiry, escrow: deposit.target, amount: deposit.amount, minReceive: leg.minReceive, want: plan.quoteRef.pair.want };
  let outcome: Outcome | V2.Outcome | null = null;
  while (!signal?.aborted && Date.now() < until) {
    outcome = intent ? await intentOutcome(client, plan, leg, party) : await client.outcome(query).catch(() => null);
    if (outcome === null) return null;
    if (outcome.status !== 'pending') break;
    await sleep(intent ? INTENT_POLL_MS : POLL_MS, signal);
  }
  if (outcome === null) return null;
  // The venue's status not read since the deposit: no reading yet.
  if (intent && outcome.status === 'pending') return null;
  // The service reads the ledger as the venues' parties it is configured with; a venue settling at
  // a swap address is no party it can read as (docs/api-v2.md), so its not finding the deposit is
  // no reading at all, not a disagreement with the taker's own view.
  if (outcome.status === 'not_found' && leg.settlement === 'swap-address-memo') return null;
  if (intent && 'basis' in outcome && outcome.basis === 'venue') {
    return {
      status: outcome.status,
      depositUpdateId: outcome.depositUpdateId,
      agrees: SAME_END[status] === outcome.status,
      basis: 'venue',
      ...(outcome.venueStatus === undefined ? {} : { venueStatus: outcome.venueStatus }),
    };
  }
  return { status: outcome.status, depositUpdateId: outcome.depositUpdateId, agrees: outcome.depositUpdateId === depositUpdateId };
}
