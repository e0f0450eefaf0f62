// How a wallet's refusal reads: one function for every provider people have. CIP-0103 wallets
// answer EIP-1193 errors (a numeric `code`), JSON-RPC transports nest them (`{error: {code}}`),
// Canton's LedgerProvider throws `Error("Unsupported method: …")` with no code at all, and
// dapp-sdk's remote path rejects with `{status: 'error', error: <ErrorCode>}`. What matters to an
// execution is only this: did the user decline, is the method missing, did the wallet or the
// ledger refuse before anything was submitted, or may the submission have reached the ledger.

/** EIP-1193 / EIP-1474 codes a provider answers with. */
export const PROVIDER_ERRORS = { userRejected: 4001, unauthorized: 4100, unsupportedMethod: 4200, disconnected: 4900, invalidParams: -32602, methodNotFound: -32601, transactionRejected: -32003 } as const;

/**
 * dapp-sdk's `ErrorCode` values (`{status: 'error', error}`): the user cancelled; the dApp SDK's own
 * wait for the gateway timed out (which says nothing of the ledger: a user may still approve); the
 * gateway reported the transaction failed (a `failed` txChanged: nothing was committed).
 */
export const DAPP_SDK_ERRORS = { userCancelled: 1, timeout: 2, transactionFailed: 3 } as const;

export type Refusal =
  /** The user declined: nothing was submitted. */
  | { readonly kind: 'user-rejected' }
  /** The wallet has no such method: nothing was submitted. */
  | { readonly kind: 'unsupported'; readonly method: string }
  /** The wallet or the ledger refused the request as such: nothing was submitted. */
  | { readonly kind: 'refused'; readonly ledgerCode: string | null }
  /** The ledger already ran this commandId. */
  | { readonly kind: 'duplicate' }
  /** Anything else (a dropped connection, a timeout, an unreadable answer): it may have been submitted. */
  | { readonly kind: 'uncertain' };

const record = (value: unknown): Record<string, unknown> | null => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null);

/**
 * The JSON-RPC error an HTTP transport keeps only as text: dapp-sdk's HttpTransport throws
 * `{error: {code: <HTTP status>, data: '<the gateway's JSON-RPC answer>'}}`.
 */
function embeddedRpcError(err: unknown): Record<string, unknown> | null {
  const data = record(record(err)?.error)?.data;
  if (typeof data !== 'string') return null;
  try {
    return record(record(JSON.parse(data))?.error);
  } catch {
    return null;
  }
}

/** The numeric code of a provider's error: top-level, the gateway's behind an HTTP transport, or nested in a JSON-RPC `error`. */
export function providerErrorCode(err: unknown): number | null {
  const outer = record(err);
  for (const code of [outer?.code, embeddedRpcError(err)?.code, record(outer?.error)?.code]) if (typeof code === 'number') return code;
  return null;
}

const textOf = (err: unknown): string => {
  const outer = record(err);
  const parts = [err instanceof Error ? err.message : typeof err === 'string' ? err : '', outer?.message, record(outer?.error)?.message, embeddedRpcError(err)?.message, JSON.stringify(outer?.data ?? record(outer?.error)?.data ?? '')];
  return parts.filter((p) => typeof p === 'string').join(' ');
};

/** The JsCantonError code a refusal carries from the ledger, where the wallet passed it on. */
function ledgerCodeOf(err: unknown): string | null {
  const outer = record(err);
  for (const data of [record(outer?.data), record(record(outer?.error)?.data), record(embeddedRpcError(err)?.data)]) {
    if (typeof data?.ledgerCode === 'string') return data.ledgerCode;
    if (typeof data?.code === 'string' && typeof data.cause === 'string') return data.code;
  }
  return typeof outer?.code === 'string' && typeof outer.cause === 'string' ? outer.code : null;
}

/** Canton's error category for a request whose outcome is unknown (a deadline passed after it was sent). */
const STATE_UNKNOWN_CATEGORY = 3;

const categoryOf = (err: unknown): unknown => {
  const outer = record(err);
  return outer?.errorCategory ?? record(outer?.data)?.errorCategory ?? record(record(outer?.error)?.data)?.errorCategory ?? record(embeddedRpcError(err)?.data)?.errorCategory;
};

/** What `err`, thrown by `method` of a wallet, says about the submission. */
export function readRefusal(err: unknown, method: string): Refusal {
  const text = textOf(err);
  if (/DUPLICATE_COMMAND/.test(text) || ledgerCodeOf(err) === 'DUPLICATE_COMMAND') return { kind: 'duplicate' };
  const code = providerErrorCode(err);
  const outer = record(err);
  if (outer?.status === 'error' && typeof outer.error === 'number') {
    if (outer.error === DAPP_SDK_ERRORS.userCancelled) return { kind: 'user-rejected' };
    if (outer.error === DAPP_SDK_ERRORS.transactionFailed) return { kind: 'refused', ledgerCode: null };
    return { kind: 'uncertain' };
  }
  if (code === PROVIDER_ERRORS.userRejected) return { kind: 'user-rejected' };
  if (code === PROVIDER_ERRORS.methodNotFound || code === PROVIDER_ERRORS.unsupportedMethod) return { kind: 'unsupported', method };
  const unsupported = /Unsupported method(?::\s*([A-Za-z]+))?/i.exec(text) ?? /Method ([A-Za-z]+) not found/.exec(text) ?? /method not found(?::\s*([A-Za-z]+))?/i.exec(text);
  if (unsupported) return { kind: 'unsupported', method: unsupported[1] ?? method };
  if (code === PROVIDER_ERRORS.unauthorized || code === PROVIDER_ERRORS.invalidParams) return { kind: 'refused', ledgerCode: null };
  const ledgerCode = ledgerCodeOf(err);
  if (ledgerCode !== null && categoryOf(err) !== STATE_UNKNOWN_CATEGORY) return { kind: 'refused', ledgerCode };
  return { kind: 'uncertain' };
}
