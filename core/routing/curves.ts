// A venue's curve: the worst-case net a venue pays for any give amount, as the service's quote
// would state it (core/quotes/math.ts toQuoteVenue over the venue's adapter, core/venues/), so
// that a split is judged in the same figures the ranking uses. Two kinds: a constant-product pool
// and an order book walked level by level, each with the fees outside its price and its limits.
//
// The service's rounding, restated exactly (every value an integer count of 1e-10 units):
// - a fee is rounded up: ceil10(flat + rate x amount) (venue-math.ts proportionalGiveFee);
// - the pool pays floor10(y x t / (x + t)) for t reaching the curve (the venues' payout); a book's
//   walk pays its total once, rounded down (venue-math.ts walkBook);
// - a give-side fee taken before the curve is stated as the venues' adapters state it, gross =
//   floor10(output x amount / (amount - fee)) (venue-math.ts quoteFromOutputAfterGiveFee);
// - the net is then math.ts netAfterFee: floor10(gross x (amount - fee) / amount) for a fee in
//   the give token, gross - fee for one in the want token; a net of 0 or less is no quote.
import type { Decimal } from '../decimal.js';
import { ceilDiv, complement, floorDiv, fraction, fromUnits, isqrt, toUnits, UNIT, type Fraction } from './units.js';

/**
 * A fee the venue charges outside its price (its quote's `fee`): a traffic or network fee, or a
 * pool fee the venue states as its quote's fee (Tradecraft's).
 */
export interface CurveFee {
  /** Paid in the give token (out of what is given) or in the want token (out of what is received). */
  readonly token: 'give' | 'want';
  /** A flat amount of that token (default 0). */
  readonly flat?: Decimal;
  /** A share of the give amount, e.g. 0.003 (give-token fees only; default 0). */
  readonly rate?: Decimal;
  /**
   * A give-token fee's place: 'before-curve' (default), taken out of the give amount before the
   * rest reaches the curve (OneSwap's traffic fee; Tradecraft's pool fee), or 'on-top', beside it,
   * the curve pricing the whole amount and the fee valued at the trade's average rate, as the
   * service values a fee on top (Cantex's network fee; Temple's taker fee).
   */
  readonly placement?: 'before-curve' | 'on-top';
  /** Not charged from this give amount up (Cantex charges none from 500 CC sold). */
  readonly waivedFrom?: Decimal;
}

interface Limits {
  readonly venueId: string;
  /** The least give amount the venue takes (default: any). */
  readonly min?: Decimal;
  /** The most (default: no cap; a book's depth caps it anyway). */
  readonly max?: Decimal;
  readonly fees?: readonly CurveFee[];
}

export interface ConstantProductSpec extends Limits {
  readonly kind: 'constant-product';
  /** The pool's reserve of the token given (rounded up to 10 digits here: more reserve pays less). */
  readonly reserveIn: Decimal;
  /** Of the token wanted (rounded down). */
  readonly reserveOut: Decimal;
  /**
   * The pool's own fee, inside its price: 'input', taken from the input before the curve, which
   * then prices t x (1 - rate) exactly (Cantex, OneSwap, Nightly); 'output', taken from the curve's
   * output, rounded up.
   */
  readonly poolFee?: { readonly rate: Decimal; readonly placement: 'input' | 'output' };
}

export interface BookLevel {
  readonly price: Decimal;
  readonly quantity: Decimal;
}

export interface OrderBookSpec extends Limits {
  readonly kind: 'order-book';
  /**
   * 'sell-base': the give token is the book's base, sold into `levels` as bids (paid price x
   * quantity); 'buy-base': the give token is its quote currency, spent on `levels` as asks.
   */
  readonly side: 'sell-base' | 'buy-base';
  /** Best level first, price in quote currency per base; rounded toward the taker's loss to 10 digits. */
  readonly levels: readonly BookLevel[];
  /** The taker fee, a share of the give amount valued at the trade's average rate (Temple's 1 bp). */
  readonly takerFeeRate?: Decimal;
}

export type CurveSpec = ConstantProductSpec | OrderBookSpec;

/** A fee in units. */
interface UnitFee {
  readonly want: boolean;
  readonly flat: bigint;
  readonly rate: Fraction | null;
  readonly beforeCurve: boolean;
  /** Waived from this give amount up; null: always charged. */
  readonly waivedFrom: bigint | null;
}

/** One level of a book in units: price and quantity, and its cost in 1e-20 units (buying). */
interface UnitLevel {
  readonly price: bigint;
  readonly quantity: bigint;
}

/**
 * A concave stretch of a venue's net as a function of what it is given, [lo, hi] in units, with
 * what the split needs to find, for a marginal rate, the amount at which the stretch pays it.
 * Written in mu = 2^MU_SHIFT / sqrt(marginal rate), in which a pool's amount is linear (see split.ts).
 */
export type Piece =
  | {
      readonly kind: 'pool';
      readonly lo: bigint;
      readonly hi: bigint | null;
      /** The amount at mu: (s x mu >> MU_SHIFT) - r. */
      readonly s: bigint;
      readonly r: bigint;
    }
  | {
      readonly kind: 'book';
      readonly lo: bigint;
      readonly hi: bigint | null;
      /** Level j's mu, rising with j (its marginal rate falling). */
      readonly mus: readonly bigint[];
      /** The give amount at which level j ends (ends[j]); starts = the amount before the first. */
      readonly start: bigint;
      readonly ends: readonly bigint[];
    };

/**
 * mu's scale, as a shift: mu is an integer count of 2^-80, fine enough that one step of it moves
 * an amount by less than 1/8 unit (a pool's s, about sqrt(X Y) in units, is below 2^77 while its
 * reserves are under 1e13 tokens each), and a power of two, so the split's hot loop shifts where
 * it would divide. Coarser steps would only place a leg less finely, never misprice it.
 */
export const MU_SHIFT = 80n;

const toFee = (fee: CurveFee): UnitFee => {
  const want = fee.token === 'want';
  const rate = fee.rate && !fee.rate.isZero() ? fraction(fee.rate) : null;
  if (want && rate) throw new RangeError('a want-token fee is flat: its rate would be a share of what is received, not given');
  if (rate && rate.n >= rate.d) throw new RangeError('a fee rate is below 1');
  return {
    want,
    flat: fee.flat ? toUnits(fee.flat, true) : 0n,
    rate,
    beforeCurve: !want && (fee.placement ?? 'before-curve') === 'before-curve',
    waivedFrom: fee.waivedFrom ? toUnits(fee.waivedFrom, true) : null,
  };
};

/** The fee's amount on a give of `a` units, rounded up. */
const feeOn = (fee: UnitFee, a: bigint): bigint => fee.flat + (fee.rate ? ceilDiv(a * fee.rate.n, fee.rate.d) : 0n);

const addFractions = (a: Fraction, b: Fraction): Fraction => ({ n: a.n * b.d + b.n * a.d, d: a.d * b.d });
const ZERO_FRACTION: Fraction = { n: 0n, d: 1n };

/** A venue's net for any give amount, exactly as the service's quote of it would state it. */
export class VenueCurve {
  readonly venueId: string;
  /** In units; 0: any. */
  readonly minUnits: bigint;
  /** In units; null: no cap but the venue's own depth. */
  readonly maxUnits: bigint | null;
  readonly #fees: readonly UnitFee[];
  readonly #pool: { readonly x: bigint; readonly y: bigint; readonly input: Fraction | null; readonly output: Fraction | null } | null;
  readonly #book: { readonly sell: boolean; readonly levels: readonly UnitLevel[] } | null;
  #pieces: readonly Piece[] | null = null;

  constructor(readonly spec: CurveSpec) {
    this.venueId = spec.venueId;
    this.minUnits = spec.min ? toUnits(spec.min, true) : 0n;
    this.maxUnits = spec.max ? toUnits(spec.max) : null;
    const fees = (spec.fees ?? []).map(toFee);
    if (spec.kind === 'constant-product') {
      const x = toUnits(spec.reserveIn, true);
      const y = toUnits(spec.reserveOut);
      if (x <= 0n || y <= 0n) throw new RangeError(`${spec.venueId}: a pool's reserves are positive`);
      const rate = spec.poolFee && !spec.poolFee.rate.isZero() ? fraction(spec.poolFee.rate) : null;
      if (rate && rate.n >= rate.d) throw new RangeError(`${spec.venueId}: a pool fee is below 1`);
      const input = rate && spec.poolFee!.placement === 'input' ? complement(rate) : null;
      const output = rate && spec.poolFee!.placement === 'output' ? rate : null;
      this.#pool = { x, y, input, output };
      this.#book = null;
    } else {
      const sell = spec.side === 'sell-base';
      // A price the taker is paid rounds down, one it pays rounds up; quantities down.
      const levels = spec.levels.map((l) => ({ price: toUnits(l.price, !sell), quantity: toUnits(l.quantity) })).filter((l) => l.price > 0n && l.quantity > 0n);
      this.#book = { sell, levels };
      this.#pool = null;
      if (spec.takerFeeRate && !spec.takerFeeRate.isZero()) fees.push(toFee({ token: 'give', rate: spec.takerFeeRate, placement: 'on-top' }));
    }
    this.#fees = fees;
  }

  /** The worst-case net for giving `amount` (at most 10 fractional digits), or null when the venue would not quote it. */
  net(amount: Decimal): Decimal | null {
    if (amount.decimalPlaces() > 10) throw new RangeError('an amount has at most 10 fractional digits');
    const net = this.netUnits(toUnits(amount));
    return net === null ? null : fromUnits(net);
  }

  /**
   * net() in units: null below the venue's minimum, above its maximum or its depth, or where its
   * fees leave nothing (the quote's below_minimum).
   */
  netUnits(a: bigint): bigint | null {
    if (a <= 0n || a < this.minUnits || (this.maxUnits !== null && a > this.maxUnits)) return null;
    let before = 0n;
    let onTop = 0n;
    let want = 0n;
    for (const fee of this.#fees) {
      if (fee.waivedFrom !== null && a >= fee.waivedFrom) continue;
      const amount = feeOn(fee, a);
      if (fee.want) want += amount;
      else if (fee.beforeCurve) before += amount;
      else onTop += amount;
    }
    if (before >= a) return null;
    const output = this.#output(a - before);
    if (output === null || output === 0n) return null;
    const gross = before > 0n ? (output * a) / (a - before) : output;
    const give = before + onTop;
    if (give >= a) return null;
    const net = (give > 0n ? (gross * (a - give)) / a : gross) - want;
    return net > 0n ? net : null;
  }

  /** What the curve pays for `c` units reaching it, rounded down; null past a book's depth. */
  #output(c: bigint): bigint | null {
    const pool = this.#pool;
    if (pool) {
      const { x, y, input, output } = pool;
      // y x t / (x + t), t = c x (1 - fee): one exact floor division over a common denominator.
      const paid = input ? (y * c * input.n) / (x * input.d + c * input.n) : (y * c) / (x + c);
      return output ? paid - ceilDiv(paid * output.n, output.d) : paid;
    }
    const { sell, levels } = this.#book!;
    if (sell) {
      // Proceeds in 1e-20 units (units x units), rounded down once at the end.
      let rest = c;
      let proceeds = 0n;
      for (const level of levels) {
        if (rest === 0n) break;
        const take = rest < level.quantity ? rest : level.quantity;
        proceeds += take * level.price;
        rest -= take;
      }
      return rest === 0n ? proceeds / UNIT : null;
    }
    // Spending in 1e-20 units, so a level's cost (price x quantity) is exact.
    let rest = c * UNIT;
    let bought = 0n;
    for (const level of levels) {
      if (rest === 0n) break;
      const cost = level.price * level.quantity;
      if (rest >= cost) {
        bought += level.quantity;
        rest -= cost;
      } else {
        bought += rest / level.price;
        rest = 0n;
      }
    }
    return rest === 0n ? bought : null;
  }

  /**
   * The venue's net as concave pieces, for the split: one, or two where a fee is waived from an
   * amount up (below it, with the fee; from it, without), each with its limits.
   */
  pieces(): readonly Piece[] {
    if (this.#pieces) return this.#pieces;
    const waivers = [...new Set(this.#fees.map((f) => f.waivedFrom).filter((w): w is bigint => w !== null))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // Between consecutive waivers the same fees apply: one piece each.
    const bounds = [this.minUnits, ...waivers.filter((w) => w > this.minUnits)];
    const pieces: Piece[] = [];
    for (let i = 0; i < bounds.length; i++) {
      const lo = bounds[i]!;
      const next = bounds[i + 1];
      const hi = next !== undefined ? (this.maxUnits !== null && this.maxUnits < next - 1n ? this.maxUnits : next - 1n) : this.maxUnits;
      if (hi !== null && hi < lo) continue;
      const piece = this.#piece(lo, hi, this.#fees.filter((f) => f.waivedFrom === null || f.waivedFrom > lo));
      if (piece) pieces.push(piece);
    }
    this.#pieces = pieces;
    return pieces;
  }

  /**
   * One piece's marginal form. With z = a x (1 - rb) - fb what reaches the curve (rb, fb: the
   * before-curve fees' rate and flat part) and rt, ft the on-top ones', the net is
   * U(z) x (k z - phi) / z, k = 1 - rt / (1 - rb), phi = ft + rt fb / (1 - rb), U the curve. For a
   * pool, U(z) = Y z / (X' + z) (Y after an output fee, X' = X / (1 - input fee)), so the net's
   * slope in a is (1 - rb) Y (k X' + phi) / (X' + z)^2, and the amount paying the marginal rate
   * lambda is a = s / sqrt(lambda) - r with s = sqrt(Y (k X' + phi) / (1 - rb)), r = (X' - fb) / (1 - rb).
   * A book's slope on level j is (1 - rb) k times the level's rate (its flat on-top part left out:
   * the only approximation, and no sandbox venue has one).
   */
  #piece(lo: bigint, hi: bigint | null, fees: readonly UnitFee[]): Piece | null {
    let rb = ZERO_FRACTION;
    let rt = ZERO_FRACTION;
    let fb = 0n;
    let ft = 0n;
    for (const fee of fees) {
      if (fee.want) continue;
      if (fee.beforeCurve) {
        fb += fee.flat;
        if (fee.rate) rb = addFractions(rb, fee.rate);
      } else {
        ft += fee.flat;
        if (fee.rate) rt = addFractions(rt, fee.rate);
      }
    }
    const keep = complement(rb);
    // k = (1 - rb - rt) / (1 - rb)
    const kn = keep.n * rt.d - rt.n * keep.d;
    if (keep.n <= 0n || kn <= 0n) return null;
    const k: Fraction = { n: kn, d: rt.d * keep.n };
    // phi = ft + rt fb / (1 - rb)
    const phi: Fraction = { n: ft * rt.d * keep.n + rt.n * fb * keep.d, d: rt.d * keep.n };
    const pool = this.#pool;
    if (pool) {
      const yOut = pool.output ? { n: pool.y * (pool.output.d - pool.output.n), d: pool.output.d } : { n: pool.y, d: 1n };
      const xIn = pool.input ? { n: pool.x * pool.input.d, d: pool.input.n } : { n: pool.x, d: 1n };
      // k X' + phi
      const inner: Fraction = { n: k.n * xIn.n * phi.d + phi.n * k.d * xIn.d, d: k.d * xIn.d * phi.d };
      // Y (k X' + phi) / (1 - rb)
      const s = isqrt((yOut.n * inner.n * keep.d) / (yOut.d * inner.d * keep.n));
      const r = floorDiv((xIn.n - fb * xIn.d) * keep.d, xIn.d * keep.n);
      return s > 0n ? { kind: 'pool', lo, hi, s, r } : null;
    }
    const { sell, levels } = this.#book!;
    const mus: bigint[] = [];
    const ends: bigint[] = [];
    // What reaches the book by the end of each level, in give units (a buy's cost rounded down).
    let reach = 0n;
    for (const level of levels) {
      reach += sell ? level.quantity : (level.price * level.quantity) / UNIT;
      // The marginal rate in units: the price selling, 1 / price buying; times (1 - rb) k.
      const rate: Fraction = sell ? { n: level.price * keep.n * k.n, d: UNIT * keep.d * k.d } : { n: UNIT * keep.n * k.n, d: level.price * keep.d * k.d };
      // A level no better than one before it is taken after it: mu never falls along the book.
      const mu = isqrt((rate.d << (2n * MU_SHIFT)) / rate.n);
      mus.push(mus.length > 0 && mus[mus.length - 1]! > mu ? mus[mus.length - 1]! : mu);
      ends.push(floorDiv((reach + fb) * keep.d, keep.n));
    }
    if (levels.length === 0) return null;
    const start = ceilDiv(fb * keep.d, keep.n);
    const depth = ends[ends.length - 1]!;
    return { kind: 'book', lo, hi: hi === null || hi > depth ? depth : hi, mus, start, ends };
  }
}
