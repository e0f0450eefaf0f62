// A trade ledger query's range and filter: UTC days, both included (default the last 30), at most
// 366 days apart, and the states asked for, each checked; a bad one is 400 naming it.
import { badRequest } from '../errors.js';
import type { Trade } from '../contract/portal.js';

const DAY_MS = 86_400_000;
/** The longest range asked at once, in days. */
const MAX_RANGE_DAYS = 366;
const DEFAULT_DAYS = 30;

const STATES: ReadonlySet<string> = new Set<Trade['state']>(['awaiting_signature', 'planned', 'deposit_seen', 'completed', 'partially_completed', 'slippage_failed', 'expired', 'withdrawn', 'venue_failed', 'unobserved']);

export interface TradeRange {
  readonly from: string;
  readonly to: string;
  readonly fromMs: number;
  /** The start of the day after `to`. */
  readonly toMs: number;
}

/** YYYY-MM-DD of the UTC day of `ms`. */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

function dayStart(name: string, day: string): number {
  const ms = Date.parse(`${day}T00:00:00.000Z`);
  if (!Number.isFinite(ms) || utcDay(ms) !== day) throw badRequest(`${name} (${day}) is not a calendar day (YYYY-MM-DD)`);
  return ms;
}

export function rangeOf(query: { readonly from?: string; readonly to?: string }, nowMs: number): TradeRange {
  const to = query.to ?? utcDay(nowMs);
  const toStart = dayStart('to', to);
  const from = query.from ?? utcDay(toStart - (DEFAULT_DAYS - 1) * DAY_MS);
  const fromMs = dayStart('from', from);
  if (fromMs > toStart) throw badRequest(`from (${from}) is after to (${to})`);
  if (toStart - fromMs > MAX_RANGE_DAYS * DAY_MS) throw badRequest(`from (${from}) is more than ${MAX_RANGE_DAYS} days before to (${to})`);
  return { from, to, fromMs, toMs: toStart + DAY_MS };
}

/** The states of a `status` filter (`completed,expired`); null when none is given. */
export function statesOf(status: string | undefined): ReadonlySet<Trade['state']> | null {
  if (status === undefined) return null;
  const states = status.split(',');
  const unknown = states.find((s) => !STATES.has(s));
  if (unknown !== undefined) throw badRequest(`status '${unknown}' is not a plan state: one of ${[...STATES].join(', ')}`);
  return new Set(states as Array<Trade['state']>);
}
