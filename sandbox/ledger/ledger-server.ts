// The sandbox participant over HTTP on loopback: a faithful subset of a Canton 3.4 participant's
// JSON Ledger API v2 (the endpoints wallets and Canton's own TypeScript packages use; README, "The
// sandbox"), typed by the official schemas (@canton-network/core-ledger-client-types) and checked
// in tests against the pinned OpenAPI document (sandbox/ledger/openapi/). Refusals are
// JsCantonError bodies with Canton's error ids (routes/replies.ts).
//
// This file starts the server, checks each request's token and routes it to its endpoint family
// (routes/): the participant's parties, users and packages; command submission; the ledger's state
// and updates; and, beside the API, what a real participant does not serve, named as the
// sandbox's own: POST /sandbox/v1/fund, /sandbox/v1/move, /sandbox/v1/operator. The token
// registries are servers of their own (sandbox/registry/), as on a real network.
//
// Every request needs `Authorization: Bearer <LEDGER_TOKEN>`: the token's user (its `sub`) is the
// participant's administrator.
//
// Whether the participant has Splice's batching utility package (splice-util-token-standard-wallet)
// is its own: with it, a CreateAndExerciseCommand of BatchingUtility_ExecuteBatch runs its actions
// in one transaction; without it, a command or filter naming the package is refused as Canton
// refuses a package name it does not know (PACKAGE_NAMES_NOT_FOUND).
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { answeredPreflight, closeServer, listen, readBody, sendJson, sendText } from '../loopback-server.js';
import { BATCHING_UTILITY_TEMPLATE } from './batching-utility.js';
import type { KnownIds } from './event-format.js';
import { userOfToken } from './ledger-token.js';
import { INTERFACES, PACKAGES, TEMPLATES, UNIMPLEMENTED_INTERFACES } from './packages.js';
import { Participant } from './participant.js';
import type { SandboxLedger } from './sandbox-ledger.js';
import { commandWrite } from './routes/commands.js';
import { SYNCHRONIZER_ID, type Context } from './routes/context.js';
import { participantRead, participantWrite } from './routes/participant-admin.js';
import { record } from './routes/reading.js';
import { cantonError, invalid, noRoute, replyToError, type Reply } from './routes/replies.js';
import { controlWrite } from './routes/sandbox-controls.js';
import { stateQuery, stateRead } from './routes/updates.js';

const MAX_BODY_BYTES = 256 * 1024;

/** The packages a participant has, and what they define: the batching utility's only if it has that package. */
function knownIds(batchingUtility: boolean): KnownIds {
  const { batchingUtility: batching, ...always } = PACKAGES;
  return {
    packages: [...Object.values(always), ...(batchingUtility ? [batching] : [])],
    templates: new Set([...Object.values(TEMPLATES), ...(batchingUtility ? [BATCHING_UTILITY_TEMPLATE] : [])]),
    interfaces: new Set([...Object.values(INTERFACES), ...UNIMPLEMENTED_INTERFACES]),
  };
}

export interface SandboxLedgerServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly participant: Participant;
  close(): Promise<void>;
}

export interface SandboxLedgerServerOptions {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly hosted?: readonly string[];
  /** Whether the participant has Splice's batching utility package; it has by default. */
  readonly batchingUtility?: boolean;
}

export async function startSandboxLedgerServer(ledger: SandboxLedger, options: SandboxLedgerServerOptions): Promise<SandboxLedgerServer> {
  const participant = new Participant(userOfToken(options.token), SYNCHRONIZER_ID);
  for (const party of options.hosted ?? []) participant.host(party);
  const batchingUtility = options.batchingUtility ?? true;
  const context: Context = { ledger, participant, token: options.token, prepared: new Map(), batchingUtility, known: knownIds(batchingUtility) };
  const server = createServer((request, response) => void serve(context, request, response));
  const url = await listen(server, options.host, options.port, 'the sandbox ledger', 'set LEDGER_URL to a free loopback port, or port 0 for any');
  return { url, participant, close: () => closeServer(server) };
}

async function serve(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (answeredPreflight(request, response)) return;
  let reply: Reply;
  try {
    const url = new URL(request.url ?? '/', 'http://sandbox');
    const body = await readBody(request, MAX_BODY_BYTES);
    if (!bearerIs(request.headers.authorization, context.token)) {
      reply = cantonError('authInterceptorInvalidAuthenticationCredentials', 'UNAUTHENTICATED', 'The command is missing a (valid) JWT token');
    } else {
      reply = route(context, request.method ?? 'GET', url, body);
    }
  } catch (err) {
    reply = replyToError(err);
  }
  if (reply.text) sendText(response, reply.status, String(reply.body));
  else sendJson(response, reply.status, reply.body);
}

/** Whether the Authorization header carries `token`, compared in constant time. */
function bearerIs(header: string | undefined, token: string): boolean {
  const sent = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

/** The endpoint family that serves the request: a GET as it is, any other method once its body reads as a JSON object. */
function route(context: Context, method: string, url: URL, text: string): Reply {
  const path = url.pathname;
  if (method === 'GET') return participantRead(context, url) ?? stateRead(context, path) ?? noRoute(method, path);
  let json: unknown;
  try {
    // Canton's own clients send JSON without a Content-Type: the body is read as JSON whatever it says.
    json = JSON.parse(text === '' ? '{}' : text);
  } catch {
    return invalid('the request body is not JSON');
  }
  const input = record(json);
  if (!input) return invalid('the request body must be a JSON object');
  if (method === 'PATCH') return participantWrite(context, method, path, input) ?? noRoute(method, path);
  if (method !== 'POST') return noRoute(method, path);
  return (
    participantWrite(context, method, path, input) ??
    commandWrite(context, path, input, url) ??
    stateQuery(context, path, input, url) ??
    controlWrite(context, path, input) ??
    noRoute(method, path)
  );
}
