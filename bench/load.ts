// Load generation: one process per measurement (bench/load-generator.ts, autocannon's programmatic
// API, 10 connections, pipelining 1), so that on a 2-core machine the server under test has one
// core and the load generator the other. Varying-path runs send a new amount on every request, so
// every request is a cache miss; amounts stay distinct across rounds (each run continues where the
// previous one stopped), and each fresh round sends more distinct amounts than
// QUOTE_CACHE_MAX_ENTRIES' default (10000), so the cache evicts while it runs: eviction is part of
// the real miss path.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { track } from './processes.js';

export const CONNECTIONS = 10;
export const PIPELINING = 1;
export const FRESH_PATH_PREFIX = '/api/quote?from=CC&to=USDCx&amount=';

const GENERATOR = fileURLToPath(new URL('./load-generator.js', import.meta.url));

export interface LoadJob {
  readonly title: string;
  readonly url: string;
  readonly warmupS: number;
  readonly durationS: number;
  /** Vary the amount on every request (a cache miss on every request for the service). */
  readonly varyAmount: boolean;
  /** With varyAmount: the amounts sent are 100 + (firstAmount + 1) * 1e-10, 100 + (firstAmount + 2) * 1e-10, ... */
  readonly firstAmount: number;
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
  /** Varying-path runs: how many distinct amounts were sent, warm-up included. */
  readonly distinctAmounts: number | null;
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
