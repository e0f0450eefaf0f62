// The bench's gates and how they are judged. A gated figure is read once per round and the gate
// judges the median of those per-round values. A gate whose rounds spread wider than its bound is
// not judged: on a machine that busy the median lands either side of the level by chance, and a
// verdict would report the machine, not the service. docs/performance.md states the same levels and
// bounds (test/bench/bench.test.ts holds them together).
import { fmt, median } from './report.js';

/** One instance, in-process state: the least CPU-capacity ratio against each pair's baseline. */
export const MIN_RATIO = { cached: 0.6, fresh: 0.5, plan: 0.6 } as const;
/** Two instances on one Redis: the least share of one instance's ratio (same baseline, same run). */
export const MIN_SHARE_OF_ONE = { cached: 0.7, fresh: 0.6, plan: 0.6 } as const;
/**
 * API version 2, one instance: the least share of v1's CPU-capacity ratio for the same request
 * (the same baseline measurement, the same round). v2 answers v1's work reshaped: a cached v2 quote
 * is the cached v1 quote's v2 text, kept beside it; a v2 plan is v1's plan given v2's shape.
 */
export const MIN_SHARE_OF_V1 = { cached: 0.8, plan: 0.8 } as const;
/** Fresh quotes at 50 connections: their p99 at most this multiple of the bare fan-out's. */
export const MAX_P99_FACTOR = 2;
/** One venue hung: how far past VENUE_TIMEOUT_MS the quote's p99 may be. */
export const HUNG_SLACK_MS = 20;
/** The split of one swap across five venues (bench/split-routing.ts): its p99 CPU per call, in µs. */
export const MAX_SPLIT_P99_US = 1000;
/**
 * A plan's state change read from the ledger: the p99 of its ledger record time to its server-sent
 * event's arrival, and, judged apart, to its webhook delivery's arrival (keyed plans), in ms.
 */
export const MAX_STATUS_P99_MS = 2000;
/**
 * An open plan status stream (GET /api/v2/plan/events): the service's memory per stream, in bytes,
 * the larger of its resident set's growth and its heap's. A stream measured 13.8-14.7 KB of heap
 * (its RSS grew less, into pages already resident): the level fails a change that doubles that.
 */
export const MAX_STREAM_BYTES = 32 * 1024;

/**
 * The widest spread, the largest per-round value over the smallest, at which a gate is still
 * judged. CPU-capacity ratios (and the shares made of them) spread up to 2.2x in the quiet runs
 * docs/performance.md records, and 3.3x in one the host's load decided. A round's p99 is the tail
 * of a few thousand answers, which one stall moves several-fold: its ratio spread 4.0x and 7.5x in
 * quiet runs.
 */
export const SPREAD_BOUND = { cpuRatio: 2.5, p99Ratio: 10 } as const;

export const EXIT_STATUS = { pass: 0, fail: 1, cannotJudge: 3 } as const;

export type Verdict = 'PASS' | 'FAIL' | 'CANNOT JUDGE';

export interface Spread {
  readonly low: number;
  readonly high: number;
  /** high / low; Infinity when a round read no positive finite value (nothing to compare). */
  readonly factor: number;
}

export interface Judgement {
  readonly verdict: Verdict;
  /** The median of the per-round values: the figure judged. */
  readonly median: number;
  readonly spread: Spread;
  readonly bound: number;
  /** A share's reference (one instance's per-round ratios), when its own spread decides. */
  readonly reference?: Spread;
}

export type Level = { readonly atLeast: number } | { readonly atMost: number };

export function spreadOf(values: readonly number[]): Spread {
  if (values.length === 0) return { low: Number.NaN, high: Number.NaN, factor: Number.POSITIVE_INFINITY };
  const low = Math.min(...values);
  const high = Math.max(...values);
  const measurable = values.every((v) => Number.isFinite(v) && v > 0);
  return { low, high, factor: measurable ? high / low : Number.POSITIVE_INFINITY };
}

const meets = (value: number, level: Level): boolean => ('atLeast' in level ? value >= level.atLeast : value <= level.atMost);

/** Nothing measured fails; rounds spread wider than `bound` cannot be judged; else the median against the level. */
export function judge(values: readonly number[], level: Level, bound: number): Judgement {
  const middle = median(values);
  const spread = spreadOf(values);
  const verdict: Verdict = !Number.isFinite(middle) ? 'FAIL' : !(spread.factor <= bound) ? 'CANNOT JUDGE' : meets(middle, level) ? 'PASS' : 'FAIL';
  return { verdict, median: middle, spread, bound };
}

/**
 * Two instances' share of one instance's ratio, per round: the round's ratio over one instance's
 * median ratio (the two sections run minutes apart, so their rounds do not pair). Its median is the
 * ratio of the two medians. The reference's own rounds must be judgeable too: a share of a figure
 * the machine blurred says nothing.
 */
export function judgeShare(ratios: readonly number[], reference: readonly number[], atLeast: number, bound: number): Judgement {
  const one = median(reference);
  const own = judge(ratios.map((r) => r / one), { atLeast }, bound);
  const referenceSpread = spreadOf(reference);
  if (!Number.isFinite(own.median) || own.verdict === 'CANNOT JUDGE' || referenceSpread.factor <= bound) return own;
  return { ...own, verdict: 'CANNOT JUDGE', reference: referenceSpread };
}

/** `what`: the per-round values' name ("ratios", "shares"), for the reader. */
export function judgementText(j: Judgement, what: string): string {
  const range = (s: Spread): string => `${fmt(s.low, 3)}–${fmt(s.high, 3)} (max/min ${fmt(s.factor, 2)})`;
  if (j.verdict === 'CANNOT JUDGE') {
    const wide = j.reference ? `one instance's per-round ratios, its reference, spread ${range(j.reference)}` : `per-round ${what} spread ${range(j.spread)}`;
    return `CANNOT JUDGE: ${wide}, wider than the bound ${j.bound} (machine too busy to tell)`;
  }
  if (!Number.isFinite(j.median)) return `${j.verdict}: nothing measured`;
  return `${j.verdict}, per-round ${what} ${range(j.spread)} within the bound ${j.bound}`;
}

/** Every gate's verdict, and whether any run saw errors or non-2xx answers. */
export interface Outcome {
  readonly verdicts: Array<{ readonly gate: string; readonly verdict: Verdict }>;
  invalid: boolean;
}

/** Records `gate`'s verdict in `outcome`. */
export function record(outcome: Outcome, gate: string, verdict: Verdict): void {
  outcome.verdicts.push({ gate, verdict });
}

/** A failed gate or an invalid run: 1; else a gate that cannot be judged: 3; else 0. */
export function exitStatus(outcome: Outcome): number {
  const any = (v: Verdict): boolean => outcome.verdicts.some((g) => g.verdict === v);
  if (outcome.invalid || any('FAIL')) return EXIT_STATUS.fail;
  return any('CANNOT JUDGE') ? EXIT_STATUS.cannotJudge : EXIT_STATUS.pass;
}

/** The run's last line: its exit status and the gates that decided it. */
export function conclusion(outcome: Outcome): string {
  const status = exitStatus(outcome);
  const named = (v: Verdict): string => outcome.verdicts.filter((g) => g.verdict === v).map((g) => g.gate).join('; ');
  if (status === EXIT_STATUS.pass) return `bench: exit ${status}: every gate passed (${outcome.verdicts.length})`;
  if (status === EXIT_STATUS.cannotJudge) {
    return `bench: exit ${status}: no gate failed, but these cannot be judged on this machine now (rounds spread wider than their bound): ${named('CANNOT JUDGE')}`;
  }
  const failed = named('FAIL');
  const unjudged = named('CANNOT JUDGE');
  const parts = [failed === '' ? '' : `FAIL: ${failed}`, outcome.invalid ? 'invalid runs (errors or non-2xx answers, above)' : '', unjudged === '' ? '' : `and cannot be judged: ${unjudged}`];
  return `bench: exit ${status}: ${parts.filter(Boolean).join('; ')}`;
}
