// The user's own view of the ledger, read through the wallet (`ledgerApi`), which adds its own
// auth: the party's holdings and open offers (active contracts), and the transactions it saw.
import { toUnits } from './decimal.js';
import { ledgerApi, type CantonProvider } from './provider.js';
import { HOLDING, namesEntity, TRANSFER_INSTRUCTION } from './generated/token-standard.js';

export interface HoldingView {
  readonly owner: string;
  readonly instrumentId: { readonly admin: string; readonly id: string };
  readonly amount: string;
  readonly lock: unknown;
}

export interface TransferView {
  readonly sender: string;
  readonly receiver: string;
  readonly amount: string;
  readonly instrumentId: { readonly admin: string; readonly id: string };
  readonly executeBefore: string;
  readonly meta?: { readonly values?: Readonly<Record<string, string>> };
}

export interface OwnHolding {
  readonly contractId: string;
  readonly instrument: string;
  readonly admin: string;
  readonly units: bigint;
  readonly locked: boolean;
}

export type LedgerEvent =
  | { readonly kind: 'created'; readonly contractId: string; readonly holding: HoldingView | null; readonly transfer: TransferView | null }
  | { readonly kind: 'exercised'; readonly contractId: string; readonly choice: string; readonly actingParties: readonly string[] };

export interface LedgerTransaction {
  readonly updateId: string;
  readonly offset: number;
  readonly recordTime: string;
  readonly events: readonly LedgerEvent[];
}

interface JsCreated {
  readonly contractId: string;
  readonly interfaceViews?: ReadonlyArray<{ readonly interfaceId: string; readonly viewValue: unknown }>;
}
interface JsExercised {
  readonly contractId: string;
  readonly choice: string;
  readonly actingParties?: readonly string[];
}

const filterFor = (party: string) => ({
  filtersByParty: {
    [party]: {
      cumulative: [HOLDING, TRANSFER_INSTRUCTION].map((i) => ({ identifierFilter: { InterfaceFilter: { value: { interfaceId: i.filterId, includeInterfaceView: true, includeCreatedEventBlob: false } } } })),
    },
  },
  verbose: false,
});

function viewOf<T>(created: JsCreated, entity: string): T | null {
  return (created.interfaceViews?.find((v) => namesEntity(v.interfaceId, entity))?.viewValue as T | undefined) ?? null;
}

function readCreated(created: JsCreated): LedgerEvent {
  const instruction = viewOf<{ transfer: TransferView }>(created, TRANSFER_INSTRUCTION.entity);
  return { kind: 'created', contractId: created.contractId, holding: viewOf<HoldingView>(created, HOLDING.entity), transfer: instruction?.transfer ?? null };
}

export async function ledgerEnd(provider: CantonProvider): Promise<number> {
  const { offset } = await ledgerApi<{ offset: number }>(provider, 'get', '/v2/state/ledger-end');
  return offset;
}

/** The party's active holdings and offers, as created events. */
async function active(provider: CantonProvider, party: string): Promise<LedgerEvent[]> {
  const activeAtOffset = await ledgerEnd(provider);
  const entries = await ledgerApi<Array<{ contractEntry?: { JsActiveContract?: { createdEvent: JsCreated } } }>>(provider, 'post', '/v2/state/active-contracts', {
    activeAtOffset,
    eventFormat: filterFor(party),
  });
  return entries.flatMap((entry) => {
    const created = entry.contractEntry?.JsActiveContract?.createdEvent;
    return created ? [readCreated(created)] : [];
  });
}

export async function holdingsOf(provider: CantonProvider, party: string): Promise<OwnHolding[]> {
  return (await active(provider, party)).flatMap((event) =>
    event.kind === 'created' && event.holding && event.holding.owner === party
      ? [{ contractId: event.contractId, instrument: event.holding.instrumentId.id, admin: event.holding.instrumentId.admin, units: toUnits(event.holding.amount), locked: event.holding.lock !== null }]
      : [],
  );
}

/** The party's offers that no receiver has answered yet. */
export async function openOffersOf(provider: CantonProvider, party: string): Promise<Array<{ contractId: string; transfer: TransferView }>> {
  return (await active(provider, party)).flatMap((event) => (event.kind === 'created' && event.transfer?.sender === party ? [{ contractId: event.contractId, transfer: event.transfer }] : []));
}

const PAGE = 200;

/** The transactions the party saw after `beginExclusive`, up to the ledger end, oldest first. */
export async function transactionsOf(provider: CantonProvider, party: string, beginExclusive: number): Promise<LedgerTransaction[]> {
  const end = await ledgerEnd(provider);
  const found: LedgerTransaction[] = [];
  let begin = beginExclusive;
  while (begin < end) {
    const page = await ledgerApi<Array<{ update?: { Transaction?: { value: { updateId: string; offset: number; recordTime: string; events: unknown[] } } } }>>(
      provider,
      'post',
      '/v2/updates',
      { beginExclusive: begin, endInclusive: end, updateFormat: { includeTransactions: { eventFormat: filterFor(party), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } } },
      { limit: String(PAGE) },
    );
    const transactions = page.flatMap((item) => (item.update?.Transaction ? [item.update.Transaction.value] : []));
    if (transactions.length === 0) break;
    for (const tx of transactions) {
      const events = tx.events.flatMap((raw): LedgerEvent[] => {
        const e = raw as { CreatedEvent?: JsCreated; ExercisedEvent?: JsExercised };
        if (e.CreatedEvent) return [readCreated(e.CreatedEvent)];
        if (e.ExercisedEvent) return [{ kind: 'exercised', contractId: e.ExercisedEvent.contractId, choice: e.ExercisedEvent.choice, actingParties: e.ExercisedEvent.actingParties ?? [] }];
        return [];
      });
      found.push({ updateId: tx.updateId, offset: Number(tx.offset), recordTime: tx.recordTime, events });
    }
    begin = Math.max(begin + 1, Number(transactions[transactions.length - 1]!.offset));
  }
  return found;
}
