// Asking the wallet to sign and submit, and what its answer or refusal means for the execution:
// tracked when the plan may have reached the ledger, ended when it cannot have.
import { BestexError } from '../errors.js';
import { readRefusal } from '../refusals.js';
import type { CantonProvider, DisclosedContract, LedgerCommand, ProviderRequest } from '../provider.js';
import type { ExecutionStatus } from './types.js';

export type Submitted =
  | { readonly updateId: string | null; readonly duplicate?: true; readonly uncertain?: true }
  | { readonly refused: ExecutionStatus; readonly error: BestexError; readonly ledgerCode?: string | null };

const SUBMIT_METHODS = ['prepareExecuteAndWait', 'prepareExecute'] as const;

/** What a refused submission means for the execution: only one that may have reached the ledger is tracked. */
function answerTo(err: unknown, method: string): Submitted {
  const refusal = readRefusal(err, method);
  const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? JSON.stringify(err));
  switch (refusal.kind) {
    case 'duplicate':
      return { updateId: null, duplicate: true };
    case 'uncertain':
      return { updateId: null, uncertain: true };
    case 'user-rejected':
      return { refused: 'USER_REJECTED', error: new BestexError('the user declined to sign the plan in the wallet', { status: null, code: 'user_rejected', cause: err }) };
    case 'unsupported':
      return { refused: 'SUBMIT_FAILED', error: new BestexError(`the wallet does not offer ${refusal.method}: ${message}`, { status: null, code: 'submit_failed', cause: err }) };
    case 'refused':
      return { refused: 'SUBMIT_FAILED', ledgerCode: refusal.ledgerCode, error: new BestexError(`the wallet did not submit the plan: ${message}`, { status: null, code: 'submit_failed', cause: err }) };
  }
}

/**
 * Asks the wallet to sign and submit: prepareExecuteAndWait, or prepareExecute where the wallet
 * has no AndWait (the result is then found on the ledger, so a dropped txChanged changes nothing).
 * A wallet with neither cannot submit: that is said at once, naming both methods.
 */
export async function submit(provider: CantonProvider, params: { commands: LedgerCommand[]; disclosed: DisclosedContract[]; commandId: string; party: string }, approve: (url: string) => void): Promise<Submitted> {
  const request = { commands: params.commands, commandId: params.commandId, actAs: [params.party], readAs: [params.party], disclosedContracts: params.disclosed };
  let missing: unknown;
  for (const method of SUBMIT_METHODS) {
    try {
      const answer = (await provider.request({ method, params: request } satisfies ProviderRequest)) as { tx?: { payload?: { updateId?: string } }; userUrl?: unknown } | null;
      // A remote gateway answers prepareExecute with the page where the user approves: the
      // transaction waits there, and is then found on the ledger.
      if (typeof answer?.userUrl === 'string') approve(answer.userUrl);
      return { updateId: answer?.tx?.payload?.updateId ?? null };
    } catch (err) {
      if (readRefusal(err, method).kind !== 'unsupported') return answerTo(err, method);
      missing = err;
    }
  }
  return {
    refused: 'SUBMIT_FAILED',
    error: new BestexError(`the wallet offers neither ${SUBMIT_METHODS.join(' nor ')}: it cannot sign and submit (a ledger connection, such as Canton's LedgerProvider, is not a wallet)`, { status: null, code: 'submit_failed', cause: missing }),
  };
}
