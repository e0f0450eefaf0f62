// The SDK's wallet types are the official dApp API's: generated from the pinned OpenRPC document
// (sdk/openrpc/), they must stay interchangeable with the types that
// @canton-network/core-wallet-dapp-rpc-client, the wallet makers' own client, ships. The assertions
// below are checked by tsc when `make build` compiles the tests: a drift in either direction is a
// compile error naming the type, before any test runs. (Where the official types say `any`, as
// inside a Ledger API command, the comparison can only hold the shape around it.)
import type * as Official from '@canton-network/core-wallet-dapp-rpc-client';
import type { DappRpcTypes, LedgerApiParams, LedgerCommand, PrepareExecuteAndWaitResult, PrepareExecuteParams, ProviderRequest, TxChangedEvent, WalletAccount } from '@bestex/sdk';
import t from 'tap';

/** true when each of A and B is assignable to the other, false otherwise (not distributed over unions). */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

const interchangeable = {
  PrepareExecuteParams: true satisfies Mutual<PrepareExecuteParams, Official.PrepareExecuteParams>,
  LedgerApiParams: true satisfies Mutual<LedgerApiParams, Official.LedgerApiParams>,
  Wallet: true satisfies Mutual<WalletAccount, Official.Wallet>,
  TxChangedEvent: true satisfies Mutual<TxChangedEvent, Official.TxChangedEvent>,
  PrepareExecuteAndWaitResult: true satisfies Mutual<PrepareExecuteAndWaitResult, Official.PrepareExecuteAndWaitResult>,
  Command: true satisfies Mutual<LedgerCommand, Official.Command>,
  RpcTypes: true satisfies Mutual<DappRpcTypes, Official.RpcTypes>,
};

/** The official client's RequestArgs, spelt out over its RpcTypes. */
type OfficialRequest = { [M in keyof Official.RpcTypes]: [Official.RpcTypes[M]['params']] extends [never] ? { method: M } : { method: M; params: Official.RpcTypes[M]['params'] } }[keyof Official.RpcTypes];

// Every request the official client can send is one the SDK's ProviderRequest accepts, and back.
const requests = { ProviderRequest: true satisfies Mutual<ProviderRequest, OfficialRequest> };

// The assertions have teeth: one field made required where the document leaves it optional (a
// commandId, which the wallet assigns when the dApp names none) is a drift, and tsc says so.
// @ts-expect-error commandId is optional in the dApp API
const drift = true satisfies Mutual<PrepareExecuteParams & { commandId: string }, Official.PrepareExecuteParams>;

t.test('the generated dApp API types are interchangeable with @canton-network/core-wallet-dapp-rpc-client\'s (held by tsc)', async (t) => {
  for (const [name, same] of Object.entries({ ...interchangeable, ...requests })) t.equal(same, true, `${name}: each is assignable to the other`);
  t.equal(drift, true, 'a drifted type fails to compile (the @ts-expect-error above would fail the build if it did not)');
});

t.test('the SDK\'s request types narrow by method, as the document types each method\'s params', async (t) => {
  const ledger: ProviderRequest = { method: 'ledgerApi', params: { requestMethod: 'get', resource: '/v2/state/ledger-end' } };
  const account: ProviderRequest = { method: 'getPrimaryAccount' };
  // @ts-expect-error ledgerApi's params need a resource
  const missing: ProviderRequest = { method: 'ledgerApi', params: { requestMethod: 'get' } };
  // @ts-expect-error the document has no such method
  const unknown: ProviderRequest = { method: 'sendTransaction' };
  t.strictSame([ledger.method, account.method, missing.method, unknown.method], ['ledgerApi', 'getPrimaryAccount', 'ledgerApi', 'sendTransaction']);
});
