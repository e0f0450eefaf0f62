// Two wallets a partner's dApp meets through Canton's official dApp providers, each signing with
// the bestex sandbox's participant (its bearer token acts as any party):
//  - extensionWallet: a browser extension on the other side of the page's window, reached by
//    `new DappSyncProvider(new WindowTransport(window, { target }))`, speaking the content script's
//    postMessage protocol (SPLICE_WALLET_REQUEST / SPLICE_WALLET_RESPONSE frames, id-less
//    notifications for events), and answering errors the EIP-1193 way (4001, -32601, -32602).
//  - remoteGateway: a Wallet Gateway's remote dApp API, reached by `new DappAsyncProvider(url,
//    sessionToken)`: JSON-RPC over HTTP with a bearer session token, events over SSE at
//    `<url>/events?token=`, errors serialised and mapped to HTTP statuses as the gateway's
//    jsonRpcHandler does (toHttpErrorCode), and `prepareExecute` answering `{ userUrl }` before
//    the user has approved, the remote API having no prepareExecuteAndWait.
// Both accept only params the official dApp API types define: the validators below are typed as
// `JSONSchemaType<>` of those types, so `tsc` refuses one that drifts from them.
// Both sign a message (`signMessage`) with an Ed25519 key each wallet holds, shown as its account's
// `publicKey`: the extension answers the signature; the gateway answers its sign-message page and
// then a `messageSignature` event (signed, or failed when the user declines).
// Knobs make them behave as real wallets do when things go wrong: the user declines, the wallet
// cannot submit at all, or the answer is lost after the ledger committed.
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import * as providerDapp from '@canton-network/core-provider-dapp';
import { JsonRpcError, providerErrors, rpcErrors, toHttpErrorCode } from '@canton-network/core-rpc-errors';
import { WindowTransport, type RpcTransport } from '@canton-network/core-rpc-transport';
import type { Provider } from '@canton-network/core-splice-provider';
import { JsonRpcRequest, SpliceMessage, WalletEvent } from '@canton-network/core-types';
import type {
  Command,
  ConnectResult,
  CreateAndExerciseCommand,
  CreateCommand,
  DisclosedContract,
  ExerciseByKeyCommand,
  ExerciseCommand,
  LedgerApiParams,
  MessageSignatureEvent,
  PrepareExecuteAndWaitResult,
  PrepareExecuteParams,
  RpcTypes as DappRpcTypes,
  SignMessageParams,
  SignMessageResult,
  StatusEvent,
  TxChangedEvent,
  TxChangedExecutedEvent,
  Wallet,
} from '@canton-network/core-wallet-dapp-rpc-client';
import type { PrepareExecuteResult, RpcTypes as RemoteDappRpcTypes, StatusEvent as RemoteStatusEvent, Wallet as RemoteWallet } from '@canton-network/core-wallet-dapp-remote-rpc-client';
import { Ajv, type JSONSchemaType, type ValidateFunction } from 'ajv';
import { provideEventSource } from './event-source.js';
import type { TestSandbox } from './sandbox.js';

export interface WalletKnobs {
  /** The user declines to sign: 4001 from the extension; from the gateway, its JSON-RPC error 4001. */
  readonly decline?: boolean;
  /** The wallet has neither prepareExecute nor prepareExecuteAndWait: "Method … not found" (-32601). */
  readonly withoutSubmit?: boolean;
  /** The wallet submits to the ledger, then the answer is lost: never posted (extension), the connection dropped (gateway). */
  readonly dropAfterSubmit?: boolean;
  /** The user declines to sign a message: 4001 from the extension; a `failed` messageSignature from the gateway. */
  readonly declineMessage?: boolean;
}

export interface DappWallet<P> {
  readonly provider: P;
  /** Every request the wallet received, with the error it answered (null for a result, 'dropped' for none). */
  readonly received: ReadonlyArray<{ readonly method: string; readonly error: unknown }>;
  close(): Promise<void>;
}

// The package's declarations re-export its classes through extension-less paths that NodeNext
// resolution cannot follow; the classes are there at run time, typed here with the official types.
const { DappSyncProvider, DappAsyncProvider } = providerDapp as unknown as {
  DappSyncProvider: new (transport?: RpcTransport) => Provider<DappRpcTypes>;
  DappAsyncProvider: new (url: URL | string, sessionToken?: string) => Provider<RemoteDappRpcTypes>;
};


type RpcError = InstanceType<typeof JsonRpcError>;

const opaque = { type: 'object', required: [] } as const;
const createCommand: JSONSchemaType<CreateCommand> = { type: 'object', properties: { CreateCommand: opaque }, required: ['CreateCommand'], additionalProperties: false };
const exerciseCommand: JSONSchemaType<ExerciseCommand> = { type: 'object', properties: { ExerciseCommand: opaque }, required: ['ExerciseCommand'], additionalProperties: false };
const createAndExercise: JSONSchemaType<CreateAndExerciseCommand> = { type: 'object', properties: { CreateAndExerciseCommand: opaque }, required: ['CreateAndExerciseCommand'], additionalProperties: false };
const exerciseByKey: JSONSchemaType<ExerciseByKeyCommand> = { type: 'object', properties: { ExerciseByKeyCommand: opaque }, required: ['ExerciseByKeyCommand'], additionalProperties: false };
// ajv types a union only through anyOf's unchecked form: each branch above is checked on its own.
const command = { anyOf: [createCommand, exerciseCommand, createAndExercise, exerciseByKey] } as unknown as JSONSchemaType<Command>;

const disclosedContract: JSONSchemaType<DisclosedContract> = {
  type: 'object',
  properties: {
    templateId: { type: 'string', nullable: true },
    contractId: { type: 'string', nullable: true },
    createdEventBlob: { type: 'string' },
    synchronizerId: { type: 'string', nullable: true },
  },
  required: ['createdEventBlob'],
  additionalProperties: false,
};

const prepareExecuteParams: JSONSchemaType<PrepareExecuteParams> = {
  type: 'object',
  properties: {
    commandId: { type: 'string', nullable: true },
    // "Non-empty array of Daml command atoms", as the type's own description says.
    commands: { type: 'array', items: command, minItems: 1 },
    actAs: { type: 'array', items: { type: 'string' }, nullable: true },
    readAs: { type: 'array', items: { type: 'string' }, nullable: true },
    disclosedContracts: { type: 'array', items: disclosedContract, nullable: true },
    synchronizerId: { type: 'string', nullable: true },
    packageIdSelectionPreference: { type: 'array', items: { type: 'string' }, nullable: true },
  },
  required: ['commands'],
  additionalProperties: false,
};

const ledgerApiParams: JSONSchemaType<LedgerApiParams> = {
  type: 'object',
  properties: {
    requestMethod: { type: 'string', enum: ['get', 'post', 'patch', 'put', 'delete'] },
    resource: { type: 'string' },
    body: { ...opaque, nullable: true },
    query: { ...opaque, nullable: true },
    path: { ...opaque, nullable: true },
  },
  required: ['requestMethod', 'resource'],
  additionalProperties: false,
};

const signMessageParams: JSONSchemaType<SignMessageParams> = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'], additionalProperties: false };

const ajv = new Ajv({ allErrors: true });
// JSONSchemaType asks optional fields to be `nullable`; the types allow them absent, never null.
const strict = <T>(schema: JSONSchemaType<T>): ValidateFunction<T> => ajv.compile<T>(JSON.parse(JSON.stringify(schema), (key, value: unknown) => (key === 'nullable' ? undefined : value)));
const validators: Readonly<Record<string, ValidateFunction | null>> = {
  prepareExecute: strict(prepareExecuteParams),
  prepareExecuteAndWait: strict(prepareExecuteParams),
  ledgerApi: strict(ledgerApiParams),
  signMessage: strict(signMessageParams),
  // The methods whose params the types declare `never`: none may be sent.
  status: null,
  connect: null,
  disconnect: null,
  isConnected: null,
  getActiveNetwork: null,
  listAccounts: null,
  getPrimaryAccount: null,
};

/** The official types' verdict on `params` for `method`: a -32602 to answer, or null. */
function invalidParams(method: string, params: unknown): RpcError | null {
  const validate = validators[method];
  if (validate === null) return params === undefined ? null : rpcErrors.invalidParams({ message: `${method} takes no params`, data: { errors: [] } });
  if (validate && !validate(params)) return rpcErrors.invalidParams({ message: `${method}: ${ajv.errorsText(validate.errors)}`, data: { errors: validate.errors } });
  return null;
}


const USER_ID = 'bestex-dapp-wallet';

/** A refusal the ledger answered (a JsCantonError), thrown as the gateway's LedgerClient throws it. */
interface JsCantonError {
  readonly code: string;
  readonly cause: string;
}

const isJsCantonError = (err: unknown): err is JsCantonError => typeof (err as JsCantonError)?.code === 'string' && typeof (err as JsCantonError)?.cause === 'string';

/** What a wallet answers for a failure that is no JsonRpcError, as the gateway's jsonRpcHandler does: -32603, a ledger refusal's cause and the refusal as data. */
function internalError(err: unknown, method: string): { code: number; message: string; data?: unknown } {
  if (isJsCantonError(err)) return { code: -32603, message: err.cause, data: err };
  return { code: -32603, message: err instanceof Error ? err.message : `Something went wrong while calling ${method}`, ...(err instanceof Error ? {} : { data: err }) };
}

const NETWORK_ID = 'bestex-sandbox';

function participant(sandbox: TestSandbox, party: string) {
  const base = sandbox.manifest.ledger.replace(/\/+$/, '');
  const [hint, namespace] = party.split('::') as [string, string];
  // The wallet's own message-signing key: the participant signs the party's transactions.
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const rawKey = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64');
  const signMessage = (message: string) => sign(null, Buffer.from(message, 'utf8'), privateKey).toString('base64');
  const wallet: Wallet = { primary: true, partyId: party, status: 'allocated', hint, publicKey: rawKey, namespace, networkId: NETWORK_ID, signingProviderId: 'participant' };

  async function ledgerApi(params: LedgerApiParams): Promise<Record<string, unknown>> {
    const resource = params.resource.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params.path?.[name] ?? '')));
    const query = params.query && Object.keys(params.query).length > 0 ? `?${new URLSearchParams(Object.entries(params.query).map(([k, v]) => [k, String(v)])).toString()}` : '';
    const response = await fetch(`${base}${resource}${query}`, {
      method: params.requestMethod.toUpperCase(),
      headers: { authorization: `Bearer ${sandbox.ledgerToken}`, ...(params.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: params.body === undefined ? undefined : JSON.stringify(params.body),
    });
    const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok) throw isJsCantonError(answer) ? answer : new Error(`the ledger answered HTTP ${response.status}`);
    return answer;
  }

  /** Submits as the wallet's party, telling the dApp each step through `emit`. */
  async function submit(params: PrepareExecuteParams, commandId: string, emit: (event: TxChangedEvent) => void): Promise<TxChangedExecutedEvent> {
    emit({ status: 'pending', commandId });
    try {
      const { transaction } = (await ledgerApi({
        requestMethod: 'post',
        resource: '/v2/commands/submit-and-wait-for-transaction',
        body: {
          commands: {
            commands: params.commands,
            commandId,
            actAs: params.actAs ?? [party],
            readAs: params.readAs ?? [],
            userId: USER_ID,
            disclosedContracts: params.disclosedContracts ?? [],
            ...(params.synchronizerId ? { synchronizerId: params.synchronizerId } : {}),
            ...(params.packageIdSelectionPreference ? { packageIdSelectionPreference: params.packageIdSelectionPreference } : {}),
          },
        },
      })) as { transaction: { updateId: string; offset: number } };
      const executed: TxChangedExecutedEvent = { status: 'executed', commandId, payload: { updateId: transaction.updateId, completionOffset: transaction.offset } };
      emit(executed);
      return executed;
    } catch (err) {
      emit({ status: 'failed', commandId });
      throw err;
    }
  }

  const connection: ConnectResult = { isConnected: true, reason: 'OK', isNetworkConnected: true, networkReason: 'OK' };
  return { base, wallet, ledgerApi, submit, connection, signMessage };
}


const PAGE_ORIGIN = 'https://dapp.example';

/**
 * The window a dApp and an extension's content script share: postMessage queues a structured clone
 * of the message as a 'message' event, as a browser does. WindowTransport posts to the window it is
 * given but hears answers on the global `window`, and DappAsyncProvider listens there too, so the
 * one stand-in is both.
 */
class PageWindow extends EventTarget {
  postMessage(message: unknown, targetOrigin: string): void {
    if (targetOrigin !== '*' && targetOrigin !== PAGE_ORIGIN) return;
    const data = structuredClone(message);
    setTimeout(() => this.dispatchEvent(new MessageEvent('message', { data, origin: PAGE_ORIGIN })), 0);
  }
}

function pageWindow(): PageWindow {
  const global = globalThis as { window?: unknown };
  if (!(global.window instanceof PageWindow)) global.window = new PageWindow();
  return global.window as PageWindow;
}

let extensions = 0;

/** A JSON-RPC error as a content script posts it: the EIP-1193 fields, plain (a clone keeps no Error's class). */
const plainError = (err: unknown, method: string) => (err instanceof JsonRpcError ? { code: err.code, message: err.message, ...(err.data === undefined ? {} : { data: err.data }) } : internalError(err, method));

/**
 * A browser-extension wallet for `party`, and the provider a dApp gets for it. The wallet handles
 * the frames addressed to its target (or to none, as the official content script does) and posts
 * its events as id-less notifications carrying its target.
 */
export function extensionWallet(sandbox: TestSandbox, party: string, knobs: WalletKnobs = {}): DappWallet<Provider<DappRpcTypes>> {
  const win = pageWindow();
  const target = `bestex-test-extension-${++extensions}`;
  const ledger = participant(sandbox, party);
  const received: Array<{ method: string; error: unknown }> = [];
  const inFlight = new Set<Promise<unknown>>();

  const notify = (method: string, params: Record<string, unknown>) => win.postMessage({ type: WalletEvent.SPLICE_WALLET_REQUEST, request: { jsonrpc: '2.0', method, params }, target }, '*');
  const emit = (event: TxChangedEvent) => notify('txChanged', event as unknown as Record<string, unknown>);
  const answer = (id: string | number | null, payload: { result: unknown } | { error: ReturnType<typeof plainError> }) =>
    win.postMessage({ type: WalletEvent.SPLICE_WALLET_RESPONSE, response: { jsonrpc: '2.0', id, ...payload } }, '*');

  const status = (): StatusEvent => ({ provider: { id: target, version: '1.0.0', providerType: 'browser' }, connection: ledger.connection, network: { networkId: NETWORK_ID, ledgerApi: ledger.base } });

  async function execute(params: PrepareExecuteParams): Promise<TxChangedExecutedEvent | 'dropped'> {
    if (knobs.decline) throw providerErrors.userRejectedRequest();
    const executed = await ledger.submit(params, params.commandId ?? randomUUID(), emit);
    return knobs.dropAfterSubmit ? 'dropped' : executed;
  }

  async function handle(method: string, params: unknown): Promise<unknown> {
    const invalid = invalidParams(method, params);
    if (invalid) throw invalid;
    switch (method) {
      case 'status':
        return status();
      case 'connect':
      case 'isConnected':
        return ledger.connection;
      case 'disconnect':
        return null;
      case 'getActiveNetwork':
        return status().network;
      case 'listAccounts':
        return [ledger.wallet] satisfies Wallet[];
      case 'getPrimaryAccount':
        return ledger.wallet;
      case 'ledgerApi':
        return ledger.ledgerApi(params as LedgerApiParams);
      case 'prepareExecute':
      case 'prepareExecuteAndWait': {
        if (knobs.withoutSubmit) break;
        const executed = await execute(params as PrepareExecuteParams);
        if (executed === 'dropped') return executed;
        return method === 'prepareExecute' ? null : ({ tx: executed } satisfies PrepareExecuteAndWaitResult);
      }
      case 'signMessage':
        if (knobs.declineMessage) throw providerErrors.userRejectedRequest();
        return { signature: ledger.signMessage((params as SignMessageParams).message) } satisfies SignMessageResult;
    }
    throw rpcErrors.methodNotFound({ message: `Method ${method} not found` });
  }

  const listener = (event: Event) => {
    const parsed = SpliceMessage.safeParse((event as MessageEvent).data);
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.type === WalletEvent.SPLICE_WALLET_EXT_READY && (!message.target || message.target === target)) {
      win.postMessage({ type: WalletEvent.SPLICE_WALLET_EXT_ACK, target }, '*');
      return;
    }
    if (message.type !== WalletEvent.SPLICE_WALLET_REQUEST) return;
    // An id-less request is a notification: the wallet's own events, heard on the same window.
    if (message.request.id === undefined || message.request.id === null) return;
    if (message.target !== undefined && message.target !== target) return;
    const { id, method } = message.request;
    const params = ((event as MessageEvent).data as { request: { params?: unknown } }).request.params;
    const handled = handle(method, params).then(
      (result) => {
        received.push({ method, error: result === 'dropped' ? 'dropped' : null });
        if (result !== 'dropped') answer(id, { result });
      },
      (err: unknown) => {
        const error = plainError(err, method);
        received.push({ method, error });
        answer(id, { error });
      },
    );
    inFlight.add(handled);
    void handled.finally(() => inFlight.delete(handled));
  };
  win.addEventListener('message', listener);

  return {
    provider: new DappSyncProvider(new WindowTransport(win as unknown as Window, { target })),
    received,
    async close() {
      win.removeEventListener('message', listener);
      await Promise.allSettled([...inFlight]);
    },
  };
}


const DAPP_ROUTE = '/api/v0/dapp';

// DappAsyncProvider opens its event stream with the browser's EventSource, which Node 20 lacks.
provideEventSource();

/** A gateway's JSON-RPC answer to a failure: the HTTP status and body its jsonRpcHandler sends. */
function failure(err: unknown, id: string | number | null, method: string): [number, string] {
  // A JsonRpcError is sent as is, so JSON keeps its enumerable fields only (code, data): not its message.
  if (err instanceof JsonRpcError) return [toHttpErrorCode(err.code), JSON.stringify({ jsonrpc: '2.0', id, error: err })];
  return [500, JSON.stringify({ jsonrpc: '2.0', id, error: internalError(err, method) })];
}

/**
 * A remote Wallet Gateway for `party` on a loopback port, a session already open for the dApp, and
 * the provider a dApp gets for it. `prepareExecute` answers `{ userUrl }` at once and the user
 * approves straight after, as a user who clicks Approve would; the outcome comes as txChanged events
 * only. (The official gateway runs the ledger's prepare before answering, so a command the ledger
 * refuses comes back there as a 500; here it comes as a `failed` event, the one the remote API has.)
 */
export async function remoteGateway(sandbox: TestSandbox, party: string, knobs: WalletKnobs = {}): Promise<DappWallet<Provider<RemoteDappRpcTypes>>> {
  const sessionToken = randomUUID();
  const ledger = participant(sandbox, party);
  const wallet: RemoteWallet = { ...ledger.wallet, rights: [] };
  const received: Array<{ method: string; error: unknown }> = [];
  // The remote API's methods (it has no prepareExecuteAndWait); a gateway without submission lacks prepareExecute too.
  const methods = new Set(['status', 'connect', 'disconnect', 'isConnected', 'getActiveNetwork', 'listAccounts', 'getPrimaryAccount', 'ledgerApi', 'signMessage', ...(knobs.withoutSubmit ? [] : ['prepareExecute'])]);
  const streams = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const approvals = new Set<Promise<unknown>>();
  let streamOpen: () => void = () => undefined;
  const streaming = new Promise<void>((resolve) => (streamOpen = resolve));
  let base = '';

  const emit = (event: TxChangedEvent) => {
    for (const stream of streams) stream.write(`event: txChanged\ndata: ${JSON.stringify([event])}\n\n`);
  };
  const emitSignature = (event: MessageSignatureEvent) => {
    for (const stream of streams) stream.write(`event: messageSignature\ndata: ${JSON.stringify([event])}\n\n`);
  };

  /** Answers the sign-message page at once; the user signs (or declines) straight after, as one who clicks would. */
  function signMessage(params: SignMessageParams): { messageId: string; userUrl: string } {
    const messageId = randomUUID();
    emitSignature({ status: 'pending', messageId });
    setImmediate(() => emitSignature(knobs.declineMessage ? { status: 'failed', messageId } : { status: 'signed', messageId, signature: ledger.signMessage(params.message) }));
    return { messageId, userUrl: `${base}/sign-message/index.html?messageId=${messageId}&closeafteraction` };
  }
  const status = (): RemoteStatusEvent => ({
    provider: { id: 'bestex-test-gateway', version: '1.0.0', providerType: 'remote', url: `${base}${DAPP_ROUTE}`, userUrl: `${base}/login/` },
    connection: ledger.connection,
    network: { networkId: NETWORK_ID, ledgerApi: ledger.base, accessToken: sessionToken },
    session: { accessToken: sessionToken, userId: 'bestex-test-user' },
  });

  async function prepareExecute(params: PrepareExecuteParams, drop: () => void): Promise<PrepareExecuteResult | 'dropped'> {
    if (knobs.decline) throw providerErrors.userRejectedRequest();
    const commandId = params.commandId || randomUUID();
    const userUrl = `${base}/approve/index.html?transactionId=${randomUUID()}&commandId=${encodeURIComponent(commandId)}&closeafteraction`;
    if (knobs.dropAfterSubmit) {
      await ledger.submit(params, commandId, emit);
      drop();
      return 'dropped';
    }
    const approval = new Promise((resolve) => setImmediate(resolve)).then(() => ledger.submit(params, commandId, emit)).catch(() => undefined);
    approvals.add(approval);
    void approval.finally(() => approvals.delete(approval));
    return { userUrl };
  }

  async function handle(method: string, params: unknown, drop: () => void): Promise<unknown> {
    const invalid = invalidParams(method, params);
    if (invalid) throw invalid;
    switch (method) {
      case 'status':
        return status();
      case 'connect':
      case 'isConnected':
        return { ...ledger.connection, userUrl: `${base}/login/` } satisfies ConnectResult;
      case 'disconnect':
        return null;
      case 'getActiveNetwork':
        return status().network;
      case 'listAccounts':
        return [wallet] satisfies RemoteWallet[];
      case 'getPrimaryAccount':
        return wallet;
      case 'ledgerApi':
        return ledger.ledgerApi(params as LedgerApiParams);
      case 'prepareExecute':
        return prepareExecute(params as PrepareExecuteParams, drop);
      case 'signMessage':
        return signMessage(params as SignMessageParams);
    }
    throw rpcErrors.methodNotFound({ message: `Method ${method} not found` });
  }

  const send = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(body);
  };

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', base);
    const bearer = req.headers.authorization ?? (url.searchParams.get('token') ? `Bearer ${url.searchParams.get('token')}` : undefined);
    if (bearer !== `Bearer ${sessionToken}`) return send(res, 401, JSON.stringify({ error: 'Invalid or expired token: not a session of this gateway' }));
    if (req.method === 'GET' && url.pathname === `${DAPP_ROUTE}/events`) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      res.flushHeaders();
      streams.add(res);
      req.on('close', () => streams.delete(res));
      streamOpen();
      return;
    }
    if (req.method !== 'POST' || url.pathname !== DAPP_ROUTE) return send(res, 404, JSON.stringify({ error: 'Not found' }));
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const parsed = JsonRpcRequest.safeParse(body);
    if (!parsed.success) return send(res, ...failure(rpcErrors.invalidRequest({ message: 'Invalid JSON-RPC request format' }), null, ''));
    const { method, id = null } = parsed.data;
    const params = (body as { params?: unknown }).params;
    if (!methods.has(method)) {
      // The gateway answers a method its controller lacks with id null.
      const [status, answer] = failure(rpcErrors.methodNotFound({ message: `Method ${method} not found` }), null, method);
      received.push({ method, error: JSON.parse(answer).error });
      return send(res, status, answer);
    }
    try {
      const result = await handle(method, params, () => req.socket.destroy());
      received.push({ method, error: result === 'dropped' ? 'dropped' : null });
      if (result !== 'dropped') send(res, 200, JSON.stringify({ jsonrpc: '2.0', id, result }));
    } catch (err) {
      const [status, answer] = failure(err, id, method);
      received.push({ method, error: JSON.parse(answer).error });
      send(res, status, answer);
    }
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: String(err) }));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The provider listens on the page's window for the gateway's login hand-off.
  pageWindow();
  const provider = new DappAsyncProvider(`${base}${DAPP_ROUTE}`, sessionToken);
  // A dApp is connected once its event stream is: txChanged sent before then would be lost.
  await streaming;

  return {
    provider,
    received,
    async close() {
      await Promise.allSettled([...approvals]);
      for (const stream of streams) stream.end();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
