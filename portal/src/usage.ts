// The usage table's rows: the contract lists only days with traffic, the page shows all 7 UTC days
// (today last), a quiet day as zeros, so a partner reads a week at a glance.
import type { UsageDay } from './contract/portal.js';

/** The operations a key is used for, always shown as columns even at zero. */
export const OPERATIONS = ['getQuote', 'createExecutePlan'] as const;

export interface UsageRow {
  readonly date: string;
  /** Requests by operation, in `operations`' order. */
  readonly requests: number[];
  readonly total: number;
  /** 429s by limit, in `limits`' order. */
  readonly rateLimited: number[];
}

export interface UsageTable {
  readonly operations: string[];
  readonly limits: string[];
  readonly rows: UsageRow[];
}

const DAY_MS = 86_400_000;
const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The 7 UTC days ending today, where today is the later of this browser's UTC day and the last day
 * the service counted (a browser clock running behind must not hide today's traffic).
 */
export function usageTable(days: readonly UsageDay[], now: Date): UsageTable {
  const latest = days.reduce((max, day) => (day.date > max ? day.date : max), utcDate(now.getTime()));
  const end = Date.parse(`${latest}T00:00:00Z`);
  const operations: string[] = [...OPERATIONS];
  const limits: string[] = [];
  for (const day of days) {
    for (const name of Object.keys(day.requests)) if (!operations.includes(name)) operations.push(name);
    for (const name of Object.keys(day.rateLimited)) if (!limits.includes(name)) limits.push(name);
  }
  limits.sort();
  const byDate = new Map(days.map((day) => [day.date, day]));
  const rows: UsageRow[] = [];
  for (let back = 6; back >= 0; back--) {
    const date = utcDate(end - back * DAY_MS);
    const day = byDate.get(date);
    const requests = operations.map((name) => day?.requests[name] ?? 0);
    rows.push({
      date,
      requests,
      total: requests.reduce((sum, n) => sum + n, 0),
      rateLimited: limits.map((name) => day?.rateLimited[name] ?? 0),
    });
  }
  return { operations, limits, rows };
}
