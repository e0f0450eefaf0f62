// The wallet, as CIP-0103 describes a dApp's view of it: an EIP-1193-style provider with
// `request({method, params})` and `txChanged` events. Any such provider will do, for example the
// one `@canton-network/dapp-sdk` gives a dApp, or this package's `sandboxProvider`. The requests,
// answers and events are typed by the official dApp API document (sdk/openrpc/), generated into
// ./generated/dapp-api.ts, so they cannot drift from what real wallets are built against.
import { BestexError } from './errors.js';
import type { LedgerApiParams, RpcMethod, RpcTypes, Wallet } from './generated/dapp-api.js';

export type { DisclosedContract, LedgerApiParams, PrepareExecuteAndWaitResult, PrepareExecuteParams, RpcTypes, TxChangedEvent, TxChangedExecutedEvent } from './generated/dapp-api.js';

/**
 * One request of the dApp API: a method with its params, as the official client's RequestArgs
 * types it. A method that takes none may still say `params: undefined`, so a provider can
 * destructure `{ method, params }` whatever the method.
 */
export type ProviderRequest = {
  [M in RpcMethod]: [RpcTypes[M]['params']] extends [never] ? { readonly method: M; readonly params?: undefined } : { readonly method: M; readonly params: RpcTypes[M]['params'] };
}[RpcMethod];

/** The SDK's own minimal view of a provider: the OpenRPC document describes the methods, not the object that carries them. */
export interface CantonProvider {
  // EIP-1193's request arguments, wider than ProviderRequest (which every request the SDK sends
  // satisfies): a wallet's own typing may name methods the dApp API does not and lack some it
  // does, as the remote dApp API's lacks prepareExecuteAndWait, which the SDK falls back from.
  request(args: { readonly method: string; readonly params?: unknown }): Promise<unknown>;
  on(event: string, listener: (payload: never) => void): unknown;
  removeListener(event: string, listener: (payload: never) => void): unknown;
}

/** An account the wallet holds, as `getPrimaryAccount` and `listAccounts` answer it (CIP-0103 `Wallet`). */
export type WalletAccount = Wallet;

/** A JSON Ledger API command, as `prepareExecute` takes it: opaque inside, as the dApp API leaves it to the Ledger API. */
export type { Command as LedgerCommand } from './generated/dapp-api.js';

export { PROVIDER_ERRORS, providerErrorCode } from './refusals.js';

/** One JSON Ledger API call through the wallet (`ledgerApi`): the wallet adds its own auth. */
export async function ledgerApi<T>(provider: CantonProvider, requestMethod: 'get' | 'post', resource: string, body?: LedgerApiParams['body'], query?: Record<string, string>): Promise<T> {
  const params: LedgerApiParams = { requestMethod, resource, ...(body === undefined ? {} : { body }), ...(query ? { query } : {}) };
  try {
    return (await provider.request({ method: 'ledgerApi', params } satisfies ProviderRequest)) as T;
  } catch (err) {
    throw new BestexError(`the wallet could not read the ledger (${requestMethod.toUpperCase()} ${resource}): ${err instanceof Error ? err.message : String(err)}`, {
      status: null,
      code: 'ledger_unreadable',
      cause: err,
    });
  }
}
