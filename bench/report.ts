// The bench's arithmetic and tables: medians over rounds (on the 2-core development VM one round's
// ratio swings by +-30 % with the host's load, and the median of five is steadier than the median
// of three for the same time), each measurement's summary, and the tables printed at the end.
import type { LoadResult } from './load.js';

export const fmt = (x: number, digits: number): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

export interface Measured extends LoadResult {
  /** The server processes' CPU time per response over warm-up and run, in µs; NaN without /proc. */
  readonly serverCpuUs: number;
  /** Redis commands per response over warm-up and run; NaN when not counted. */
  readonly redisPerRequest: number;
  /** Round trips to Redis per response (bench/measure.ts says how they are read from INFO); NaN when not counted. */
  readonly redisTripsPerRequest: number;
  /** Redis's own CPU time per response (INFO cpu, system and user), in µs; NaN when not counted. */
  readonly redisCpuUs: number;
}

/** One measurement over all rounds. */
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
  /** Medians over the rounds. */
  readonly serverCpuUs: number;
  readonly redisPerRequest: number;
  readonly redisTripsPerRequest: number;
  readonly redisCpuUs: number;
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
    redisPerRequest: median(runs.map((r) => r.redisPerRequest)),
    redisTripsPerRequest: median(runs.map((r) => r.redisTripsPerRequest)),
    redisCpuUs: median(runs.map((r) => r.redisCpuUs)),
  };
}

/** A run that saw anything but 2xx answers, or none, measured nothing. */
export const invalid = (r: LoadResult): boolean => r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.ok === 0;

export function table(rounds: number, rows: ReadonlyArray<readonly [string, Summary]>, withRedis: boolean): string {
  const head = [`measurement (${rounds} round${rounds === 1 ? '' : 's'})`, 'median req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors', 'server CPU µs/req', ...(withRedis ? ['Redis cmds/req', 'Redis round trips/req', 'Redis CPU µs/req'] : [])];
  const body = rows.map(([name, r]) => [
    name,
    fmt(r.rps, 0),
    fmt(r.p50Ms, 3),
    fmt(r.p99Ms, 3),
    String(r.ok),
    String(r.non2xx),
    String(r.errors),
    fmt(r.serverCpuUs, 0),
    ...(withRedis ? [fmt(r.redisPerRequest, 2), fmt(r.redisTripsPerRequest, 2), fmt(r.redisCpuUs, 1)] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}

/** `<venue> <code>: n` for every rejection the inspected bodies reported, or "none". */
export function rejectionsText(rejections: Readonly<Record<string, number>>): string {
  const entries = Object.entries(rejections).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? 'none' : entries.map(([what, n]) => `${what}: ${n}`).join(', ');
}

/** Adds up rejection counts over runs. */
export function addRejections(runs: readonly LoadResult[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const run of runs) for (const [what, n] of Object.entries(run.rejections)) total[what] = (total[what] ?? 0) + n;
  return total;
}

export const verdict = (pass: boolean): 'PASS' | 'FAIL' => (pass ? 'PASS' : 'FAIL');
