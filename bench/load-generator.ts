// One measurement's load, in a process of its own: `node load-generator.js <job JSON>`, forked by
// bench/load.ts, sends its LoadResult over IPC and exits. Latency percentiles are computed here
// from every 2xx response time (autocannon's own histogram keeps whole milliseconds only, too
// coarse for sub-millisecond loopback latencies); requests/s is autocannon's mean of per-second
// samples.
import { createRequire } from 'node:module';
import { Pool } from 'undici';
import { CACHED_PATH, CACHED_PATH_V2, FRESH_PATH_PREFIX, PIPELINING, PLAN_PATH, PLAN_PATH_V2, type LoadJob, type LoadResult } from './load.js';

/** The slice of autocannon v8's programmatic API used here (it ships no type declarations). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest, context: object) => AutocannonRequest;
  onResponse?: (status: number, body: string) => void;
}
interface AutocannonResult {
  requests: { average: number; sent: number; total: number };
  warmup?: { requests: { total: number } };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
}
type Autocannon = (options: Record<string, unknown>) => AutocannonInstance;

/** The request autocannon repeats: the same one, or one built anew each time. */
function requestOf(job: LoadJob, next: () => number): AutocannonRequest {
  switch (job.kind) {
    case 'cached':
      return { method: 'GET', path: job.apiVersion === 2 ? CACHED_PATH_V2 : CACHED_PATH };
    case 'fresh':
      // 10 fractional digits is the most an amount may carry; 100 + n * 1e-10 stays distinct for
      // 9,999,999,999 requests.
      return { method: 'GET', setupRequest: (request) => ({ ...request, path: `${FRESH_PATH_PREFIX}100.${String(next()).padStart(10, '0')}` }) };
    case 'plan': {
      const headers = { 'content-type': 'application/json' };
      const base = job.planBody ?? {};
      const path = job.apiVersion === 2 ? PLAN_PATH_V2 : PLAN_PATH;
      return {
        method: 'POST',
        setupRequest: (request) => ({ ...request, path, headers, body: JSON.stringify({ ...base, idempotencyKey: `${job.keyPrefix}-${next()}` }) }),
      };
    }
  }
}

/** Venue rejections counted from a quote's body, as `inspect` asks. */
function countRejections(body: string, rejections: Record<string, number>): void {
  const { venues } = JSON.parse(body) as { venues?: unknown };
  if (!Array.isArray(venues)) return;
  for (const { venueId, rejectionCode } of venues as Array<{ venueId: string; rejectionCode: string | null }>) {
    if (rejectionCode !== null) rejections[`${venueId} ${rejectionCode}`] = (rejections[`${venueId} ${rejectionCode}`] ?? 0) + 1;
  }
}

const percentileOf = (sorted: readonly number[], q: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number);

/**
 * Fresh quotes in an open loop: one starts every 1/arrivalsPerSecond s, answered or not, as
 * independent callers arrive. A closed loop's connections fall into step when every answer takes
 * the same time (a hung venue: each waits out the deadline), so its requests arrive in bursts of
 * one per connection, and each burst queues behind itself.
 */
async function pacedLoad(job: LoadJob & { readonly arrivalsPerSecond: number }): Promise<LoadResult> {
  const pool = new Pool(job.origins[0]!, { connections: job.connections });
  let sequence = job.firstSequence;
  const latencies: number[] = [];
  const rejections: Record<string, number> = {};
  let sent = 0;
  let inspected = 0;
  let non2xx = 0;
  let errors = 0;
  const one = async (measured: boolean): Promise<void> => {
    sequence += 1;
    sent += 1;
    const started = performance.now();
    try {
      const { statusCode, body } = await pool.request({ method: 'GET', path: `${FRESH_PATH_PREFIX}100.${String(sequence).padStart(10, '0')}` });
      const text = await body.text();
      if (statusCode < 200 || statusCode > 299) {
        non2xx += 1;
        return;
      }
      if (job.inspect) {
        inspected += 1;
        countRejections(text, rejections);
      }
      if (measured) latencies.push(performance.now() - started);
    } catch {
      errors += 1;
    }
  };
  const run = async (seconds: number, measured: boolean): Promise<void> => {
    const pending: Array<Promise<void>> = [];
    const start = performance.now();
    const count = Math.round(seconds * job.arrivalsPerSecond);
    for (let i = 0; i < count; i++) {
      const due = start + (i * 1000) / job.arrivalsPerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      pending.push(one(measured));
    }
    await Promise.all(pending);
  };
  await run(job.warmupS, false);
  const started = performance.now();
  await run(job.durationS, true);
  const durationS = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / durationS,
    p50Ms: percentileOf(latencies, 0.5),
    p99Ms: percentileOf(latencies, 0.99),
    ok: latencies.length,
    sent,
    non2xx,
    errors,
    timeouts: 0,
    durationS,
    allResponses: sent - errors,
    sequenceUsed: sequence - job.firstSequence,
    inspected,
    rejections,
  };
}

async function loadGenerator(job: LoadJob): Promise<LoadResult> {
  if (job.arrivalsPerSecond !== undefined) return pacedLoad({ ...job, arrivalsPerSecond: job.arrivalsPerSecond });
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  // One counter for all connections: they share this process.
  let sequence = job.firstSequence;
  const request = requestOf(job, () => (sequence += 1));
  let inspected = 0;
  const rejections: Record<string, number> = {};
  if (job.inspect) {
    request.onResponse = (status, body) => {
      if (status < 200 || status > 299) return;
      inspected += 1;
      countRejections(body, rejections);
    };
  }
  const instance = autocannon({
    url: job.origins.length === 1 ? job.origins[0] : job.origins,
    connections: job.connections,
    pipelining: PIPELINING,
    duration: job.durationS,
    timeout: 10,
    ...(job.warmupS > 0 ? { warmup: { connections: job.connections, duration: job.warmupS } } : {}),
    requests: [request],
  });
  // Only the measured run's responses reach this listener: the warm-up has its own tracker.
  const latencies: number[] = [];
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  latencies.sort((a, b) => a - b);
  return {
    rps: result.requests.average,
    p50Ms: percentileOf(latencies, 0.5),
    p99Ms: percentileOf(latencies, 0.99),
    ok: latencies.length,
    sent: result.requests.sent,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    allResponses: result.requests.total + (result.warmup?.requests.total ?? 0),
    sequenceUsed: sequence - job.firstSequence,
    inspected,
    rejections,
  };
}

const job = JSON.parse(process.argv[2] ?? '') as LoadJob;
// Never outlive the orchestrator.
process.on('disconnect', () => process.exit(1));
const result = await loadGenerator(job);
process.send?.(result, () => process.exit(0));
