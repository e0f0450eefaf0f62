// The execution client's entry points (`execute`, `resume`, `withdraw`): a plan runs through the
// user's own CIP-0103 wallet and is tracked on the user's own ledger view to its end, every change
// reported through hooks; one execution per plan at a time.
//
// States (`ExecutionStatus`), terminal ones marked *:
//   SUBMITTING       the plan passed the SDK's checks; the wallet is asked to sign and submit
//   INITIATED        the deposit (with its fee legs, when batched) is on the ledger, awaiting the venue
//   COMPLETED*       the venue accepted and the payout is on the ledger (fee escrow released)
//   SLIPPAGE_FAILED* the venue could not pay the floor and rejected: the deposit came back
//   EXPIRED*         no answer before the plan's expiry (the deposit comes back when the venue
//                    rejects it late, or when `withdraw` takes it back)
//   WITHDRAWN*       the taker took the deposit back before any answer
//   USER_REJECTED*   the user refused to sign in the wallet (EIP-1193 4001); nothing was submitted
//   SUBMIT_FAILED*   the wallet or the ledger refused the submission; nothing was submitted
//   REFUSED*         the SDK refused the plan before anything was signed: expired, not checkable,
//                    or more than the taker can cover
// A plan is submitted under `commandId = planId`, so the ledger runs it at most once whoever
// retries; executing a plan that is executing returns the same promise; `resume` continues a
// stored execution without submitting again.
import { BestexError } from '../errors.js';
import type { Plan } from '../plan.js';
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

function newRecord(plan: Plan, party: string): ExecutionRecord {
  return { version: RECORD_VERSION, planId: plan.planId, party, plan, status: 'SUBMITTING', startOffset: 0, included: [0], feeNote: null, submittedUpdateId: null, result: null };
}

/** Continues a stored, unfinished execution: tracking only, never a second submission. */
function continueFrom(record: ExecutionRecord, options: ExecuteOptions): Promise<ExecutionResult> {
  if (record.result && isTerminal(record.status)) return Promise.resolve(record.result);
  return new Execution(options, record).follow();
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
    // commandId is safe: the ledger runs it at most once).
    if (stored && stored.party === party && !NOTHING_SUBMITTED.includes(stored.status)) {
      if (stored.status !== 'SUBMITTING' || (await new Execution(options, stored).onLedger())) return continueFrom(stored, options);
    }
    const execution = new Execution(options, newRecord(plan, party));
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

/** Takes back the deposit of a stored execution that no pool has answered; resolves with the result (WITHDRAWN). */
export async function withdraw(planId: string, options: ExecuteOptions): Promise<ExecutionResult> {
  const stored = await (options.storage ?? defaultStorage).get(planId);
  if (!stored) throw new BestexError(`no execution of ${planId} is stored here: pass the storage it was executed with`, { status: null, code: 'unknown_plan' });
  // An execution still waiting for an answer sees the withdraw on the ledger and ends with it.
  return new Execution(options, { ...stored, result: null }).withdraw();
}
