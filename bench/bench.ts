// `make bench` measures what the service's work costs, as deployed: the sandbox in a
// process of its own, as real venues are, and the service pointed at it by SANDBOX_URL with
// logging on. Each measurement is set against a baseline that does only the unavoidable part of the
// same work, in a process of its own, measured in the same run, round after round, baseline then
// service:
//
// - cached keyless quote (one URL, a cache hit every request) against bare fastify sending the
//   cached quote's exact bytes and headers (bench/baseline.ts);
// - fresh keyless quote (a new amount every request, a cache miss every request) against the
//   "bare fan-out" (bench/fan-out-baseline.ts): bare fastify making exactly the five venue
//   requests a fresh quote makes (bench/fan-out-requests.ts, checked against the real adapters by
//   test/bench.test.ts) to the same sandbox process, with undici as the service does, answering a
//   small JSON body. Both pay the same sandbox, whose CPU competes with theirs on a 2-core machine,
//   so the ratio is fair;
// - keyless plan (POST /api/app/plan, a new idempotencyKey every request, never a replay) against
//   the plan floor (bench/plan-floor.ts): bare fastify doing what no plan can do without, with the
//   service's own code (the body's validation and parsing, the keyed digests, record key and plan
//   id, the plan's JSON text, the record kept with its retention and bound) and nothing else; its
//   ratio against the earlier baseline, bare fastify answering a real plan's bytes after one Map
//   read (bench/plan-baseline.ts), is printed beside it.
//
// The gated figure is the CPU-capacity ratio, baseline CPU µs per request / service CPU µs per
// request, CPU read from /proc for the server process only (never the sandbox's or the load
// generator's), the median of per-round ratios; each side's CPU µs per request, req/s, p50 and p99
// are printed beside it. The levels are bench/gates.ts' (cached >= 0.6, fresh >= 0.5, plan >= 0.6
// of the floor; docs/performance.md says why). Also gated: at 50 connections, the fresh
// quote's p99 at most 2x the bare fan-out's (median of per-round ratios) and no venue marked
// `timeout` in any answer (none is slow); with one venue's quote path hung (a second sandbox with
// SANDBOX_HANG_PATHS, a second service with VENUE_TIMEOUT_MS=300), fresh quotes arriving as
// independent callers do (an open loop at the rate 50 closed-loop connections reach, 150/s) answer
// with a p99 of at most VENUE_TIMEOUT_MS + 20 ms and no other venue marked `timeout`. The same
// hung venue under 50 closed-loop connections is printed beside it, not gated: every answer then
// takes the deadline, the connections fall into step, and their requests arrive as one burst per
// deadline, each queued behind the rest of its burst by the load generator's own lockstep.
//
// With REDIS_URL set, the same three pairs run again, against the same baselines, with two service
// instances sharing that Redis (the load spread over both, their CPU added), gated as a share of
// one instance's ratio without Redis in the same run (each round's ratio over one instance's median
// ratio, the median of those judged): cached >= 0.7, fresh >= 0.6, plan >= 0.6.
// Beside each, per request: Redis's round trips (INFO commandstats' calls, less the commands only
// the service's scripts send, and EXEC), its commands (INFO stats' total_commands_processed) and
// its own CPU (INFO cpu), each less the bench's own INFO. The service's keys
// there are under its fixed prefix `bestex:`; the bench removes those its instances created and
// no others (a db of its own in the URL, e.g. redis://127.0.0.1:6379/15, keeps them apart).
//
// Before them, informational: what counting a keyed request's usage costs it, in ns, beside one Map
// increment (bench/usage-recording.ts); the keyless pairs above count nothing, so the gates do not
// see it.
//
// Environment: BENCH_ROUNDS (default 5), BENCH_DURATION_S (measured seconds per measurement,
// default 3), BENCH_WARMUP_S (first-round warm-up, default 2; later rounds min(1, it)), REDIS_URL;
// the services inherit the rest (QUOTE_CACHE_MAX_ENTRIES, ...), except what the bench sets (PORT,
// HOST, LOG_LEVEL, the sandbox, the rate limits raised out of reach: one client on one IP drives
// every request). With the defaults the run takes about 4 minutes (2.5 more with REDIS_URL).
//
// A gate judged over rounds whose per-round values spread wider than its bound (the largest over the
// smallest: 2.5 for CPU-capacity ratios and shares, 10 for the p99 ratio) is reported CANNOT JUDGE,
// neither passed nor failed; the hung venue's check is one measurement and always judged. Exit
// status, after everything is printed: 1 when a judged gate fails, any run saw errors or non-2xx
// answers, or the bench itself failed; else 3 when a gate cannot be judged (run it again on a
// quieter machine); else 0 (`make bench` turns any failing status into make's own 2, so a script
// that tells 1 from 3 runs this program itself). Every child process is stopped on the way out,
// even on error.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { dataDirOf, PLAN_RECORDS, startBaseline, startSandbox, startService, waitForLive, type RunningSandbox, type Server } from './deployment.js';
import { CACHED_PATH, CONNECTIONS, FRESH_PATH_PREFIX, PIPELINING, PLAN_PATH, runLoad, type LoadKind } from './load.js';
import { alive, cpuMs, get, HOST, killAll, stop, stopAll } from './processes.js';
import { conclusion, EXIT_STATUS, exitStatus, HUNG_SLACK_MS, judge, judgeShare, judgementText, MAX_P99_FACTOR, MIN_RATIO, MIN_SHARE_OF_ONE, SPREAD_BOUND, type Outcome, type Verdict } from './gates.js';
import { addRejections, fmt, invalid, median, rejectionsText, summarise, table, verdict, type Measured } from './report.js';
import { describeRecordingCost, measureUsageRecording } from './usage-recording.js';

/** The connections of the latency checks. */
const WIDE = 50;
/** The hung check's arrivals per second: about what WIDE closed-loop connections reach when every answer takes the deadline. */
const HUNG_ARRIVALS = 150;
/** The hung scenario's per-venue deadline (how far past it the quote's p99 may be: HUNG_SLACK_MS). */
const HUNG_TIMEOUT_MS = 300;
const HUNG_VENUE = 'nightly';
/** Nightly's quote, not its token list (its probe): the venue stays live, every quote waits on it. */
const HUNG_PATH = '/nightly/nswap/quote';

const PLAN_BODY = {
  from: 'CC',
  to: 'USDCx',
  amount: '100',
  venueId: 'tradecraft',
  takerParty: `bench-taker::1220${'b'.repeat(64)}`,
} as const;

/** Headers node or fastify writes for any answer; every other header of the service's answer is copied. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

type PairKey = 'cached' | 'fresh' | 'plan' | 'fresh50';
/** The baselines: one per kind of load, and the plan's earlier one (its bytes after one read). */
type BaselineKey = LoadKind | 'planBytes';
interface Pair {
  readonly key: PairKey;
  readonly name: string;
  readonly baseName: string;
  readonly kind: LoadKind;
  /** A second baseline the same service run is set against, its ratio printed only. */
  readonly alsoAgainst?: { readonly key: BaselineKey; readonly name: string };
  /** Two instances on one Redis: the least share of one instance's CPU-capacity ratio (same baseline, same run) they keep. */
  readonly minShareOfOne?: number;
  readonly connections: number;
  /** Read every answer's venues (the 50-connection check). */
  readonly inspect: boolean;
  /** Gated CPU-capacity ratio; null: printed only. */
  readonly minRatio: number | null;
  /** Fresh quotes only: an open loop at this many arrivals per second (see LoadJob). */
  readonly arrivalsPerSecond?: number;
}

/** The latency check's load: fresh quotes at 50 connections, every answer's venues read. */
const FRESH_WIDE: Pair = { key: 'fresh50', name: `fresh keyless quote, ${WIDE} conns`, baseName: `bare fan-out, ${WIDE} conns`, kind: 'fresh', connections: WIDE, inspect: true, minRatio: null };

const PAIRS: readonly Pair[] = [
  { key: 'cached', name: 'cached keyless quote', baseName: 'bare fastify, same bytes', kind: 'cached', connections: CONNECTIONS, inspect: false, minRatio: MIN_RATIO.cached, minShareOfOne: MIN_SHARE_OF_ONE.cached },
  { key: 'fresh', name: 'fresh keyless quote', baseName: 'bare fan-out', kind: 'fresh', connections: CONNECTIONS, inspect: false, minRatio: MIN_RATIO.fresh, minShareOfOne: MIN_SHARE_OF_ONE.fresh },
  {
    key: 'plan',
    name: 'keyless plan',
    baseName: 'plan floor',
    kind: 'plan',
    connections: CONNECTIONS,
    inspect: false,
    minRatio: MIN_RATIO.plan,
    alsoAgainst: { key: 'planBytes', name: 'bare fastify, plan bytes' },
    minShareOfOne: MIN_SHARE_OF_ONE.plan,
  },
  FRESH_WIDE,
];

interface RoundResult {
  readonly base: Measured;
  readonly service: Measured;
  /** The pair's second baseline (alsoAgainst), when it has one. */
  readonly also?: Measured;
}

/** Where a section's load goes: the service instance(s), and the baseline per kind of load. */
interface Section {
  readonly title: string;
  readonly services: readonly Server[];
  readonly baselines: Readonly<Record<BaselineKey, Server>>;
  readonly pairs: readonly Pair[];
  readonly redis: Redis | null;
}

interface Settings {
  readonly rounds: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly laterWarmupS: number;
}

/** The temp dir holding the data dirs and the baselines' body files; removed on the way out. */
let tmpDir: string | null = null;
/** Amounts and idempotencyKeys used so far: each run continues after the last, so none repeats. */
let sequence = 0;
const keyPrefix = `bench-${randomBytes(4).toString('hex')}`;

function seconds(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > 600) {
    throw new Error(`${name} must be a number of seconds from ${min} to 600 (got ${JSON.stringify(raw)})`);
  }
  return value;
}

function roundsFromEnv(): number {
  const raw = process.env.BENCH_ROUNDS;
  if (raw === undefined || raw.trim() === '') return 5;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 100) {
    throw new Error(`BENCH_ROUNDS must be a whole number from 1 to 100 (got ${JSON.stringify(raw)})`);
  }
  return value;
}

/** What Redis has done since it started, read with one INFO. */
interface RedisCounters {
  readonly commands: number;
  /** Commands sent by clients: see roundTrips. */
  readonly trips: number;
  readonly cpuMs: number;
}

/**
 * Commands only the service's scripts send (the windows' INCR, INCRBY, PTTL and PEXPIRE, the reads' GET,
 * the claims', bodies' and records' SET, a dropped claim's DEL, the state marker's HGET, which the
 * marker's own check also sends once per probe interval), and EXEC, which ends a MULTI counted
 * once: what is left of INFO commandstats' calls are the commands clients sent, one round trip
 * each (an EVALSHA or EVAL, a MULTI).
 */
const NOT_A_ROUND_TRIP = new Set(['incr', 'incrby', 'decr', 'pttl', 'pexpire', 'get', 'set', 'del', 'hget', 'exec']);

async function redisCounters(redis: Redis): Promise<RedisCounters> {
  const info = await redis.info('all');
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info);
    if (!match) throw new Error(`Redis's INFO has no ${name}`);
    return Number(match[1]);
  };
  let trips = 0;
  for (const [, command, calls] of info.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) if (!NOT_A_ROUND_TRIP.has(command!)) trips += Number(calls);
  return { commands: field('total_commands_processed'), trips, cpuMs: (field('used_cpu_sys') + field('used_cpu_user')) * 1000 };
}

/** One load against `servers`, with their CPU time (and Redis's commands) over it. */
async function measure(title: string, servers: readonly Server[], pair: Pair, warmupS: number, durationS: number, redis: Redis | null): Promise<Measured> {
  const cpu = () => servers.reduce<number | null>((sum, s) => {
    const ms = cpuMs(s.child.pid);
    return sum === null || ms === null ? null : sum + ms;
  }, 0);
  const redisBefore = redis ? await redisCounters(redis) : null;
  const cpuBefore = cpu();
  const loaded = await runLoad({
    title,
    origins: servers.map((s) => s.url),
    kind: pair.kind,
    connections: pair.connections,
    warmupS,
    durationS,
    firstSequence: sequence,
    planBody: PLAN_BODY,
    keyPrefix,
    inspect: pair.inspect,
    arrivalsPerSecond: pair.arrivalsPerSecond,
  });
  const cpuAfter = cpu();
  // The first INFO is itself counted by the second.
  const redisAfter = redis ? await redisCounters(redis) : null;
  const redisDelta = (of: (c: RedisCounters) => number, own: number): number | null => (redisBefore && redisAfter ? of(redisAfter) - of(redisBefore) - own : null);
  sequence += loaded.sequenceUsed;
  for (const s of servers) if (!alive(s.child)) throw new Error(`${s.name} exited during ${title}:\n${s.stderr()}`);
  const perResponse = (x: number | null): number => (x === null || loaded.allResponses === 0 ? Number.NaN : x / loaded.allResponses);
  return {
    ...loaded,
    serverCpuUs: perResponse(cpuBefore === null || cpuAfter === null ? null : (cpuAfter - cpuBefore) * 1000),
    redisPerRequest: perResponse(redisDelta((c) => c.commands, 1)),
    redisTripsPerRequest: perResponse(redisDelta((c) => c.trips, 1)),
    redisCpuUs: perResponse(redisDelta((c) => c.cpuMs * 1000, 0)),
  };
}

const describe = (m: Measured): string =>
  `${fmt(m.rps, 0)} req/s, p50 ${fmt(m.p50Ms, 3)} ms, p99 ${fmt(m.p99Ms, 3)} ms, server CPU ${fmt(m.serverCpuUs, 0)} µs/req` +
  (Number.isFinite(m.redisPerRequest) ? `, ${fmt(m.redisPerRequest, 2)} Redis cmds/req, ${fmt(m.redisTripsPerRequest, 2)} round trips/req, Redis CPU ${fmt(m.redisCpuUs, 1)} µs/req` : '') +
  (invalid(m) ? ` [${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts]` : '');

/** Every round: each pair, baseline then service. */
async function runSection(section: Section, settings: Settings): Promise<Map<PairKey, RoundResult[]>> {
  const results = new Map<PairKey, RoundResult[]>(section.pairs.map((p) => [p.key, []]));
  for (let round = 1; round <= settings.rounds; round += 1) {
    const warmupS = round === 1 ? settings.warmupS : settings.laterWarmupS;
    for (const pair of section.pairs) {
      const label = `${section.title}, round ${round}/${settings.rounds}`;
      const base = await measure(`${pair.baseName} (${label})`, [section.baselines[pair.kind]], pair, warmupS, settings.durationS, section.redis);
      console.log(`${label}: ${pair.baseName}: ${describe(base)}`);
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

function record(outcome: Outcome, gate: string, verdict: Verdict): void {
  outcome.verdicts.push({ gate, verdict });
}

/**
 * Prints a section's table and ratios, and records each gate's verdict and any invalid run in
 * `outcome`. With `oneInstance` (the section of one instance without Redis, same run), each pair's
 * ratio is gated as a share of that section's instead (minShareOfOne).
 */
function report(section: Section, results: Map<PairKey, RoundResult[]>, rounds: number, outcome: Outcome, oneInstance?: Map<PairKey, RoundResult[]>): void {
  const rows = section.pairs.flatMap((pair) => {
    const runs = results.get(pair.key)!;
    const also = pair.alsoAgainst ? [[pair.alsoAgainst.name, summarise(runs.map((r) => r.also!))] as const] : [];
    return [[`${pair.baseName}`, summarise(runs.map((r) => r.base))] as const, ...also, [`${pair.name}`, summarise(runs.map((r) => r.service))] as const];
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
      for (const [which, m] of [['baseline', r.base], ['service', r.service], ...(r.also ? [['second baseline', r.also] as const] : [])] as const) {
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

/**
 * The hung venue: a sandbox whose nightly quote never answers, and a service with a known deadline.
 * One measurement, not rounds: its p99 has no spread to read, so it is always judged.
 */
async function hungScenario(root: string, ledgerToken: string, settings: Settings, outcome: Outcome): Promise<void> {
  console.log('');
  console.log(`starting a second sandbox with SANDBOX_HANG_PATHS=${HUNG_PATH} and a service with VENUE_TIMEOUT_MS=${HUNG_TIMEOUT_MS}…`);
  const sandbox = await startSandbox('the hung sandbox', dataDirOf(root, 'hung-sandbox'), ledgerToken, [HUNG_PATH]);
  const service = await startService('the hung service', {
    dataDir: dataDirOf(root, 'hung-service'),
    sandbox,
    ledgerToken,
    redisUrl: '',
    env: { VENUE_TIMEOUT_MS: String(HUNG_TIMEOUT_MS) },
  });
  try {
    // Live by its probe, so every quote really asks it and waits (else venue_down, and nothing waits).
    await waitForLive(service, HUNG_VENUE);
    const paced: Pair = { ...FRESH_WIDE, name: `fresh keyless quote, ${HUNG_ARRIVALS} arrivals/s`, arrivalsPerSecond: HUNG_ARRIVALS };
    const m = await measure(`fresh quotes with ${HUNG_VENUE} hung, ${HUNG_ARRIVALS} arrivals/s`, [service], paced, settings.warmupS, settings.durationS, null);
    const lockstep = await measure(`fresh quotes with ${HUNG_VENUE} hung, ${WIDE} connections`, [service], FRESH_WIDE, settings.warmupS, settings.durationS, null);
    const boundMs = HUNG_TIMEOUT_MS + HUNG_SLACK_MS;
    const hungTimeouts = m.rejections[`${HUNG_VENUE} timeout`] ?? 0;
    const others = Object.entries(m.rejections).filter(([what]) => what.endsWith(' timeout') && !what.startsWith(`${HUNG_VENUE} `));
    const otherTimeouts = others.reduce((sum, [, n]) => sum + n, 0);
    const p99Pass = Number.isFinite(m.p99Ms) && m.p99Ms <= boundMs;
    // The check means something only when the hung venue timed out in every answer.
    const hangHeld = m.inspected > 0 && hungTimeouts === m.inspected;
    record(outcome, 'one venue hung: p99', verdict(p99Pass));
    record(outcome, 'one venue hung: other venues marked timeout', verdict(otherTimeouts === 0));
    record(outcome, 'one venue hung: the hang held', verdict(hangHeld));
    if (invalid(m) || invalid(lockstep)) outcome.invalid = true;
    console.log('');
    console.log(`== one venue hung (${HUNG_VENUE}'s quote never answered; VENUE_TIMEOUT_MS=${HUNG_TIMEOUT_MS}; fresh amounts arriving ${HUNG_ARRIVALS}/s, open loop) ==`);
    console.log(`hung: ${describe(m)}`);
    console.log(`hung: quote p99 ${fmt(m.p99Ms, 3)} ms (target <= VENUE_TIMEOUT_MS + ${HUNG_SLACK_MS} = ${boundMs} ms) ${verdict(p99Pass)}`);
    console.log(`hung: other venues marked timeout: ${otherTimeouts} (target 0) ${verdict(otherTimeouts === 0)}; every rejection: ${rejectionsText(m.rejections)}`);
    console.log(`hung: ${HUNG_VENUE} marked timeout in ${hungTimeouts} of ${m.inspected} answers read ${hangHeld ? '(the hang held)' : '(the hang did not hold: the check is void) FAIL'}`);
    for (const [which, run] of [['open loop', m], ['closed loop', lockstep]] as const) {
      if (invalid(run)) console.log(`hung, ${which}: INVALID RUN (${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts, ${run.ok} 2xx)`);
    }
    console.log(
      `hung, ${WIDE} closed-loop connections (informational: in lockstep, one burst per deadline): ${describe(lockstep)}; ` +
        `p99 ${fmt(lockstep.p99Ms - HUNG_TIMEOUT_MS, 1)} ms past the deadline; every rejection: ${rejectionsText(lockstep.rejections)}`,
    );
  } finally {
    await stop(service.child);
    await stop(sandbox.child);
  }
}

/** Every `bestex:*` key in the Redis. */
async function serviceKeys(redis: Redis): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const batch of redis.scanStream({ match: 'bestex:*', count: 1000 }) as AsyncIterable<string[]>) for (const key of batch) keys.add(key);
  return keys;
}

async function redisSection(
  redisUrl: string,
  root: string,
  sandbox: RunningSandbox,
  ledgerToken: string,
  baselines: Readonly<Record<BaselineKey, Server>>,
  oneInstance: Map<PairKey, RoundResult[]>,
  settings: Settings,
  outcome: Outcome,
): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  const before = await serviceKeys(redis);
  const started: Server[] = [];
  try {
    console.log('');
    console.log('starting two service instances sharing REDIS_URL…');
    for (const name of ['service instance 1', 'service instance 2']) {
      started.push(await startService(name, { dataDir: dataDirOf(root, name), sandbox, ledgerToken, redisUrl }));
    }
    const section: Section = {
      title: 'two instances, one Redis',
      services: started,
      baselines,
      pairs: PAIRS.filter((p) => p.key !== 'fresh50'),
      redis,
    };
    const results = await runSection(section, settings);
    report(section, results, settings.rounds, outcome, oneInstance);
    console.log(
      "(server CPU: both instances together; Redis cmds/req: INFO stats total_commands_processed over the run, less the bench's own INFO, per response; " +
        "round trips/req: INFO commandstats calls less the commands only the service's scripts send (INCR, INCRBY, PTTL, PEXPIRE, GET, SET, DEL, HGET) and EXEC; Redis CPU: INFO cpu used_cpu_sys + used_cpu_user; " +
        "the baselines' figures count what else reached Redis meanwhile)",
    );
  } finally {
    for (const s of started) await stop(s.child);
    const created = [...(await serviceKeys(redis))].filter((key) => !before.has(key));
    for (let i = 0; i < created.length; i += 500) await redis.unlink(...created.slice(i, i + 500));
    console.log(`Redis: removed the ${created.length} bestex:* keys the bench's instances created; the ${before.size} that were there before are left`);
    await redis.quit();
  }
}

/** The answer's headers a baseline copies: all but those node writes for any answer. */
function copiedHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !TRANSPORT_HEADERS.has(name)));
}

/** A plan of the floor's: its own id, so not the same bytes, but as many, and the same headers. */
function sameShape(name: string, copy: { status: number; body: Buffer; headers: Headers }, original: { body: Buffer }, headers: Record<string, string>): void {
  if (copy.status !== 200 || copy.body.length !== original.body.length) throw new Error(`${name} answers ${copy.status} with ${copy.body.length} bytes, not a plan of ${original.body.length}`);
  sameAnswer(name, { body: original.body, headers: copy.headers }, original, headers);
}

function sameAnswer(name: string, copy: { body: Buffer; headers: Headers }, original: { body: Buffer }, headers: Record<string, string>): void {
  if (!copy.body.equals(original.body)) throw new Error(`${name} does not answer the service's bytes`);
  for (const [header, value] of Object.entries(headers)) {
    if (copy.headers.get(header) !== value) throw new Error(`${name}'s ${header} header is ${JSON.stringify(copy.headers.get(header))}, not ${JSON.stringify(value)}`);
  }
}

async function main(): Promise<number> {
  const rounds = roundsFromEnv();
  const durationS = seconds('BENCH_DURATION_S', 3, 1);
  const warmupS = seconds('BENCH_WARMUP_S', 2, 0);
  const settings: Settings = { rounds, durationS, warmupS, laterWarmupS: Math.min(1, warmupS) };
  const redisUrl = process.env.REDIS_URL?.trim() ?? '';
  const cpus = os.cpus();
  console.log(
    `bestex bench: node ${process.version}, ${cpus.length} CPU(s) (${cpus[0]?.model.trim() ?? 'unknown'}); autocannon pipelining ${PIPELINING}, ` +
      `${CONNECTIONS} connections (${WIDE} for the latency checks), on ${HOST}; ${rounds} round${rounds === 1 ? '' : 's'} of ` +
      `${PAIRS.map((p) => `${p.baseName} -> ${p.name}`).join(', ')}; ${durationS} s each after a ${warmupS} s warm-up in round 1` +
      `${rounds > 1 ? `, ${settings.laterWarmupS} s in later rounds` : ''}`,
  );

  // First, while no child process competes for the CPU.
  console.log(describeRecordingCost(await measureUsageRecording()));

  const root = mkdtempSync(path.join(os.tmpdir(), 'bestex-bench-'));
  tmpDir = root;
  // The sandboxes' ledgers take it; the bench sets it, so no sandbox prints one.
  const ledgerToken = `bench-${randomBytes(24).toString('hex')}`;
  try {
    console.log('starting the sandbox (node dist/sandbox/main.js) and the service against it (SANDBOX_URL; LOG_LEVEL=info, stdout to /dev/null)…');
    const sandbox = await startSandbox('the sandbox', dataDirOf(root, 'sandbox'), ledgerToken);
    const service = await startService('the service', { dataDir: dataDirOf(root, 'service'), sandbox, ledgerToken, redisUrl: '' });

    const quote = await get(`${service.url}${CACHED_PATH}`);
    if (quote.status !== 200) throw new Error(`GET ${CACHED_PATH} answered ${quote.status}: ${quote.body.toString('utf8').slice(0, 500)}`);
    const quoteHeaders = copiedHeaders(quote.headers);
    const quoteFile = path.join(root, 'quote-body.json');
    writeFileSync(quoteFile, quote.body);
    const planRequest = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...PLAN_BODY, idempotencyKey: `${keyPrefix}-sample` }) };
    const plan = await get(`${service.url}${PLAN_PATH}`, planRequest);
    if (plan.status !== 200) throw new Error(`POST ${PLAN_PATH} answered ${plan.status}: ${plan.body.toString('utf8').slice(0, 500)}`);
    const planHeaders = copiedHeaders(plan.headers);
    const planFile = path.join(root, 'plan-body.json');
    writeFileSync(planFile, plan.body);
    console.log(`service ready; its cached quote is ${quote.body.length} bytes, a keyless plan ${plan.body.length} bytes`);
    console.log(describeRecordMemory(planFile));

    const cachedBaseline = await startBaseline('the cached-quote baseline', './baseline.js', { BENCH_BASELINE_BODY_FILE: quoteFile, BENCH_BASELINE_HEADERS: JSON.stringify(quoteHeaders) }, { path: CACHED_PATH });
    sameAnswer('the cached-quote baseline', await get(`${cachedBaseline.url}${CACHED_PATH}`), quote, quoteHeaders);
    const fanOut = await startBaseline('the bare fan-out', './fan-out-baseline.js', { BENCH_SANDBOX_MANIFEST: JSON.stringify(sandbox.announcement) }, { path: `${FRESH_PATH_PREFIX}100` });
    const planBaseline = await startBaseline('the plan baseline', './plan-baseline.js', { BENCH_BASELINE_BODY_FILE: planFile, BENCH_BASELINE_HEADERS: JSON.stringify(planHeaders) }, { path: PLAN_PATH, init: planRequest });
    sameAnswer('the plan baseline', await get(`${planBaseline.url}${PLAN_PATH}`, planRequest), plan, planHeaders);
    const planFloor = await startBaseline(
      'the plan floor',
      './plan-floor.js',
      { BENCH_BASELINE_BODY_FILE: planFile, BENCH_BASELINE_HEADERS: JSON.stringify(planHeaders), BENCH_BASELINE_MAX_RECORDS: PLAN_RECORDS },
      { path: PLAN_PATH, init: planRequest },
    );
    sameShape('the plan floor', await get(`${planFloor.url}${PLAN_PATH}`, planRequest), plan, planHeaders);
    console.log(`baselines ready: ${Object.keys(quoteHeaders).length} headers and the bytes of the quote and of the plan copied and checked; the fan-out asks ${sandbox.announcement.sandbox}`);
    const [load1] = os.loadavg();
    if (load1 !== undefined && load1 > cpus.length / 2) {
      console.log(`note: 1-minute load average is ${load1.toFixed(1)} on ${cpus.length} CPU(s): other processes compete for the CPU, expect noisy numbers`);
    }

    const local: Section = {
      title: 'one instance, in-process state',
      services: [service],
      baselines: { cached: cachedBaseline, fresh: fanOut, plan: planFloor, planBytes: planBaseline },
      pairs: PAIRS,
      redis: null,
    };
    const results = await runSection(local, settings);
    const outcome: Outcome = { verdicts: [], invalid: false };
    report(local, results, rounds, outcome);
    console.log('(baselines: bare fastify, logger off, each in its own process; service: LOG_LEVEL=info, access log on, stdout to /dev/null)');
    console.log('(CPU-capacity ratio: baseline CPU µs/req / service CPU µs/req, the server process only, over warm-up and run, median of per-round ratios)');
    console.log(
      '(median req/s and CPU µs/req: medians over the rounds, so the quotient of the two sides\' CPU medians need not be the median ratio; p50/p99: from the median round; 2xx, non-2xx, errors: summed over the rounds)',
    );
    console.log(
      `(per-round spread: the largest per-round value over the smallest; a gate whose rounds spread wider than its bound, ${SPREAD_BOUND.cpuRatio} for CPU-capacity ratios and shares, ` +
        `${SPREAD_BOUND.p99Ratio} for the p99 ratio, cannot be judged: the median would land either side of the level by chance)`,
    );

    await hungScenario(root, ledgerToken, settings, outcome);

    console.log('');
    if (redisUrl === '') {
      console.log('two instances sharing Redis: skipped (REDIS_URL is not set); run `REDIS_URL=redis://127.0.0.1:6379/15 make bench` to measure them');
    } else {
      await redisSection(redisUrl, root, sandbox, ledgerToken, local.baselines, results, settings, outcome);
    }
    console.log('');
    console.log(conclusion(outcome));
    return exitStatus(outcome);
  } finally {
    await stopAll();
    rmSync(root, { recursive: true, force: true });
    tmpDir = null;
  }
}

// Last resort: whatever way this process ends, no child outlives it.
process.on('exit', () => {
  killAll();
  if (tmpDir !== null) rmSync(tmpDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\nbench: ${signal}, stopping child processes`);
    process.exit(130);
  });
}
try {
  process.exitCode = await main();
} catch (err) {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = EXIT_STATUS.fail;
}

/** The heap a plan record holds in the in-process state, measured in a process of its own (bench/record-memory.ts). */
function describeRecordMemory(planFile: string): string {
  const program = fileURLToPath(new URL('./record-memory.js', import.meta.url));
  const line = execFileSync(process.execPath, ['--expose-gc', program, planFile, '50000'], { encoding: 'utf8' }).trim();
  const measured = JSON.parse(line) as { records: number; planBytes: number; heapBytesPerRecord: number; heapMB: number; heapMBPer10k: number; rssMBPer10k: number; heapBytesPerWindow: number };
  return (
    `in-process state, measured: a plan record holds ${measured.heapBytesPerRecord} bytes of heap (${measured.records} records of this ${measured.planBytes}-byte plan hold ${measured.heapMB} MB; STATE_MAX_PLAN_RECORDS bounds them); ` +
    `per 10,000 records ${measured.heapMBPer10k} MB of heap and ${measured.rssMBPer10k} MB of RSS; a caller's rate window ${measured.heapBytesPerWindow} bytes (STATE_MAX_RATE_WINDOWS)`
  );
}
