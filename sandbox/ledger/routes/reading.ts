// The request values several endpoint families read alike: JSON objects, offsets, page limits and
// transaction shapes, refused in the ledger's words when malformed.
import { LedgerRejection } from '../command-arguments.js';
import type { Shape } from '../event-format.js';

export const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

const OFFSET = /^(0|[1-9][0-9]{0,15})$/;
export const offsetOf = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : typeof value === 'string' && OFFSET.test(value) ? Number(value) : null);

export function limitOf(url: URL): number | null {
  const text = url.searchParams.get('limit');
  if (text === null) return null;
  if (!/^[1-9][0-9]{0,8}$/.test(text)) throw new LedgerRejection('INVALID_ARGUMENT', 'limit must be a positive integer');
  return Number(text);
}

export function shapeOf(value: unknown): Shape {
  if (value === 'TRANSACTION_SHAPE_LEDGER_EFFECTS' || value === 'TRANSACTION_SHAPE_ACS_DELTA') return value;
  throw new LedgerRejection('INVALID_ARGUMENT', 'transactionShape must be TRANSACTION_SHAPE_LEDGER_EFFECTS or TRANSACTION_SHAPE_ACS_DELTA');
}
