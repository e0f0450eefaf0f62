// One measurement: a pair's load on some servers, with their CPU time and, with Redis, its commands,
// round trips and CPU over it. Amounts and idempotencyKeys continue from one measurement to the
// next, so none repeats within a run.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Server } from './deployment.js';
import { runLoad } from './load.js';
import type { Pair } from './pairs.js';
import { alive, cpuMs } from './processes.js';
import { fmt, invalid, type Measured } from './report.js';

/** The keyless plan every plan load and the baselines' sample ask for, each with an idempotencyKey of its own. */
export const PLAN_BODY = {
  from: 'CC',
  to: 'USDCx',
  amount: '100',
  venueId: 'tradecraft',
  takerParty: `bench-taker::1220${'b'.repeat(64)}`,
} as const;

/** Amounts and idempotencyKeys used so far: each run continues after the last, so none repeats. */
let sequence = 0;
/** This run's idempotencyKeys start with it. */
export const keyPrefix = `bench-${randomBytes(4).toString('hex')}`;

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
export async function measure(title: string, servers: readonly Server[], pair: Pair, warmupS: number, durationS: number, redis: Redis | null): Promise<Measured> {
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
    ...(pair.apiVersion === undefined ? {} : { apiVersion: pair.apiVersion }),
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

export const describe = (m: Measured): string =>
  `${fmt(m.rps, 0)} req/s, p50 ${fmt(m.p50Ms, 3)} ms, p99 ${fmt(m.p99Ms, 3)} ms, server CPU ${fmt(m.serverCpuUs, 0)} µs/req` +
  (Number.isFinite(m.redisPerRequest) ? `, ${fmt(m.redisPerRequest, 2)} Redis cmds/req, ${fmt(m.redisTripsPerRequest, 2)} round trips/req, Redis CPU ${fmt(m.redisCpuUs, 1)} µs/req` : '') +
  (invalid(m) ? ` [${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts]` : '');
