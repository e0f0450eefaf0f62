// One measurement's load, in a process of its own: `node load-generator.js <job JSON>`, forked by
// bench/load.ts, sends its LoadResult over IPC and exits. Latency percentiles are computed here
// from every 2xx response time (autocannon's own histogram keeps whole milliseconds only, too
// coarse for sub-millisecond loopback latencies); requests/s is autocannon's mean of per-second
// samples.
import { createRequire } from 'node:module';
import { CONNECTIONS, FRESH_PATH_PREFIX, PIPELINING, type LoadJob, type LoadResult } from './load.js';

/** The slice of autocannon v8's programmatic API used here (it ships no type declarations). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  setupRequest?: (request: AutocannonRequest, context: object) => AutocannonRequest;
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

async function loadGenerator(job: LoadJob): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  let amounts = 0;
  // 10 fractional digits is the most an amount may carry; 100 + n * 1e-10 stays distinct for
  // 9,999,999,999 requests. One counter for all connections: they share this process.
  const nextFreshPath = (): string => {
    amounts += 1;
    return `${FRESH_PATH_PREFIX}100.${String(job.firstAmount + amounts).padStart(10, '0')}`;
  };
  const instance = autocannon({
    url: job.url,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: job.durationS,
    timeout: 10,
    ...(job.warmupS > 0 ? { warmup: { connections: CONNECTIONS, duration: job.warmupS } } : {}),
    ...(job.varyAmount
      ? { requests: [{ method: 'GET', setupRequest: (request: AutocannonRequest) => ({ ...request, path: nextFreshPath() }) }] }
      : {}),
  });
  // Only the measured run's responses reach this listener: the warm-up has its own tracker.
  const latencies: number[] = [];
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  latencies.sort((a, b) => a - b);
  const percentile = (q: number): number =>
    latencies.length === 0 ? Number.NaN : (latencies[Math.min(latencies.length - 1, Math.max(0, Math.ceil(q * latencies.length) - 1))] as number);
  return {
    rps: result.requests.average,
    p50Ms: percentile(0.5),
    p99Ms: percentile(0.99),
    ok: latencies.length,
    sent: result.requests.sent,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    allResponses: result.requests.total + (result.warmup?.requests.total ?? 0),
    distinctAmounts: job.varyAmount ? amounts : null,
  };
}

const job = JSON.parse(process.argv[2] ?? '') as LoadJob;
// Never outlive the orchestrator.
process.on('disconnect', () => process.exit(1));
const result = await loadGenerator(job);
process.send?.(result, () => process.exit(0));
