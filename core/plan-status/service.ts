// Plan status: keeps every v2 plan the plan service makes (its port, core/plans' PlanTracking),
// answers its status and events to the caller allowed to read them, and runs the follower that
// moves them on.
import { Decimal } from '../decimal.js';
import { badRequest, DomainError } from '../errors.js';
import type * as V2 from '../contract/v2.js';
import type { PlanEventFeed, PlanEventSink } from './events.js';
import type { PlanFollower } from './follower.js';
import type { PlanStatusStore } from './store.js';
import type { TradeRecorder } from './trade-store.js';
import { firstEvent, type LegBasis, type PlanSecrets, type TakerReport, type TrackedLeg, type TrackedPlan, type TradeTerms } from './status.js';

/** Who asks for a plan's status: the key's record (keyed), and the capability sent, if any. */
export interface StatusReader {
  readonly partnerId: string | null;
  readonly token: string | null;
}

const BASIS: Readonly<Record<string, LegBasis>> = {
  'memo-floor': 'ledger',
  'intent-deposit-reference': 'venue',
};

const notFound = () => new DomainError('plan_not_found', 'no plan with this planId that this caller may read');

type AnyPlan = V2.ExecutionPlan | V2.SplitPlan;
type Step = V2.PlanStep | V2.SignMessageStep;

const isDeposit = (step: Step): step is V2.PlanStep => step.kind === 'venue-deposit';

/** A plan's legs, in leg order, each with its deposit's receiver and memo once its steps name them. */
function legsOf(plan: AnyPlan): TrackedLeg[] {
  const deposits = (plan.steps as Step[]).filter(isDeposit);
  const figures = 'split' in plan ? plan.split.legs : [{ venueId: plan.quoteRef.venueId, amount: plan.quoteRef.amount, minReceive: plan.quoteRef.minReceive, settlement: plan.settlement }];
  return figures.map((leg, i) => {
    const deposit = deposits.find((step) => (step.leg ?? 0) === i) ?? null;
    return {
      leg: i,
      venueId: leg.venueId,
      amount: leg.amount,
      minReceive: leg.minReceive,
      basis: BASIS[leg.settlement] ?? 'unobserved',
      escrow: deposit?.target ?? null,
      memo: deposit?.memo ?? null,
    };
  });
}

/** What a partner's plan was quoted and disclosed, per leg, for its trade ledger. */
function termsOf(plan: AnyPlan, takerRef: string): TradeTerms {
  const legs = 'split' in plan ? plan.split.legs : [plan.quoteRef];
  return {
    takerRef,
    collectsFees: plan.collectsFees,
    legs: legs.map((leg) => ({ net: leg.net, serviceFee: leg.clientFees.service.amount, integratorFee: leg.clientFees.integrator?.amount ?? '0' })),
  };
}

export class PlanStatusService {
  /** One subscription to the feed, dispatched by plan: a thousand streams cost one listener. */
  private readonly watchers = new Map<string, Set<(event: V2.PlanStatusEvent) => void>>();
  private unsubscribe: (() => void) | undefined;
  private readonly endings = new Set<() => void>();

  constructor(
    private readonly store: PlanStatusStore,
    private readonly secrets: PlanSecrets,
    private readonly follower: PlanFollower | null,
    private readonly now: () => Date,
    /** Hears a plan's first event, as the follower's sink hears the rest. */
    private readonly sink: PlanEventSink | null = null,
    /** Hears a partner's plan at its first state, as the follower's recorder hears the rest. */
    private readonly recorder: TradeRecorder | null = null,
  ) {}

  /** The capability a keyless plan carries. */
  statusToken(planId: string): string {
    return this.secrets.statusToken(planId);
  }

  /** Keeps a plan just made (or completed with its signature) for following; the taker's party is kept only as a keyed hash. */
  async track(plan: AnyPlan, partnerId: string | null, takerParty: string): Promise<void> {
    const ref = 'split' in plan ? plan.split : plan.quoteRef;
    const legs = legsOf(plan);
    const tracked: TrackedPlan = {
      planId: plan.planId,
      partnerId,
      takerHash: this.secrets.takerHash(takerParty),
      createdAtMs: this.now().getTime(),
      expiryMs: Date.parse(plan.expiry),
      pair: ref.pair,
      amount: ref.amount,
      minReceive: ref.minReceive,
      legs,
      awaitingSignature: !(plan.steps as Step[]).some(isDeposit),
      // A plan with a leg on an intent venue is made awaiting its signature: its first state, also
      // when it is kept again completed, so that call's first event is the one already queued.
      firstState: legs.some((leg) => leg.basis === 'venue') ? 'awaiting_signature' : 'planned',
      ...(partnerId !== null ? { trade: termsOf(plan, this.secrets.takerRef(partnerId, takerParty)) } : {}),
    };
    // A partner's plan: its first event queued for the partner's endpoints before anyone can have
    // seen it, as every later event is (the sink takes a plan's seq once, so a completed intent
    // plan's second call queues nothing), and its trade recorded. A keyless plan's goes nowhere.
    const event = partnerId === null ? null : firstEvent(tracked);
    if (event) await this.sink?.accept({ event, partnerId });
    if (await this.store.add(tracked)) {
      if (event) await this.recorder?.record(tracked, event.status);
      return;
    }
    // Kept already: the same plan completed with its signature, now with its deposits.
    const held = await this.store.plan(plan.planId);
    if (held && held.awaitingSignature && !tracked.awaitingSignature) await this.store.update({ ...tracked, createdAtMs: held.createdAtMs, ...(held.reports ? { reports: held.reports } : {}) });
  }

  /** The plan's status now; 404 plan_not_found to anyone who may not read it. */
  async status(planId: string, reader: StatusReader): Promise<V2.PlanStatus> {
    await this.authorised(planId, reader);
    const events = await this.store.events(planId, 0);
    const last = events.at(-1);
    if (!last) throw notFound();
    return last.status;
  }

  /**
   * The plan's events after `afterSeq` (null: its latest only), once the reader is authorised, and
   * whether the plan is over (its last event terminal), so a reader holding every event stops.
   */
  async eventsAfter(planId: string, reader: StatusReader, afterSeq: number | null): Promise<{ events: V2.PlanStatusEvent[]; over: boolean }> {
    await this.authorised(planId, reader);
    const all = await this.store.events(planId, 0);
    const over = all.at(-1)?.status.terminal === true;
    return { events: afterSeq === null ? all.slice(-1) : all.filter((e) => e.seq > afterSeq), over };
  }

  /**
   * Takes the taker's wallet's view of legs the service cannot observe, once per leg (the first
   * report stands); the follower reads it at its next turn. Answers the legs whose report stands.
   */
  async report(planId: string, reader: StatusReader, legs: V2.PlanViewReport['legs']): Promise<V2.PlanViewReceipt> {
    const plan = await this.authorised(planId, reader);
    const reports: Record<number, TakerReport> = { ...plan.reports };
    const atMs = this.now().getTime();
    for (const given of legs) {
      const leg = plan.legs.find((l) => l.leg === given.leg);
      if (!leg) throw badRequest(`this plan has no leg ${given.leg}: its legs are ${plan.legs.map((l) => l.leg).join(', ')}`);
      if (leg.basis !== 'unobserved') throw badRequest(`leg ${leg.leg} of this plan is read by the service itself (basis ${leg.basis}); only a leg it cannot observe takes a report`);
      const paid = given.outcome === 'completed';
      if (paid !== (given.received !== null)) throw badRequest(`leg ${leg.leg}: received is what a completed leg was paid, and null otherwise`);
      if (paid && new Decimal(given.received!).lt(leg.minReceive)) throw badRequest(`leg ${leg.leg}: a completed leg is paid at least its floor, ${leg.minReceive}`);
      reports[leg.leg] ??= { outcome: given.outcome, settlementUpdateId: given.depositUpdateId, received: given.received, atMs };
    }
    await this.store.update({ ...plan, reports });
    return { planId, taken: Object.keys(reports).map(Number).sort((a, b) => a - b) };
  }

  /** Every new event of any plan, on any instance. */
  get feed(): PlanEventFeed {
    return this.store;
  }

  /**
   * Calls `listener` with each new event of plan `planId`, on any instance, once the feed listens,
   * until the returned function is called; `ended` when the service stops first (its stream then ends).
   */
  async watch(planId: string, listener: (event: V2.PlanStatusEvent) => void, ended: () => void): Promise<() => void> {
    this.endings.add(ended);
    this.unsubscribe ??= this.store.subscribe((event) => this.watchers.get(event.planId)?.forEach((l) => l(event)));
    const set = this.watchers.get(planId) ?? new Set();
    set.add(listener);
    this.watchers.set(planId, set);
    const stop = () => {
      this.endings.delete(ended);
      set.delete(listener);
      if (set.size === 0 && this.watchers.get(planId) === set) this.watchers.delete(planId);
    };
    try {
      // Listening before the caller reads what is kept: nothing published between is missed.
      await this.store.listening();
    } catch (err) {
      stop();
      throw err;
    }
    return stop;
  }

  /** How many plans are watched on this instance. */
  get watched(): number {
    return this.watchers.size;
  }

  /** Ends every open watch (the server is closing: its streams end so their connections close). */
  endWatches(): void {
    for (const ended of [...this.endings]) ended();
  }

  start(): void {
    this.follower?.start();
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    await this.follower?.close();
    await this.store.close();
  }

  private async authorised(planId: string, reader: StatusReader): Promise<TrackedPlan> {
    const plan = await this.store.plan(planId);
    if (plan === null) throw notFound();
    const allowed = plan.partnerId !== null ? reader.partnerId === plan.partnerId : reader.token !== null && this.secrets.tokenMatches(planId, reader.token);
    if (!allowed) throw notFound();
    return plan;
  }
}
