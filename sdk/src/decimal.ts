// Daml Decimals (at most 10 fractional digits) as exact integers of 1e-10 units, so no amount
// ever passes through a float. Small on purpose: the SDK adds, compares and divides amounts, and
// ships to browsers.
const SCALE = 10_000_000_000n;
const DECIMAL = /^(0|[1-9][0-9]{0,27})(?:\.([0-9]{1,10}))?$/;

/** Whether `text` is a non-negative Daml Decimal. */
export const isDecimal = (text: unknown): text is string => typeof text === 'string' && DECIMAL.test(text);

/** `text` in 1e-10 units; throws on anything that is not a non-negative Daml Decimal. */
export function toUnits(text: string): bigint {
  const match = DECIMAL.exec(text);
  if (!match) throw new Error(`not a Daml Decimal: ${JSON.stringify(text)}`);
  return BigInt(match[1]!) * SCALE + BigInt((match[2] ?? '').padEnd(10, '0'));
}

/** 1e-10 units as canonical decimal text: no trailing zeros, `0` for zero. */
export function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const whole = abs / SCALE;
  const fraction = (abs % SCALE).toString().padStart(10, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** floor(a × b / c), all in 1e-10 units except `b`, a plain integer factor; c > 0. */
export const mulDivFloor = (a: bigint, b: bigint, c: bigint): bigint => {
  const product = a * b;
  const q = product / c;
  return product % c !== 0n && product < 0n ? q - 1n : q;
};

/** a / b to 10 fractional digits, rounded down: a price. */
export const divide = (a: bigint, b: bigint): bigint => mulDivFloor(a, SCALE, b);
