// The sandbox's wallet gateway: a user's wallet as Splice's Wallet Gateway serves it to dApps over
// its remote dApp API (JSON-RPC, events pushed per session), here in front of the sandbox
// participant. A user signs in (a new party, funded from the faucet, hosted on the participant);
// a dApp holding the session asks; `prepareExecute` only parks the transaction and answers the page
// where the user approves it; the user's approval submits it through the participant's JSON Ledger
// API, and the dApp hears `txChanged` (pending, then executed or failed). A declined transaction
// is dropped with no event, as the official gateway drops it.
//
// `signMessage` works the same way: parked, answered with `{messageId, userUrl}` (the sign-message
// page, whose URL carries the messageId as dapp-sdk reads it), and the dApp hears
// `messageSignature` (pending; then signed with the signature, or failed when the user declines,
// so that a dApp waiting for it is not left waiting). The party is hosted by the participant, which
// signs its transactions; a message is signed with an Ed25519 key the gateway makes for the
// session (its account's `publicKey`, base64 of the raw 32 bytes), over the message's UTF-8 bytes.
import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import type {
  ConnectResult,
  LedgerApiParams,
  MessageSignatureEvent,
  Network,
  PrepareExecuteParams,
  PrepareExecuteResult,
  RpcTypes,
  StatusEvent,
  TxChangedEvent,
  Wallet,
} from '@canton-network/core-wallet-dapp-remote-rpc-client';

/** A JSON-RPC refusal: its code is the dApp API's (EIP-1193 and JSON-RPC 2.0 codes). */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const RPC = { invalidParams: -32602, methodNotFound: -32601, internal: -32603, unauthorized: 4100 } as const;

export interface GatewayEvent {
  readonly event: 'txChanged' | 'statusChanged' | 'messageSignature';
  readonly data: unknown;
}

interface Session {
  readonly id: string;
  readonly party: string;
  readonly listeners: Set<(event: GatewayEvent) => void>;
  /** The session's message-signing key, and its public half as the account shows it. */
  readonly key: KeyObject;
  readonly publicKey: string;
}

interface ParkedMessage {
  readonly session: Session;
  readonly message: string;
}

/** What the user sees on the sign-message page: whom it signs as and the text itself. */
export interface ParkedMessageView {
  readonly party: string;
  readonly publicKey: string;
  readonly message: string;
}

interface Parked {
  readonly session: Session;
  readonly params: PrepareExecuteParams;
  readonly commandId: string;
}

/** What the user sees on the approval page: whom it acts as and what it does. */
export interface ParkedView {
  readonly party: string;
  readonly commandId: string;
  readonly commands: number;
  readonly choices: readonly string[];
}

export interface WalletGatewayOptions {
  /** The participant's JSON Ledger API, and a token that may act as the gateway's users. */
  readonly ledger: string;
  readonly ledgerToken: string;
  /** What a new user is given by the faucet: token symbol and amount. */
  readonly welcome: { readonly token: string; readonly amount: string };
}

const NETWORK_ID = 'bestex-sandbox';
const USER_ID = 'bestex-sandbox-gateway';
export const GATEWAY_VERSION = '1.0.0';

type Method = keyof RpcTypes;
const METHODS: readonly Method[] = ['status', 'connect', 'disconnect', 'isConnected', 'getActiveNetwork', 'listAccounts', 'getPrimaryAccount', 'ledgerApi', 'prepareExecute', 'signMessage'];
/** The longest message the gateway parks for signing: a sign-in challenge is a few lines. */
const MAX_MESSAGE_CHARS = 8192;
/** The methods a dApp may call before its user signs in. */
const OPEN_METHODS: readonly Method[] = ['status', 'connect', 'isConnected', 'getActiveNetwork'];

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export class WalletGateway {
  private readonly sessions = new Map<string, Session>();
  private readonly parked = new Map<string, Parked>();
  private readonly messages = new Map<string, ParkedMessage>();
  private base = '';

  constructor(private readonly options: WalletGatewayOptions) {}

  /** Where the gateway is reached: its pages' links are made from it. */
  listensAt(url: string): void {
    this.base = url;
  }

  get dappApi(): string {
    return `${this.base}/api/v0/dapp`;
  }

  get loginUrl(): string {
    return `${this.base}/login/`;
  }

  /** Signs a new user in: a party allocated with `hint`, funded by the faucet. Answers the session's token. */
  async signIn(hint: string): Promise<{ token: string; sessionId: string; party: string }> {
    const { partyDetails } = (await this.ledger('POST', '/v2/parties', { partyIdHint: hint, identityProviderId: '' })) as { partyDetails: { party: string } };
    await this.ledger('POST', '/sandbox/v1/fund', { party: partyDetails.party, ...this.options.welcome });
    const token = randomBytes(24).toString('base64url');
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    // The raw key is the last 32 bytes of its SPKI DER encoding.
    const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
    const session: Session = { id: randomUUID(), party: partyDetails.party, listeners: new Set(), key: privateKey, publicKey: raw };
    this.sessions.set(token, session);
    return { token, sessionId: session.id, party: session.party };
  }

  /** Whether `token` is a session's: the event stream is opened only for one. */
  has(token: string): boolean {
    return this.sessions.has(token);
  }

  /** Sends the session's events to `listener` until the returned function is called. */
  subscribe(token: string, listener: (event: GatewayEvent) => void): () => void {
    const session = this.sessions.get(token);
    session?.listeners.add(listener);
    return () => session?.listeners.delete(listener);
  }

  /** One JSON-RPC call of the remote dApp API, by the session `token` names (undefined: none). */
  async call(token: string | undefined, method: string, params: unknown): Promise<unknown> {
    if (!(METHODS as readonly string[]).includes(method)) throw new RpcFailure(RPC.methodNotFound, `Method ${method} not found`);
    const session = token === undefined ? undefined : this.sessions.get(token);
    if (!session && !(OPEN_METHODS as readonly string[]).includes(method)) throw new RpcFailure(RPC.unauthorized, 'not signed in: open the gateway login page (connect answers its userUrl)');
    const takesParams = method === 'ledgerApi' || method === 'prepareExecute' || method === 'signMessage';
    if (!takesParams && params !== undefined && !(Array.isArray(params) && params.length === 0)) throw new RpcFailure(RPC.invalidParams, `${method} takes no params`);
    switch (method as Method) {
      case 'status':
        return this.status(token, session);
      case 'connect':
      case 'isConnected':
        return this.connection(session);
      case 'disconnect':
        if (token !== undefined) this.end(token);
        return null;
      case 'getActiveNetwork':
        return this.network(token, session);
      case 'listAccounts': {
        // The dApp API's Wallet (listAccounts) has no `rights`; the user API's (getPrimaryAccount) requires them.
        const { rights: _rights, ...account } = this.wallet(session!);
        return [account];
      }
      case 'getPrimaryAccount':
        return this.wallet(session!);
      case 'ledgerApi':
        return this.ledgerApi(params);
      case 'prepareExecute':
        return this.prepareExecute(session!, params);
      case 'signMessage':
        return this.signMessage(session!, params);
      default:
        throw new RpcFailure(RPC.methodNotFound, `Method ${method} not found`);
    }
  }

  /** The transaction parked under `id`, as the approval page shows it; null when there is none. */
  view(id: string): ParkedView | null {
    const parked = this.parked.get(id);
    if (!parked) return null;
    const choices = parked.params.commands.map((command) => {
      const [kind, body] = Object.entries(command)[0] as [string, Record<string, unknown>];
      return typeof body.choice === 'string' ? body.choice : kind;
    });
    return { party: parked.session.party, commandId: parked.commandId, commands: parked.params.commands.length, choices };
  }

  /**
   * The user's answer to a parked transaction. Approved, it is submitted as the session's party and
   * the dApp told each step; declined, it is dropped and the dApp told nothing.
   */
  async decide(id: string, approve: boolean): Promise<'executed' | 'failed' | 'declined' | 'unknown'> {
    const parked = this.parked.get(id);
    if (!parked) return 'unknown';
    this.parked.delete(id);
    if (!approve) return 'declined';
    const { session, params, commandId } = parked;
    this.emit(session, { status: 'pending', commandId });
    try {
      const { transaction } = (await this.ledger('POST', '/v2/commands/submit-and-wait-for-transaction', {
        commands: {
          commands: params.commands,
          commandId,
          actAs: [session.party],
          readAs: params.readAs ?? [session.party],
          userId: USER_ID,
          disclosedContracts: params.disclosedContracts ?? [],
          ...(params.synchronizerId ? { synchronizerId: params.synchronizerId } : {}),
          ...(params.packageIdSelectionPreference ? { packageIdSelectionPreference: params.packageIdSelectionPreference } : {}),
        },
      })) as { transaction: { updateId: string; offset: number } };
      this.emit(session, { status: 'executed', commandId, payload: { updateId: transaction.updateId, completionOffset: transaction.offset } });
      return 'executed';
    } catch {
      this.emit(session, { status: 'failed', commandId });
      return 'failed';
    }
  }

  /** The message parked under `id`, as the sign-message page shows it; null when there is none. */
  messageView(id: string): ParkedMessageView | null {
    const parked = this.messages.get(id);
    return parked ? { party: parked.session.party, publicKey: parked.session.publicKey, message: parked.message } : null;
  }

  /** The user's answer to a parked message: approved, it is signed with the session's key; either way the dApp is told. */
  decideMessage(id: string, approve: boolean): 'signed' | 'declined' | 'unknown' {
    const parked = this.messages.get(id);
    if (!parked) return 'unknown';
    this.messages.delete(id);
    if (!approve) {
      this.emitSignature(parked.session, { status: 'failed', messageId: id });
      return 'declined';
    }
    const signature = sign(null, Buffer.from(parked.message, 'utf8'), parked.session.key).toString('base64');
    this.emitSignature(parked.session, { status: 'signed', messageId: id, signature });
    return 'signed';
  }

  close(): void {
    for (const token of [...this.sessions.keys()]) this.end(token);
    this.parked.clear();
    this.messages.clear();
  }

  private end(token: string): void {
    const session = this.sessions.get(token);
    if (!session) return;
    this.sessions.delete(token);
    for (const [id, parked] of this.parked) if (parked.session === session) this.parked.delete(id);
    for (const [id, parked] of this.messages) if (parked.session === session) this.messages.delete(id);
    session.listeners.clear();
  }

  private emit(session: Session, event: TxChangedEvent): void {
    for (const listener of session.listeners) listener({ event: 'txChanged', data: [event] });
  }

  private emitSignature(session: Session, event: MessageSignatureEvent): void {
    for (const listener of session.listeners) listener({ event: 'messageSignature', data: [event] });
  }

  private connection(session: Session | undefined): ConnectResult {
    return session
      ? { isConnected: true, reason: 'OK', isNetworkConnected: true, networkReason: 'OK' }
      : { isConnected: false, reason: 'Unauthenticated', isNetworkConnected: true, networkReason: 'OK', userUrl: this.loginUrl };
  }

  private network(token: string | undefined, session: Session | undefined): Network {
    return { networkId: NETWORK_ID, ledgerApi: this.options.ledger, ...(session && token ? { accessToken: token } : {}) };
  }

  private status(token: string | undefined, session: Session | undefined): StatusEvent {
    return {
      provider: { id: 'bestex-sandbox-gateway', version: GATEWAY_VERSION, providerType: 'remote', url: this.dappApi, userUrl: this.loginUrl },
      connection: this.connection(session),
      network: this.network(token, session),
      ...(session && token ? { session: { accessToken: token, userId: session.id } } : {}),
    };
  }

  private wallet(session: Session): Wallet {
    const [hint, namespace] = session.party.split('::') as [string, string];
    return { primary: true, partyId: session.party, status: 'allocated', hint, publicKey: session.publicKey, namespace, networkId: NETWORK_ID, signingProviderId: 'participant', rights: [] };
  }

  private async ledgerApi(params: unknown): Promise<unknown> {
    if (!isRecord(params) || typeof params.resource !== 'string' || !params.resource.startsWith('/') || typeof params.requestMethod !== 'string' || !['get', 'post', 'patch', 'put', 'delete'].includes(params.requestMethod)) {
      throw new RpcFailure(RPC.invalidParams, 'ledgerApi takes {requestMethod, resource, body?, query?, path?}');
    }
    const call = params as unknown as LedgerApiParams;
    const resource = call.resource.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(call.path?.[name] ?? '')));
    const query = call.query && Object.keys(call.query).length > 0 ? `?${new URLSearchParams(Object.entries(call.query).map(([k, v]) => [k, String(v)])).toString()}` : '';
    return this.ledger(call.requestMethod.toUpperCase(), `${resource}${query}`, call.body);
  }

  private prepareExecute(session: Session, params: unknown): PrepareExecuteResult {
    if (!isRecord(params) || !Array.isArray(params.commands) || params.commands.length === 0 || !params.commands.every(isRecord)) {
      throw new RpcFailure(RPC.invalidParams, 'prepareExecute takes {commands: [a Daml command, ...], commandId?, actAs?, readAs?, disclosedContracts?}');
    }
    const request = params as unknown as PrepareExecuteParams;
    if (request.actAs && request.actAs.some((party) => party !== session.party)) throw new RpcFailure(RPC.invalidParams, 'actAs names a party this wallet does not hold');
    const id = randomUUID();
    const commandId = request.commandId || randomUUID();
    this.parked.set(id, { session, params: request, commandId });
    return { userUrl: `${this.base}/approve/index.html?transactionId=${id}&commandId=${encodeURIComponent(commandId)}` };
  }

  private signMessage(session: Session, params: unknown): { messageId: string; userUrl: string } {
    if (!isRecord(params) || typeof params.message !== 'string' || params.message === '' || Object.keys(params).length !== 1) {
      throw new RpcFailure(RPC.invalidParams, 'signMessage takes {message: <the text to sign>}');
    }
    if (params.message.length > MAX_MESSAGE_CHARS) throw new RpcFailure(RPC.invalidParams, `signMessage takes a message of at most ${MAX_MESSAGE_CHARS} characters`);
    const messageId = randomUUID();
    this.messages.set(messageId, { session, message: params.message });
    this.emitSignature(session, { status: 'pending', messageId });
    return { messageId, userUrl: `${this.base}/sign-message/index.html?messageId=${messageId}` };
  }

  /** A call to the participant as the gateway: a refusal is thrown as the ledger's own error body (a JsCantonError), as the official gateway passes it on. */
  private async ledger(method: string, resource: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.options.ledger}${resource}`, {
      method,
      headers: { authorization: `Bearer ${this.options.ledgerToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await response.json().catch(() => null)) as unknown;
    if (!response.ok) {
      const cause = isRecord(answer) && typeof answer.cause === 'string' ? answer.cause : `the ledger answered HTTP ${response.status}`;
      throw new RpcFailure(RPC.internal, cause, answer ?? undefined);
    }
    return answer;
  }
}
