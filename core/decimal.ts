// Canton amounts are Daml Decimals: 10 fractional digits. All money is decimal.js; a JS number
// never holds an amount.
import { Decimal as DecimalJs } from 'decimal.js';

export const Decimal = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_FLOOR, toExpNeg: -60, toExpPos: 60 });
export type Decimal = DecimalJs;

export const SCALE = 10;
export const ZERO = new Decimal(0);

/** Rounds down to 10 fractional digits: for what the user receives. */
export const floor10 = (x: Decimal): Decimal => x.toDecimalPlaces(SCALE, Decimal.ROUND_FLOOR);

/** Rounds up to 10 fractional digits: for what the user pays. */
export const ceil10 = (x: Decimal): Decimal => x.toDecimalPlaces(SCALE, Decimal.ROUND_CEIL);

/** The wire form: plain notation, no trailing fractional zeros, never "-0". */
export function toWire(x: Decimal): string {
  if (x.decimalPlaces() > SCALE) throw new Error(`amount ${x.toFixed()} has more than ${SCALE} fractional digits`);
  return x.isZero() ? '0' : x.toFixed();
}

export const dec = (x: string | number): Decimal => new Decimal(x);
