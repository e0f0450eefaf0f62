// Exact arithmetic on the contract's amounts (canonical decimal strings, at most 10 fractional
// digits) as integers of 10^-10: money is never a JS number here. Only a bar's length, a share of
// the tallest, becomes one.

const PLACES = 10;
const SCALE = 10n ** BigInt(PLACES);

/** An amount (or a count) in units of 10^-10. */
export function units(amount: string): bigint {
  const negative = amount.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? amount.slice(1) : amount).split('.');
  const value = BigInt(whole) * SCALE + BigInt(fraction.padEnd(PLACES, '0').slice(0, PLACES));
  return negative ? -value : value;
}

/** Units back to the contract's canonical form: no trailing fractional zeros, no lone point. */
export function amountOf(value: bigint): string {
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  const fraction = (magnitude % SCALE).toString().padStart(PLACES, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${magnitude / SCALE}${fraction === '' ? '' : `.${fraction}`}`;
}

export const sum = (amounts: readonly string[]): string => amountOf(amounts.reduce((total, a) => total + units(a), 0n));

/** The largest of non-negative amounts, "0" for none. */
export const largest = (amounts: readonly string[]): string => amountOf(amounts.reduce((max, a) => (units(a) > max ? units(a) : max), 0n));

/** `part` as a share of `whole` (0 to 1, to a ten-thousandth): a bar's length, never a figure shown. */
export function share(part: string, whole: string): number {
  const of = units(whole);
  return of <= 0n ? 0 : Number((units(part) * 10_000n) / of) / 10_000;
}

/** A rate of 0 to 1 (VenueSuccess's successRate, 4 places) as a percentage, exactly: "0.6667" is "66.67%". */
export function percent(rate: string): string {
  return `${amountOf(units(rate) * 100n)}%`;
}
