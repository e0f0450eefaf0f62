// The CIP-0103 provider shell that the SDK's own wallets (the sandbox's, wallet-sdk's) share: the
// account they hold, `status` and `connect`, `txChanged` listeners, a submission's progress as
// `txChanged` events (pending, then executed or failed), and `signMessage` as the dApp API types
// it. Each wallet brings only its ledger reads, how it submits, and how it signs a message.
import type { ConnectResult, SignMessageResult, StatusEvent } from './generated/dapp-api.js';
import { PROVIDER_ERRORS, type CantonProvider, type ProviderRequest, type TxChangedEvent, type WalletAccount } from './provider.js';

/** An error as a provider answers one: an EIP-1193 code, the ledger's own code in `data`. */
export class ProviderRpcError extends Error {
  override readonly name = 'ProviderRpcError';
  constructor(
    readonly code: number,
    message: string,
    readonly data?: { readonly ledgerCode?: string },
  ) {
    super(message);
  }
}

/** The wallet is reached and so is its network, as the dApp API's ConnectResult says it. */
const CONNECTED = { isConnected: true, isNetworkConnected: true } as const satisfies ConnectResult;

/** Sends one event to its listeners. */
export type Emit = (event: string, payload: unknown) => void;

export type Executed = TxChangedEvent & { status: 'executed' };

/** A submission the wallet has accepted to make: its commandId, and how it runs on the ledger. */
export interface PendingSubmission {
  readonly commandId: string;
  run(emit: Emit): Promise<{ updateId: string; completionOffset: number }>;
}

/** What a wallet brings to the shell. */
export interface WalletParts {
  /** How the wallet names itself when a method is not answered: "the sandbox wallet". */
  readonly name: string;
  readonly provider: StatusEvent['provider'];
  readonly network: NonNullable<StatusEvent['network']>;
  /** The account; a function when it waits on something, such as the key made for the session. */
  readonly account: WalletAccount | (() => Promise<WalletAccount>);
  ledgerApi(params: unknown): Promise<unknown>;
  /** The submission `params` ask for; a refusal thrown here is made before any txChanged. */
  submission(params: unknown): PendingSubmission;
  /** The signature (base64) of `message`'s UTF-8 bytes under the account's publicKey; a refusal thrown here says why none is given. */
  signMessage(message: string): Promise<string>;
}

/** The account a wallet of one party holds, as `getPrimaryAccount` and `listAccounts` answer it. */
export function accountOf(party: string, of: { readonly publicKey: string; readonly networkId: string; readonly signingProviderId: string }): WalletAccount {
  return {
    primary: true,
    partyId: party,
    status: 'allocated',
    hint: party.split('::')[0]!,
    publicKey: of.publicKey,
    namespace: party.split('::')[1]!,
    networkId: of.networkId,
    signingProviderId: of.signingProviderId,
  };
}

export function providerShell(wallet: WalletParts): CantonProvider {
  const account = async () => (typeof wallet.account === 'function' ? wallet.account() : wallet.account);
  const listeners = new Map<string, Set<(payload: never) => void>>();
  const emit: Emit = (event, payload) => {
    for (const listener of listeners.get(event) ?? []) {
      try {
        (listener as (p: unknown) => void)(payload);
      } catch {
        // A listener's failure is its own.
      }
    }
  };

  async function execute(params: unknown): Promise<Executed> {
    const submission = wallet.submission(params);
    const { commandId } = submission;
    emit('txChanged', { status: 'pending', commandId });
    try {
      const { updateId, completionOffset } = await submission.run(emit);
      const executed: Executed = { status: 'executed', commandId, payload: { updateId, completionOffset } };
      emit('txChanged', executed);
      return executed;
    } catch (err) {
      emit('txChanged', { status: 'failed', commandId });
      throw err;
    }
  }

  return {
    async request({ method, params }: ProviderRequest): Promise<unknown> {
      switch (method) {
        case 'status':
          return { provider: wallet.provider, connection: CONNECTED, network: wallet.network } satisfies StatusEvent;
        case 'connect':
        case 'isConnected':
          return CONNECTED;
        case 'listAccounts':
          return [await account()];
        case 'getPrimaryAccount':
          return account();
        case 'signMessage': {
          const message = (params as { message?: unknown } | undefined)?.message;
          if (typeof message !== 'string') throw new ProviderRpcError(PROVIDER_ERRORS.invalidParams, 'signMessage takes {message: <the text to sign>}');
          return { signature: await wallet.signMessage(message) } satisfies SignMessageResult;
        }
        case 'ledgerApi':
          return wallet.ledgerApi(params);
        // Answered once the ledger has answered, so a refusal reaches the caller as well as the txChanged listeners.
        case 'prepareExecute':
          await execute(params);
          return null;
        case 'prepareExecuteAndWait':
          return { tx: await execute(params) };
        default:
          throw new ProviderRpcError(PROVIDER_ERRORS.methodNotFound, `${wallet.name} does not answer ${method}`);
      }
    },
    on(event, listener) {
      if (!listeners.has(event)) listeners.set(event, new Set());
      listeners.get(event)!.add(listener);
      return this;
    },
    removeListener(event, listener) {
      listeners.get(event)?.delete(listener);
      return this;
    },
  };
}
