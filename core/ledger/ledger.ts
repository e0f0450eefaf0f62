// The ledger port: what the service reads of a Canton participant, whatever serves it (the JSON
// Ledger API v2 adapter against a real participant, or the same adapter against the embedded
// sandbox ledger). Transactions come as the participant shows them to the read-as parties, in
// ledger-effects shape, oldest first.

export interface InstrumentId {
  readonly admin: string;
  readonly id: string;
}

export interface CreatedEvent {
  readonly kind: 'created';
  readonly contractId: string;
  readonly templateId: string;
  /** The views of the filtered interfaces this contract implements. */
  readonly interfaceViews: ReadonlyArray<{ readonly interfaceId: string; readonly view: unknown }>;
}

export interface ExercisedEvent {
  readonly kind: 'exercised';
  readonly contractId: string;
  readonly templateId: string;
  /** The interface the choice was exercised through, when it was. */
  readonly interfaceId: string | null;
  readonly choice: string;
  readonly actingParties: readonly string[];
  readonly consuming: boolean;
  readonly exerciseResult: unknown;
}

export interface ArchivedEvent {
  readonly kind: 'archived';
  readonly contractId: string;
  readonly templateId: string;
}

export type LedgerEvent = CreatedEvent | ExercisedEvent | ArchivedEvent;

export interface LedgerTransaction {
  /** The synchronizer's id of the update: the same on every participant. */
  readonly updateId: string;
  /** This participant's position of the update; another participant numbers it differently. */
  readonly offset: number;
  /** ISO 8601, as the synchronizer sequenced it. */
  readonly recordTime: string;
  readonly events: readonly LedgerEvent[];
}

export interface OffsetRange {
  readonly beginExclusive: number;
  readonly endInclusive: number;
}

export interface Ledger {
  /** The participant's current ledger end. */
  ledgerEnd(signal: AbortSignal): Promise<number>;
  /** The offset up to which the participant has pruned its history (0: none): nothing before it can be read. */
  prunedUpTo(signal: AbortSignal): Promise<number>;
  /**
   * The transactions in the range visible to the read-as parties, oldest first, read page by page
   * (`pageSize` per request, the adapter's own by default).
   */
  transactions(range: OffsetRange, signal: AbortSignal, pageSize?: number): AsyncIterable<LedgerTransaction>;
}

/**
 * Any way reading the ledger failed. The message names what failed and what to check; it never
 * holds a party, a token or the participant's error text (which may quote a party).
 */
export class LedgerFailure extends Error {
  override readonly name = 'LedgerFailure';
  constructor(
    readonly reason: 'unreachable' | 'timeout' | 'unauthorized' | 'rejected' | 'unreadable',
    message: string,
  ) {
    super(message);
  }
}
