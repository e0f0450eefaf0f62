// The wallet, as CIP-0103 describes a dApp's view of it: an EIP-1193-style provider with
// `request({method, params})` and `txChanged` events. Any such provider will do, for example the
// one `@canton-network/dapp-sdk` gives a dApp, or this package's `sandboxProvider`. The types here
// are the subset the SDK uses, written to match the standard's OpenRPC description.
import { BestexError } from './errors.js';

export interface ProviderRequest {
  readonly method: string;
  readonly params?: unknown;
}

export type TxChangedEvent =
  | { readonly status: 'pending'; readonly commandId: string }
  | { readonly status: 'signed'; readonly commandId: string; readonly payload: { readonly signature: string; readonly signedBy: string; readonly party: string } }
  | { readonly status: 'executed'; readonly commandId: string; readonly payload: { readonly updateId: string; readonly completionOffset: number } }
  | { readonly status: 'failed'; readonly commandId: string };

export interface CantonProvider {
  request(args: ProviderRequest): Promise<unknown>;
  on(event: string, listener: (payload: never) => void): unknown;
  removeListener(event: string, listener: (payload: never) => void): unknown;
}

/** An account the wallet holds (CIP-0103 `Wallet`); only the fields the SDK reads. */
export interface WalletAccount {
  readonly partyId: string;
  readonly primary: boolean;
}

/** A JSON Ledger API command, as `prepareExecute` takes it. */
export interface LedgerCommand {
  readonly ExerciseCommand: { readonly templateId: string; readonly contractId: string; readonly choice: string; readonly choiceArgument: unknown };
}

export interface DisclosedContract {
  readonly templateId: string;
  readonly contractId: string;
  readonly createdEventBlob: string;
  readonly synchronizerId: string;
}

export interface PrepareExecuteParams {
  readonly commands: readonly LedgerCommand[];
  readonly commandId: string;
  readonly actAs: readonly string[];
  readonly readAs?: readonly string[];
  readonly disclosedContracts?: readonly DisclosedContract[];
}

export { PROVIDER_ERRORS, providerErrorCode } from './refusals.js';

/** One JSON Ledger API call through the wallet (`ledgerApi`): the wallet adds its own auth. */
export async function ledgerApi<T>(provider: CantonProvider, requestMethod: 'get' | 'post', resource: string, body?: unknown, query?: Record<string, string>): Promise<T> {
  try {
    return (await provider.request({ method: 'ledgerApi', params: { requestMethod, resource, ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) } })) as T;
  } catch (err) {
    throw new BestexError(`the wallet could not read the ledger (${requestMethod.toUpperCase()} ${resource}): ${err instanceof Error ? err.message : String(err)}`, {
      status: null,
      code: 'ledger_unreadable',
      cause: err,
    });
  }
}
