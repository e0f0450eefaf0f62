// What the sandbox ledger says when it refuses a command (LedgerRejection), and the readers of a
// command's arguments that refuse in those words: the Daml types they must have.
import type { Decimal } from '../../core/decimal.js';

/** A command the sandbox refuses: the message says why in words the caller can act on. */
export class LedgerRejection extends Error {
  override readonly name = 'LedgerRejection';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A Daml Decimal: at most 10 fractional digits. */
export const DAML_DECIMAL = /^[0-9]{1,28}(\.[0-9]{1,10})?$/;

export function checkAmount(amount: Decimal, what: string): void {
  if (!amount.gt(0) || amount.decimalPlaces() > 10) throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be a positive Daml Decimal`);
}

export function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be an object`);
  return value as Record<string, unknown>;
}

export function asText(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be a non-empty string`);
  return value;
}

export function asTime(value: unknown, what: string): Date {
  const time = new Date(asText(value, what));
  if (Number.isNaN(time.getTime())) throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be an ISO 8601 time`);
  return time;
}

export function asMeta(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  const values = asRecord(asRecord(value, 'transfer.meta').values ?? {}, 'transfer.meta.values');
  if (!Object.values(values).every((v) => typeof v === 'string')) throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.meta.values must map text to text');
  return values as Record<string, string>;
}
