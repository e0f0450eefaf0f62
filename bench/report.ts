// The bench's arithmetic and tables: medians over rounds (on the 2-core development VM one round's
// ratio swings by +-30 % with the host's load, and the median of five is steadier than the median
// of three for the same time), each target's summary, and the table printed at the end.
import type { LoadResult } from './load.js';

export const fmt = (x: number, digits: number): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

export interface Measured extends LoadResult {
  /** The server's CPU time per response over warm-up and run, in µs; NaN without /proc. */
  readonly serverCpuUs: number;
}

/** One target over all rounds. */
export interface Summary {
  /** Median req/s over the rounds. */
  readonly rps: number;
  /** p50/p99 of the median round (the round whose req/s is the median; the lower middle one for an even count). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Summed over the rounds. */
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  /** Median over the rounds. */
  readonly serverCpuUs: number;
}

/** The median of the finite values (mean of the two middle ones for an even count); NaN if none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter(Number.isFinite).sort((x, y) => x - y);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function summarise(runs: readonly Measured[]): Summary {
  const byRps = [...runs].sort((x, y) => x.rps - y.rps);
  const mid = byRps[Math.floor((byRps.length - 1) / 2)] as Measured;
  return {
    rps: median(runs.map((r) => r.rps)),
    p50Ms: mid.p50Ms,
    p99Ms: mid.p99Ms,
    ok: runs.reduce((sum, r) => sum + r.ok, 0),
    non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    serverCpuUs: median(runs.map((r) => r.serverCpuUs)),
  };
}

export function table(rounds: number, rows: ReadonlyArray<readonly [string, Summary]>): string {
  const head = [`target (${rounds} round${rounds === 1 ? '' : 's'})`, 'median req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors', 'server CPU µs/req'];
  const body = rows.map(([name, r]) => [
    name,
    fmt(r.rps, 0),
    fmt(r.p50Ms, 3),
    fmt(r.p99Ms, 3),
    String(r.ok),
    String(r.non2xx),
    String(r.errors),
    fmt(r.serverCpuUs, 0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}
