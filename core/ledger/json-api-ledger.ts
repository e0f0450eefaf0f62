// The ledger port over a participant's JSON Ledger API v2 (Canton 3.3+):
//
// - GET /v2/state/ledger-end -> {offset}
// - GET /v2/state/latest-pruned-offsets -> {participantPrunedUpToInclusive, ...}
// - POST /v2/updates?limit=<page>&stream_idle_timeout_ms=<LEDGER_TIMEOUT_MS> {beginExclusive, endInclusive, updateFormat: {includeTransactions:
//   {transactionShape: TRANSACTION_SHAPE_LEDGER_EFFECTS, eventFormat: {filtersByParty: {<party>:
//   {cumulative: [{identifierFilter: {InterfaceFilter: {value: {interfaceId, includeInterfaceView,
//   includeCreatedEventBlob}}}}]}}, verbose}}}} -> [{update: {Transaction: {value: {updateId,
//   offset, recordTime, events: [{CreatedEvent | ExercisedEvent | ArchivedEvent: {...}}]}}} |
//   {OffsetCheckpoint: {value: {offset, ...}}} | ...}]
//
// `Authorization: Bearer <LEDGER_TOKEN>` on every request. The HTTP endpoint answers a bounded
// list (a participant refuses one over its `http-list-max-elements-limit` with 413, and may end
// one early when `http-list-wait-time` passes), so a range is read in pages of `pageSize`, each
// starting after the last offset the previous one reached, until a page comes back empty or the
// range's end is reached: a short page is not taken for the end.
// Offsets and amounts are read as the text they are sent as, never through a float.
import { FetchFailed, fetchWithin, originFetch, type HttpFetch } from '../http-client.js';
import { parseJsonKeepingNumbers } from '../json-numbers.js';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { LedgerFailure, type Ledger, type LedgerEvent, type LedgerTransaction, type OffsetRange } from './ledger.js';
import { HOLDING, TRANSFER_FACTORY, TRANSFER_INSTRUCTION } from './token-standard.js';

export interface JsonApiLedgerOptions {
  /** The participant's JSON Ledger API base, e.g. http://127.0.0.1:7575, no trailing slash. */
  readonly baseUrl: string;
  /** A JWT the participant accepts for reading as `readAs`; null for a participant without auth. */
  readonly token: string | null;
  /** The parties whose view is read (the venue's pool parties). */
  readonly readAs: readonly string[];
  /** Per HTTP request. */
  readonly timeoutMs: number;
  /** Transactions asked for per request. */
  readonly pageSize: number;
  /** Replaceable in tests; node:http with kept-alive connections by default. */
  readonly fetch?: HttpFetch;
}

/** Offsets are int64 on the wire; every offset a participant reaches in practice is far below 2^53. */
const OFFSET = /^(0|[1-9][0-9]{0,15})$/;

/** The official JSON Ledger API schemas (Canton 3.4), for what the adapter sends; answers are read as text, checked field by field. */
type JsonLedgerApi = v3_4.components['schemas'];

export class JsonApiLedger implements Ledger {
  private readonly fetch: HttpFetch;
  private readonly updateFormat: JsonLedgerApi['UpdateFormat'];

  constructor(private readonly options: JsonApiLedgerOptions) {
    this.fetch = options.fetch ?? originFetch(options.baseUrl);
    const interfaceFilter = (interfaceId: string): JsonLedgerApi['CumulativeFilter'] => ({
      identifierFilter: { InterfaceFilter: { value: { interfaceId, includeInterfaceView: true, includeCreatedEventBlob: false } } },
    });
    // Instructions (the offers and their fates), holdings (the payout) and the factory (a pool's
    // own transfer paying a taker out in a later transaction).
    const filter = { cumulative: [TRANSFER_INSTRUCTION, HOLDING, TRANSFER_FACTORY].map((i) => interfaceFilter(i.filterId)) };
    this.updateFormat = {
      includeTransactions: {
        transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
        eventFormat: { filtersByParty: Object.fromEntries(options.readAs.map((party) => [party, filter])), verbose: false },
      },
    };
  }

  async ledgerEnd(signal: AbortSignal): Promise<number> {
    const answer = record(await this.request('GET', '/v2/state/ledger-end', undefined, signal), 'the ledger end');
    return offset(answer.offset, 'the ledger end');
  }

  async prunedUpTo(signal: AbortSignal): Promise<number> {
    const answer = record(await this.request('GET', '/v2/state/latest-pruned-offsets', undefined, signal), 'the pruned offsets');
    // Absent when nothing was pruned.
    return answer.participantPrunedUpToInclusive === undefined ? 0 : offset(answer.participantPrunedUpToInclusive, 'the pruned offset');
  }

  async *transactions(range: OffsetRange, signal: AbortSignal, pageSize = this.options.pageSize): AsyncIterable<LedgerTransaction> {
    let cursor = range.beginExclusive;
    let limit = pageSize;
    while (cursor < range.endInclusive) {
      const body: JsonLedgerApi['GetUpdatesRequest'] = { beginExclusive: cursor, endInclusive: range.endInclusive, updateFormat: this.updateFormat };
      // The participant ends a list once no item has come for stream_idle_timeout_ms: as long as a
      // request may take, so an empty page means there is nothing more, not a slow read.
      let items: unknown;
      try {
        items = await this.request('POST', `/v2/updates?limit=${limit}&stream_idle_timeout_ms=${this.options.timeoutMs}`, body, signal);
      } catch (err) {
        // Updates as large as a page of them is over what is read at once: the same page, halved.
        if (!(err instanceof AnswerTooLarge) || limit === 1) throw err;
        limit = Math.ceil(limit / 2);
        continue;
      }
      if (!Array.isArray(items)) throw unreadable('the updates answer is not a list');
      if (items.length === 0) return;
      let reached = cursor;
      for (const item of items) {
        const update = parseUpdate(item);
        if (update.offset <= reached) throw unreadable(`the updates answer went back from offset ${reached} to ${update.offset}`);
        if (update.offset > range.endInclusive) throw unreadable(`the updates answer went past the range's end ${range.endInclusive}`);
        reached = update.offset;
        if (update.transaction) yield update.transaction;
      }
      cursor = reached;
    }
  }

  private async request(method: string, path: string, body: unknown, deadline: AbortSignal): Promise<unknown> {
    const what = `${method} ${path.split('?')[0]}`;
    const headers = {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(this.options.token === null ? {} : { authorization: `Bearer ${this.options.token}` }),
    };
    let status: number;
    let text: string;
    try {
      const init = { method, headers, body: body === undefined ? undefined : JSON.stringify(body) };
      ({ status, text } = await fetchWithin(this.fetch, `${this.options.baseUrl}${path}`, init, this.options.timeoutMs, deadline));
    } catch (err) {
      if (!(err instanceof FetchFailed)) throw err;
      if (err.code === RESPONSE_TOO_LARGE) throw new AnswerTooLarge(`the ledger's answer to ${what} is over the 1 MiB this service reads at once`);
      if (err.byDeadline) throw new LedgerFailure('timeout', `the read was stopped at its caller's deadline during ${what}`);
      if (err.timedOut) throw new LedgerFailure('timeout', `the ledger did not answer ${what} within ${this.options.timeoutMs} ms`);
      throw new LedgerFailure('unreachable', `the ledger could not be reached for ${what} (${err.code}): check LEDGER_URL`);
    }
    if (status === 401 || status === 403) {
      throw new LedgerFailure('unauthorized', `the ledger refused ${what} with HTTP ${status}: check that LEDGER_TOKEN is valid and may read as LEDGER_READ_AS`);
    }
    if (status === 413) throw new LedgerFailure('rejected', `the ledger refused ${what} as too large (HTTP 413): lower LEDGER_PAGE_SIZE below the participant's http-list-max-elements-limit`);
    let parsed: unknown;
    try {
      parsed = parseJsonKeepingNumbers(text);
    } catch {
      // A request the participant could not decode is answered 400 in text/plain, and a proxy in
      // front may answer in HTML: the status says what happened.
      if (status < 200 || status > 299) throw new LedgerFailure('rejected', `the ledger answered ${what} with HTTP ${status}`);
      throw unreadable(`${what} answered HTTP ${status} with a body that is not JSON`);
    }
    if (status < 200 || status > 299) {
      // A JsCantonError's code names the failure; its cause may quote a party, so it is not kept.
      const code = typeof parsed === 'object' && parsed !== null ? (parsed as { code?: unknown }).code : undefined;
      throw new LedgerFailure('rejected', `the ledger answered ${what} with HTTP ${status}${typeof code === 'string' ? ` (${code.slice(0, 80)})` : ''}`);
    }
    return parsed;
  }
}

const unreadable = (message: string) => new LedgerFailure('unreadable', `the ledger's answer could not be read: ${message}`);

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unreadable(`${what} is not an object`);
  return value as Record<string, unknown>;
}

const UPDATE_ID = /^[0-9a-f]{1,256}$/;

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw unreadable(`${what} is not a string`);
  return value;
}

function offset(value: unknown, what: string): number {
  // Numbers arrive as their source text (parseJsonKeepingNumbers).
  if (typeof value !== 'string' || !OFFSET.test(value)) throw unreadable(`${what} is not an offset`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw unreadable(`${what} is out of range`);
  return n;
}

const strings = (value: unknown, what: string): string[] => {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw unreadable(`${what} is not a list of strings`);
  return value as string[];
};

/** The only key of a `{Tag: {...}}` wrapper, and what it wraps. */
function tagged(value: unknown, what: string): [string, Record<string, unknown>] {
  const object = record(value, what);
  const keys = Object.keys(object);
  if (keys.length !== 1) throw unreadable(`${what} does not have exactly one kind`);
  return [keys[0]!, record(object[keys[0]!], `${what}'s ${keys[0]!}`)];
}

function parseUpdate(item: unknown): { offset: number; transaction: LedgerTransaction | null } {
  const [kind, wrapper] = tagged(record(item, 'an update item').update, 'an update');
  const value = record(wrapper.value, `a ${kind}'s value`);
  const at = offset(value.offset, `a ${kind}'s offset`);
  if (kind !== 'Transaction') return { offset: at, transaction: null };
  const updateId = text(value.updateId, 'a transaction\'s updateId');
  // The contract's Outcome.depositUpdateId: a synchronizer's update id is hex (`1220` and a hash).
  if (!UPDATE_ID.test(updateId)) throw unreadable('a transaction\'s updateId is not a hex update id');
  const recordTime = text(value.recordTime, 'a transaction\'s recordTime');
  if (Number.isNaN(Date.parse(recordTime))) throw unreadable('a transaction\'s recordTime is not a date-time');
  const events = value.events;
  if (!Array.isArray(events)) throw unreadable('a transaction\'s events is not a list');
  return { offset: at, transaction: { updateId, offset: at, recordTime, events: events.map(parseEvent) } };
}

function parseEvent(item: unknown): LedgerEvent {
  const [kind, event] = tagged(item, 'an event');
  const contractId = text(event.contractId, `a ${kind}'s contractId`);
  const templateId = text(event.templateId, `a ${kind}'s templateId`);
  switch (kind) {
    case 'CreatedEvent': {
      const views = event.interfaceViews ?? [];
      if (!Array.isArray(views)) throw unreadable('a CreatedEvent\'s interfaceViews is not a list');
      return {
        kind: 'created',
        contractId,
        templateId,
        interfaceViews: views.map((v) => {
          const view = record(v, 'an interface view');
          return { interfaceId: text(view.interfaceId, 'an interface view\'s interfaceId'), view: view.viewValue ?? null };
        }),
      };
    }
    case 'ExercisedEvent':
      return {
        kind: 'exercised',
        contractId,
        templateId,
        interfaceId: typeof event.interfaceId === 'string' ? event.interfaceId : null,
        choice: text(event.choice, 'an ExercisedEvent\'s choice'),
        actingParties: strings(event.actingParties, 'an ExercisedEvent\'s actingParties'),
        consuming: event.consuming === true,
        exerciseResult: event.exerciseResult ?? null,
      };
    case 'ArchivedEvent':
      return { kind: 'archived', contractId, templateId };
    default:
      throw unreadable(`unknown event kind ${kind.slice(0, 40)}`);
  }
}

/** The HTTP client's code for an answer over what it reads at once (core/http-client.ts). */
const RESPONSE_TOO_LARGE = 'ERR_RESPONSE_TOO_LARGE';

/** An answer over what is read at once: a page of updates is asked again, smaller. */
class AnswerTooLarge extends LedgerFailure {
  constructor(message: string) {
    super('unreadable', message);
  }
}
