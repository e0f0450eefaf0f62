// A section of the bench: every round of its pairs, baseline then service (a v2 pair: its v1
// pair's baseline of the round, then the service), and its report: the table, each pair's ratios,
// and each gate's verdict.
import type { Redis } from 'ioredis';
import type { Server } from './deployment.js';
import { judge, judgeShare, judgementText, MAX_P99_FACTOR, record, SPREAD_BOUND, type Outcome } from './gates.js';
import { describe, measure } from './measure.js';
import type { BaselineKey, Pair, PairKey } from './pairs.js';
import { addRejections, fmt, invalid, median, rejectionsText, summarise, table, verdict, type Measured } from './report.js';
import type { Settings } from './settings.js';

export interface RoundResult {
  readonly base: Measured;
  readonly service: Measured;
  /** The pair's second baseline (alsoAgainst), when it has one. */
  readonly also?: Measured;
}

/** Where a section's load goes: the service instance(s), and the baseline per kind of load. */
export interface Section {
  readonly title: string;
  readonly services: readonly Server[];
  readonly baselines: Readonly<Record<BaselineKey, Server>>;
  readonly pairs: readonly Pair[];
  readonly redis: Redis | null;
}

/** Every round: each pair, baseline then service. */
export async function runSection(section: Section, settings: Settings): Promise<Map<PairKey, RoundResult[]>> {
  const results = new Map<PairKey, RoundResult[]>(section.pairs.map((p) => [p.key, []]));
  for (let round = 1; round <= settings.rounds; round += 1) {
    const warmupS = round === 1 ? settings.warmupS : settings.laterWarmupS;
    for (const pair of section.pairs) {
      const label = `${section.title}, round ${round}/${settings.rounds}`;
      // A v2 pair is set against the same baseline measurement as its v1 pair, not another one.
      const base = pair.v1 ? results.get(pair.v1.key)![round - 1]!.base : await measure(`${pair.baseName} (${label})`, [section.baselines[pair.kind]], pair, warmupS, settings.durationS, section.redis);
      if (!pair.v1) console.log(`${label}: ${pair.baseName}: ${describe(base)}`);
      const service = await measure(`${pair.name} (${label})`, section.services, pair, warmupS, settings.durationS, section.redis);
      console.log(`${label}: ${pair.name}: ${describe(service)}`);
      const also = pair.alsoAgainst && (await measure(`${pair.alsoAgainst.name} (${label})`, [section.baselines[pair.alsoAgainst.key]], pair, warmupS, settings.durationS, section.redis));
      if (also) console.log(`${label}: ${pair.alsoAgainst!.name}: ${describe(also)}`);
      results.get(pair.key)!.push({ base, service, also });
    }
  }
  return results;
}

const cpuRatio = (r: RoundResult): number => r.base.serverCpuUs / r.service.serverCpuUs;

/** Each side's median CPU µs per request over the rounds, so a reader sees what a ratio is made of. */
function cpuText(runs: readonly RoundResult[], base: string, service: string, of: (r: RoundResult) => Measured = (r) => r.base): string {
  return `CPU per request ${base} ${fmt(median(runs.map((r) => of(r).serverCpuUs)), 1)} µs, ${service} ${fmt(median(runs.map((r) => r.service.serverCpuUs)), 1)} µs`;
}

/**
 * Prints a section's table and ratios, and records each gate's verdict and any invalid run in
 * `outcome`. With `oneInstance` (the section of one instance without Redis, same run), each pair's
 * ratio is gated as a share of that section's instead (minShareOfOne).
 */
export function report(section: Section, results: Map<PairKey, RoundResult[]>, rounds: number, outcome: Outcome, oneInstance?: Map<PairKey, RoundResult[]>): void {
  const rows = section.pairs.flatMap((pair) => {
    const runs = results.get(pair.key)!;
    const also = pair.alsoAgainst ? [[pair.alsoAgainst.name, summarise(runs.map((r) => r.also!))] as const] : [];
    const base = pair.v1 ? [] : [[`${pair.baseName}`, summarise(runs.map((r) => r.base))] as const];
    return [...base, ...also, [`${pair.name}`, summarise(runs.map((r) => r.service))] as const];
  });
  console.log('');
  console.log(`== ${section.title} ==`);
  for (let i = 0; i < rounds; i += 1) {
    const perPair = section.pairs.map((pair) => {
      const r = results.get(pair.key)![i]!;
      return pair.key === 'fresh50' ? `${pair.key} p99 ${fmt(r.service.p99Ms / r.base.p99Ms, 2)}x` : `${pair.key} ${fmt(cpuRatio(r), 2)}`;
    });
    console.log(`round ${i + 1}/${rounds}: CPU-capacity ratios ${perPair.join(', ')}`);
  }
  console.log('');
  console.log(table(rounds, rows, section.redis !== null));
  console.log('');
  const where = oneInstance ? ` (${section.title})` : '';
  for (const pair of section.pairs) {
    const runs = results.get(pair.key)!;
    runs.forEach((r, i) => {
      for (const [which, m] of [...(pair.v1 ? [] : [['baseline', r.base] as const]), ['service', r.service], ...(r.also ? [['second baseline', r.also] as const] : [])] as const) {
        if (invalid(m)) {
          outcome.invalid = true;
          console.log(`${pair.name}, round ${i + 1}, ${which}: INVALID RUN (${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts, ${m.ok} 2xx)`);
        }
      }
    });
    const ratios = runs.map(cpuRatio);
    const rpsRatio = median(runs.map((r) => r.service.rps / r.base.rps));
    const cpu = cpuText(runs, 'baseline', oneInstance ? 'both instances' : 'service');
    if (pair.key === 'fresh50') {
      const p99 = judge(runs.map((r) => r.service.p99Ms / r.base.p99Ms), { atMost: MAX_P99_FACTOR }, SPREAD_BOUND.p99Ratio);
      record(outcome, `${pair.name}: p99`, p99.verdict);
      const rejections = addRejections(runs.map((r) => r.service));
      const timeouts = Object.entries(rejections).filter(([what]) => what.endsWith(' timeout')).reduce((sum, [, n]) => sum + n, 0);
      const timeoutPass = timeouts === 0 && runs.every((r) => r.service.inspected > 0);
      record(outcome, `${pair.name}: venues marked timeout`, verdict(timeoutPass));
      console.log(
        `${pair.name}: p99 ${fmt(median(runs.map((r) => r.service.p99Ms)), 3)} ms against the bare fan-out's ${fmt(median(runs.map((r) => r.base.p99Ms)), 3)} ms: ` +
          `${fmt(p99.median, 2)}x (median of per-round ratios; target <= ${MAX_P99_FACTOR}x): ${judgementText(p99, 'ratios')}`,
      );
      console.log(
        `${pair.name}: venues marked timeout in ${runs.reduce((sum, r) => sum + r.service.inspected, 0)} answers read (none is slow): ${timeouts}` +
          ` (target 0) ${verdict(timeoutPass)}; every rejection: ${rejectionsText(rejections)}`,
      );
      console.log(`${pair.name}: CPU-capacity ratio ${fmt(median(ratios), 3)} (informational; ${cpu}), req/s ratio ${fmt(rpsRatio, 2)}`);
      continue;
    }
    if (pair.alsoAgainst) {
      const alsoRatio = median(runs.map((r) => r.also!.serverCpuUs / r.service.serverCpuUs));
      console.log(`${pair.name}: CPU-capacity ratio ${fmt(alsoRatio, 3)} of the ${pair.alsoAgainst.name} (informational; ${cpuText(runs, 'that baseline', 'service', (r) => r.also!)})`);
    }
    if (pair.v1) {
      const v1 = section.pairs.find((p) => p.key === pair.v1!.key)!;
      const v1Runs = results.get(v1.key)!;
      // The same baseline measurement on both sides: each round's share is v1's CPU per request over v2's.
      const share = judge(runs.map((r, i) => cpuRatio(r) / cpuRatio(v1Runs[i]!)), { atLeast: pair.v1.minShare }, SPREAD_BOUND.cpuRatio);
      record(outcome, `${pair.name}${where}: share of v1's`, share.verdict);
      console.log(
        `${pair.name}: CPU-capacity ratio ${fmt(median(ratios), 3)} of the ${pair.baseName} (${cpu}), ${fmt(share.median, 3)} of the ${v1.name}'s in the same rounds ` +
          `(median of per-round shares; target >= ${pair.v1.minShare}): ${judgementText(share, 'shares')}; req/s ratio ${fmt(rpsRatio, 2)}`,
      );
      continue;
    }
    const one = oneInstance?.get(pair.key);
    if (one && pair.minShareOfOne !== undefined) {
      const share = judgeShare(ratios, one.map(cpuRatio), pair.minShareOfOne, SPREAD_BOUND.cpuRatio);
      record(outcome, `${pair.name}${where}: share of one instance's`, share.verdict);
      console.log(
        `${pair.name}: CPU-capacity ratio ${fmt(median(ratios), 3)} of the ${pair.baseName} (${cpu}), ` +
          `${fmt(share.median, 3)} of one instance's ${fmt(median(one.map(cpuRatio)), 3)} without Redis (${cpuText(one, 'baseline', 'service')}) ` +
          `(median of per-round shares; target >= ${pair.minShareOfOne}): ${judgementText(share, 'shares')}; req/s ratio ${fmt(rpsRatio, 2)}; ` +
          `Redis per request: ${fmt(median(runs.map((r) => r.service.redisTripsPerRequest)), 2)} round trips, ${fmt(median(runs.map((r) => r.service.redisPerRequest)), 2)} commands, ${fmt(median(runs.map((r) => r.service.redisCpuUs)), 1)} µs of its CPU`,
      );
      continue;
    }
    if (pair.minRatio === null) {
      console.log(`${pair.name}: CPU-capacity ratio ${fmt(median(ratios), 3)} of the ${pair.baseName} (informational; ${cpu}); req/s ratio ${fmt(rpsRatio, 2)}`);
      continue;
    }
    const ratio = judge(ratios, { atLeast: pair.minRatio }, SPREAD_BOUND.cpuRatio);
    record(outcome, `${pair.name}${where}`, ratio.verdict);
    // Three decimals: a ratio of 0.498 printed as "0.50 ... FAIL" would read as a contradiction.
    console.log(
      `${pair.name}: CPU-capacity ratio ${fmt(ratio.median, 3)} of the ${pair.baseName} (median of per-round ratios; target >= ${pair.minRatio}): ` +
        `${judgementText(ratio, 'ratios')}; ${cpu}; req/s ratio ${fmt(rpsRatio, 2)}`,
    );
  }
}
