// A plan's status: what is kept of a plan to follow it (never the taker's party, only its keyed
// hashes), the capability a keyless plan carries, and the rules that derive each leg's state and the
// plan's from what was read of the ledger or the venue.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Decimal, toWire } from '../decimal.js';
import type * as V2 from '../contract/v2.js';

export type PlanState = V2.PlanState;
export type LegBasis = V2.PlanLegStatus['basis'];

const TERMINAL: ReadonlySet<PlanState> = new Set(['completed', 'partially_completed', 'slippage_failed', 'expired', 'withdrawn', 'venue_failed', 'unobserved']);
export const isTerminal = (state: PlanState): boolean => TERMINAL.has(state);

/** What a leg's deposit is recognised by on the ledger. */
export interface TrackedLeg {
  readonly leg: number;
  readonly venueId: string;
  readonly amount: string;
  readonly minReceive: string;
  readonly basis: LegBasis;
  /** The party the deposit goes to (a venue's, never the taker's); null until an intent plan's message is signed. */
  readonly escrow: string | null;
  readonly memo: string | null;
}

/** A plan as followed: what its status is derived from. */
export interface TrackedPlan {
  readonly planId: string;
  /** The key record (`key_...`) of a keyed plan; null for a keyless one. */
  readonly partnerId: string | null;
  /** The taker's party under the service's keyed hash (`TakerHasher`): never the party itself. */
  readonly takerHash: string;
  readonly createdAtMs: number;
  readonly expiryMs: number;
  readonly pair: { readonly give: V2.PlanStatus['pair']['give']; readonly want: V2.PlanStatus['pair']['want'] };
  readonly amount: string;
  readonly minReceive: string;
  readonly legs: readonly TrackedLeg[];
  /** While its message is not signed, an intent plan's deposits are not known yet. */
  readonly awaitingSignature: boolean;
  /** The state of its first event (`awaiting_signature` stays once the message is signed); absent from records kept before it was, whose first event is kept with them. */
  readonly firstState?: 'planned' | 'awaiting_signature';
  /** The taker's wallet's view of legs the service cannot observe, by leg, as the SDK reported it. */
  readonly reports?: Readonly<Record<number, TakerReport>>;
  /** A partner's plan: what its trade ledger shows beyond the status. */
  readonly trade?: TradeTerms;
}

/** What a partner's plan was quoted and disclosed, per leg in leg order, in the want token. */
export interface TradeTerms {
  /** The taker under the partner's own keyed hash (`PlanSecrets.takerRef`). */
  readonly takerRef: string;
  /** Whether the plan has fee legs (false: its fees were disclosed only). */
  readonly collectsFees: boolean;
  readonly legs: ReadonlyArray<{ readonly net: string; readonly serviceFee: string; readonly integratorFee: string }>;
}

/** What the taker's wallet saw of a leg, reported (POST /api/v2/plan/report), never verified. */
export interface TakerReport {
  readonly outcome: 'completed' | 'slippage_failed' | 'expired' | 'withdrawn';
  readonly settlementUpdateId: string | null;
  readonly received: string | null;
  readonly atMs: number;
}

/** One leg as read so far. */
export interface LegReading {
  readonly state: PlanState;
  readonly depositUpdateId: string | null;
  readonly settlementUpdateId: string | null;
  readonly received: string | null;
  /** When the leg reached its state, as recorded (null: the service's clock decides). */
  readonly atMs: number | null;
  /** What the reading is based on, where it is not the leg's own basis (a taker's report). */
  readonly basis?: LegBasis;
}

export const UNREAD: LegReading = { state: 'planned', depositUpdateId: null, settlementUpdateId: null, received: null, atMs: null };

/**
 * The plan's state from its legs': a split is `completed` when every leg is, `deposit_seen` while
 * some leg is answered or seen and another is not yet final, `partially_completed` when some legs
 * were paid and the others not; with no leg paid, the worst fate among them (a venue's failure,
 * a return, a withdrawal, an expiry). A leg the service cannot observe makes the plan's outcome
 * the taker's to read: `unobserved`.
 */
export function planState(legs: readonly LegReading[]): PlanState {
  if (legs.every((l) => l.state === 'planned')) return 'planned';
  if (!legs.every((l) => isTerminal(l.state))) return 'deposit_seen';
  const states = new Set(legs.map((l) => l.state));
  if (states.has('unobserved')) return 'unobserved';
  if (states.size === 1) return legs[0]!.state;
  if (states.has('completed')) return 'partially_completed';
  for (const worst of ['venue_failed', 'slippage_failed', 'withdrawn'] as const) if (states.has(worst)) return worst;
  return 'expired';
}

/** The status a plan shows at event `seq`, its history up to it. */
export function statusOf(plan: TrackedPlan, readings: readonly LegReading[] | null, history: readonly V2.PlanHistoryEntry[]): V2.PlanStatus {
  const last = history.at(-1)!;
  const legs = plan.legs.map((leg, i): V2.PlanLegStatus => {
    const r = readings?.[i] ?? UNREAD;
    return {
      leg: leg.leg,
      venueId: leg.venueId,
      amount: leg.amount,
      minReceive: leg.minReceive,
      state: r.state,
      basis: r.basis ?? leg.basis,
      depositUpdateId: r.depositUpdateId,
      settlementUpdateId: r.settlementUpdateId,
      received: r.received,
    };
  });
  const paid = legs.filter((l) => l.received !== null);
  return {
    planId: plan.planId,
    state: last.state,
    terminal: isTerminal(last.state),
    seq: last.seq,
    updatedAt: last.at,
    expiry: new Date(plan.expiryMs).toISOString(),
    pair: plan.pair,
    amount: plan.amount,
    minReceive: plan.minReceive,
    received: paid.length === 0 ? null : toWire(paid.reduce((sum, l) => sum.plus(l.received!), new Decimal(0))),
    legs,
    history: [...history],
  };
}

/** The event a plan's new state is published as. */
export const eventOf = (status: V2.PlanStatus): V2.PlanStatusEvent => ({
  type: `plan.${status.state}`,
  planId: status.planId,
  seq: status.seq,
  at: status.updatedAt,
  status,
});

/** A plan's first event, as it was published: a pure function of its record, so a store need not keep it. */
export function firstEvent(plan: TrackedPlan): V2.PlanStatusEvent {
  const state = plan.firstState ?? (plan.awaitingSignature ? 'awaiting_signature' : 'planned');
  return eventOf(statusOf(plan, null, [{ state, seq: 1, at: new Date(plan.createdAtMs).toISOString() }]));
}

/**
 * The service's keyed hashes: a keyless plan's capability (`st_` + the HMAC of its plan id, so
 * it is checked without a lookup and cannot be derived without the secret), and the taker's party
 * as the follower recognises its deposits without keeping it.
 */
export class PlanSecrets {
  private readonly tokenKey: Buffer;
  private readonly takerKey: Buffer;
  private readonly tradeKey: Buffer;

  constructor(secret: Buffer | string) {
    this.tokenKey = createHmac('sha256', secret).update('plan-status-token').digest();
    this.takerKey = createHmac('sha256', secret).update('plan-status-taker').digest();
    this.tradeKey = createHmac('sha256', secret).update('trade-ledger-taker').digest();
  }

  /** The taker as one partner's trade ledger shows it: under a key of that partner's own, so two partners' refs of one taker never match. */
  takerRef(partnerId: string, party: string): string {
    const partnerKey = createHmac('sha256', this.tradeKey).update(partnerId).digest();
    return `tr_${createHmac('sha256', partnerKey).update(party).digest('base64url')}`;
  }

  statusToken(planId: string): string {
    return `st_${createHmac('sha256', this.tokenKey).update(planId).digest('base64url')}`;
  }

  tokenMatches(planId: string, token: string): boolean {
    const expected = Buffer.from(this.statusToken(planId));
    const given = Buffer.from(token);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  takerHash(party: string): string {
    return createHmac('sha256', this.takerKey).update(party).digest('base64url');
  }
}
