// '@bestex/sdk/wallet-sdk': Canton's wallet SDK (@canton-network/wallet-sdk) as the CIP-0103
// provider `execute` takes, for a backend that holds its users' parties itself. A party the
// participant hosts and signs for (internal) submits with submit-and-wait; a party with its own key
// (external) is prepared on the participant, its hash signed by the signer, then executed and
// waited for. Ledger reads go through the wallet-sdk instance's own connection, with its auth.
// `signMessage` signs with the external party's own key, as Canton's signing library's
// signMessage does (Ed25519 over the message's UTF-8 bytes, base64); a party the participant
// hosts has no key of its own, so for it signMessage is refused (4200), saying why.
//
// wallet-sdk is an optional peer dependency: only its types are imported, so this entry loads
// nothing of it, and the main entry never imports this one.
import type { SDKContext, SDKInterface, SDKPlugin } from '@canton-network/wallet-sdk';
import { PROVIDER_ERRORS, type CantonProvider, type DisclosedContract, type LedgerCommand } from './provider.js';
import { accountOf, providerShell, ProviderRpcError, type Emit } from './provider-shell.js';
import { keySigner } from './signing.js';

export { ProviderRpcError };

/** What the provider uses of a wallet-sdk instance, as `SDK.create` answers one (any extensions). */
export type WalletSdk = Pick<SDKInterface, 'ledger' | 'registerPlugins'>;

/** What a signer is told besides the hash: the transaction it signs, for a signer that checks before signing. */
export interface SigningRequest {
  /** The prepared transaction (base64 protobuf), which `preparedTransactionHash` is the hash of. */
  readonly preparedTransaction: string;
  readonly commandId: string;
  readonly party: string;
}

/**
 * An external party's signer: its Ed25519 private key as `sdk.keys.generate()` gives it (base64 of
 * the 64-byte secret key), or a function that signs the prepared transaction's hash (base64, the
 * bytes to sign) and answers the signature (base64), for a key held in an HSM or a KMS. A function
 * that throws or answers no signature declines: the user rejected (4001), nothing is submitted.
 */
export type WalletSdkSigner = { readonly privateKey: string } | ((preparedTransactionHash: string, request: SigningRequest) => Promise<string>);

export interface WalletSdkProviderOptions {
  /** A wallet-sdk instance on the party's participant: its ledger connection, user and synchronizer are used. */
  readonly sdk: WalletSdk;
  /** The party the wallet acts for; the user the sdk authenticates as must be allowed to act as it. */
  readonly party: string;
  /** The party's signer when it is external; without one the party is internal and the participant signs. */
  readonly signer?: WalletSdkSigner | undefined;
  /**
   * For an external party whose `signer` is a function: its public key (base64 of the raw 32-byte
   * Ed25519 key), which the account shows as `publicKey` and a venue checks a signed message
   * against. With `{ privateKey }` it comes from the key.
   */
  readonly publicKey?: string | undefined;
  /**
   * For an external party whose `signer` is a function: signs a message (`signMessage`, such as a
   * venue's sign-in challenge) with the party's key, Ed25519 over its UTF-8 bytes, answering the
   * signature in base64. Throwing declines (4001). With `{ privateKey }` the key signs.
   */
  readonly messageSigner?: ((message: string) => Promise<string>) | undefined;
  /** The network the accounts name (CIP-0103 `networkId`); the participant's synchronizer by default. */
  readonly networkId?: string | undefined;
}

const PLUGIN = 'bestexLedger';
const contexts = new WeakMap<object, SDKContext>();

/**
 * The instance's context: its ledger provider (with the auth it was created with), its user and its
 * synchronizer. wallet-sdk hands it only to plugins, so one is registered, once per instance (a
 * plugin's property cannot be defined twice).
 */
function contextOf(sdk: WalletSdk): SDKContext {
  const known = contexts.get(sdk);
  if (known) return known;
  if (typeof sdk?.registerPlugins !== 'function' || typeof sdk.ledger?.internal?.submit !== 'function') {
    throw new TypeError('walletSdkProvider needs a wallet-sdk instance (await SDK.create({ auth, ledgerClientUrl }) from @canton-network/wallet-sdk 1.4 or later)');
  }
  const holder = sdk as unknown as Record<string, { ctx?: SDKContext } | undefined>;
  if (!holder[PLUGIN]?.ctx) {
    class Context {
      constructor(readonly ctx: SDKContext) {}
    }
    sdk.registerPlugins({ [PLUGIN]: Context as unknown as new (ctx: SDKContext) => SDKPlugin });
  }
  const ctx = holder[PLUGIN]?.ctx;
  if (!ctx?.ledgerProvider) throw new TypeError('the wallet-sdk instance gave its plugin no ledger connection');
  contexts.set(sdk, ctx);
  return ctx;
}

interface CantonError {
  readonly code: string;
  readonly cause: string;
  readonly errorCategory: number;
}

const isCantonError = (err: unknown): err is CantonError =>
  typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'string' && 'cause' in err && 'errorCategory' in err;

/** Canton's error categories that refuse the caller's credentials or rights, and the one whose request may have gone through. */
const UNAUTHENTICATED = 6;
const INSUFFICIENT_PERMISSION = 7;
const REQUEST_STATE_UNKNOWN = 3;

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED']);

/** Whether the participant could not be reached (fetch's TypeError, a socket error somewhere in the causes). */
function unreachable(err: unknown): boolean {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (name === 'AbortError' || name === 'TimeoutError') return true;
    if (e instanceof TypeError && message === 'fetch failed') return true;
  }
  return false;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : typeof err === 'string' ? err : JSON.stringify(err));

function withCause(error: ProviderRpcError, cause: unknown): ProviderRpcError {
  error.cause = cause;
  return error;
}

/**
 * A failure of wallet-sdk, as EIP-1193 codes say it. The ledger's own refusal keeps its code in the
 * message and in `data.ledgerCode` (a duplicate command must stay recognisable); a refusal whose
 * outcome Canton itself calls unknown, and a participant that cannot be reached, carry no refusal
 * code: the submission may have gone through, which the caller finds out on the ledger.
 */
function providerError(err: unknown, doing: string): ProviderRpcError {
  if (err instanceof ProviderRpcError) return err;
  if (isCantonError(err)) {
    const said = `${err.cause} (${err.code})`;
    if (err.errorCategory === UNAUTHENTICATED || err.errorCategory === INSUFFICIENT_PERMISSION) {
      return withCause(new ProviderRpcError(PROVIDER_ERRORS.unauthorized, `the participant refused the wallet-sdk user ${doing}: ${said}`, { ledgerCode: err.code }), err);
    }
    // No ledgerCode in data: a code there reads as a refusal, and this one may have been committed.
    if (err.errorCategory === REQUEST_STATE_UNKNOWN) return withCause(new ProviderRpcError(-32603, `the participant could not tell whether ${doing} went through: ${said}`), err);
    return withCause(new ProviderRpcError(PROVIDER_ERRORS.transactionRejected, `the ledger refused ${doing}: ${said}`, { ledgerCode: err.code }), err);
  }
  if (unreachable(err)) return withCause(new ProviderRpcError(PROVIDER_ERRORS.disconnected, `the participant cannot be reached ${doing}: ${messageOf(err)}`), err);
  // wallet-sdk's static and refreshed tokens fail this way before any request is sent.
  if (err instanceof Error && /token/i.test(err.message) && /expired/i.test(err.message)) {
    return withCause(new ProviderRpcError(PROVIDER_ERRORS.unauthorized, `the wallet-sdk token is expired ${doing}: ${err.message}`), err);
  }
  return withCause(new ProviderRpcError(-32603, `wallet-sdk failed ${doing}: ${messageOf(err)}`), err);
}

const invalid = (message: string) => new ProviderRpcError(-32602, message);

interface Submission {
  readonly commands: readonly LedgerCommand[];
  readonly commandId: string;
  readonly actAs: readonly string[];
  readonly readAs: readonly string[];
  readonly disclosedContracts: readonly DisclosedContract[];
}

export function walletSdkProvider(options: WalletSdkProviderOptions): CantonProvider {
  const { sdk, party } = options;
  if (typeof party !== 'string' || !party.includes('::')) throw new TypeError('walletSdkProvider needs the party it acts for, as <hint>::<namespace>');
  const ctx = contextOf(sdk);
  const given = options.signer;
  if (given !== undefined && typeof given !== 'function' && typeof given?.privateKey !== 'string') {
    throw new TypeError('signer must be { privateKey } or a function that signs a hash');
  }
  const key = given !== undefined && typeof given !== 'function' ? keySigner(given.privateKey) : null;
  const signer = typeof given === 'function' ? given : key ? (hash: string) => key.signBytes(hash) : null;
  if (options.messageSigner !== undefined && typeof given !== 'function') throw new TypeError('messageSigner is for an external party whose signer is a function: with { privateKey } the key signs messages, and a participant-hosted party has no key to sign with');
  if (key && options.publicKey !== undefined && options.publicKey !== key.publicKey) throw new TypeError('publicKey is not the public half of signer.privateKey');
  const publicKey = key?.publicKey ?? options.publicKey ?? '';
  const signsMessages = key ? (message: string) => key.signMessage(message) : options.messageSigner && publicKey !== '' ? options.messageSigner : null;
  const namespace = party.split('::')[1]!;
  const networkId = options.networkId ?? ctx.defaultSynchronizerId;

  async function ledgerApi(params: unknown): Promise<unknown> {
    const p = (params ?? {}) as { requestMethod?: unknown; resource?: unknown; body?: unknown; query?: unknown };
    if (typeof p.resource !== 'string' || !p.resource.startsWith('/')) throw invalid('ledgerApi needs a resource path');
    const requestMethod = typeof p.requestMethod === 'string' ? p.requestMethod.toLowerCase() : 'get';
    if (requestMethod !== 'get' && requestMethod !== 'post' && requestMethod !== 'patch') throw invalid(`ledgerApi cannot send ${String(p.requestMethod)} through wallet-sdk: get, post or patch`);
    // wallet-sdk appends the query itself: one already in the resource joins it rather than doubling the '?'.
    const [resource, search] = p.resource.split('?', 2) as [string, string | undefined];
    const query: Record<string, unknown> = {};
    new URLSearchParams(search ?? '').forEach((value, name) => {
      const before = query[name];
      query[name] = before === undefined ? value : [...(Array.isArray(before) ? before : [before]), value];
    });
    Object.assign(query, typeof p.query === 'object' && p.query !== null ? p.query : {});
    const request = {
      method: 'ledgerApi',
      params: { requestMethod, resource, ...(Object.keys(query).length > 0 ? { query } : {}), ...(requestMethod !== 'get' && p.body !== undefined ? { body: p.body } : {}) },
    };
    try {
      return await (ctx.ledgerProvider.request as (args: unknown) => Promise<unknown>)(request);
    } catch (err) {
      throw providerError(err, `${requestMethod.toUpperCase()} ${resource}`);
    }
  }

  function submissionOf(params: unknown): Submission {
    const p = (params ?? {}) as Partial<Record<keyof Submission, unknown>>;
    if (!Array.isArray(p.commands) || p.commands.length === 0) throw invalid('prepareExecute needs commands');
    if (typeof p.commandId !== 'string' || p.commandId === '') throw invalid('prepareExecute needs a commandId');
    const actAs = p.actAs === undefined ? [party] : p.actAs;
    const readAs = p.readAs === undefined ? [] : p.readAs;
    if (!Array.isArray(actAs) || !Array.isArray(readAs)) throw invalid('actAs and readAs are lists of parties');
    // The wallet holds one party: it neither signs nor submits for another.
    const others = [...actAs, ...readAs].filter((x) => x !== party);
    if (others.length > 0 || actAs.length === 0) throw new ProviderRpcError(PROVIDER_ERRORS.unauthorized, `this wallet acts for ${party} only, not ${others.join(', ') || 'no party'}`);
    const disclosedContracts = p.disclosedContracts === undefined ? [] : p.disclosedContracts;
    if (!Array.isArray(disclosedContracts)) throw invalid('disclosedContracts is a list');
    return { commands: p.commands as LedgerCommand[], commandId: p.commandId, actAs: actAs as string[], readAs: readAs as string[], disclosedContracts: disclosedContracts as DisclosedContract[] };
  }

  /** Prepared on the participant, signed by the signer, executed and waited for. */
  async function external(submission: Submission, sign: (hash: string, request: SigningRequest) => Promise<string>, emit: Emit): Promise<{ updateId: string; completionOffset: number }> {
    const { commandId } = submission;
    type PrepareArgs = Parameters<WalletSdk['ledger']['internal']['prepare']>[0];
    let prepared: Awaited<ReturnType<WalletSdk['ledger']['internal']['prepare']>>;
    try {
      prepared = await sdk.ledger.internal.prepare({ ...submission, commands: [...submission.commands], actAs: [...submission.actAs], readAs: [...submission.readAs], disclosedContracts: [...submission.disclosedContracts] } as unknown as PrepareArgs);
    } catch (err) {
      throw providerError(err, `preparing ${commandId}`);
    }
    let signature: unknown;
    try {
      signature = await sign(prepared.preparedTransactionHash, { preparedTransaction: prepared.preparedTransaction, commandId, party });
    } catch (err) {
      throw withCause(new ProviderRpcError(PROVIDER_ERRORS.userRejected, `the signer declined to sign ${commandId}: ${messageOf(err)}`), err);
    }
    if (typeof signature !== 'string' || signature === '') throw new ProviderRpcError(PROVIDER_ERRORS.userRejected, `the signer gave no signature for ${commandId}`);
    emit('txChanged', { status: 'signed', commandId, payload: { signature, signedBy: namespace, party } });
    try {
      return await sdk.ledger.execute(sdk.ledger.fromSignature(prepared, signature), { partyId: party });
    } catch (err) {
      throw providerError(err, `executing ${commandId}`);
    }
  }

  async function signMessage(message: string): Promise<string> {
    if (!signer) {
      throw new ProviderRpcError(
        PROVIDER_ERRORS.unsupportedMethod,
        `this wallet cannot sign a message: its party is hosted by its participant, which signs its transactions, and has no key of its own (signingProviderId participant, no publicKey); an external party, with its own key, can sign`,
      );
    }
    if (!signsMessages) throw new ProviderRpcError(PROVIDER_ERRORS.unsupportedMethod, 'this wallet cannot sign a message: its signer signs transaction hashes only; give walletSdkProvider messageSigner and publicKey');
    let signature: unknown;
    try {
      signature = await signsMessages(message);
    } catch (err) {
      throw withCause(new ProviderRpcError(PROVIDER_ERRORS.userRejected, `the signer declined to sign the message: ${messageOf(err)}`), err);
    }
    if (typeof signature !== 'string' || signature === '') throw new ProviderRpcError(PROVIDER_ERRORS.userRejected, 'the signer gave no signature for the message');
    return signature;
  }

  async function internal(submission: Submission): Promise<{ updateId: string; completionOffset: number }> {
    type SubmitArgs = Parameters<WalletSdk['ledger']['internal']['submit']>[0];
    try {
      return await sdk.ledger.internal.submit({ ...submission, commands: [...submission.commands], actAs: [...submission.actAs], readAs: [...submission.readAs], disclosedContracts: [...submission.disclosedContracts] } as unknown as SubmitArgs);
    } catch (err) {
      throw providerError(err, `submitting ${submission.commandId}`);
    }
  }

  return providerShell({
    name: 'the wallet-sdk provider',
    provider: { id: 'wallet-sdk', providerType: 'remote' },
    network: { networkId },
    account: accountOf(party, { publicKey, networkId, signingProviderId: signer ? 'wallet-sdk' : 'participant' }),
    ledgerApi,
    signMessage: (message) => signMessage(message),
    submission(params) {
      const submission = submissionOf(params);
      return { commandId: submission.commandId, run: (emit) => (signer ? external(submission, signer, emit) : internal(submission)) };
    },
  });
}
