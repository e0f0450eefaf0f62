// The sandbox ledger over HTTP on loopback: the subset of a participant's JSON Ledger API v2 that
// the service's ledger adapter and the sandbox wallet use, the registry's transfer-factory lookup,
// and the sandbox's own controls, which a real network has no counterpart of:
//
// - GET  /v2/version                                      -> {version, features}, as a 3.4 participant
// - GET  /v2/state/ledger-end                              -> {offset}
// - GET  /v2/state/latest-pruned-offsets                   -> {participantPrunedUpToInclusive: 0, ...}
// - POST /v2/updates?limit=N                               -> [{update: {Transaction: {value}}}]
//   (InterfaceFilter filters only; TRANSACTION_SHAPE_LEDGER_EFFECTS or _ACS_DELTA)
// - POST /v2/state/active-contracts                        -> [{workflowId, contractEntry: {JsActiveContract}}]
//   (the contracts active at the ledger end, for any activeAtOffset up to it)
// - POST /v2/commands/submit-and-wait-for-transaction      -> {transaction} (ExerciseCommand only)
// - POST /registry/transfer-instruction/v1/transfer-factory -> {factoryId, transferKind, choiceContext}
// - POST /registry/transfer-instruction/v1/<cid>/choice-contexts/<accept|reject|withdraw>
//                                                          -> {choiceContextData, disclosedContracts}
// - POST /sandbox/v1/fund {party, token, amount}, POST /sandbox/v1/move {pair, bps},
//   POST /sandbox/v1/operator {paused}
//
// Every request needs `Authorization: Bearer <LEDGER_TOKEN>`; errors are JsCantonError bodies.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BodyTooLarge, closeServer, listen, readBody } from '../loopback-server.js';
import { Decimal } from '../../core/decimal.js';
import { namesEntity } from '../../core/ledger/token-standard.js';
import { isPartyId } from '../../core/party.js';
import { resolveToken, type Token } from '../../core/tokens.js';
import { LedgerRejection, type SandboxEvent, type SandboxLedger, type SandboxTransaction } from './sandbox-ledger.js';

/** The participant's `http-list-max-elements-limit`: a longer list is refused with 413, as Canton does. */
export const MAX_LIST_ELEMENTS = 1000;
const MAX_BODY_BYTES = 64 * 1024;
export const SYNCHRONIZER_ID = `sandbox::1220${'5'.repeat(64)}`;

/** The official JSON Ledger API schemas (Canton 3.4), for the answers whose shape they describe. */
type JsonLedgerApi = v3_4.components['schemas'];

/**
 * What a Canton 3.4 participant answers at GET /v2/version, in the official JSON Ledger API's
 * shape, so Canton's own clients (@canton-network/core-ledger-client's init) take the sandbox for one.
 */
const VERSION: JsonLedgerApi['GetLedgerApiVersionResponse'] = {
  version: '3.4.12',
  features: {
    experimental: { staticTime: { supported: false } },
    userManagement: { supported: false, maxRightsPerUser: 0, maxUsersPageSize: 0 },
    partyManagement: { maxPartiesPageSize: 0 },
    offsetCheckpoint: { maxOffsetCheckpointEmissionDelay: { seconds: 1, nanos: 0 } },
    packageFeature: { maxVettedPackagesPageSize: 0 },
  },
};

interface Reply {
  readonly status: number;
  readonly body: unknown;
}

/** A JsCantonError, as a participant answers a refused request. */
function cantonError(status: number, code: string, cause: string, category: number, grpcCodeValue: number): Reply {
  // As a participant sends it: the official shape, with traceId, retryInfo and definiteAnswer null.
  const body: Omit<JsonLedgerApi['JsCantonError'], 'traceId' | 'retryInfo' | 'definiteAnswer'> & Record<'traceId' | 'retryInfo' | 'definiteAnswer', null> = {
    code, cause, correlationId: randomUUID(), traceId: null, context: {}, resources: [], errorCategory: category, grpcCodeValue, retryInfo: null, definiteAnswer: null,
  };
  return { status, body };
}
const invalid = (cause: string) => cantonError(400, 'INVALID_ARGUMENT', cause, 8, 3);
function rejection(err: LedgerRejection): Reply {
  if (err.code === 'CONTRACT_NOT_FOUND' || err.code === 'NOT_FOUND') return cantonError(404, err.code, err.message, 11, 5);
  if (err.code === 'DUPLICATE_COMMAND') return cantonError(409, err.code, err.message, 10, 6);
  return cantonError(400, err.code, err.message, 8, 9);
}

export interface SandboxLedgerServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  close(): Promise<void>;
}

type Shape = 'TRANSACTION_SHAPE_LEDGER_EFFECTS' | 'TRANSACTION_SHAPE_ACS_DELTA';

/** Which interfaces each requested party asked for, and their views. */
type Filters = ReadonlyMap<string, ReadonlyArray<{ interfaceId: string; includeView: boolean }>>;

export async function startSandboxLedgerServer(ledger: SandboxLedger, options: { host: string; port: number; token: string }): Promise<SandboxLedgerServer> {
  const server = createServer((request, response) => void serve(ledger, options.token, request, response));
  const url = await listen(server, options.host, options.port, 'the sandbox ledger', 'set LEDGER_URL to a free loopback port, or port 0 for any');
  return { url, close: () => closeServer(server) };
}

/**
 * A browser wallet (the SDK's sandbox provider in a page) may call the sandbox ledger from any
 * origin, as a wallet's own backend would be called: its token, not the page's origin, guards it.
 */
const CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'GET, POST', 'access-control-max-age': '600' };

async function serve(ledger: SandboxLedger, token: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
    response.writeHead(204, CORS);
    response.end();
    return;
  }
  let reply: Reply;
  try {
    const url = new URL(request.url ?? '/', 'http://sandbox');
    const body = await readBody(request, MAX_BODY_BYTES);
    if (!bearerIs(request.headers.authorization, token)) {
      reply = cantonError(401, 'UNAUTHENTICATED', 'The command is missing a (valid) JWT token', 6, 16);
    } else {
      reply = route(ledger, request.method ?? 'GET', url, body);
    }
  } catch (err) {
    reply =
      err instanceof BodyTooLarge ? cantonError(413, 'REQUEST_TOO_LARGE', 'request body too large', 8, 8)
      : err instanceof LedgerRejection ? rejection(err)
      : cantonError(500, 'INTERNAL', 'the sandbox ledger failed', 4, 13);
  }
  const text = JSON.stringify(reply.body);
  response.writeHead(reply.status, { ...CORS, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** Whether the Authorization header carries `token`, compared in constant time. */
function bearerIs(header: string | undefined, token: string): boolean {
  const sent = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

function route(ledger: SandboxLedger, method: string, url: URL, body: string): Reply {
  const path = url.pathname;
  if (method === 'GET' && path === '/v2/version') return { status: 200, body: VERSION };
  if (method === 'GET' && path === '/v2/state/ledger-end') return { status: 200, body: { offset: ledger.ledgerEnd } satisfies JsonLedgerApi['GetLedgerEndResponse'] };
  // The sandbox keeps its whole history.
  if (method === 'GET' && path === '/v2/state/latest-pruned-offsets') {
    return { status: 200, body: { participantPrunedUpToInclusive: 0, allDivulgedContractsPrunedUpToInclusive: 0 } satisfies JsonLedgerApi['GetLatestPrunedOffsetsResponse'] };
  }
  if (method !== 'POST') return cantonError(404, 'NOT_FOUND', `no route ${method} ${path}`, 11, 5);
  let json: unknown;
  try {
    json = JSON.parse(body === '' ? '{}' : body);
  } catch {
    return invalid('the request body is not JSON');
  }
  const input = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  if (!input) return invalid('the request body must be a JSON object');
  const context = /^\/registry\/transfer-instruction\/v1\/([^/]+)\/choice-contexts\/(accept|reject|withdraw)$/.exec(path);
  if (context) return choiceContext(ledger, decodeURIComponent(context[1]!));
  switch (path) {
    case '/v2/updates':
      return updates(ledger, input, url.searchParams.get('limit'));
    case '/v2/state/active-contracts':
      return activeContracts(ledger, input);
    case '/v2/commands/submit-and-wait-for-transaction':
      return submit(ledger, input);
    case '/registry/transfer-instruction/v1/transfer-factory':
      return transferFactory(ledger, input);
    case '/sandbox/v1/fund':
      return fund(ledger, input);
    case '/sandbox/v1/move':
      return move(ledger, input);
    case '/sandbox/v1/operator':
      if (typeof input.paused !== 'boolean') return invalid('paused must be true or false');
      ledger.setOperatorPaused(input.paused);
      return { status: 200, body: { paused: ledger.operatorPaused } };
    default:
      return cantonError(404, 'NOT_FOUND', `no route ${method} ${path}`, 11, 5);
  }
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

/** The parties and interface filters of an EventFormat; an error reply for anything the sandbox does not serve. */
function parseFilters(eventFormat: unknown): Filters | Reply {
  const byParty = record(record(eventFormat)?.filtersByParty);
  if (!byParty || Object.keys(byParty).length === 0) return invalid('eventFormat.filtersByParty must name at least one party');
  const filters = new Map<string, Array<{ interfaceId: string; includeView: boolean }>>();
  for (const [party, filter] of Object.entries(byParty)) {
    const cumulative = record(filter)?.cumulative;
    if (!Array.isArray(cumulative)) return invalid('each party\'s filter must have a cumulative list');
    const wanted: Array<{ interfaceId: string; includeView: boolean }> = [];
    for (const entry of cumulative) {
      const interfaceFilter = record(record(record(entry)?.identifierFilter)?.InterfaceFilter);
      const value = record(interfaceFilter?.value);
      if (!value || typeof value.interfaceId !== 'string') return invalid('the sandbox ledger serves InterfaceFilter filters only');
      wanted.push({ interfaceId: value.interfaceId, includeView: value.includeInterfaceView === true });
    }
    filters.set(party, wanted);
  }
  return filters;
}

const isReply = (value: unknown): value is Reply => record(value) !== null && 'status' in (value as object) && 'body' in (value as object);

const entityOf = (interfaceId: string) => interfaceId.slice(interfaceId.indexOf(':') + 1);

/** The filter entries that match an event: its template implements the filtered interface. */
function matching(event: SandboxEvent, wanted: ReadonlyArray<{ interfaceId: string; includeView: boolean }>): Array<{ interfaceId: string; includeView: boolean }> {
  return wanted.filter((w) => event.interfaces.some((id) => namesEntity(id, entityOf(w.interfaceId))));
}

/** An event as the JSON Ledger API shows it to `parties`, or null when none of them may see it. */
function renderEvent(event: SandboxEvent, tx: SandboxTransaction, nodeId: number, filters: Filters, shape: Shape): unknown {
  if (shape === 'TRANSACTION_SHAPE_ACS_DELTA' && event.kind === 'exercised') return null;
  if (shape === 'TRANSACTION_SHAPE_LEDGER_EFFECTS' && event.kind === 'archived') return null;
  const witnesses = event.witnesses.filter((p) => filters.has(p));
  const matched = witnesses.flatMap((p) => matching(event, filters.get(p)!));
  if (matched.length === 0) return null;
  const common = { offset: tx.offset, nodeId, contractId: event.contractId, templateId: event.templateId, packageName: 'sandbox-token' };
  if (event.kind === 'created') {
    const views = Object.entries(event.views ?? {})
      .filter(([id]) => matched.some((m) => m.includeView && namesEntity(id, entityOf(m.interfaceId))))
      .map(([interfaceId, viewValue]) => ({ interfaceId, viewStatus: { code: 0, message: '', details: [] }, viewValue }));
    return {
      CreatedEvent: {
        ...common, contractKey: null, createArgument: event.createArgument, createdEventBlob: '', interfaceViews: views,
        witnessParties: witnesses, signatories: event.signatories, observers: event.observers, createdAt: tx.recordTime,
      },
    };
  }
  if (event.kind === 'archived') return { ArchivedEvent: { ...common, witnessParties: witnesses, implementedInterfaces: [] } };
  return {
    ExercisedEvent: {
      ...common, interfaceId: event.interfaceId ?? null, choice: event.choice, choiceArgument: event.choiceArgument, actingParties: event.actingParties,
      consuming: event.consuming, witnessParties: witnesses, lastDescendantNodeId: nodeId, exerciseResult: event.exerciseResult, implementedInterfaces: [],
    },
  };
}

function renderTransaction(tx: SandboxTransaction, filters: Filters, shape: Shape): unknown {
  const events = tx.events.map((e, i) => renderEvent(e, tx, i, filters, shape)).filter((e) => e !== null);
  if (events.length === 0) return null;
  return {
    updateId: tx.updateId, commandId: '', workflowId: '', effectiveAt: tx.recordTime, events, offset: tx.offset,
    synchronizerId: SYNCHRONIZER_ID, traceContext: null, recordTime: tx.recordTime,
  };
}

const OFFSET = /^(0|[1-9][0-9]{0,15})$/;
const offsetOf = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : typeof value === 'string' && OFFSET.test(value) ? Number(value) : null);

function updates(ledger: SandboxLedger, input: Record<string, unknown>, limitText: string | null): Reply {
  const begin = offsetOf(input.beginExclusive);
  if (begin === null) return invalid('beginExclusive must be a non-negative offset');
  const end = input.endInclusive === undefined ? ledger.ledgerEnd : offsetOf(input.endInclusive);
  if (end === null) return invalid('endInclusive must be an offset');
  if (end > ledger.ledgerEnd) return cantonError(400, 'OFFSET_AFTER_LEDGER_END', `endInclusive ${end} is after the ledger end ${ledger.ledgerEnd}`, 9, 11);
  const limit = limitText === null ? null : /^[1-9][0-9]{0,8}$/.test(limitText) ? Number(limitText) : NaN;
  if (Number.isNaN(limit)) return invalid('limit must be a positive integer');
  if (input.filter !== undefined) return invalid('the sandbox ledger reads updateFormat, not the deprecated filter');
  const transactions = record(record(input.updateFormat)?.includeTransactions);
  if (!transactions) return invalid('updateFormat.includeTransactions is required');
  const shape = transactions.transactionShape;
  if (shape !== 'TRANSACTION_SHAPE_LEDGER_EFFECTS' && shape !== 'TRANSACTION_SHAPE_ACS_DELTA') return invalid('transactionShape must be TRANSACTION_SHAPE_LEDGER_EFFECTS or TRANSACTION_SHAPE_ACS_DELTA');
  const filters = parseFilters(transactions.eventFormat);
  if (isReply(filters)) return filters;
  const items: unknown[] = [];
  for (const tx of ledger.transactions(begin, end)) {
    const rendered = renderTransaction(tx, filters, shape);
    if (rendered === null) continue;
    if (limit !== null && items.length >= limit) break;
    if (items.length >= MAX_LIST_ELEMENTS) {
      return cantonError(413, 'HTTP_LIST_MAX_ELEMENTS_LIMIT_EXCEEDED', `the answer would exceed http-list-max-elements-limit (${MAX_LIST_ELEMENTS}); ask for fewer with limit`, 8, 8);
    }
    items.push({ update: { Transaction: { value: rendered } } });
  }
  return { status: 200, body: items };
}

function activeContracts(ledger: SandboxLedger, input: Record<string, unknown>): Reply {
  const at = offsetOf(input.activeAtOffset);
  if (at === null || at > ledger.ledgerEnd) return invalid(`activeAtOffset must be an offset up to the ledger end (${ledger.ledgerEnd})`);
  // The sandbox keeps no past snapshots: it answers with the contracts active now, which a wallet
  // that has just read the ledger end wants, even when the pools' operator committed in between.
  const now = ledger.ledgerEnd;
  const filters = parseFilters(input.eventFormat);
  if (isReply(filters)) return filters;
  // The creates are shown as of the snapshot's offset, not of the transactions that made them.
  const snapshot = { updateId: '', commandId: '', offset: now, recordTime: new Date(0).toISOString(), events: [] };
  const items = ledger
    .activeContracts()
    .map((event) => renderEvent(event, snapshot, 0, filters, 'TRANSACTION_SHAPE_ACS_DELTA'))
    .filter((e) => e !== null)
    .map((e) => ({ workflowId: '', contractEntry: { JsActiveContract: { createdEvent: (e as { CreatedEvent: unknown }).CreatedEvent, synchronizerId: SYNCHRONIZER_ID, reassignmentCounter: 0 } } }));
  return { status: 200, body: items };
}

function submit(ledger: SandboxLedger, input: Record<string, unknown>): Reply {
  const commands = record(input.commands);
  if (!commands) return invalid('commands is required');
  const actAs = commands.actAs;
  if (!Array.isArray(actAs) || actAs.length === 0 || !actAs.every(isPartyId)) return invalid('commands.actAs must list the submitting parties');
  const commandId = typeof commands.commandId === 'string' && commands.commandId !== '' ? commands.commandId : null;
  if (!commandId) return invalid('commands.commandId is required');
  const list = commands.commands;
  if (!Array.isArray(list)) return invalid('commands.commands must be a list');
  const exercises = [];
  for (const command of list) {
    const exercise = record(record(command)?.ExerciseCommand);
    if (!exercise || typeof exercise.contractId !== 'string' || typeof exercise.choice !== 'string') return invalid('the sandbox ledger runs ExerciseCommand commands only');
    exercises.push({ contractId: exercise.contractId, choice: exercise.choice, argument: exercise.choiceArgument });
  }
  const tx = ledger.submit(actAs as string[], commandId, exercises, typeof commands.userId === 'string' ? commands.userId : '');
  const filters: Filters = new Map((actAs as string[]).map((p) => [p, [{ interfaceId: '#any:Splice.Api.Token.HoldingV1:Holding', includeView: true }, { interfaceId: '#any:Splice.Api.Token.TransferInstructionV1:TransferInstruction', includeView: true }, { interfaceId: '#any:Splice.Api.Token.TransferInstructionV1:TransferFactory', includeView: false }]]));
  return { status: 200, body: { transaction: { ...(renderTransaction(tx, filters, 'TRANSACTION_SHAPE_LEDGER_EFFECTS') as object), commandId } } };
}

function transferFactory(ledger: SandboxLedger, input: Record<string, unknown>): Reply {
  const admin = record(input.choiceArguments)?.expectedAdmin;
  const factoryId = typeof admin === 'string' ? ledger.factories.get(admin) : undefined;
  if (!factoryId) return cantonError(404, 'NOT_FOUND', 'no transfer factory for choiceArguments.expectedAdmin: name an instrument admin of the sandbox', 11, 5);
  return { status: 200, body: { factoryId, transferKind: 'offer', choiceContext: { choiceContextData: { values: {} }, disclosedContracts: [] } } };
}

/** The registry's context for answering an open instruction: the sandbox's token needs none. */
function choiceContext(ledger: SandboxLedger, instructionCid: string): Reply {
  if (!ledger.isOpenInstruction(instructionCid)) return cantonError(404, 'NOT_FOUND', 'no open transfer instruction has that contract id', 11, 5);
  return { status: 200, body: { choiceContextData: { values: {} }, disclosedContracts: [] } };
}

function tokenOf(value: unknown): Token | Reply {
  if (typeof value !== 'string') return invalid('token must be a token symbol');
  try {
    return resolveToken(value, 'token');
  } catch (err) {
    return invalid((err as Error).message);
  }
}

function fund(ledger: SandboxLedger, input: Record<string, unknown>): Reply {
  if (!isPartyId(input.party)) return invalid('party must be a ledger party id <hint>::1220<64 hex>');
  const token = tokenOf(input.token);
  if (isReply(token)) return token;
  if (typeof input.amount !== 'string' || !/^[0-9]{1,12}(\.[0-9]{1,10})?$/.test(input.amount) || !new Decimal(input.amount).gt(0)) {
    return invalid('amount must be a positive decimal string with at most 10 fractional digits, below 1e12');
  }
  const { contractId, transaction } = ledger.fund(input.party, token.instrument, new Decimal(input.amount));
  return { status: 200, body: { holdingCid: contractId, updateId: transaction.updateId, offset: transaction.offset } };
}

function move(ledger: SandboxLedger, input: Record<string, unknown>): Reply {
  const pair = typeof input.pair === 'string' ? /^([^/\s]+)\/([^/\s]+)$/.exec(input.pair) : null;
  if (!pair) return invalid('pair must be two token symbols, such as CC/USDCx');
  const first = tokenOf(pair[1]);
  if (isReply(first)) return first;
  const second = tokenOf(pair[2]);
  if (isReply(second)) return second;
  const bps = input.bps;
  if (typeof bps !== 'number' || !Number.isInteger(bps) || bps <= -10_000 || bps > 100_000 || bps === 0) return invalid('bps must be a non-zero whole number above -10000 (-300: the price falls by 3 %)');
  const entry = ledger.poolFor(first, second);
  if (!entry) return cantonError(404, 'NOT_FOUND', `the sandbox has no tradecraft pool for ${first.symbol}/${second.symbol}`, 11, 5);
  const { before, after } = ledger.movePool(entry.party, first, bps);
  return { status: 200, body: { pair: `${first.symbol}/${second.symbol}`, priceBefore: before, priceAfter: after } };
}
