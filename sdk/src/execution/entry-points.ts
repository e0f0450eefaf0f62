// The execution client's entry points (`execute`, `resume`, `withdraw`): a plan runs through the
// user's own CIP-0103 wallet and is tracked on the user's own ledger view to its end, every change
// reported through hooks; one execution per plan at a time.
//
// States (`ExecutionStatus`), terminal ones marked *:
//   SIGNING              a plan made with a sign-message step (OneSwap's, or a split's with a OneSwap
//                        leg): the wallet is asked to sign the venue's message, then the service
//                        completes the plan (signPlan)
//   SUBMITTING           the plan passed the SDK's checks; the wallet is asked to sign and submit
//   INITIATED            the deposit (with its fee legs, when batched; a split's every deposit and
//                        fee leg, in one batch) is on the ledger, awaiting the venue
//   COMPLETED*           the venue accepted and the payout is on the ledger (fee escrow released);
//                        a split: every leg was paid
//   PARTIALLY_COMPLETED* a split: some legs paid, the others returned (their service fees with them)
//                        or unanswered by the expiry; each leg's fate in `result.legs`, and in
//                        the status's note
//   SLIPPAGE_FAILED*     the venue could not pay the floor and rejected: the deposit came back (a
//                        split: no leg paid, a venue rejected one)
//   EXPIRED*             no answer before the plan's expiry (the deposit comes back when the venue
//                        rejects it late, or when `withdraw` takes it back); a split: no leg answered
//   WITHDRAWN*           the taker took the deposit back before any answer (a split: every leg's)
//   VENUE_FAILED*        the venue took the deposit and neither paid out nor refunded it (a failed
//                        OneSwap intent): the venue itself must act; a split: one leg's venue did,
//                        the other legs' fates in `result.legs`
//   USER_REJECTED*       the user refused to sign in the wallet (EIP-1193 4001); nothing was submitted
//   SUBMIT_FAILED*       the wallet or the ledger refused the submission; nothing was submitted
//   REFUSED*             the SDK refused the plan before anything was signed: expired, not
//                        checkable, more than the taker can cover, a message the wallet cannot sign
//                        (signing_unavailable), or a split on a participant without the batching
//                        package (batching_unavailable: asked before anything is signed, or the
//                        batch refused whole for it; a split never sends one deposit alone); or the
//                        service refused to complete a signed plan
// A split plan's legs settle each on its own (`hooks.onLeg` once per leg, `result.legs`); the
// execution ends once every leg has. A plan is submitted under `commandId = planId`, so the
// ledger runs it at most once whoever retries; executing a plan that is executing returns the
// same promise; `resume` continues a stored execution without submitting again, and without
// asking the wallet to sign a message it signed already (the signature, and then the completed
// plan, are kept in the record); `withdraw` takes back every deposit of the plan still open.
import { BestexError } from '../errors.js';
import { isSigningPlan, type Plan } from '../plan.js';
import { readRefusal } from '../refusals.js';
import type { ProviderRequest, WalletAccount } from '../provider.js';
import { Execution } from './executor.js';
import { defaultStorage, type ExecuteOptions } from './options.js';
import { isTerminal, NOTHING_SUBMITTED, RECORD_VERSION, type ExecutionRecord, type ExecutionResult } from './types.js';

export type { ExecuteOptions } from './options.js';

const running = new Map<string, Promise<ExecutionResult>>();

async function takerOf(options: ExecuteOptions): Promise<string> {
  if (options.party) return options.party;
  try {
    const account = (await options.provider.request({ method: 'getPrimaryAccount' } satisfies ProviderRequest)) as WalletAccount;
    return account.partyId;
  } catch (err) {
    if (readRefusal(err, 'getPrimaryAccount').kind === 'unsupported') {
      throw new BestexError('the wallet does not offer getPrimaryAccount: pass the taker as options.party', { status: null, code: 'wallet_unsupported', cause: err });
    }
    throw err;
  }
}

/**
 * A new execution of `plan`. A plan made with a sign-message step that the wallet signed before
 * (an execution of it stored here) starts from what was kept: the completed plan, or the signature.
 */
function newRecord(plan: Plan, party: string, stored: ExecutionRecord | null): ExecutionRecord {
  const fresh: ExecutionRecord = { version: RECORD_VERSION, planId: plan.planId, party, plan, status: 'SUBMITTING', startOffset: 0, included: [0], feeNote: null, submittedUpdateId: null, result: null };
  if (!isSigningPlan(plan) || stored?.party !== party || !stored.signing?.signature) return fresh;
  return { ...fresh, plan: isSigningPlan(stored.plan) ? plan : stored.plan, signing: stored.signing };
}

/** Continues a stored, unfinished execution: tracking only, never a second submission nor a second signature. */
function continueFrom(record: ExecutionRecord, options: ExecuteOptions): Promise<ExecutionResult> {
  if (record.result && isTerminal(record.status)) return Promise.resolve(record.result);
  const execution = new Execution(options, record);
  if (record.status !== 'SIGNING') return execution.follow();
  // Signed, not completed: the service is asked again with the signature kept (a replay answers the same plan).
  if (record.signing?.signature) return execution.run();
  return execution.finish(
    'REFUSED',
    new BestexError(`the wallet was asked to sign ${record.planId}'s message and no signature was kept: nothing was signed or submitted; execute the plan again to ask the wallet again`, { status: null, code: 'not_signed' }),
  );
}

function once(planId: string, start: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
  const current = running.get(planId);
  if (current) return current;
  const promise = start().finally(() => running.delete(planId));
  running.set(planId, promise);
  return promise;
}

/**
 * Runs `plan` through the user's wallet and tracks it to its end. Resolves with the result in every
 * end state (check `status`); rejects only when the wallet or the ledger cannot be read at all, or
 * the storage cannot be written (the execution can then be resumed).
 */
export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecutionResult> {
  const planId = typeof (plan as { planId?: unknown })?.planId === 'string' ? plan.planId : '';
  return once(planId, async () => {
    const party = await takerOf(options);
    const stored = await (options.storage ?? defaultStorage).get(planId);
    // Only an execution that may have reached the ledger is continued; one that submitted nothing
    // runs again, and so does one left while the wallet was asked (resubmitting under the same
    // commandId is safe: the ledger runs it at most once). One signed but not completed goes on
    // from its signature; one whose signature was never given asks the wallet again.
    if (stored && stored.party === party && stored.status === 'SIGNING') {
      if (stored.signing?.signature) return continueFrom(stored, options);
    } else if (stored && stored.party === party && !NOTHING_SUBMITTED.includes(stored.status)) {
      if (stored.status !== 'SUBMITTING' || (await new Execution(options, stored).onLedger())) return continueFrom(stored, options);
    }
    const execution = new Execution(options, newRecord(plan, party, stored));
    return execution.run();
  });
}

/** Continues tracking a stored execution after a reload or a crash, without submitting again. */
export function resume(planId: string, options: ExecuteOptions): Promise<ExecutionResult> {
  return once(planId, async () => {
    const stored = await (options.storage ?? defaultStorage).get(planId);
    if (!stored) throw new BestexError(`no execution of ${planId} is stored here: execute the plan, or pass the storage it was executed with`, { status: null, code: 'unknown_plan' });
    return continueFrom(stored, options);
  });
}

/** Takes back every deposit of a stored execution that no venue has answered (a split's still-open legs', in one submission); resolves with the result. */
export async function withdraw(planId: string, options: ExecuteOptions): Promise<ExecutionResult> {
  const stored = await (options.storage ?? defaultStorage).get(planId);
  if (!stored) throw new BestexError(`no execution of ${planId} is stored here: pass the storage it was executed with`, { status: null, code: 'unknown_plan' });
  // An execution still waiting for an answer sees the withdraw on the ledger and ends with it.
  return new Execution(options, { ...stored, result: null }).withdraw();
}
