// Exact arithmetic for the tests' expected figures: a decimal.js of its own at 200 significant
// digits, so no expectation shares the service's configuration (50 digits, core/decimal.ts).
import { Decimal as DecimalJs } from 'decimal.js';

export const X = DecimalJs.clone({ precision: 200, rounding: DecimalJs.ROUND_FLOOR, toExpNeg: -300, toExpPos: 300 });
export type X = InstanceType<typeof X>;

export const x = (v: string | { toFixed(): string }): X => new X(typeof v === 'string' ? v : v.toFixed());
/** The wire form: plain notation, "0" for zero. */
export const s = (v: X): string => (v.isZero() ? '0' : v.toFixed());
export const floor10 = (v: X): X => v.toDecimalPlaces(10, X.ROUND_FLOOR);
export const ceil10 = (v: X): X => v.toDecimalPlaces(10, X.ROUND_CEIL);
