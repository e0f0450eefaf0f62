// The service as `make run` runs it, in a process of its own on a free port with its own sandbox
// process and data directory: for the tests that use it from outside, as an operator or a
// partner's example does.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { plainChild } from './plain-child.js';
import { tempDir } from './temp.js';

export const MAIN = fileURLToPath(new URL('../../handlers/main.js', import.meta.url));

export interface Run {
  readonly child: ChildProcess;
  readonly dataDir: string;
  stdout(): string;
  stderr(): string;
}

/** What a process's data folder hangs on: the test that runs it. */
type Owner = { teardown(fn: () => void): void };

/** `program` started with `env`; without a DATA_DIR in it, with one of its own, removed when `t` ends. */
export function run(t: Owner, program: string, env: Record<string, string>, args: string[] = []): Run {
  const dataDir = env.DATA_DIR ?? tempDir(t, 'bestex-process-');
  const { LEDGER_URL: _ledger, SANDBOX_URL: _sandbox, LEDGER_TOKEN: _token, ...inherited } = process.env;
  const child = spawn(...plainChild(process.execPath, [program, ...args]), { env: { ...inherited, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return { child, dataDir, stdout: () => stdout, stderr: () => stderr };
}

// Generous: a bound on a wait for a process, not a measure of speed; a busy host may take long to start one.
export async function until<T>(read: () => T | undefined | null | false | Promise<T | null>, what: string, ms = 60_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; ) {
    const value = await read();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const logLines = (r: Run) => r.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

/** The service, listening, and the sandbox it started. */
export async function service(t: Owner, env: Record<string, string> = {}) {
  const r = run(t, MAIN, env);
  t.teardown(() => r.child.kill('SIGKILL'));
  const address = await until(() => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(r.stdout())?.[1], `the service to listen (stderr: ${r.stderr()})`);
  const line = logLines(r).find((l) => l.msg === 'sandbox started') as { sandboxPid: number; url: string; ledger: string } | undefined;
  if (!line) throw new Error('no "sandbox started" line');
  const started = { pid: line.sandboxPid, url: line.url, ledger: line.ledger };
  t.teardown(() => alive(started.pid) && process.kill(started.pid, 'SIGKILL'));
  return { ...r, address, sandbox: started };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

