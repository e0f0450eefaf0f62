// How a key's day of counts is kept in the shared state: one map per key and day,
// `usage:<key id>:<YYYY-MM-DD>`, a field per operation (`requests:<operationId>`) and per limit
// (`rateLimited:<limit>`), each a count. The key's id, never the key; nothing of the caller.
import type { UsageDay } from './usage.js';
import type { Bucket } from './tally.js';
import { dateOf } from './utc-days.js';

const REQUESTS = 'requests:';
const RATE_LIMITED = 'rateLimited:';
/** The names the portal's contract allows (openapi/portal.yaml, UsageDay): anything else in the store is not ours. */
const OPERATION_ID = /^[A-Za-z]{1,64}$/;
const LIMIT_NAME = /^[a-z-]{1,64}$/;

export const mapOf = (keyId: string, dayStart: number): string => `usage:${keyId}:${dateOf(dayStart)}`;

export function fieldsOf(bucket: Bucket): Map<string, number> {
  const fields = new Map<string, number>();
  for (const [op, c] of bucket.requests) fields.set(REQUESTS + op, c.n);
  for (const [limit, c] of bucket.rateLimited) fields.set(RATE_LIMITED + limit, c.n);
  return fields;
}

/** A day's counts: the stored ones plus this instance's pending ones; null when the day has none. */
export function usageDay(dayStart: number, stored: ReadonlyMap<string, string>, pending: Bucket | undefined): UsageDay | null {
  const requests: Record<string, number> = {};
  const rateLimited: Record<string, number> = {};
  let any = false;
  for (const [field, value] of stored) {
    const count = Number(value);
    if (!Number.isSafeInteger(count) || count <= 0) continue;
    if (field.startsWith(REQUESTS) && OPERATION_ID.test(field.slice(REQUESTS.length))) {
      requests[field.slice(REQUESTS.length)] = count;
      any = true;
    } else if (field.startsWith(RATE_LIMITED) && LIMIT_NAME.test(field.slice(RATE_LIMITED.length))) {
      rateLimited[field.slice(RATE_LIMITED.length)] = count;
    }
  }
  if (pending) {
    for (const [op, c] of pending.requests) requests[op] = own(requests, op) + c.n;
    for (const [limit, c] of pending.rateLimited) rateLimited[limit] = own(rateLimited, limit) + c.n;
    any ||= pending.requests.size > 0;
  }
  return any ? { date: dateOf(dayStart), requests, rateLimited } : null;
}

/** A count already set, never one an object inherits (`constructor` is a valid name). */
const own = (counts: Record<string, number>, name: string): number => (Object.hasOwn(counts, name) ? counts[name]! : 0);
