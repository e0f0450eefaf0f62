// Asking the wallet to sign a venue's message (a plan's sign-message step, such as OneSwap's
// sign-in challenge): first whether it can, from the account it shows (a party its participant
// hosts and signs for has no key of its own: its account names no publicKey), then `signMessage`
// as the dApp API types it. A wallet that signs at once answers `{signature}`; a remote gateway
// answers the page where its user decides (`{messageId, userUrl}`) and then a `messageSignature`
// event: signed, with the signature, or failed. Nothing here reaches the ledger.
import { BestexError } from '../errors.js';
import { readRefusal } from '../refusals.js';
import type { CantonProvider, ProviderRequest, WalletAccount } from '../provider.js';
import type { AbortSignalLike } from '../platform.js';
import type { ExecutionStatus } from './types.js';

export type Signed = { readonly signature: string } | { readonly refused: ExecutionStatus; readonly error: BestexError };

const unavailable = (why: string, cause?: unknown) =>
  new BestexError(`the wallet cannot sign the venue's message, so nothing was signed and the plan is not executed: ${why}`, {
    status: null,
    code: 'signing_unavailable',
    action: 'use a wallet that holds the party\'s own key (an external party), or plan on a venue that needs no signed message',
    ...(cause === undefined ? {} : { cause }),
  });

/**
 * The key the wallet signs `party`'s messages with (its account's `publicKey`), or why it cannot
 * sign: the account names no key (its participant signs for it), or the wallet does not say.
 */
export async function signingKey(provider: CantonProvider, party: string): Promise<{ publicKey: string } | { error: BestexError }> {
  let accounts: WalletAccount[];
  try {
    const primary = (await provider.request({ method: 'getPrimaryAccount' } satisfies ProviderRequest)) as WalletAccount;
    accounts = primary?.partyId === party ? [primary] : ((await provider.request({ method: 'listAccounts' } satisfies ProviderRequest)) as WalletAccount[]);
  } catch (err) {
    return { error: unavailable(`it does not show the account it would sign with (${err instanceof Error ? err.message : String(err)})`, err) };
  }
  const account = Array.isArray(accounts) ? accounts.find((a) => a?.partyId === party) : undefined;
  if (!account) return { error: unavailable('it holds no account for the taker') };
  if (typeof account.publicKey !== 'string' || account.publicKey === '') {
    return {
      error: unavailable(
        `the taker's account has no key of its own (no publicKey; signingProviderId ${JSON.stringify(account.signingProviderId ?? null)}): a party its participant hosts and signs for cannot sign a message, and the venue accepts nothing else as proof that the party is the user's`,
      ),
    };
  }
  return { publicKey: account.publicKey };
}

/** The wallet's refusal of signMessage, as the execution ends on it: nothing was signed either way. */
function refusalOf(err: unknown): Signed {
  const refusal = readRefusal(err, 'signMessage');
  const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? (err as { details?: unknown })?.details ?? JSON.stringify(err));
  switch (refusal.kind) {
    case 'unsupported':
      return { refused: 'REFUSED', error: unavailable(`it does not offer signMessage (${message})`, err) };
    case 'user-rejected':
    case 'refused':
      return { refused: 'USER_REJECTED', error: new BestexError(`the wallet did not sign the venue's message: ${message}`, { status: null, code: 'user_rejected', cause: err }) };
    default:
      return { refused: 'SUBMIT_FAILED', error: new BestexError(`the wallet gave no signature: ${message}; nothing was submitted`, { status: null, code: 'submit_failed', cause: err }) };
  }
}

interface MessageSignatureEvent {
  readonly status?: unknown;
  readonly messageId?: unknown;
  readonly signature?: unknown;
}

/**
 * Asks the wallet to sign `message`: its signature, or how the execution ends. A remote gateway's
 * page is shown through `approve`; its answer is waited for until `deadline` (the step's expiry).
 */
export async function signWithWallet(provider: CantonProvider, message: string, approve: (url: string) => void, deadline: number, signal?: AbortSignalLike): Promise<Signed> {
  // Listening before asking: a gateway may answer its event before its request's answer arrives.
  const events: MessageSignatureEvent[] = [];
  let wake: () => void = () => undefined;
  const listener = (event: MessageSignatureEvent) => {
    events.push(event);
    wake();
  };
  provider.on('messageSignature', listener as (payload: never) => void);
  try {
    let answer: { signature?: unknown; messageId?: unknown; userUrl?: unknown } | null;
    try {
      answer = (await provider.request({ method: 'signMessage', params: { message } } satisfies ProviderRequest)) as typeof answer;
    } catch (err) {
      return refusalOf(err);
    }
    if (typeof answer?.signature === 'string' && answer.signature !== '') return { signature: answer.signature };
    if (typeof answer?.userUrl !== 'string') return { refused: 'SUBMIT_FAILED', error: new BestexError('the wallet answered signMessage with neither a signature nor a page to sign on', { status: null, code: 'submit_failed' }) };
    const messageId = typeof answer.messageId === 'string' ? answer.messageId : new URL(answer.userUrl).searchParams.get('messageId');
    approve(answer.userUrl);
    for (;;) {
      const event = events.find((e) => e.messageId === messageId && (e.status === 'signed' || e.status === 'failed'));
      if (event?.status === 'signed' && typeof event.signature === 'string' && event.signature !== '') return { signature: event.signature };
      if (event) return { refused: 'USER_REJECTED', error: new BestexError('the user declined to sign the venue\'s message in the wallet', { status: null, code: 'user_rejected' }) };
      if (signal?.aborted) return { refused: 'REFUSED', error: new BestexError('the execution was stopped before the wallet signed', { status: null, code: 'aborted' }) };
      const left = deadline - Date.now();
      if (left <= 0) {
        return {
          refused: 'REFUSED',
          error: new BestexError('the wallet gave no signature before the plan expired: nothing was signed or submitted; re-plan with a new idempotencyKey', { status: null, code: 'plan_expired', action: 're-plan with a new idempotencyKey' }),
        };
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 1_000));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    provider.removeListener('messageSignature', listener as (payload: never) => void);
  }
}
