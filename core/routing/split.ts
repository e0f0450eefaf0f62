// The optimal split of one swap across venues: the allocation of the give amount that maximises
// the total worst-case net, each leg priced by its venue's curve (curves.ts) exactly as the
// service's quote would price it.
//
// The algorithm. Each venue's net is concave on a few pieces (curves.ts Piece): a pool's and a
// book's are, over the amounts the venue takes, once their fees are in; what is not concave is
// whether a venue is used at all (its minimum, a flat fee) and a fee waived from an amount up.
// So every combination of a state per venue (unused, or on one of its pieces) is solved on its
// own, and the best exact total wins:
// - within a combination the problem is concave, and its optimum equalises the legs' marginal
//   rates lambda (each leg clamped to its piece's limits). Written in mu = 2^MU_SHIFT / sqrt(lambda),
//   a pool's amount is linear, a = (s x mu >> MU_SHIFT) - r, and a book's is a step at each level's
//   mu; so the total given is a non-decreasing piecewise-linear function of mu, and one sweep over
//   the pieces' sorted breakpoints finds the mu at which it reaches the amount exactly, in closed
//   form on its segment: no iteration, no tolerance;
// - each leg's amount is then read at that mu, rounded down to a unit, and what the rounding left
//   (a few units), or what a book's level takes in part, goes to the legs in venue-id order;
// - every leg is priced exactly (VenueCurve.netUnits), and the combination's total is that sum.
//
// Complexity: with n venues, p_i pieces each (1, or 2 with a waiver) and E breakpoints (two per
// pool piece, one per book level), prod(1 + p_i) combinations (at most 3^n, 48 for the sandbox's
// five venues; n <= MAX_SPLIT_VENUES), each O(E + n) bigint steps and n exact leg prices (a book's
// O(levels)); one sort of the E breakpoints per call.
//
// Optimality. Within a combination the continuous optimum of the curves' exact forms is found up
// to the units' rounding, so the split's total is within about 2 units (2e-10) of the want token
// per leg of the best allocation the curves allow, a venue's marginal being a monotone function of
// its amount; the one approximation is a book's flat on-top fee, left out of its marginal (no
// sandbox venue has one). test/core/routing/split-optimality.test.ts measures the gap against a
// brute-force grid of 1/1000 of the amount (docs/split-routing.md gives the figures).
import type { Decimal } from '../decimal.js';
import { MU_SHIFT, type VenueCurve } from './curves.js';
import { ceilDiv, fromUnits, toUnits } from './units.js';

/**
 * The least edge, in bps of the best single venue's net, a split must beat it by to be proposed.
 * A split costs what one venue does not: a deposit per leg (each paying the network's traffic and
 * each able to fail or expire on its own) and a floor per leg; and its legs' curves may be fitted
 * from a quote rather than read from the venue (fit.ts, exact to about 1e-9 of the net). 5 bps is
 * 5,000 times that error, more than a leg's traffic costs on any swap large enough to split, and
 * small beside what a split saves where one pool's price impact bites (tens to hundreds of bps).
 */
export const SPLIT_MIN_EDGE_BPS = 5;

/** The most venues one split considers: the combinations grow as 3^n. */
export const MAX_SPLIT_VENUES = 6;

/** The contract's bound on an edge in bps (core/quotes/math.ts MAX_EDGE_BPS), restated: routing imports no quote code. */
const MAX_EDGE_BPS = 1_000_000_000;

export interface SplitLeg {
  readonly venueId: string;
  /** What this venue is given. */
  readonly amount: Decimal;
  /** Its worst-case net for that, as its quote would state it. */
  readonly net: Decimal;
}

export interface Split {
  /** Two or more, by venueId; their amounts sum exactly to the amount split. */
  readonly legs: readonly SplitLeg[];
  /** The legs' nets summed. */
  readonly net: Decimal;
  /** The venue netting most for the whole amount (ties: the lower venueId); null when none takes it whole. */
  readonly bestSingle: { readonly venueId: string; readonly net: Decimal } | null;
  /** floor(10000 x (net - bestSingle.net) / bestSingle.net); null without a best single venue. */
  readonly edgeBps: number | null;
}

export interface SplitOptions {
  /** The edge over the best single venue a split must exceed, in bps (default SPLIT_MIN_EDGE_BPS). */
  readonly minEdgeBps?: number;
}

/** A piece of one venue, flattened for the hot loop, its upper limit within the amount. */
interface Slot {
  readonly venue: number;
  readonly pool: boolean;
  readonly lo: bigint;
  readonly hi: bigint;
  /** A pool's: its amount at mu is (s x mu >> MU_SHIFT) - r. */
  readonly s: bigint;
  readonly r: bigint;
  /** A book's: each level's mu, and its amount before the first level and at each level's end, within [lo, hi]. */
  readonly mus: readonly bigint[];
  readonly values: readonly bigint[];
}

/** A breakpoint of a slot's amount in mu: a pool's start and end of its linear stretch, a book's level. */
interface Breakpoint {
  readonly mu: bigint;
  /** 0: a pool starts, 1: a book's level, 2: a pool ends (so at one mu a pool starts before it ends). */
  readonly rank: 0 | 1 | 2;
  readonly slot: number;
  /** A book's level index. */
  readonly level: number;
}

interface Candidate {
  /** By venue, in venue-id order (0 for a venue not used). */
  readonly amounts: readonly bigint[];
  readonly nets: readonly bigint[];
  readonly total: bigint;
  readonly legs: number;
}

const clamp = (v: bigint, lo: bigint, hi: bigint): bigint => (v < lo ? lo : v > hi ? hi : v);

/**
 * The best split of `amount` (> 0, at most 10 fractional digits) across the venues of `curves`
 * (at most MAX_SPLIT_VENUES, distinct venueIds), or null when none beats the best single venue by
 * more than `minEdgeBps`. Deterministic: the same answer for the same curves in any order.
 */
export function optimalSplit(amount: Decimal, curves: readonly VenueCurve[], options: SplitOptions = {}): Split | null {
  if (!amount.gt(0) || amount.decimalPlaces() > 10) throw new RangeError('the amount to split is positive, with at most 10 fractional digits');
  if (curves.length > MAX_SPLIT_VENUES) throw new RangeError(`a split considers at most ${MAX_SPLIT_VENUES} venues`);
  const minEdgeBps = options.minEdgeBps ?? SPLIT_MIN_EDGE_BPS;
  const venues = [...curves].sort((a, b) => (a.venueId < b.venueId ? -1 : a.venueId > b.venueId ? 1 : 0));
  for (let i = 1; i < venues.length; i++) if (venues[i]!.venueId === venues[i - 1]!.venueId) throw new RangeError(`venue ${venues[i]!.venueId} has two curves`);
  const total = toUnits(amount);

  let bestVenue = -1;
  let bestNet = 0n;
  for (let v = 0; v < venues.length; v++) {
    const net = venues[v]!.netUnits(total);
    if (net !== null && (bestVenue < 0 || net > bestNet)) {
      bestVenue = v;
      bestNet = net;
    }
  }

  const winner = new Search(total, venues).best();
  if (!winner) return null;
  if (bestVenue >= 0 && (winner.total - bestNet) * 10_000n <= bestNet * BigInt(minEdgeBps)) return null;
  const legs: SplitLeg[] = [];
  winner.amounts.forEach((a, venue) => {
    if (a > 0n) legs.push({ venueId: venues[venue]!.venueId, amount: fromUnits(a), net: fromUnits(winner.nets[venue]!) });
  });
  const edge = bestVenue >= 0 ? ((winner.total - bestNet) * 10_000n) / bestNet : null;
  return {
    legs,
    net: fromUnits(winner.total),
    bestSingle: bestVenue >= 0 ? { venueId: venues[bestVenue]!.venueId, net: fromUnits(bestNet) } : null,
    edgeBps: edge === null ? null : edge > BigInt(MAX_EDGE_BPS) ? MAX_EDGE_BPS : Number(edge),
  };
}

/** One call's search: its slots and breakpoints, and the scratch space every combination reuses. */
class Search {
  readonly #slots: Slot[] = [];
  readonly #slotsOf: number[][];
  readonly #breakpoints: Breakpoint[] = [];
  readonly #active: boolean[];
  readonly #taken: number[];
  readonly #given: bigint[];
  readonly #partial: bigint[];

  constructor(
    readonly total: bigint,
    readonly venues: readonly VenueCurve[],
  ) {
    this.#slotsOf = venues.map(() => []);
    venues.forEach((curve, venue) => {
      for (const piece of curve.pieces()) {
        const hi = piece.hi === null || piece.hi > total ? total : piece.hi;
        if (piece.lo > hi) continue;
        // A pool whose linear stretch would start below 0 given is no curve a venue quotes.
        if (piece.kind === 'pool' && piece.lo + piece.r < 0n) continue;
        const index = this.#slots.length;
        this.#slotsOf[venue]!.push(index);
        if (piece.kind === 'pool') {
          this.#slots.push({ venue, pool: true, lo: piece.lo, hi, s: piece.s, r: piece.r, mus: [], values: [] });
          this.#breakpoints.push({ mu: ceilDiv((piece.lo + piece.r) << MU_SHIFT, piece.s), rank: 0, slot: index, level: 0 });
          this.#breakpoints.push({ mu: ((hi + piece.r) << MU_SHIFT) / piece.s, rank: 2, slot: index, level: 0 });
        } else {
          const values = [piece.start, ...piece.ends].map((v) => clamp(v, piece.lo, hi));
          this.#slots.push({ venue, pool: false, lo: piece.lo, hi, s: 0n, r: 0n, mus: piece.mus, values });
          piece.mus.forEach((mu, level) => this.#breakpoints.push({ mu, rank: 1, slot: index, level }));
        }
      }
    });
    this.#breakpoints.sort((a, b) => (a.mu < b.mu ? -1 : a.mu > b.mu ? 1 : a.rank - b.rank || a.slot - b.slot || a.level - b.level));
    const n = this.#slots.length;
    this.#active = new Array<boolean>(n).fill(false);
    this.#taken = new Array<number>(n).fill(0);
    this.#given = new Array<bigint>(n).fill(0n);
    this.#partial = new Array<bigint>(n).fill(0n);
  }

  /** The best allocation over two venues or more, by exact total; null when no combination takes the amount. */
  best(): Candidate | null {
    const { venues } = this;
    const slotsOf = this.#slotsOf;
    // Every combination of a state per venue: 0 unused, k its k-th slot; two venues or more.
    const state = venues.map(() => 0);
    let winner: Candidate | null = null;
    for (;;) {
      let venue = 0;
      while (venue < venues.length && state[venue] === slotsOf[venue]!.length) state[venue++] = 0;
      if (venue === venues.length) break;
      state[venue]! += 1;
      let used = 0;
      this.#active.fill(false);
      for (let v = 0; v < venues.length; v++) {
        if (state[v]! === 0) continue;
        used += 1;
        this.#active[slotsOf[v]![state[v]! - 1]!] = true;
      }
      if (used < 2) continue;
      const candidate = this.#solve();
      if (candidate && candidate.legs >= 2 && (!winner || better(candidate, winner))) winner = candidate;
    }
    return winner;
  }

  /** The active combination's optimal allocation and its exact nets; null when it cannot take the amount or a leg is refused. */
  #solve(): Candidate | null {
    const { total, venues } = this;
    const slots = this.#slots;
    const active = this.#active;
    const taken = this.#taken;
    const given = this.#given;
    const partial = this.#partial;
    // Over the current segment the total given at mu is (slope x mu >> MU_SHIFT) + constant.
    let slope = 0n;
    let constant = 0n;
    let low = 0n;
    let high = 0n;
    for (let i = 0; i < slots.length; i++) {
      if (!active[i]) continue;
      const slot = slots[i]!;
      taken[i] = 0;
      constant += slot.pool ? slot.lo : slot.values[0]!;
      low += slot.lo;
      high += slot.hi;
    }
    if (low > total || high < total) return null;
    // The segment reaches the amount at mu when slope x mu >= (total - constant) << MU_SHIFT: a
    // product compared, where a quotient would divide at every breakpoint.
    let mu = -1n;
    for (const point of this.#breakpoints) {
      if (!active[point.slot]) continue;
      const slot = slots[point.slot]!;
      if (slope > 0n && slope * point.mu >= (total - constant) << MU_SHIFT) break;
      if (point.rank === 1) {
        constant += slot.values[point.level + 1]! - slot.values[taken[point.slot]!]!;
        taken[point.slot] = point.level + 1;
        // The level takes in part what the rest leaves at this mu.
        if (((slope * point.mu) >> MU_SHIFT) + constant >= total) {
          mu = point.mu;
          break;
        }
      } else if (point.rank === 0) {
        slope += slot.s;
        constant -= slot.lo + slot.r;
      } else {
        slope -= slot.s;
        constant += slot.hi + slot.r;
      }
    }
    if (mu < 0n) {
      if (slope === 0n) return null;
      mu = ((total - constant) << MU_SHIFT) / slope;
    }

    // Each slot's amount at mu; a book's levels at exactly mu may take more.
    let rest = total;
    for (let i = 0; i < slots.length; i++) {
      if (!active[i]) continue;
      const slot = slots[i]!;
      let a: bigint;
      partial[i] = 0n;
      if (slot.pool) {
        a = clamp(((slot.s * mu) >> MU_SHIFT) - slot.r, slot.lo, slot.hi);
      } else {
        const { mus, values } = slot;
        let below = 0;
        while (below < mus.length && mus[below]! < mu) below++;
        let upTo = below;
        while (upTo < mus.length && mus[upTo] === mu) upTo++;
        a = values[below]!;
        partial[i] = values[upTo]! - a;
      }
      given[i] = a;
      rest -= a;
    }
    // What is left goes first to a book's levels at mu; what the rounding down left (a few units)
    // then in even shares to the legs with room, the last units one each, in venue-id order (slots
    // are in that order), and anything still left to the first with room; an excess from rounding
    // up to a minimum comes off the same way.
    for (let i = 0; i < slots.length && rest > 0n; i++) {
      if (!active[i] || partial[i] === 0n) continue;
      const add = partial[i]! < rest ? partial[i]! : rest;
      given[i]! += add;
      rest -= add;
    }
    let open = 0n;
    for (let i = 0; i < slots.length; i++) if (active[i] && given[i]! < slots[i]!.hi) open += 1n;
    for (let pass = 0; pass < 3 && rest > 0n && open > 0n; pass++) {
      const share = pass === 0 ? rest / open : pass === 1 ? 1n : rest;
      for (let i = 0; i < slots.length && rest > 0n; i++) {
        if (!active[i]) continue;
        const room = slots[i]!.hi - given[i]!;
        const want = share < rest ? share : rest;
        const add = room < want ? room : want;
        if (add > 0n) {
          given[i]! += add;
          rest -= add;
        }
      }
    }
    for (let i = 0; i < slots.length && rest < 0n; i++) {
      if (!active[i]) continue;
      const spare = given[i]! - slots[i]!.lo;
      const cut = spare < -rest ? spare : -rest;
      if (cut > 0n) {
        given[i]! -= cut;
        rest += cut;
      }
    }
    if (rest !== 0n) return null;

    const amounts = new Array<bigint>(venues.length).fill(0n);
    const nets = new Array<bigint>(venues.length).fill(0n);
    let sum = 0n;
    let legs = 0;
    for (let i = 0; i < slots.length; i++) {
      if (!active[i] || given[i] === 0n) continue;
      const { venue } = slots[i]!;
      const net = venues[venue]!.netUnits(given[i]!);
      if (net === null) return null;
      amounts[venue] = given[i]!;
      nets[venue] = net;
      sum += net;
      legs += 1;
    }
    return { amounts, nets, total: sum, legs };
  }
}

/** Higher total; then fewer legs; then, at the first venue (by id) given differently, more to it. */
function better(a: Candidate, b: Candidate): boolean {
  if (a.total !== b.total) return a.total > b.total;
  if (a.legs !== b.legs) return a.legs < b.legs;
  for (let v = 0; v < a.amounts.length; v++) {
    if (a.amounts[v] !== b.amounts[v]) return a.amounts[v]! > b.amounts[v]!;
  }
  return false;
}
