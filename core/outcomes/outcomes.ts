// A swap's outcome, derived from the ledger as the venue's pool parties see it: the taker's
// deposit offer (a CIP-0056 TransferInstruction from the taker to a pool party) created in the
// window [since, deadline], and what became of it. The taker's party is a parameter of one call:
// it is never logged, stored, or made part of anything that outlives the request.
import { Decimal } from '../decimal.js';
import { badRequest, DomainError } from '../errors.js';
import { LedgerFailure, type Ledger, type LedgerTransaction } from '../ledger/ledger.js';
import type { ComponentHealth } from '../health/component-health.js';
import type { Metrics } from '../metrics.js';
import { CHOICES, HOLDING, namesEntity, REASON_KEY, RESULTS, TRANSFER_INSTRUCTION } from '../ledger/token-standard.js';
import { resolveToken, type Token } from '../tokens.js';
import type { GetOutcomeQuery, Outcome, OutcomeStatus } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';

/** The longest window a query may span: a plan lives 90 seconds, and a wider window only costs reading more. */
export const MAX_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * How far a transaction's record time may trail its ledger time (Canton's
 * ledgerTimeRecordTimeTolerance, 60 s by default): an offer made, or accepted, just before its
 * deadline may be recorded up to this much after it. Only once it has passed is an unanswered
 * offer `expired`, or a window without one `not_found` for good.
 */
export const RECORD_TIME_TOLERANCE_MS = 60_000;

export interface OutcomeQuery {
  readonly party: string;
  readonly since: Date;
  readonly deadline: Date;
  readonly escrow: string | null;
  readonly amount: Decimal | null;
  readonly minReceive: Decimal | null;
  readonly want: Token | null;
}

/** The schema-valid query as the derivation reads it; 400 for what the schema cannot say. */
export function parseOutcomeQuery(query: GetOutcomeQuery): OutcomeQuery {
  const since = new Date(query.since);
  const deadline = new Date(query.deadline);
  if (since.getTime() > deadline.getTime()) throw badRequest('since must not be after deadline');
  if (deadline.getTime() - since.getTime() > MAX_WINDOW_MS) throw badRequest('the window from since to deadline must not be longer than 24 hours');
  const positive = (value: string | undefined, name: string): Decimal | null => {
    if (value === undefined) return null;
    const amount = new Decimal(value);
    if (!amount.gt(0)) throw badRequest(`query parameter '${name}' must be a positive decimal string`);
    return amount;
  };
  return {
    party: query.party,
    since,
    deadline,
    escrow: query.escrow ?? null,
    amount: positive(query.amount, 'amount'),
    minReceive: positive(query.minReceive, 'minReceive'),
    want: query.want === undefined ? null : resolveToken(query.want, 'want'),
  };
}

/** A pool party and the two tokens of its pair. */
export type PoolTokens = ReadonlyMap<string, readonly [Token, Token]>;

/** `{'CC/USDCx': party}` (the configuration's form) as pool party -> its pair's tokens. */
export function poolTokens(poolParties: Readonly<Record<string, string>>): PoolTokens {
  return new Map(
    Object.entries(poolParties).map(([pair, party]) => {
      const [a, b] = pair.split('/') as [string, string];
      return [party, [resolveToken(a, 'pair'), resolveToken(b, 'pair')]] as const;
    }),
  );
}

interface Fate {
  readonly choice: 'accept' | 'reject' | 'withdraw';
  readonly updateId: string;
  readonly recordTimeMs: number;
}

interface Offer {
  readonly receiver: string;
  readonly amount: Decimal;
  /** The memo's floor, when the memo is a decimal. */
  readonly floor: Decimal | null;
  /** The instrument the pool pays out, when the deposit is one of its pair's. */
  readonly want: Token | null;
  readonly executeBeforeMs: number;
  /** The update that created the offer, and when it was recorded. */
  readonly createdIn: string;
  readonly createdAtMs: number;
  /** The memo as the offer carries it. */
  readonly memo: string | null;
  fate: Fate | null;
  paidOut: boolean;
  /** What the pool paid the taker for it, once paid. */
  received: Decimal | null;
}

/** What a tracker matches a deposit offer by: whose it is (a predicate, so a follower may hold only a keyed hash of the party) and the window it was made in. */
export interface TrackedDeposit {
  isTaker(party: string): boolean;
  readonly since: Date;
  readonly deadline: Date;
  readonly escrow: string | null;
  readonly amount: Decimal | null;
  readonly minReceive: Decimal | null;
  readonly want: Token | null;
  /** The memo the offer must carry, when a plan named it. */
  readonly memo?: string | null;
}

/** One matching deposit offer as read so far. */
export interface DepositReading {
  readonly status: Outcome['status'];
  readonly createdIn: string;
  readonly createdAtMs: number;
  readonly settledIn: string | null;
  readonly settledAtMs: number | null;
  readonly received: Decimal | null;
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

const DAML_DECIMAL = /^-?[0-9]{1,28}(\.[0-9]{1,10})?$/;
const decimal = (value: unknown): Decimal | null => (typeof value === 'string' && DAML_DECIMAL.test(value) ? new Decimal(value) : null);

function viewOf(event: { interfaceViews: ReadonlyArray<{ interfaceId: string; view: unknown }> }, entity: string): Record<string, unknown> | null {
  const found = event.interfaceViews.find((v) => namesEntity(v.interfaceId, entity));
  return found ? record(found.view) : null;
}

const resultTag = (exerciseResult: unknown): string | null => {
  const output = record(record(exerciseResult)?.output);
  return typeof output?.tag === 'string' ? output.tag : null;
};

/**
 * Folds the transactions of a range, oldest first, into the taker's deposit offers in the window
 * and their fates. Holds only what one query needs, for as long as the query runs.
 */
export class OutcomeTracker {
  private readonly offers = new Map<string, Offer>();
  /** Contract ids by which an offer continues (a TransferInstructionResult_Pending's new instruction). */
  private readonly aliases = new Map<string, Offer>();
  /** A pool's two-step transfers to the taker, by contract id: the pool that offered each. */
  private readonly payoutOffers = new Map<string, string>();
  private readonly sinceMs: number;
  private readonly deadlineMs: number;
  /** The latest record time read so far: record times of different synchronizers interleave. */
  private lastRecordTimeMs = -Infinity;

  private readonly query: TrackedDeposit;

  constructor(
    query: OutcomeQuery | TrackedDeposit,
    private readonly pools: PoolTokens,
  ) {
    this.query = 'isTaker' in query ? query : { ...query, isTaker: (party) => party === query.party };
    this.sinceMs = query.since.getTime();
    this.deadlineMs = query.deadline.getTime();
  }

  observe(tx: LedgerTransaction): void {
    const timeMs = Date.parse(tx.recordTime);
    this.lastRecordTimeMs = Math.max(this.lastRecordTimeMs, timeMs);
    const acceptedHere = new Set<Offer>();
    const received: Array<{ contractId: string; instrument: string; amount: Decimal }> = [];
    /** Holdings handed back to a sender (change, refunds): never a payout. */
    const returned = new Set<string>();
    const actors = new Set<string>();
    for (const event of tx.events) {
      if (event.kind === 'created') {
        const instruction = viewOf(event, TRANSFER_INSTRUCTION.entity);
        if (instruction) this.offerCreated(event.contractId, instruction, timeMs, tx.updateId);
        const holding = viewOf(event, HOLDING.entity);
        if (holding && typeof holding.owner === 'string' && this.query.isTaker(holding.owner)) {
          const instrument = record(holding.instrumentId)?.id;
          const amount = decimal(holding.amount);
          if (typeof instrument === 'string' && amount) received.push({ contractId: event.contractId, instrument, amount });
        }
      } else if (event.kind === 'exercised') {
        event.actingParties.forEach((p) => actors.add(p));
        // The taker accepting a pool's two-step transfer: what it receives comes from that pool.
        const payer = this.payoutOffers.get(event.contractId);
        if (payer !== undefined && event.choice === CHOICES.accept && resultTag(event.exerciseResult) === RESULTS.completed) actors.add(payer);
        const change = record(event.exerciseResult)?.senderChangeCids;
        if (Array.isArray(change)) change.forEach((cid) => typeof cid === 'string' && returned.add(cid));
        const offer = this.offers.get(event.contractId) ?? this.aliases.get(event.contractId);
        if (!offer || offer.fate) continue;
        const tag = resultTag(event.exerciseResult);
        if (tag === RESULTS.pending) {
          // The registry's own workflow moved the instruction to a new contract: the offer goes on there.
          const next = record(record(record(event.exerciseResult)?.output)?.value)?.transferInstructionCid;
          if (typeof next === 'string') this.aliases.set(next, offer);
          continue;
        }
        const choice = event.choice === CHOICES.accept ? 'accept' : event.choice === CHOICES.reject ? 'reject' : event.choice === CHOICES.withdraw ? 'withdraw' : null;
        if (!choice) continue;
        // An accept whose result is not Completed moved nothing to the venue: the funds went back.
        const settled: Fate['choice'] = choice === 'accept' && tag !== RESULTS.completed ? 'reject' : choice;
        offer.fate = { choice: settled, updateId: tx.updateId, recordTimeMs: timeMs };
        if (settled === 'accept') acceptedHere.add(offer);
      }
    }
    const payouts = received.filter((h) => !returned.has(h.contractId));
    if (payouts.length > 0) this.payoutsSeen(payouts, acceptedHere, actors);
  }

  private offerCreated(contractId: string, view: Record<string, unknown>, timeMs: number, updateId: string): void {
    const original = view.originalInstructionCid;
    if (typeof original === 'string') {
      const offer = this.offers.get(original) ?? this.aliases.get(original);
      if (offer) this.aliases.set(contractId, offer);
      return;
    }
    const transfer = record(view.transfer);
    if (transfer && typeof transfer.receiver === 'string' && this.query.isTaker(transfer.receiver) && typeof transfer.sender === 'string' && this.pools.has(transfer.sender)) {
      this.payoutOffers.set(contractId, transfer.sender);
      return;
    }
    // Made by the deadline, an offer may be recorded up to the tolerance after it.
    if (!transfer || typeof transfer.sender !== 'string' || !this.query.isTaker(transfer.sender) || timeMs < this.sinceMs || timeMs > this.deadlineMs + RECORD_TIME_TOLERANCE_MS) return;
    const receiver = transfer.receiver;
    const pair = typeof receiver === 'string' ? this.pools.get(receiver) : undefined;
    const amount = decimal(transfer.amount);
    const executeBeforeMs = typeof transfer.executeBefore === 'string' ? Date.parse(transfer.executeBefore) : NaN;
    if (!pair || !amount || Number.isNaN(executeBeforeMs)) return;
    const instrument = record(transfer.instrumentId)?.id;
    const giveIndex = pair.findIndex((t) => t.instrument === instrument);
    const memo = record(record(transfer.meta)?.values)?.[REASON_KEY];
    this.offers.set(contractId, {
      receiver: receiver as string,
      amount,
      floor: decimal(memo),
      want: giveIndex < 0 ? null : pair[1 - giveIndex]!,
      executeBeforeMs,
      createdIn: updateId,
      createdAtMs: timeMs,
      memo: typeof memo === 'string' ? memo : null,
      fate: null,
      paidOut: false,
      received: null,
    });
  }

  /**
   * Holdings created for the taker pay out accepted offers of their instrument, when the pool the
   * offer went to acted in that transaction (its accept, or its own transfer to the taker) and the
   * holding is at least the offer's floor: first offers accepted in the same transaction, then the
   * oldest accepted and still unpaid. A venue that pays less than the floor it accepted has not
   * completed the swap, which then reads `pending`.
   */
  private payoutsSeen(payouts: ReadonlyArray<{ instrument: string; amount: Decimal }>, acceptedHere: ReadonlySet<Offer>, actors: ReadonlySet<string>): void {
    const waiting = [...acceptedHere, ...[...this.offers.values()].filter((o) => !acceptedHere.has(o) && o.fate?.choice === 'accept')];
    for (const payout of payouts) {
      const offer = waiting.find(
        (o) => !o.paidOut && actors.has(o.receiver) && o.want?.instrument === payout.instrument && payout.amount.gte(o.floor ?? 0) && payout.amount.gt(0),
      );
      if (offer) {
        offer.paidOut = true;
        offer.received = payout.amount;
      }
    }
  }

  /**
   * Whether nothing read after this point can change the outcome: the window has closed (no new
   * offer can match), and every matching offer is final: answered (an accepted one paid out), or
   * unanswered past its executeBefore and the tolerance. Record times of different synchronizers
   * interleave, so "after this point" is SKEW_MS behind the last one read.
   */
  get settled(): boolean {
    const reached = this.lastRecordTimeMs - SKEW_MS;
    if (reached <= this.deadlineMs + RECORD_TIME_TOLERANCE_MS) return false;
    return this.matching().every((o) => (o.fate ? o.fate.choice !== 'accept' || o.paidOut : reached > o.executeBeforeMs + RECORD_TIME_TOLERANCE_MS));
  }

  /** The outcome as of `nowMs`, from what was observed. */
  outcome(nowMs: number): Outcome {
    const matching = this.matching();
    if (matching.length === 0) return { status: 'not_found', depositUpdateId: null };
    if (matching.length > 1) return { status: 'ambiguous', depositUpdateId: null };
    return statusOf(matching[0]!, nowMs);
  }

  /** The one matching offer as read so far; null when none or several match. */
  reading(nowMs: number): DepositReading | null {
    const matching = this.matching();
    if (matching.length !== 1) return null;
    const offer = matching[0]!;
    return {
      status: statusOf(offer, nowMs).status,
      createdIn: offer.createdIn,
      createdAtMs: offer.createdAtMs,
      settledIn: offer.fate?.updateId ?? null,
      settledAtMs: offer.fate?.recordTimeMs ?? null,
      received: offer.paidOut ? offer.received : null,
    };
  }

  /** The offers the query's optional parameters leave. */
  private matching(): Offer[] {
    const { escrow, amount, minReceive, want, memo } = this.query;
    return [...this.offers.values()].filter(
      (o) =>
        (escrow === null || o.receiver === escrow) &&
        (amount === null || o.amount.eq(amount)) &&
        (minReceive === null || (o.floor !== null && o.floor.eq(minReceive))) &&
        (want === null || o.want === want) &&
        (memo === undefined || memo === null || o.memo === memo),
    );
  }
}

function statusOf(offer: Offer, nowMs: number): Outcome {
  const { fate } = offer;
  // executeBefore is exclusive: from that instant on the offer can no longer be accepted, though
  // an accept made just before may still be recorded within the tolerance.
  if (!fate) return { status: nowMs >= offer.executeBeforeMs + RECORD_TIME_TOLERANCE_MS ? 'expired' : 'pending', depositUpdateId: null };
  // Answered at or after its deadline: only a return of the funds can happen then, which settles
  // no swap, so an expired deposit has no update to bind.
  const late = fate.recordTimeMs >= offer.executeBeforeMs;
  const status: OutcomeStatus =
    fate.choice === 'accept' ? (offer.paidOut ? 'completed' : 'pending')
    : late ? 'expired'
    : fate.choice === 'reject' ? 'slippage_failed'
    : 'withdrawn';
  return { status, depositUpdateId: status === 'pending' || status === 'expired' ? null : fate.updateId };
}

/**
 * Remembers, for no party, at which offset the ledger reached a record time, so a query starts
 * reading near its window instead of searching for it. One sample a minute of ledger time, at most
 * MAX_SAMPLES (the oldest are dropped).
 */
export class OffsetTimeIndex {
  private static readonly MAX_SAMPLES = 50_000;
  private static readonly SAMPLE_EVERY_MS = 60_000;
  private readonly samples: Array<{ offset: number; timeMs: number }> = [];

  add(offset: number, timeMs: number): void {
    const last = this.samples.at(-1);
    if (last && (offset <= last.offset || timeMs < last.timeMs + OffsetTimeIndex.SAMPLE_EVERY_MS)) return;
    this.samples.push({ offset, timeMs });
    if (this.samples.length > OffsetTimeIndex.MAX_SAMPLES) this.samples.shift();
  }

  /**
   * Where the first transaction recorded at `timeMs` or later lies, as far as the samples tell:
   * after `after` (every transaction up to it was recorded earlier), and at or before
   * `atOrBefore + 1` (null: no sample says).
   */
  bounds(timeMs: number): { after: number; atOrBefore: number | null } {
    let after = 0;
    for (const sample of this.samples) {
      if (sample.timeMs >= timeMs) return { after, atOrBefore: sample.offset - 1 };
      after = sample.offset;
    }
    return { after, atOrBefore: null };
  }
}

export interface OutcomeServiceOptions {
  readonly ledger: Ledger;
  /** The venue's pool parties and their pairs: the receivers of a deposit offer. */
  readonly pools: PoolTokens;
  /** How long one outcome may spend reading the ledger, every request together. */
  readonly budgetMs: number;
  /** Below this many offsets a range is read rather than searched (the adapter's page size). */
  readonly pageSize: number;
  /** Whether the ledger answers, as the last outcome found: each change is logged once, with its reason. */
  readonly health: ComponentHealth;
  readonly now: () => Date;
  /** Hears each outcome's status. */
  readonly metrics?: Metrics;
  /** Where an intent plan's intent status is recorded (core/plans/intent-plans.ts, wired by core/services.ts); none: outcomes by planId are read from the ledger. */
  readonly intents?: IntentOutcomes;
}

/** Where an intent stands, as the venue port names it (core/venues' IntentState). */
export type IntentOutcomeState = 'awaiting_deposit' | 'in_progress' | 'completed' | 'refunded' | 'expired' | 'cancelled' | 'failed';

/** An intent plan's intent status, as recorded by the instance that follows it. */
export interface RecordedIntentOutcome {
  readonly venueId: string;
  readonly intentId: string;
  /** The venue's own status. */
  readonly venueStatus: string;
  readonly state: IntentOutcomeState;
  /** What the venue paid, in wire form; null before, or when it paid nothing. */
  readonly received: string | null;
}

/** The port to intent plans' recorded intent statuses: by the plan's id, for its taker only. */
export interface IntentOutcomes {
  /** Null when no intent plan `planId` of `party` is recorded (unknown, another taker's, on another venue, or no longer kept). */
  intentOutcome(planId: string, party: string): Promise<RecordedIntentOutcome | null>;
}

/**
 * What each intent state says of the swap, in v2's outcome statuses: refunded reads as
 * slippage_failed (no swap, the deposit back), expired and cancelled as expired (no deposit
 * taken), failed as venue_failed (terminal: the venue's own operators must act).
 */
const INTENT_OUTCOME: Readonly<Record<IntentOutcomeState, V2.Outcome['status']>> = {
  awaiting_deposit: 'pending',
  in_progress: 'pending',
  completed: 'completed',
  refunded: 'slippage_failed',
  expired: 'expired',
  cancelled: 'expired',
  failed: 'venue_failed',
};

/**
 * Record times of different synchronizers interleave in a participant's offsets without strict
 * order: a query starts this much before its window, so none of its transactions is skipped.
 */
export const SKEW_MS = 5 * 60_000;

/** Enough halvings for any offset range a participant reaches (2^53). */
const MAX_PROBES = 53;

export class OutcomeService {
  private readonly index = new OffsetTimeIndex();

  constructor(private readonly options: OutcomeServiceOptions) {}

  async outcome(query: OutcomeQuery): Promise<Outcome> {
    const { ledger, pools, health, now, budgetMs } = this.options;
    const tracker = new OutcomeTracker(query, pools);
    const budget = new AbortController();
    const timer = setTimeout(() => budget.abort(), budgetMs);
    const { signal } = budget;
    try {
      const end = await ledger.ledgerEnd(signal);
      const beginExclusive = await findStart(ledger, this.index, query.since.getTime() - SKEW_MS, end, this.options.pageSize, signal);
      for await (const tx of ledger.transactions({ beginExclusive, endInclusive: end }, signal)) {
        this.index.add(tx.offset, Date.parse(tx.recordTime));
        tracker.observe(tx);
        if (tracker.settled) break;
      }
    } catch (err) {
      if (!(err instanceof LedgerFailure)) throw err;
      // The failure's message names no party (core/ledger/ledger.ts).
      health.down(err);
      throw new DomainError('ledger_unavailable', 'the ledger could not be read right now; nothing was changed');
    } finally {
      clearTimeout(timer);
    }
    health.up();
    const outcome = tracker.outcome(now().getTime());
    this.options.metrics?.outcome(outcome.status);
    return outcome;
  }

  /**
   * v2's outcome: for `planId` naming an intent plan of the query's party, the venue's status of
   * its intent as recorded (basis: venue); otherwise the ledger's reading, as without it.
   */
  async outcomeOf(query: OutcomeQuery, planId: string | undefined): Promise<V2.Outcome> {
    const recorded = planId === undefined ? null : ((await this.options.intents?.intentOutcome(planId, query.party)) ?? null);
    if (recorded === null) return this.outcome(query);
    return {
      status: INTENT_OUTCOME[recorded.state],
      depositUpdateId: null,
      basis: 'venue',
      venueId: recorded.venueId,
      venueStatus: recorded.venueStatus,
      intentId: recorded.intentId,
      received: recorded.received,
    };
  }

}

/** Items asked for per probe: enough that offset checkpoints between transactions rarely cost a second request. */
const PROBE_PAGE = 20;

/**
 * An offset after which every transaction recorded at `timeMs` or later lies, found without
 * reading what comes before: from the index's samples, then by halving the offsets between, each
 * probe one request for the first transaction after an offset, until fewer than `pageSize`
 * offsets remain. Never before what the participant has pruned. Every transaction at or before
 * the answer was recorded before `timeMs` (as far as record times rise with offsets).
 */
export async function findStart(ledger: Ledger, index: OffsetTimeIndex, timeMs: number, end: number, pageSize: number, signal: AbortSignal): Promise<number> {
  const known = index.bounds(timeMs);
  let low = Math.max(known.after, await ledger.prunedUpTo(signal));
  let high = Math.min(known.atOrBefore ?? end, end);
  for (let probes = 0; high - low > pageSize && probes < MAX_PROBES; probes++) {
    const middle = low + Math.floor((high - low) / 2);
    let first: LedgerTransaction | null = null;
    for await (const tx of ledger.transactions({ beginExclusive: middle, endInclusive: end }, signal, PROBE_PAGE)) {
      first = tx;
      break;
    }
    if (first === null || Date.parse(first.recordTime) >= timeMs) high = middle;
    else low = Math.min(first.offset, high);
  }
  return low;
}
