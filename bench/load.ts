// Load generation: one process per measurement (bench/load-generator.ts, autocannon's programmatic
// API, pipelining 1), so that on a 2-core machine the server under test has one core and the load
// generator the other. Three kinds of load: the cached quote's one URL; a new amount on every
// request (every request a cache miss for the service); and a keyless plan with a new
// idempotencyKey on every request (never a replay). The cached quote and the plan are asked in
// API version 1 or 2 (the same request under /api/v2/). Amounts and keys continue where the previous
// run stopped (`firstSequence`), so none repeats within a bench run, and each fresh round sends
// more distinct amounts than QUOTE_CACHE_MAX_ENTRIES' default (10000), so the cache evicts while
// it runs: eviction is part of the real miss path.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { track } from './processes.js';

export const CONNECTIONS = 10;
export const PIPELINING = 1;
export const CACHED_PATH = '/api/quote?from=CC&to=USDCx&amount=100';
export const FRESH_PATH_PREFIX = '/api/quote?from=CC&to=USDCx&amount=';
export const PLAN_PATH = '/api/app/plan';
export const CACHED_PATH_V2 = '/api/v2/quote?from=CC&to=USDCx&amount=100';
export const PLAN_PATH_V2 = '/api/v2/app/plan';

const GENERATOR = fileURLToPath(new URL('./load-generator.js', import.meta.url));

export type LoadKind = 'cached' | 'fresh' | 'plan';

export interface LoadJob {
  readonly title: string;
  /** The servers' origins; connections are spread over them in turn. */
  readonly origins: readonly string[];
  readonly kind: LoadKind;
  /** The API version the cached quote or the plan is asked in (1 unless 2). */
  readonly apiVersion?: 2;
  readonly connections: number;
  readonly warmupS: number;
  readonly durationS: number;
  /** fresh: amounts 100 + (firstSequence + 1) * 1e-10, ...; plan: idempotencyKeys <keyPrefix>-<firstSequence + 1>, ... */
  readonly firstSequence: number;
  /** plan: the request body, without its idempotencyKey. */
  readonly planBody?: Readonly<Record<string, string>>;
  readonly keyPrefix?: string;
  /** Parse every 2xx body (warm-up included) and count venues[].rejectionCode per venue. */
  readonly inspect: boolean;
  /**
   * Open loop (fresh quotes only): requests start at this many evenly spaced moments per second,
   * whether or not earlier ones have been answered, over at most `connections` connections.
   * Without it, each connection sends its next request when its last is answered (closed loop).
   */
  readonly arrivalsPerSecond?: number;
}

export interface LoadResult {
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly ok: number;
  readonly sent: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly durationS: number;
  /** Responses in the warm-up and the measured run together (for CPU per request). */
  readonly allResponses: number;
  /** Amounts or idempotencyKeys used, warm-up included (0 for the cached quote). */
  readonly sequenceUsed: number;
  /** With `inspect`: bodies read, and `<venueId> <rejectionCode>` -> how many of them said so. */
  readonly inspected: number;
  readonly rejections: Readonly<Record<string, number>>;
}

export function runLoad(job: LoadJob): Promise<LoadResult> {
  const limitS = job.warmupS + job.durationS + 30;
  return new Promise((resolve, reject) => {
    const child = track(fork(GENERATOR, [JSON.stringify(job)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    let result: LoadResult | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the load generator for ${job.title} did not finish within ${limitS} s`));
    }, limitS * 1000);
    child.on('message', (message) => {
      result = message as LoadResult;
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (result) resolve(result);
      else reject(new Error(`the load generator for ${job.title} exited (code ${code}, signal ${signal}) without a result`));
    });
  });
}
