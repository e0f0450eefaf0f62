// How @bestex/sdk reads a wallet's refusal ("one function maps every official provider's refusal
// to the SDK's states"): each shape as the official packages make it, where they can be made to.
import t from 'tap';
import { providerErrors, rpcErrors } from '@canton-network/core-rpc-errors';
// The provider package's own type declarations do not resolve under NodeNext; wallet-sdk re-exports it.
import { LedgerProvider } from '@canton-network/wallet-sdk';
import { readRefusal, type Refusal } from '@bestex/sdk';

/** What Canton's LedgerProvider throws for a method it does not answer (it is ledger access, not a wallet). */
async function ledgerProviderRefusal(method: string): Promise<unknown> {
  const provider = new LedgerProvider({ baseUrl: 'http://127.0.0.1:1', accessTokenProvider: { getAccessToken: async () => 'x.y.z', getAuthContext: async () => ({}) } } as never);
  try {
    await provider.request({ method } as never);
  } catch (err) {
    return err;
  }
  throw new Error(`LedgerProvider answered ${method}`);
}

const JS_CANTON_ERROR = { code: 'CONTRACT_NOT_FOUND', cause: 'Contract could not be found', context: {}, errorCategory: 11, grpcCodeValue: 5 };

t.test('each refusal reads as the state it means: declined, missing method, refused, duplicate, or "may have been submitted"', async (t) => {
  const cases: Array<[string, unknown, Refusal]> = [
    ['EIP-1193 user rejection (core-rpc-errors)', providerErrors.userRejectedRequest(), { kind: 'user-rejected' }],
    ['a JSON-RPC error nested as a transport delivers it', { error: providerErrors.userRejectedRequest().serialize() }, { kind: 'user-rejected' }],
    ['dapp-sdk: the user cancelled (ErrorCode.UserCancelled)', { status: 'error', error: 1 }, { kind: 'user-rejected' }],
    ['dapp-sdk remote: its own wait for approval timed out (ErrorCode.Timeout): the user may still approve', { status: 'error', error: 2, details: 'Timed out waiting for transaction approval' }, { kind: 'uncertain' }],
    ['dapp-sdk remote: the gateway reported the transaction failed (ErrorCode.TransactionFailed)', { status: 'error', error: 3, details: 'Transaction with commandId c failed to execute.' }, { kind: 'refused', ledgerCode: null }],
    ['JSON-RPC method not found (-32601)', rpcErrors.methodNotFound(), { kind: 'unsupported', method: 'prepareExecute' }],
    ['EIP-1193 unsupported method (4200)', providerErrors.unsupportedMethod(), { kind: 'unsupported', method: 'prepareExecute' }],
    ['a nested -32601', { error: { code: -32601, message: 'Method not found' } }, { kind: 'unsupported', method: 'prepareExecute' }],
    ['unauthorised (4100)', providerErrors.unauthorized(), { kind: 'refused', ledgerCode: null }],
    ['invalid params (-32602)', rpcErrors.invalidParams(), { kind: 'refused', ledgerCode: null }],
    ['the ledger\'s JsCantonError, as Canton\'s clients rethrow it', JS_CANTON_ERROR, { kind: 'refused', ledgerCode: 'CONTRACT_NOT_FOUND' }],
    ['a wallet passing the ledger\'s code in data', { code: -32003, message: 'rejected', data: { ledgerCode: 'DAML_INTERPRETATION_ERROR' } }, { kind: 'refused', ledgerCode: 'DAML_INTERPRETATION_ERROR' }],
    ['a ledger deadline whose outcome is unknown', { ...JS_CANTON_ERROR, code: 'REQUEST_TIME_OUT', errorCategory: 3 }, { kind: 'uncertain' }],
    ['the ledger ran this commandId already', { code: -32003, message: 'the ledger refused: DUPLICATE_COMMAND' }, { kind: 'duplicate' }],
    ['a transaction rejection without the ledger\'s code', { code: -32003, message: 'rejected' }, { kind: 'uncertain' }],
    ['disconnected (4900)', providerErrors.disconnected(), { kind: 'uncertain' }],
    ['a dropped connection', new TypeError('fetch failed'), { kind: 'uncertain' }],
    ['dapp-sdk HttpTransport\'s non-2xx answer without a JSON-RPC error', { error: { code: 502 } }, { kind: 'uncertain' }],
    ['dapp-sdk HttpTransport: the gateway\'s -32601 kept as text behind HTTP 404', { error: { code: 404, data: '{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method prepareExecuteAndWait not found"}}' } }, { kind: 'unsupported', method: 'prepareExecute' }],
    ['dapp-sdk HttpTransport: the gateway\'s 4001 kept as text behind HTTP 500', { error: { code: 500, data: '{"jsonrpc":"2.0","id":1,"error":{"code":4001,"message":"User rejected the request."}}' } }, { kind: 'user-rejected' }],
    ['dapp-sdk HttpTransport: the gateway\'s ledger refusal (-32603 with the JsCantonError) kept as text behind HTTP 500', { error: { code: 500, data: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Contract could not be found', data: JS_CANTON_ERROR } }) } }, { kind: 'refused', ledgerCode: 'CONTRACT_NOT_FOUND' }],
    ['dapp-sdk\'s own "Unsupported method" (no code, no name)', new Error('Unsupported method'), { kind: 'unsupported', method: 'prepareExecute' }],
  ];
  for (const [name, err, expected] of cases) t.strictSame(readRefusal(err, 'prepareExecute'), expected, name);
});

t.test('Canton\'s LedgerProvider "Unsupported method" (no code) is a missing method, named', async (t) => {
  for (const method of ['prepareExecuteAndWait', 'prepareExecute', 'getPrimaryAccount']) {
    const err = await ledgerProviderRefusal(method);
    t.notOk(typeof (err as { code?: unknown }).code === 'number', `${method}: thrown without a code`);
    t.strictSame(readRefusal(err, 'the-asked-method'), { kind: 'unsupported', method }, `${method}: read as unsupported, naming it`);
  }
});
