// The ledger's state and history: its end and pruning, the connected synchronizer, the active
// contracts at an offset, the updates (flat or as trees), a transaction by its id and a
// contract's events, each rendered through an event format (sandbox/ledger/event-format.ts).
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { LedgerRejection } from '../command-arguments.js';
import { readEventFilter, renderActive, renderEvent, renderTransaction, renderTree, type EventFilter, type Shape } from '../event-format.js';
import { MAX_LIST_ELEMENTS, SYNCHRONIZER_ID, type Context } from './context.js';
import { limitOf, offsetOf, record, shapeOf } from './reading.js';
import { cantonError, invalid, notFound, ok, type Reply } from './replies.js';

type Api = v3_4.components['schemas'];

/** A GET of this family, or undefined when the path is none of its. */
export function stateRead(context: Context, path: string): Reply | undefined {
  switch (path) {
    case '/v2/state/connected-synchronizers':
      return ok({ connectedSynchronizers: [{ synchronizerAlias: 'sandbox', synchronizerId: SYNCHRONIZER_ID, permission: 'PARTICIPANT_PERMISSION_SUBMISSION' }] });
    case '/v2/state/ledger-end':
      return ok({ offset: context.ledger.ledgerEnd } satisfies Api['GetLedgerEndResponse']);
    case '/v2/state/latest-pruned-offsets':
      // The sandbox keeps its whole history.
      return ok({ participantPrunedUpToInclusive: 0, allDivulgedContractsPrunedUpToInclusive: 0 } satisfies Api['GetLatestPrunedOffsetsResponse']);
    default:
      return undefined;
  }
}

/** A POST of this family, or undefined when the path is none of its. */
export function stateQuery(context: Context, path: string, input: Record<string, unknown>, url: URL): Reply | undefined {
  switch (path) {
    case '/v2/state/active-contracts':
      return activeContracts(context, input);
    case '/v2/updates':
    case '/v2/updates/flats':
      return updates(context, input, url, 'flat');
    case '/v2/updates/trees':
      return updates(context, input, url, 'tree');
    case '/v2/updates/transaction-by-id':
      return transactionById(context, input);
    case '/v2/events/events-by-contract-id':
      return eventsByContractId(context, input);
    default:
      return undefined;
  }
}

/** The filter and shape of an updates request: its `updateFormat`, or the deprecated `filter` with `verbose`. */
function updatesFormat(context: Context, input: Record<string, unknown>, form: 'flat' | 'tree'): { filter: EventFilter; shape: Shape } | null {
  if (input.updateFormat !== undefined) {
    const transactions = record(record(input.updateFormat)?.includeTransactions);
    // Only reassignments or topology asked for: the sandbox has one synchronizer and no such updates.
    if (!transactions) return null;
    return { filter: readEventFilter(transactions.eventFormat, 'updateFormat.includeTransactions.eventFormat', context.known), shape: form === 'tree' ? 'TRANSACTION_SHAPE_LEDGER_EFFECTS' : shapeOf(transactions.transactionShape) };
  }
  if (input.filter === undefined) throw new LedgerRejection('INVALID_ARGUMENT', 'updateFormat (or the deprecated filter) is required');
  // The deprecated form read flat transactions as the ACS delta, and trees as ledger effects.
  return { filter: readEventFilter(input.filter, 'filter', context.known), shape: form === 'tree' ? 'TRANSACTION_SHAPE_LEDGER_EFFECTS' : 'TRANSACTION_SHAPE_ACS_DELTA' };
}

function updates(context: Context, input: Record<string, unknown>, url: URL, form: 'flat' | 'tree'): Reply {
  const { ledger } = context;
  const begin = offsetOf(input.beginExclusive ?? 0);
  if (begin === null) return invalid('beginExclusive must be a non-negative offset');
  const end = input.endInclusive === undefined || input.endInclusive === null ? ledger.ledgerEnd : offsetOf(input.endInclusive);
  if (end === null) return invalid('endInclusive must be an offset');
  if (end > ledger.ledgerEnd) return cantonError('invalidGivenCurrentSystemStateOther', 'OFFSET_AFTER_LEDGER_END', `End offset (${end}) is after the ledger end (${ledger.ledgerEnd})`);
  if (begin > end) return invalid(`beginExclusive (${begin}) is after endInclusive (${end})`);
  const limit = limitOf(url);
  const format = updatesFormat(context, input, form);
  if (!format) return ok([]);
  const items: unknown[] = [];
  for (const tx of ledger.transactions(begin, end)) {
    const rendered = form === 'tree' ? renderTree(tx, format.filter, SYNCHRONIZER_ID) : renderTransaction(tx, format.filter, format.shape, SYNCHRONIZER_ID);
    if (rendered === null) continue;
    if (limit !== null && items.length >= limit) break;
    if (items.length >= MAX_LIST_ELEMENTS) {
      return cantonError('invalidIndependentOfSystemState', 'HTTP_LIST_MAX_ELEMENTS_LIMIT_EXCEEDED', `the answer would exceed http-list-max-elements-limit (${MAX_LIST_ELEMENTS}); ask for fewer with limit`);
    }
    items.push(form === 'tree' ? { update: { TransactionTree: { value: rendered } } } : { update: { Transaction: { value: rendered } } });
  }
  return ok(items);
}

function transactionById(context: Context, input: Record<string, unknown>): Reply {
  if (typeof input.updateId !== 'string') return invalid('updateId is required');
  const format = record(input.transactionFormat);
  const filter = format ? readEventFilter(format.eventFormat, 'transactionFormat.eventFormat', context.known) : input.requestingParties !== undefined ? readEventFilter({ filtersByParty: Object.fromEntries((input.requestingParties as string[]).map((p) => [p, { cumulative: [] }])) }, 'requestingParties', context.known) : null;
  if (!filter) return invalid('transactionFormat is required');
  const tx = context.ledger.transactionById(input.updateId);
  const rendered = tx ? renderTransaction(tx, filter, format ? shapeOf(format.transactionShape) : 'TRANSACTION_SHAPE_ACS_DELTA', SYNCHRONIZER_ID) : null;
  if (!rendered) return notFound('TRANSACTION_NOT_FOUND', 'Transaction not found, or not visible.');
  return ok({ transaction: rendered });
}

function eventsByContractId(context: Context, input: Record<string, unknown>): Reply {
  if (typeof input.contractId !== 'string') return invalid('contractId is required');
  const filter =
    input.eventFormat !== undefined ? readEventFilter(input.eventFormat, 'eventFormat', context.known)
    : Array.isArray(input.requestingParties) ? readEventFilter({ filtersByParty: Object.fromEntries(input.requestingParties.map((p) => [String(p), { cumulative: [] }])) }, 'requestingParties', context.known)
    : null;
  if (!filter) return invalid('eventFormat is required');
  const life = context.ledger.contract(input.contractId);
  const created = life ? renderActive(life.created, life.createdIn, filter) : null;
  if (!life || !created) return notFound('CONTRACT_EVENTS_NOT_FOUND', 'Contract events not found, or not visible.');
  const archive = life.archivedIn;
  const archived = archive ? (renderEvent(archive.event, archive.transaction, filter, 'TRANSACTION_SHAPE_ACS_DELTA', true) as { ArchivedEvent?: unknown } | null) : null;
  return ok({
    created: { createdEvent: created, synchronizerId: SYNCHRONIZER_ID },
    ...(archived?.ArchivedEvent ? { archived: { archivedEvent: archived.ArchivedEvent, synchronizerId: SYNCHRONIZER_ID } } : {}),
  });
}

function activeContracts(context: Context, input: Record<string, unknown>): Reply {
  const { ledger } = context;
  const at = offsetOf(input.activeAtOffset);
  if (at === null || at > ledger.ledgerEnd) return cantonError('invalidGivenCurrentSystemStateOther', 'OFFSET_AFTER_LEDGER_END', `activeAtOffset must be an offset up to the ledger end (${ledger.ledgerEnd})`);
  const filter = input.eventFormat !== undefined ? readEventFilter(input.eventFormat, 'eventFormat', context.known) : readEventFilter(input.filter, 'filter', context.known);
  const items = ledger
    .activeAt(at)
    .map((life) => renderActive(life.created, life.createdIn, filter))
    .filter((e) => e !== null)
    .map((createdEvent) => ({ workflowId: '', contractEntry: { JsActiveContract: { createdEvent, synchronizerId: SYNCHRONIZER_ID, reassignmentCounter: 0 } } }));
  if (items.length > MAX_LIST_ELEMENTS) {
    return cantonError('invalidIndependentOfSystemState', 'HTTP_LIST_MAX_ELEMENTS_LIMIT_EXCEEDED', `the answer would exceed http-list-max-elements-limit (${MAX_LIST_ELEMENTS})`);
  }
  return ok(items);
}
