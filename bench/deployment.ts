// What the bench runs, each in a process of its own on loopback: the sandbox (`node
// dist/sandbox/main.js`, as `make sandbox` runs it), the service pointed at it by SANDBOX_URL, as a
// deployment points it at real venues, and the baselines. Every child is tracked (processes.ts), so
// none outlives the bench.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SandboxAnnouncement } from '../sandbox/manifest.js';
import { alive, freePort, get, HOST, stderrTail, track, waitFor200 } from './processes.js';

export const entry = (relative: string): string => {
  const file = fileURLToPath(new URL(relative, import.meta.url));
  if (!existsSync(file)) throw new Error(`${file} is missing: build first (make build)`);
  return file;
};

export interface Server {
  readonly name: string;
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly stderr: () => string;
}

export interface RunningSandbox {
  readonly name: string;
  readonly child: ChildProcess;
  readonly announcement: SandboxAnnouncement;
  readonly stderr: () => string;
}

/** Only what a process needs to run: none of the shell's settings reach the sandbox. */
function basicEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
}

/**
 * Starts the sandbox program with its ledger token set (so it never prints one) and reads the line
 * it prints once it listens. --exit-with-stdin: it also stops when this process dies.
 */
export async function startSandbox(name: string, dataDir: string, ledgerToken: string, hangPaths: readonly string[] = []): Promise<RunningSandbox> {
  mkdirSync(dataDir, { recursive: true });
  const child = track(
    spawn(process.execPath, [entry('../sandbox/main.js'), '--exit-with-stdin'], {
      env: {
        ...basicEnv(),
        DATA_DIR: dataDir,
        SANDBOX_VENUES_PORT: '0',
        LEDGER_URL: `http://${HOST}:0`,
        LEDGER_TOKEN: ledgerToken,
        ...(hangPaths.length > 0 ? { SANDBOX_HANG_PATHS: hangPaths.join(',') } : {}),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  const stderr = stderrTail(child);
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${name} printed no line within 30 s: ${stderr()}`)), 30_000);
    lines.once('line', (text) => {
      clearTimeout(timer);
      // Whatever else it writes is drained, so it never blocks on a full pipe.
      child.stdout!.resume();
      resolve(text);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it listened: ${stderr()}`));
    });
  });
  return { name, child, announcement: JSON.parse(line) as SandboxAnnouncement, stderr };
}

export interface ServiceOptions {
  readonly dataDir: string;
  readonly sandbox: RunningSandbox;
  readonly ledgerToken: string;
  /** '' for the in-process shared state. */
  readonly redisUrl: string;
  /** Set on top of the shell's environment and the bench's own settings. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Rate limits out of reach: one client on one IP drives the service; every request is admitted, its window still counted. */
const UNLIMITED = '1000000000';
/** The plan records a run keeps: more than a run makes, so the bench measures plans, not the bound. */
export const PLAN_RECORDS = '10000000';
/** One secret for every instance of a run, as instances sharing REDIS_URL must have. */
const IDEMPOTENCY_SECRET = randomBytes(32).toString('hex');

/**
 * The service's environment as a deployment sets it: logging at info, against the sandbox by
 * SANDBOX_URL, on `port`. It inherits the shell's environment, so QUOTE_CACHE_MAX_ENTRIES or any
 * other setting can be set from there; the bench's own win.
 */
export function serviceEnv(options: ServiceOptions, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PORT: String(port),
    HOST,
    LOG_LEVEL: 'info',
    VENUES: 'sandbox',
    SANDBOX_URL: options.sandbox.announcement.sandbox,
    LEDGER_TOKEN: options.ledgerToken,
    LEDGER_URL: `http://${HOST}:0`,
    DATA_DIR: options.dataDir,
    REDIS_URL: options.redisUrl,
    IDEMPOTENCY_SECRET,
    STATE_MAX_PLAN_RECORDS: PLAN_RECORDS,
    RATE_LIMIT_KEYLESS_PER_MINUTE: UNLIMITED,
    RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: UNLIMITED,
    // Every plan comes from one IP: its share of records, counted still, is raised as far as it goes.
    PLAN_RECORDS_PER_IP: PLAN_RECORDS,
    ...options.env,
  };
}

/** Starts the service as a deployment runs it (serviceEnv), stdout to /dev/null, so its log is written, not kept. */
export async function startService(name: string, options: ServiceOptions): Promise<Server> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = await freePort();
  const child = track(spawn(process.execPath, [entry('../handlers/main.js')], { env: serviceEnv(options, port), stdio: ['ignore', 'ignore', 'pipe'] }));
  const server = { name, child, url: `http://${HOST}:${port}`, stderr: stderrTail(child) };
  await waitFor200(`${server.url}/api/status`, child, name, server.stderr);
  return server;
}

/** Starts one of the baselines (bench/<file>.js); ready once `ready.path` answers 200. */
export async function startBaseline(name: string, file: string, env: Readonly<Record<string, string>>, ready: { path: string; init?: RequestInit }): Promise<Server> {
  const port = await freePort();
  const child = track(
    spawn(process.execPath, [entry(file)], {
      env: { ...basicEnv(), ...env, BENCH_BASELINE_PORT: String(port) },
      // stdin stays open as a pipe: the baseline exits when it closes, i.e. when this process dies.
      stdio: ['pipe', 'ignore', 'pipe'],
    }),
  );
  const server = { name, child, url: `http://${HOST}:${port}`, stderr: stderrTail(child) };
  await waitFor200(`${server.url}${ready.path}`, child, name, server.stderr, ready.init);
  return server;
}

/** Waits until the service's liveness reads `venue` live (its background probe has run). */
export async function waitForLive(service: Server, venue: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (!alive(service.child)) throw new Error(`${service.name} exited: ${service.stderr()}`);
    const answer = await get(`${service.url}/api/liveness?venue=${venue}`).catch(() => null);
    if (answer?.status === 200 && (JSON.parse(answer.body.toString('utf8')) as { state?: string }).state === 'live') return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${service.name} never read ${venue} live within 30 s`);
}

/** A data directory of its own per process: the sandbox and the service each keep a sandbox.json. */
export const dataDirOf = (root: string, name: string): string => path.join(root, name.replace(/[^a-z0-9]+/gi, '-'));
