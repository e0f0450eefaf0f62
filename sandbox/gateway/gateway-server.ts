// The sandbox wallet gateway over HTTP on loopback, at the official gateway's routes: the remote
// dApp API (`POST /api/v0/dapp`, JSON-RPC with the session as a bearer token; its failures at the
// HTTP statuses the gateway's jsonRpcHandler gives them), its event stream (`GET
// /api/v0/dapp/events?token=`, server-sent events), the login page (`/login/`, which hands the
// session to the dApp that opened it with the SPLICE_WALLET_IDP_AUTH_SUCCESS message), the
// approval page (`/approve/index.html?transactionId=`) and the sign-message page
// (`/sign-message/index.html?messageId=`, the path the official gateway gives dapp-sdk). An
// approval link is the capability to answer it, as a one-time URL: the sandbox has no user
// accounts to check it against.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { answeredPreflight, BodyTooLarge, closeServer, listen, OPEN_CORS, readBody, sendJson } from '../loopback-server.js';
import { PAGES } from './pages.js';
import { RPC, RpcFailure, WalletGateway, type WalletGatewayOptions } from './wallet-gateway.js';

const MAX_BODY_BYTES = 256 * 1024;
const DAPP_ROUTE = '/api/v0/dapp';
const HINT = /^[A-Za-z0-9_-]{1,64}$/;
const NOT_PARKED = 'no such transaction waits for approval (answered, or its session ended)';
const NO_MESSAGE = 'no such message waits to be signed (answered, or its session ended)';
/** An event stream is kept open with a comment line this often, as proxies close idle ones. */
const KEEPALIVE_MS = 15_000;

/** The HTTP status of a JSON-RPC failure, as the official gateway maps it (core-rpc-errors' toHttpErrorCode). */
function httpStatus(code: number): number {
  if (code === -32700 || code === -32600 || code === RPC.invalidParams || code === -32000) return 400;
  if (code === RPC.methodNotFound) return 404;
  if (code === RPC.unauthorized) return 401;
  return 500;
}

const PAGE_HEADERS = { 'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'", 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' };

export interface SandboxGatewayServer {
  /** The remote dApp API's URL, as a dApp gives it to dapp-sdk's remote provider. */
  readonly dappApi: string;
  readonly gateway: WalletGateway;
  close(): Promise<void>;
}

export async function startSandboxGatewayServer(options: WalletGatewayOptions & { host: string; port: number }): Promise<SandboxGatewayServer> {
  const gateway = new WalletGateway(options);
  const streams = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    serve(gateway, streams, request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 500, { error: 'the sandbox gateway failed' });
      else response.destroy();
    });
  });
  const url = await listen(server, options.host, options.port, 'the sandbox wallet gateway', 'set SANDBOX_GATEWAY_PORT to a free port, or 0 for any');
  gateway.listensAt(url);
  return {
    dappApi: gateway.dappApi,
    gateway,
    close: async () => {
      gateway.close();
      for (const stream of streams) stream.end();
      await closeServer(server);
    },
  };
}

const bearer = (request: IncomingMessage): string | undefined => /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];

async function serve(gateway: WalletGateway, streams: Set<ServerResponse>, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (answeredPreflight(request, response)) return;
  const url = new URL(request.url ?? '/', 'http://gateway');
  const method = request.method ?? 'GET';
  if (method === 'GET' && url.pathname === `${DAPP_ROUTE}/events`) return openStream(gateway, streams, url.searchParams.get('token') ?? '', request, response);
  if (method === 'GET' && url.pathname === '/approve/transaction') {
    const view = gateway.view(url.searchParams.get('transactionId') ?? '');
    return view ? sendJson(response, 200, view) : sendJson(response, 404, { error: NOT_PARKED });
  }
  if (method === 'GET' && url.pathname === '/sign-message/message') {
    const view = gateway.messageView(url.searchParams.get('messageId') ?? '');
    return view ? sendJson(response, 200, view) : sendJson(response, 404, { error: NO_MESSAGE });
  }
  const page = method === 'GET' ? PAGES[url.pathname] : undefined;
  if (page) {
    response.writeHead(200, { ...PAGE_HEADERS, 'content-type': page.type });
    response.end(page.text);
    return;
  }
  if (method !== 'POST') return sendJson(response, 404, { error: `no route ${method} ${url.pathname.slice(0, 120)}` });
  let body: unknown;
  try {
    const text = await readBody(request, MAX_BODY_BYTES);
    body = text === '' ? undefined : JSON.parse(text);
  } catch (err) {
    if (err instanceof BodyTooLarge) return sendJson(response, 413, { error: 'request body too large' });
    if (url.pathname === DAPP_ROUTE) return sendJson(response, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    return sendJson(response, 400, { error: 'the request body is not JSON' });
  }
  switch (url.pathname) {
    case DAPP_ROUTE:
      return rpc(gateway, bearer(request), body, response);
    case '/login/': {
      const hint = (body as { hint?: unknown } | undefined)?.hint;
      if (typeof hint !== 'string' || !HINT.test(hint)) return sendJson(response, 400, { error: 'hint: 1 to 64 letters, digits, - or _' });
      return sendJson(response, 200, await gateway.signIn(hint));
    }
    case '/approve/': {
      const { transactionId, approve } = (body ?? {}) as { transactionId?: unknown; approve?: unknown };
      if (typeof transactionId !== 'string' || typeof approve !== 'boolean') return sendJson(response, 400, { error: 'body: {transactionId, approve: true | false}' });
      const outcome = await gateway.decide(transactionId, approve);
      return outcome === 'unknown' ? sendJson(response, 404, { error: NOT_PARKED }) : sendJson(response, 200, { outcome });
    }
    case '/sign-message/': {
      const { messageId, approve } = (body ?? {}) as { messageId?: unknown; approve?: unknown };
      if (typeof messageId !== 'string' || typeof approve !== 'boolean') return sendJson(response, 400, { error: 'body: {messageId, approve: true | false}' });
      const outcome = gateway.decideMessage(messageId, approve);
      return outcome === 'unknown' ? sendJson(response, 404, { error: NO_MESSAGE }) : sendJson(response, 200, { outcome });
    }
    default:
      return sendJson(response, 404, { error: `no route ${method} ${url.pathname.slice(0, 120)}` });
  }
}

async function rpc(gateway: WalletGateway, token: string | undefined, body: unknown, response: ServerResponse): Promise<void> {
  const request = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown } | undefined;
  const id = typeof request?.id === 'string' || typeof request?.id === 'number' ? request.id : null;
  if (request?.jsonrpc !== '2.0' || typeof request.method !== 'string') return sendJson(response, 400, { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid JSON-RPC request format' } });
  try {
    const result = await gateway.call(token, request.method, request.params);
    sendJson(response, 200, { jsonrpc: '2.0', id, result });
  } catch (err) {
    const failure = err instanceof RpcFailure ? err : new RpcFailure(RPC.internal, `Something went wrong while calling ${request.method}`);
    sendJson(response, httpStatus(failure.code), { jsonrpc: '2.0', id, error: { code: failure.code, message: failure.message, ...(failure.data === undefined ? {} : { data: failure.data }) } });
  }
}

function openStream(gateway: WalletGateway, streams: Set<ServerResponse>, token: string, request: IncomingMessage, response: ServerResponse): void {
  if (!gateway.has(token)) return sendJson(response, 401, { error: 'Invalid or expired token: not a session of this gateway' });
  response.writeHead(200, { ...OPEN_CORS, 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.flushHeaders();
  streams.add(response);
  const unsubscribe = gateway.subscribe(token, ({ event, data }) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`));
  const keepalive = setInterval(() => response.write(': keepalive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  request.on('close', () => {
    clearInterval(keepalive);
    unsubscribe();
    streams.delete(response);
  });
}
