// The bench's child processes on loopback: starting and tracking them so none outlives the bench,
// waiting until one answers, reading its CPU time, and stopping it.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

export const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 30_000;

const children = new Set<ChildProcess>();
export const alive = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 3000): Promise<void> {
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

export async function freePort(): Promise<number> {
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

/** Keeps the last few KB a child wrote to stderr, for the error message if it dies. */
export function stderrTail(child: ChildProcess): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-4000);
  });
  return () => tail.trim();
}

export interface Fetched {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

export async function get(url: string, init: RequestInit = {}): Promise<Fetched> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2000) });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

/** Polls `url` until it answers 200; fails early when the child exits. */
export async function waitFor200(url: string, child: ChildProcess, name: string, stderr: () => string, init: RequestInit = {}): Promise<Fetched> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!alive(child)) {
      const why = stderr();
      throw new Error(`${name} exited (code ${child.exitCode}, signal ${child.signalCode}) before answering ${url}${why ? `:\n${why}` : ''}`);
    }
    try {
      const fetched = await get(url, init);
      if (fetched.status === 200) return fetched;
      last = `HTTP ${fetched.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(100);
  }
  throw new Error(`${name} did not answer 200 on ${url} within ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

/** Kills every tracked child at once: the last resort on the way out, whatever way that is. */
export function killAll(): void {
  for (const child of children) if (alive(child)) child.kill('SIGKILL');
}

/** Stops every tracked child, gracefully. */
export function stopAll(): Promise<void> {
  return Promise.all([...children].map((child) => stop(child))).then(() => undefined);
}

/**
 * A process's CPU time (user + system) in ms, from /proc (Linux); null elsewhere. USER_HZ is 100
 * on every Linux ABI Node supports.
 */
export function cpuMs(pid: number | undefined): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}
