// `make bench`: how fast the service answers a keyless quote, as a ratio of a bare fastify server
// that returns the same bytes, both measured in the same run on the same machine.
//
// Why ratios: absolute requests/s depend on the machine, its load and its Node; a fixed rps target
// would pass on a laptop and fail on a small CI runner. The baseline (scripts/bench-baseline.ts)
// is fastify with one route that sends the cached quote's exact body and headers, so
// "service / baseline" is the share of the fastify ceiling the service keeps after its own work
// (spec-driven routing, validation, parameter parsing, the quote cache, the access log). Machine
// speed cancels out of the ratio; the targets are cached >= 0.8x and fresh >= 0.3x.
//
// What runs, all on loopback (127.0.0.1), each in its own process so that on a 2-core machine the
// server under test has one core and the load generator the other:
//   - the service, `node dist/handlers/main.js`, PORT=<free port> HOST=127.0.0.1 LOG_LEVEL=info,
//     stdout to /dev/null: logging stays on, as in production, it just is not kept;
//   - the baseline, with fastify's logger off (it is the ceiling, not a copy of the service);
//   - one load-generator process per target: this same file with `--load`, running autocannon's
//     programmatic API (10 connections, pipelining 1, 2 s warm-up then 8 s measured).
// Targets: (1) the cached keyless quote GET /api/quote?from=CC&to=USDCx&amount=100; (2) a fresh
// keyless quote, where every request carries a new amount (100.0000000001, 100.0000000002, ...) so
// every request is a cache miss; (3) the baseline. Latency percentiles are computed here from
// every 2xx response time (autocannon's own histogram keeps whole milliseconds only, too coarse
// for sub-millisecond loopback latencies); requests/s is autocannon's mean of per-second samples.
// On Linux the table also shows each server's CPU time per response (from /proc): informational,
// and steadier than requests/s when other processes share the machine.
//
// The fresh run sends more distinct amounts than QUOTE_CACHE_MAX_ENTRIES' default (10000), so the
// cache evicts while it runs: eviction is part of the real miss path, so the default is kept. The
// service inherits this process's environment, so QUOTE_CACHE_MAX_ENTRIES (or any other setting)
// can be overridden from the shell; PORT, HOST and LOG_LEVEL are always set by the bench.
//
// Environment: BENCH_DURATION_S (measured seconds per target, default 8), BENCH_WARMUP_S
// (default 2). Exit status 1 when a target is missed or a run saw errors or non-2xx answers,
// after everything is printed; every child process is stopped on the way out, even on error.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HOST = '127.0.0.1';
const CONNECTIONS = 10;
const PIPELINING = 1;
const CACHED_PATH = '/api/quote?from=CC&to=USDCx&amount=100';
const FRESH_PATH_PREFIX = '/api/quote?from=CC&to=USDCx&amount=';
/** The headers the baseline copies from the service's cached-quote response. */
const COPIED_HEADERS = ['content-type', 'cache-control', 'x-service-api-version', 'x-service-build'] as const;
const READY_TIMEOUT_MS = 30_000;

const TARGETS = [
  { name: 'cached keyless quote', min: 0.8 },
  { name: 'fresh keyless quote', min: 0.3 },
] as const;
const BASELINE_NAME = 'bare fastify baseline';

interface LoadJob {
  readonly title: string;
  readonly url: string;
  readonly warmupS: number;
  readonly durationS: number;
  /** Vary the amount on every request (cache miss on every request). */
  readonly fresh: boolean;
}

interface LoadResult {
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
  /** Fresh runs: how many distinct amounts were sent, warm-up included. */
  readonly distinctAmounts: number | null;
}

const selfPath = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------------------------
// The load-generator process: `node bench.js --load <job JSON>`; sends its LoadResult over IPC.

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
    return `${FRESH_PATH_PREFIX}100.${String(amounts).padStart(10, '0')}`;
  };
  const instance = autocannon({
    url: job.url,
    connections: CONNECTIONS,
    pipelining: PIPELINING,
    duration: job.durationS,
    timeout: 10,
    ...(job.warmupS > 0 ? { warmup: { connections: CONNECTIONS, duration: job.warmupS } } : {}),
    ...(job.fresh
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
    distinctAmounts: job.fresh ? amounts : null,
  };
}

// ---------------------------------------------------------------------------------------------
// The orchestrator.

const children = new Set<ChildProcess>();
/** The temp dir holding the baseline's body file; removed on the way out. */
let tmpDir: string | null = null;
const alive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
async function stop(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (!alive(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => {
    if (alive(child)) child.kill('SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host: HOST, port: 0 }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not read a free port'))));
    });
  });
}

function seconds(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > 600) {
    throw new Error(`${name} must be a number of seconds from ${min} to 600 (got ${JSON.stringify(raw)})`);
  }
  return value;
}

/** Keeps the last few KB a child wrote to stderr, for the error message if it dies. */
function stderrTail(child: ChildProcess): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  return () => tail.trim();
}

interface Fetched {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

async function get(url: string): Promise<Fetched> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

/** Polls `url` until it answers 200; fails early when the child exits. */
async function waitFor200(url: string, child: ChildProcess, name: string, stderr: () => string): Promise<Fetched> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!alive(child)) {
      const why = stderr();
      throw new Error(`${name} exited (code ${child.exitCode}, signal ${child.signalCode}) before answering ${url}${why ? `:\n${why}` : ''}`);
    }
    try {
      const fetched = await get(url);
      if (fetched.status === 200) return fetched;
      last = `HTTP ${fetched.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(100);
  }
  throw new Error(`${name} did not answer 200 on ${url} within ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

function runLoad(job: LoadJob): Promise<LoadResult> {
  const limitS = job.warmupS + job.durationS + 30;
  return new Promise((resolve, reject) => {
    const child = track(fork(selfPath, ['--load', JSON.stringify(job)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
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

/**
 * A process's CPU time (user + system) in ms, from /proc (Linux); null elsewhere. USER_HZ is 100
 * on every Linux ABI Node supports.
 */
function cpuMs(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

const fmt = (x: number, digits: number): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

interface Measured extends LoadResult {
  /** The server's CPU time per response over warm-up and run, in µs; NaN without /proc. */
  readonly serverCpuUs: number;
}

function table(rows: ReadonlyArray<readonly [string, Measured]>): string {
  const head = ['target', 'req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'errors', 'server CPU µs/req'];
  const body = rows.map(([name, r]) => [
    name,
    fmt(r.rps, 0),
    fmt(r.p50Ms, 3),
    fmt(r.p99Ms, 3),
    String(r.ok),
    String(r.non2xx),
    String(r.errors + r.timeouts),
    fmt(r.serverCpuUs, 0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}

async function main(): Promise<number> {
  const durationS = seconds('BENCH_DURATION_S', 8, 1);
  const warmupS = seconds('BENCH_WARMUP_S', 2, 0);
  const serviceEntry = fileURLToPath(new URL('../handlers/main.js', import.meta.url));
  const baselineEntry = fileURLToPath(new URL('./bench-baseline.js', import.meta.url));
  for (const entry of [serviceEntry, baselineEntry]) {
    if (!existsSync(entry)) throw new Error(`${entry} is missing: build first (make build)`);
  }
  const cpus = os.cpus();
  console.log(
    `bestex bench: node ${process.version}, ${cpus.length} CPU(s) (${cpus[0]?.model.trim() ?? 'unknown'}); ` +
      `autocannon ${CONNECTIONS} connections, pipelining ${PIPELINING}, ${warmupS} s warm-up + ${durationS} s per target, on ${HOST}`,
  );

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'bestex-bench-'));
  tmpDir = tmp;
  try {
    const servicePort = await freePort();
    console.log(`starting service (node ${path.relative(process.cwd(), serviceEntry)}, LOG_LEVEL=info, stdout to /dev/null) on ${HOST}:${servicePort}…`);
    const service = track(
      spawn(process.execPath, [serviceEntry], {
        env: { ...process.env, PORT: String(servicePort), HOST, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    const serviceStderr = stderrTail(service);
    const serviceUrl = `http://${HOST}:${servicePort}`;
    await waitFor200(`${serviceUrl}/api/status`, service, 'the service', serviceStderr);
    console.log('service ready (GET /api/status answered 200)');

    console.log(`fetching the cached keyless quote once (GET ${CACHED_PATH})…`);
    const quote = await get(`${serviceUrl}${CACHED_PATH}`);
    if (quote.status !== 200) throw new Error(`GET ${CACHED_PATH} answered ${quote.status}: ${quote.body.toString('utf8').slice(0, 500)}`);
    const headers: Record<string, string> = {};
    for (const name of COPIED_HEADERS) {
      const value = quote.headers.get(name);
      if (value === null) throw new Error(`the service's quote response has no ${name} header`);
      headers[name] = value;
    }
    const bodyFile = path.join(tmp, 'quote-body.json');
    writeFileSync(bodyFile, quote.body);
    console.log(`  ${quote.body.length} bytes; ${COPIED_HEADERS.map((h) => `${h}: ${headers[h]}`).join('; ')}`);

    const baselinePort = await freePort();
    console.log(`starting bare fastify baseline (fastify logger OFF; same body and headers) on ${HOST}:${baselinePort}…`);
    const baseline = track(
      spawn(process.execPath, [baselineEntry], {
        env: {
          ...process.env,
          BENCH_BASELINE_PORT: String(baselinePort),
          BENCH_BASELINE_BODY_FILE: bodyFile,
          BENCH_BASELINE_HEADERS: JSON.stringify(headers),
        },
        // stdin stays open as a pipe: the baseline exits when it closes, i.e. when this process dies.
        stdio: ['pipe', 'ignore', 'pipe'],
      }),
    );
    const baselineStderr = stderrTail(baseline);
    const baselineUrl = `http://${HOST}:${baselinePort}`;
    const copy = await waitFor200(`${baselineUrl}${CACHED_PATH}`, baseline, 'the baseline', baselineStderr);
    if (!copy.body.equals(quote.body)) throw new Error('the baseline does not return the same body bytes as the service');
    for (const name of COPIED_HEADERS) {
      if (copy.headers.get(name) !== headers[name]) {
        throw new Error(`the baseline's ${name} header is ${JSON.stringify(copy.headers.get(name))}, not ${JSON.stringify(headers[name])}`);
      }
    }
    console.log('baseline ready: identical body bytes and headers');

    const jobs: ReadonlyArray<readonly [string, ChildProcess, LoadJob]> = [
      [BASELINE_NAME, baseline, { title: BASELINE_NAME, url: `${baselineUrl}${CACHED_PATH}`, warmupS, durationS, fresh: false }],
      [TARGETS[0].name, service, { title: TARGETS[0].name, url: `${serviceUrl}${CACHED_PATH}`, warmupS, durationS, fresh: false }],
      [TARGETS[1].name, service, { title: TARGETS[1].name, url: `${serviceUrl}/api/quote`, warmupS, durationS, fresh: true }],
    ];
    const [load1] = os.loadavg();
    if (load1 !== undefined && load1 > cpus.length / 2) {
      console.log(`note: 1-minute load average is ${load1.toFixed(1)} on ${cpus.length} CPU(s): other processes compete for the CPU, expect noisy numbers`);
    }
    const results = new Map<string, Measured>();
    for (const [name, server, job] of jobs) {
      console.log(`measuring ${name} (${warmupS > 0 ? `${warmupS} s warm-up + ` : ''}${durationS} s)…`);
      const cpuBefore = cpuMs(server.pid);
      const loaded = await runLoad(job);
      const cpuAfter = cpuMs(server.pid);
      const serverCpuUs =
        cpuBefore === null || cpuAfter === null || loaded.allResponses === 0 ? Number.NaN : ((cpuAfter - cpuBefore) * 1000) / loaded.allResponses;
      const result: Measured = { ...loaded, serverCpuUs };
      results.set(name, result);
      const extra = result.distinctAmounts === null ? '' : `, ${result.distinctAmounts} distinct amounts sent incl. warm-up`;
      console.log(`  ${fmt(result.rps, 0)} req/s, p50 ${fmt(result.p50Ms, 3)} ms, p99 ${fmt(result.p99Ms, 3)} ms${extra}`);
      if (!alive(service)) throw new Error(`the service exited during the ${name} run:\n${serviceStderr()}`);
    }

    const base = results.get(BASELINE_NAME) as Measured;
    console.log('');
    console.log(table(jobs.map(([name]) => [name, results.get(name) as Measured] as const)));
    console.log('');
    let failed = false;
    for (const [name, r] of results) {
      if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0 || r.ok === 0) {
        failed = true;
        console.log(`${name}: INVALID RUN (${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts, ${r.ok} 2xx)`);
      }
    }
    for (const { name, min } of TARGETS) {
      const ratio = (results.get(name) as LoadResult).rps / base.rps;
      const pass = Number.isFinite(ratio) && ratio >= min;
      if (!pass) failed = true;
      console.log(`${name} / baseline: ${fmt(ratio, 2)}x (target >= ${min}x) ${pass ? 'PASS' : 'FAIL'}`);
    }
    console.log('(baseline: bare fastify, logger off; service: LOG_LEVEL=info, access log on, stdout to /dev/null)');
    console.log('(server CPU µs/req: the server process\'s CPU time over warm-up and run per response; informational, steadier than req/s on a busy machine)');
    return failed ? 1 : 0;
  } finally {
    await Promise.all([...children].map((child) => stop(child)));
    rmSync(tmp, { recursive: true, force: true });
    tmpDir = null;
  }
}

if (process.argv[2] === '--load') {
  const job = JSON.parse(process.argv[3] ?? '') as LoadJob;
  // Never outlive the orchestrator.
  process.on('disconnect', () => process.exit(1));
  const result = await loadGenerator(job);
  process.send?.(result, () => process.exit(0));
} else {
  // Last resort: whatever way this process ends, no child outlives it.
  process.on('exit', () => {
    for (const child of children) if (alive(child)) child.kill('SIGKILL');
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
    process.exitCode = 1;
  }
}
