// What a reader asked to see, and the events it is shown, as a Canton 3.4 participant's JSON Ledger
// API decides them: an EventFormat (or the deprecated TransactionFilter with `verbose`) names, per
// party or for any party, Wildcard, Template and Interface filters; an event is shown to the
// requested parties that witnessed it (stakeholders only, for the ACS and the ACS-delta shape) and
// whose filters match it, with its create arguments where a Wildcard or Template filter matched,
// its interface views and implemented interfaces where an Interface filter matched, and its
// created-event blob where a matching filter asked for it.
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { PACKAGES } from './packages.js';
import type { SandboxCreatedEvent, SandboxEvent, SandboxTransaction } from './sandbox-ledger.js';

type Api = v3_4.components['schemas'];

export type Shape = 'TRANSACTION_SHAPE_LEDGER_EFFECTS' | 'TRANSACTION_SHAPE_ACS_DELTA';

interface PartyFilters {
  readonly wildcard: { readonly blob: boolean } | null;
  readonly templates: ReadonlyArray<{ readonly id: Identifier; readonly blob: boolean }>;
  readonly interfaces: ReadonlyArray<{ readonly id: Identifier; readonly view: boolean; readonly blob: boolean }>;
}

export interface EventFilter {
  readonly byParty: ReadonlyMap<string, PartyFilters>;
  readonly anyParty: PartyFilters | null;
}

/** A template or interface id as a filter names it: by package id or by `#package-name`. */
interface Identifier {
  readonly packageRef: string;
  readonly entity: string;
}

/** A request the participant refuses, with Canton's error id and the HTTP status it answers. */
export class FilterRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (message: string) => new FilterRefused(400, 'INVALID_ARGUMENT', message);

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

const KNOWN_PACKAGES = Object.values(PACKAGES);

/** An identifier the participant's packages define; refused as Canton refuses an unknown one. */
function identifier(text: unknown, what: string, known: ReadonlySet<string>, packages: KnownIds['packages']): Identifier {
  if (typeof text !== 'string') throw invalid(`${what} must be a template or interface id`);
  const match = /^(#?[^:]+):([^:]+:[^:]+)$/.exec(text);
  if (!match) throw invalid(`${what} must be <package-id>:<Module>:<Entity> or #<package-name>:<Module>:<Entity>, not ${text.slice(0, 120)}`);
  const [, packageRef, entity] = match as unknown as [string, string, string];
  const pkg = packages.find((p) => (packageRef.startsWith('#') ? `#${p.name}` === packageRef : p.id === packageRef));
  if (!pkg) {
    throw packageRef.startsWith('#')
      ? new FilterRefused(404, 'PACKAGE_NAMES_NOT_FOUND', `The following package names do not match upgradable packages uploaded on this participant: [${packageRef.slice(1)}].`)
      : new FilterRefused(404, 'PACKAGE_NOT_FOUND', `Package not found: ${packageRef}`);
  }
  if (!known.has(`${pkg.id}:${entity}`)) throw new FilterRefused(404, 'TEMPLATES_OR_INTERFACES_NOT_FOUND', `The following templates or interfaces do not exist: ${text}.`);
  return { packageRef, entity };
}

const matches = (ref: Identifier, id: string, packageName: string) => {
  const at = id.indexOf(':');
  return id.slice(at + 1) === ref.entity && (ref.packageRef.startsWith('#') ? ref.packageRef === `#${packageName}` : ref.packageRef === id.slice(0, at));
};

/** The package name an interface id's package has. */
const packageNameOf = (id: string) => KNOWN_PACKAGES.find((p) => id.startsWith(`${p.id}:`))?.name ?? '';

function partyFilters(value: unknown, what: string, known: KnownIds): PartyFilters {
  const filters = record(value);
  if (!filters) throw invalid(`${what} must be an object with a cumulative list`);
  const cumulative = filters.cumulative ?? [];
  if (!Array.isArray(cumulative)) throw invalid(`${what}.cumulative must be a list`);
  // No filter at all means every template, as a wildcard.
  let wildcard: { blob: boolean } | null = cumulative.length === 0 ? { blob: false } : null;
  const byTemplate: Array<{ id: Identifier; blob: boolean }> = [];
  const byInterface: Array<{ id: Identifier; view: boolean; blob: boolean }> = [];
  cumulative.forEach((entry, i) => {
    const filter = record(record(entry)?.identifierFilter);
    if (!filter) throw invalid(`${what}.cumulative[${i}].identifierFilter is required`);
    const [kind, ...more] = Object.keys(filter);
    if (kind === undefined || more.length > 0) throw invalid(`${what}.cumulative[${i}].identifierFilter must be one of WildcardFilter, TemplateFilter, InterfaceFilter, Empty`);
    const inner = record(record(filter[kind])?.value) ?? {};
    if (kind === 'Empty') wildcard ??= { blob: false };
    else if (kind === 'WildcardFilter') wildcard = { blob: (wildcard?.blob ?? false) || inner.includeCreatedEventBlob === true };
    else if (kind === 'TemplateFilter') byTemplate.push({ id: identifier(inner.templateId, `${what}.cumulative[${i}] templateId`, known.templates, known.packages), blob: inner.includeCreatedEventBlob === true });
    else if (kind === 'InterfaceFilter') {
      byInterface.push({ id: identifier(inner.interfaceId, `${what}.cumulative[${i}] interfaceId`, known.interfaces, known.packages), view: inner.includeInterfaceView === true, blob: inner.includeCreatedEventBlob === true });
    } else throw invalid(`${what}.cumulative[${i}].identifierFilter must be one of WildcardFilter, TemplateFilter, InterfaceFilter, Empty, not ${kind.slice(0, 60)}`);
  });
  return { wildcard, templates: byTemplate, interfaces: byInterface };
}

/** The packages a participant has, and the ids they define, as `<package-id>:<Module>:<Entity>`. */
export interface KnownIds {
  readonly packages: ReadonlyArray<{ readonly id: string; readonly name: string; readonly version: string }>;
  readonly templates: ReadonlySet<string>;
  readonly interfaces: ReadonlySet<string>;
}

/**
 * An EventFormat (`{filtersByParty, filtersForAnyParty, verbose}`) or a deprecated
 * TransactionFilter (`{filtersByParty, filtersForAnyParty}`), read the same way.
 */
export function readEventFilter(value: unknown, what: string, known: KnownIds): EventFilter {
  const format = record(value);
  if (!format) throw invalid(`${what} is required`);
  const byPartyInput = format.filtersByParty === undefined ? {} : record(format.filtersByParty);
  if (!byPartyInput) throw invalid(`${what}.filtersByParty must map parties to filters`);
  const byParty = new Map(Object.entries(byPartyInput).map(([party, filters]) => [party, partyFilters(filters, `${what}.filtersByParty[${party.slice(0, 40)}]`, known)]));
  const anyParty = format.filtersForAnyParty === undefined ? null : partyFilters(format.filtersForAnyParty, `${what}.filtersForAnyParty`, known);
  if (byParty.size === 0 && anyParty === null) throw invalid(`${what} must name at least one party in filtersByParty, or filtersForAnyParty`);
  return { byParty, anyParty };
}

interface Shown {
  readonly witnesses: string[];
  createArgument: boolean;
  blob: boolean;
  readonly views: Set<string>;
  readonly implemented: Set<string>;
}

/** Who of the requested parties sees `event`, and what of it; null when no one does. */
function shownTo(event: SandboxEvent, seenBy: readonly string[], filter: EventFilter): Shown | null {
  const shown: Shown = { witnesses: [], createArgument: false, blob: false, views: new Set(), implemented: new Set() };
  for (const party of seenBy) {
    const filters = [filter.byParty.get(party), filter.anyParty].filter((f): f is PartyFilters => f !== undefined && f !== null);
    let matched = false;
    for (const f of filters) {
      if (f.wildcard) {
        matched = true;
        shown.createArgument = true;
        shown.blob ||= f.wildcard.blob;
      }
      for (const t of f.templates) {
        if (!matches(t.id, event.templateId, event.packageName)) continue;
        matched = true;
        shown.createArgument = true;
        shown.blob ||= t.blob;
      }
      for (const i of f.interfaces) {
        const implemented = event.interfaces.find((id) => matches(i.id, id, packageNameOf(id)));
        if (!implemented) continue;
        matched = true;
        shown.blob ||= i.blob;
        if (i.view) shown.views.add(implemented);
        shown.implemented.add(implemented);
      }
    }
    if (matched) shown.witnesses.push(party);
  }
  return shown.witnesses.length === 0 ? null : shown;
}

/** The parties a filter may show `event` to: its witnesses (stakeholders, for contract state). */
function candidates(event: SandboxEvent, filter: EventFilter, stakeholdersOnly: boolean): string[] {
  const parties = stakeholdersOnly ? [...new Set([...event.signatories, ...event.observers])] : event.witnesses;
  return filter.anyParty ? [...parties] : parties.filter((p) => filter.byParty.has(p));
}

/** The opaque bytes a disclosure carries: the sandbox's own encoding of the contract, which it checks when it is handed back. */
export function createdEventBlob(event: SandboxCreatedEvent): string {
  const contract = { contractId: event.contractId, templateId: event.templateId, packageName: event.packageName, createArgument: event.createArgument, signatories: event.signatories, observers: event.observers };
  return Buffer.from(JSON.stringify(contract)).toString('base64');
}

const stakeholders = (event: SandboxEvent) => new Set([...event.signatories, ...event.observers]);
/** Whether a party shown the event tracks the contract's activeness by it (is a stakeholder). */
const forStakeholder = (event: SandboxEvent, shown: Shown) => shown.witnesses.some((p) => stakeholders(event).has(p));
/** A contract created and archived in one transaction (a batching utility used once): it changes no one's active contracts. */
const transient = (event: SandboxEvent, tx: SandboxTransaction) =>
  tx.events.some((e) => e.kind === 'exercised' && e.consuming && e.contractId === event.contractId) && tx.events.some((e) => e.kind === 'created' && e.contractId === event.contractId);

export function renderCreated(event: SandboxCreatedEvent, tx: SandboxTransaction, shown: Shown): Api['CreatedEvent'] {
  const views = Object.entries(event.views)
    .filter(([id]) => shown.views.has(id))
    .map(([interfaceId, viewValue]) => ({ interfaceId, viewStatus: { code: 0, message: '', details: [] }, viewValue }));
  return {
    offset: tx.offset, nodeId: event.nodeId, contractId: event.contractId, templateId: event.templateId, contractKey: null,
    createArgument: shown.createArgument ? (event.createArgument as Api['CreatedEvent']['createArgument']) : null,
    createdEventBlob: shown.blob ? createdEventBlob(event) : '', interfaceViews: views, witnessParties: shown.witnesses,
    signatories: [...event.signatories], observers: [...event.observers], createdAt: tx.recordTime, packageName: event.packageName,
    representativePackageId: event.templateId.slice(0, event.templateId.indexOf(':')), acsDelta: !transient(event, tx) && forStakeholder(event, shown),
  };
}

/**
 * An event as the JSON Ledger API shows it under `filter` and `shape`, or null when it is not shown;
 * `ofContract`: as events-by-contract-id shows a contract's archival, a transient one's too.
 */
export function renderEvent(event: SandboxEvent, tx: SandboxTransaction, filter: EventFilter, shape: Shape, ofContract = false): Api['Event'] | null {
  if (shape === 'TRANSACTION_SHAPE_ACS_DELTA') {
    if (event.kind === 'exercised' && !event.consuming) return null;
    if (!ofContract && transient(event, tx)) return null;
  }
  const shown = shownTo(event, candidates(event, filter, shape === 'TRANSACTION_SHAPE_ACS_DELTA'), filter);
  if (!shown) return null;
  if (event.kind === 'created') return { CreatedEvent: renderCreated(event, tx, shown) };
  if (shape === 'TRANSACTION_SHAPE_ACS_DELTA') {
    return {
      ArchivedEvent: {
        offset: tx.offset, nodeId: event.nodeId, contractId: event.contractId, templateId: event.templateId, witnessParties: shown.witnesses,
        packageName: event.packageName, implementedInterfaces: [...shown.implemented],
      },
    } as Api['Event'];
  }
  return {
    ExercisedEvent: {
      offset: tx.offset, nodeId: event.nodeId, contractId: event.contractId, templateId: event.templateId, ...(event.interfaceId === null ? {} : { interfaceId: event.interfaceId }),
      choice: event.choice, choiceArgument: event.choiceArgument, actingParties: [...event.actingParties], consuming: event.consuming,
      witnessParties: shown.witnesses, lastDescendantNodeId: event.lastDescendantNodeId, exerciseResult: event.exerciseResult, packageName: event.packageName,
      implementedInterfaces: event.consuming ? [...shown.implemented] : [], acsDelta: event.consuming && !transient(event, tx) && forStakeholder(event, shown),
    },
  };
}

/** Whether any requested party submitted the transaction: only they are shown its commandId. */
const submittedBy = (tx: SandboxTransaction, filter: EventFilter) => tx.actAs.some((p) => filter.byParty.has(p));

/** A transaction as /v2/updates shows it (flat, in pre-order), or null when nothing of it is shown. */
export function renderTransaction(tx: SandboxTransaction, filter: EventFilter, shape: Shape, synchronizerId: string): Api['JsTransaction'] | null {
  const events = tx.events.map((e) => renderEvent(e, tx, filter, shape)).filter((e): e is Api['Event'] => e !== null);
  if (events.length === 0) return null;
  return {
    updateId: tx.updateId, commandId: submittedBy(tx, filter) ? tx.commandId : '', workflowId: '', effectiveAt: tx.recordTime, events, offset: tx.offset,
    synchronizerId, recordTime: tx.recordTime,
  } as unknown as Api['JsTransaction'];
}

/** A transaction as the deprecated /v2/updates/trees shows it: its ledger effects by node id. */
export function renderTree(tx: SandboxTransaction, filter: EventFilter, synchronizerId: string): Api['JsTransactionTree'] | null {
  const eventsById: Record<string, unknown> = {};
  for (const event of tx.events) {
    const rendered = renderEvent(event, tx, filter, 'TRANSACTION_SHAPE_LEDGER_EFFECTS') as Record<string, unknown> | null;
    if (!rendered) continue;
    eventsById[String(event.nodeId)] = 'CreatedEvent' in rendered ? { CreatedTreeEvent: { value: rendered.CreatedEvent } } : { ExercisedTreeEvent: { value: rendered.ExercisedEvent } };
  }
  if (Object.keys(eventsById).length === 0) return null;
  return {
    updateId: tx.updateId, commandId: submittedBy(tx, filter) ? tx.commandId : '', workflowId: '', effectiveAt: tx.recordTime, offset: tx.offset,
    eventsById, synchronizerId, recordTime: tx.recordTime,
  } as unknown as Api['JsTransactionTree'];
}

/** A created event as the active contracts show it under `filter`, or null when the filter does not show it. */
export function renderActive(event: SandboxCreatedEvent, createdIn: SandboxTransaction, filter: EventFilter): Api['CreatedEvent'] | null {
  const shown = shownTo(event, candidates(event, filter, true), filter);
  return shown ? renderCreated(event, createdIn, shown) : null;
}
