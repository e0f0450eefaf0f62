// The follower: reads the ledger's updates once for every live plan (one reader per instance,
// and with a shared store only the instance holding the lease), folds each into the deposits of
// the plans whose taker it concerns, asks the recorded intent status of intent legs, and appends
// each plan's new state as its next event. A plan's reading lives in memory only while the plan
// is live; a new holder of the lease reads again from the oldest live plan's creation. Each turn
// costs what changed, not what is followed: the store answers the plans added or changed since
// the last turn, the ledger's updates reach the plans they concern through an index kept as plans
// come and go, and a plan whose deadline comes is found in time order (deadlines.ts).
import { Decimal, toWire } from '../decimal.js';
import type { CoreLog } from '../log.js';
import type { EndedSwap, Metrics } from '../metrics.js';
import { findStart, OffsetTimeIndex, OutcomeTracker, RECORD_TIME_TOLERANCE_MS, SKEW_MS, type IntentOutcomeState, type PoolTokens, type RecordedIntentOutcome } from '../outcomes/outcomes.js';
import type { Ledger, LedgerTransaction } from '../ledger/ledger.js';
import { HOLDING, namesEntity, TRANSFER_INSTRUCTION } from '../ledger/token-standard.js';
import { resolveToken } from '../tokens.js';
import type { PlanHistoryEntry, PlanStatusEvent } from '../contract/v2.js';
import type { PlanEventSink } from './events.js';
import { Deadlines } from './deadlines.js';
import type { PlanStatusStore } from './store.js';
import type { TradeRecorder } from './trade-store.js';
import { eventOf, isTerminal, planState, statusOf, UNREAD, type LegReading, type PlanSecrets, type PlanState, type TakerReport, type TrackedLeg, type TrackedPlan } from './status.js';

/** How long after its floor's deadline a deposit the venue accepted may go unpaid before the venue is taken to have failed. */
export const PAYOUT_GRACE_MS = 10 * 60_000;

/** The recorded intent status of an intent plan, by its id (core/plans/intent-plans.ts). */
export interface IntentStatuses {
  intentStatus(planId: string): Promise<RecordedIntentOutcome | null>;
}

export interface FollowerOptions {
  readonly store: PlanStatusStore;
  readonly ledger: Ledger;
  readonly pools: PoolTokens;
  readonly secrets: PlanSecrets;
  readonly intents: IntentStatuses | null;
  readonly sink: PlanEventSink | null;
  /** Hears a partner's plan at each new state. */
  readonly recorder?: TradeRecorder | null;
  /** Counts each plan that ends, for operators. */
  readonly metrics?: Metrics;
  readonly now: () => Date;
  readonly log: CoreLog;
  /** Between two reads of the ledger. */
  readonly pollMs: number;
  /** This instance's name for the lease. */
  readonly holder: string;
  readonly pageSize: number;
}

interface Followed {
  plan: TrackedPlan;
  /** One tracker per ledger leg (null for legs read otherwise); made when a ledger update first concerns the plan, as most plans' never does. */
  trackers: Array<OutcomeTracker | null> | null;
  /** The keys the party index holds it under, as it was followed: forgotten under the same ones. */
  keys: string[];
  history: PlanHistoryEntry[];
  state: PlanState;
  intent: RecordedIntentOutcome | null;
  /** When the plan is next looked at whatever the ledger says: the expiry's end, then a payout's grace. */
  dueMs: number;
}

/** Between two reads of intent legs' recorded status (their venue is read every INTENT_POLL_INTERVAL_MS anyway). */
const INTENT_READ_MS = 1_000;

const INTENT_LEG: Readonly<Record<IntentOutcomeState, PlanState>> = {
  awaiting_deposit: 'planned',
  in_progress: 'deposit_seen',
  completed: 'completed',
  refunded: 'slippage_failed',
  expired: 'expired',
  cancelled: 'expired',
  failed: 'venue_failed',
};

const LEDGER_LEG: Readonly<Record<string, PlanState>> = {
  pending: 'deposit_seen',
  completed: 'completed',
  slippage_failed: 'slippage_failed',
  withdrawn: 'withdrawn',
  expired: 'expired',
};

/** A leg whose deposit the ledger shows: to the venue's party named once the plan is made (an intent plan's once signed). */
const readOnLedger = (leg: TrackedLeg): leg is TrackedLeg & { escrow: string } => leg.basis === 'ledger' && leg.escrow !== null;

/** The keys a ledger update reaches a plan by: its taker's keyed hash and its deposits' receivers, for legs read on the ledger. */
function partyKeys(plan: TrackedPlan): string[] {
  const escrows = plan.legs.flatMap((leg) => (readOnLedger(leg) ? [`e:${leg.escrow}`] : []));
  return escrows.length === 0 ? [] : [`h:${plan.takerHash}`, ...escrows];
}

export class PlanFollower {
  private readonly followed = new Map<string, Followed>();
  /** The followed plans with a ledger leg, by the keyed hash of their taker (`h:`) and by the receiver of a deposit (`e:`). */
  private readonly byParty = new Map<string, Set<Followed>>();
  /** The followed plans with an intent leg, read once a second. */
  private readonly intentPlans = new Set<Followed>();
  private readonly deadlines = new Deadlines();
  /** The plans to look at in the next settle: a read touched them, they are new, or a report came. */
  private readonly dirty = new Set<Followed>();
  private lastIntentReadMs = 0;
  private readonly index = new OffsetTimeIndex();
  /** The last offset read; null until this instance holds the lease and has found where to start. */
  private offset: number | null = null;
  /** Where the store's changes were last read up to. */
  private cursor: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: FollowerOptions) {}

  start(): void {
    if (this.timer || this.closed) return;
    const tick = () => {
      this.running = this.step()
        .catch((err: unknown) => this.options.log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'the plan status follower could not read; it tries again'))
        .finally(() => {
          this.running = null;
          if (!this.closed) this.timer = setTimeout(tick, this.options.pollMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** How many plans this instance follows now. */
  get size(): number {
    return this.followed.size;
  }

  /** One turn: hold the lease, learn new plans, read the ledger to its end, and append what changed. */
  async step(): Promise<void> {
    const { store, ledger, options } = { ...this.options, options: this.options };
    const leaseMs = Math.max(5_000, options.pollMs * 20);
    if (!(await store.lease(options.holder, leaseMs))) {
      // Another instance follows: what this one read is stale by the time it holds the lease again.
      this.forgetAll();
      return;
    }
    const signal = AbortSignal.timeout(Math.max(10_000, options.pollMs * 10));
    // The end is read before the live plans: a plan kept after this read has its deposit after it.
    const end = await ledger.ledgerEnd(signal);
    const changes = await store.changes(this.offset === null ? null : this.cursor);
    await this.learn(changes.plans, changes.full);
    // Moved on once learnt: a read that failed before passes the old cursor, and the store answers every live plan.
    this.cursor = changes.cursor;
    // A plan is kept before its caller holds it, so its deposits come after the last end read with
    // it unknown: only a follower just started, or a new lease holder, reads from the oldest live
    // plan's creation.
    if (this.offset === null) {
      const oldest = Math.min(...changes.plans.map((p) => p.createdAtMs));
      this.offset = Number.isFinite(oldest) ? await findStart(ledger, this.index, oldest - SKEW_MS, end, options.pageSize, signal) : end;
    }
    if (end > this.offset) {
      await this.read(this.offset, end, signal);
      this.offset = end;
    }
    await this.settle();
  }

  /**
   * Starts following the plans new to it (again, once an intent plan's deposits are known) and
   * takes the changes of those it follows; given every live plan (`full`), forgets those not among them.
   */
  private async learn(plans: readonly TrackedPlan[], full: boolean): Promise<void> {
    if (full) {
      const ids = new Set(plans.map((p) => p.planId));
      for (const f of [...this.followed.values()]) if (!ids.has(f.plan.planId)) this.forget(f);
    }
    const fresh: TrackedPlan[] = [];
    for (const plan of plans) {
      const known = this.followed.get(plan.planId);
      if (known && !(known.plan.awaitingSignature && !plan.awaitingSignature)) {
        // What may change of a followed plan besides its deposits: the taker's reports.
        if (plan.reports !== undefined && JSON.stringify(plan.reports) !== JSON.stringify(known.plan.reports)) this.dirty.add(known);
        known.plan = plan;
      } else fresh.push(plan);
    }
    // Asked together: with a shared store, one round trip's wait for them all.
    const histories = await Promise.all(fresh.map(async (plan) => this.followed.get(plan.planId)?.history ?? (await this.options.store.events(plan.planId, 0)).map((e) => ({ state: e.status.state, seq: e.seq, at: e.at }))));
    fresh.forEach((plan, i) => {
      const history = histories[i]!;
      if (history.length === 0) return;
      const known = this.followed.get(plan.planId);
      if (known) this.forget(known);
      this.follow({ plan, trackers: null, keys: partyKeys(plan), history, state: history.at(-1)!.state, intent: null, dueMs: plan.expiryMs + RECORD_TIME_TOLERANCE_MS });
    });
  }

  private follow(f: Followed): void {
    this.followed.set(f.plan.planId, f);
    for (const key of f.keys) {
      const set = this.byParty.get(key);
      if (set) set.add(f);
      else this.byParty.set(key, new Set([f]));
    }
    if (f.plan.legs.some((l) => l.basis === 'venue')) this.intentPlans.add(f);
    this.deadlines.push(f.plan.planId, f.dueMs);
    this.dirty.add(f);
  }

  /** Stops following a plan; its id may stay among the deadlines until its time, answered by nothing. */
  private forget(f: Followed): void {
    if (this.followed.get(f.plan.planId) === f) this.followed.delete(f.plan.planId);
    for (const key of f.keys) {
      const set = this.byParty.get(key);
      set?.delete(f);
      if (set?.size === 0) this.byParty.delete(key);
    }
    this.intentPlans.delete(f);
    this.dirty.delete(f);
  }

  private forgetAll(): void {
    this.followed.clear();
    this.byParty.clear();
    this.intentPlans.clear();
    this.deadlines.clear();
    this.dirty.clear();
    this.offset = null;
    this.cursor = null;
  }

  private trackersOf(plan: TrackedPlan): Array<OutcomeTracker | null> {
    const { secrets, pools } = this.options;
    const want = resolveToken(plan.pair.want, 'want');
    return plan.legs.map((leg) =>
      !readOnLedger(leg)
        ? null
        : new OutcomeTracker(
            {
              isTaker: (party) => secrets.takerHash(party) === plan.takerHash,
              since: new Date(plan.createdAtMs),
              deadline: new Date(plan.expiryMs),
              escrow: leg.escrow,
              amount: new Decimal(leg.amount),
              minReceive: null,
              want,
              memo: leg.memo,
            },
            pools,
          ),
    );
  }

  /**
   * Folds the transactions in (from, to] into the followed plans each concerns: by the keyed hash of a party it names (the taker's deposit, refund or payout) or by
   * the party a plan's deposit goes to (the venue's answer, which may name no party of the taker).
   */
  private async read(from: number, to: number, signal: AbortSignal): Promise<void> {
    const byKey = this.byParty;
    if (byKey.size === 0) return;
    const hashes = new Map<string, string>();
    for await (const tx of this.options.ledger.transactions({ beginExclusive: from, endInclusive: to }, signal, this.options.pageSize)) {
      this.index.add(tx.offset, Date.parse(tx.recordTime));
      const concerned = new Set<Followed>();
      for (const party of partiesIn(tx)) {
        for (const f of byKey.get(`e:${party}`) ?? []) concerned.add(f);
        if (this.options.pools.has(party)) continue;
        let hash = hashes.get(party);
        if (hash === undefined) {
          hash = this.options.secrets.takerHash(party);
          hashes.set(party, hash);
        }
        for (const f of byKey.get(`h:${hash}`) ?? []) concerned.add(f);
      }
      for (const f of concerned) {
        f.trackers ??= this.trackersOf(f.plan);
        for (const tracker of f.trackers) tracker?.observe(tx);
        this.dirty.add(f);
      }
    }
  }

  /** Each followed plan's state now; a changed one appended as its next event, the sink told first. */
  /**
   * The plans whose state may have changed since the last look: those a read touched, new ones,
   * those whose time has come, and, once a second, those with an intent leg. Not every live plan at
   * every read: under load most live plans wait for a deposit that the ledger has not shown.
   */
  private due(nowMs: number): Followed[] {
    // A clock set back (a step of the system's time) reads them too, not a second after the time it left.
    const intents = Math.abs(nowMs - this.lastIntentReadMs) >= INTENT_READ_MS;
    if (intents) this.lastIntentReadMs = nowMs;
    const due = new Set(this.dirty);
    this.dirty.clear();
    for (const { key, at } of this.deadlines.due(nowMs)) {
      const f = this.followed.get(key);
      if (f && f.dueMs === at) due.add(f);
    }
    if (intents) this.intentPlans.forEach((f) => due.add(f));
    return [...due].filter((f) => this.followed.get(f.plan.planId) === f);
  }

  private async settle(): Promise<void> {
    const nowMs = this.options.now().getTime();
    let failed: unknown = null;
    for (const f of this.due(nowMs)) {
      try {
        await this.settleOne(f, nowMs);
      } catch (err) {
        // Looked at again next turn (its deadline is kept): one plan's failure never strands the others.
        this.dirty.add(f);
        failed ??= err;
      }
    }
    if (failed !== null) throw failed;
  }

  private async settleOne(f: Followed, nowMs: number): Promise<void> {
    // Past its expiry and tolerance, a plan still open is looked at again once its payout's grace is over, then every minute.
    if (f.dueMs <= nowMs) {
      f.dueMs = Math.max(nowMs + 60_000, f.plan.expiryMs + RECORD_TIME_TOLERANCE_MS + PAYOUT_GRACE_MS);
      this.deadlines.push(f.plan.planId, f.dueMs);
    }
    const readings = f.plan.awaitingSignature ? this.unsigned(f.plan, nowMs) : await this.readings(f, nowMs);
    if (readings === null) return;
    const state = planState(readings);
    if (state === f.state) return;
    const atMs = state === 'expired' || state === 'unobserved' ? nowMs : Math.max(...readings.map((r) => r.atMs ?? 0)) || nowMs;
    const entry: PlanHistoryEntry = { state, seq: f.history.length + 1, at: new Date(atMs).toISOString() };
    const event: PlanStatusEvent = eventOf(statusOf(f.plan, readings, [...f.history, entry]));
    await this.options.sink?.accept({ event, partnerId: f.plan.partnerId });
    const terminal = isTerminal(state);
    if (!(await this.options.store.append(event, terminal))) {
      // Another writer appended first (a previous holder of the lease): read the plan's events again.
      this.forget(f);
      return;
    }
    f.history.push(entry);
    f.state = state;
    if (terminal) {
      this.forget(f);
      this.options.metrics?.swapEnded(endedSwap(event.status));
    }
    // Never throws: a row it could not write is written again later (core/trades/ledger.ts).
    await this.options.recorder?.record(f.plan, event.status);
  }

  /** An intent plan whose message is not signed: nothing to read until it is, and expired if it never is. */
  private unsigned(plan: TrackedPlan, nowMs: number): LegReading[] | null {
    if (nowMs < plan.expiryMs + RECORD_TIME_TOLERANCE_MS) return null;
    return plan.legs.map(() => ({ ...UNREAD, state: 'expired' }));
  }

  private async readings(f: Followed, nowMs: number): Promise<LegReading[]> {
    const { plan } = f;
    const closedMs = plan.expiryMs + RECORD_TIME_TOLERANCE_MS;
    const { legs } = plan;
    if (legs.some((l) => l.basis === 'venue')) f.intent = (await this.options.intents?.intentStatus(plan.planId)) ?? f.intent;
    return legs.map((leg, i) => this.legReading(leg, f.trackers?.[i] ?? null, f.intent, nowMs, closedMs, plan.reports?.[leg.leg] ?? null));
  }

  private legReading(leg: TrackedLeg, tracker: OutcomeTracker | null, intent: RecordedIntentOutcome | null, nowMs: number, closedMs: number, report: TakerReport | null): LegReading {
    if (leg.basis === 'unobserved') {
      if (report) return { state: report.outcome, basis: 'taker', depositUpdateId: null, settlementUpdateId: report.settlementUpdateId, received: report.received, atMs: report.atMs };
      return nowMs >= closedMs ? { ...UNREAD, state: 'unobserved' } : UNREAD;
    }
    if (leg.basis === 'venue') {
      const state = intent === null || intent.venueId !== leg.venueId ? (nowMs >= closedMs ? 'expired' : 'planned') : INTENT_LEG[intent.state];
      return { ...UNREAD, state, received: state === 'completed' ? intent?.received ?? null : null };
    }
    const read = tracker?.reading(nowMs) ?? null;
    if (read === null) return nowMs >= closedMs ? { ...UNREAD, state: 'expired' } : UNREAD;
    let state = LEDGER_LEG[read.status] ?? 'deposit_seen';
    // Accepted and never paid: the venue kept the deposit.
    if (state === 'deposit_seen' && read.settledIn !== null && nowMs >= closedMs + PAYOUT_GRACE_MS) state = 'venue_failed';
    return {
      state,
      depositUpdateId: read.createdIn,
      settlementUpdateId: read.settledIn,
      received: read.received === null ? null : toWire(read.received),
      atMs: state === 'deposit_seen' && read.settledIn === null ? read.createdAtMs : read.settledAtMs ?? read.createdAtMs,
    };
  }
}

/** What operators count of an ended plan: its outcome, its legs' venues and states, and its paid legs' volume. */
function endedSwap(status: PlanStatusEvent['status']): EndedSwap {
  const paid = status.legs.filter((l) => l.received !== null);
  return {
    outcome: status.state,
    legs: status.legs.map((l) => ({ venueId: l.venueId, state: l.state })),
    give: status.pair.give,
    given: toWire(paid.reduce((s, l) => s.plus(l.amount), new Decimal(0))),
    want: status.pair.want,
    received: toWire(paid.reduce((s, l) => s.plus(l.received!), new Decimal(0))),
  };
}

/** The parties a transaction's transfers and holdings name, and those acting in it. */
function partiesIn(tx: LedgerTransaction): Set<string> {
  const parties = new Set<string>();
  for (const event of tx.events) {
    if (event.kind === 'exercised') {
      event.actingParties.forEach((p) => parties.add(p));
      continue;
    }
    if (event.kind !== 'created') continue;
    for (const { interfaceId, view } of event.interfaceViews) {
      const v = view as Record<string, unknown> | null;
      if (namesEntity(interfaceId, TRANSFER_INSTRUCTION.entity)) {
        const transfer = v?.transfer as Record<string, unknown> | undefined;
        if (typeof transfer?.sender === 'string') parties.add(transfer.sender);
        if (typeof transfer?.receiver === 'string') parties.add(transfer.receiver);
      } else if (namesEntity(interfaceId, HOLDING.entity) && typeof v?.owner === 'string') parties.add(v.owner);
    }
  }
  return parties;
}
