// How the service finds the sandbox in sandbox mode, without importing any of it: at SANDBOX_URL
// when set (its manifest read over HTTP), else by starting the sandbox program as a child process
// on free ports (or those SANDBOX_VENUES_PORT and LEDGER_URL name), reading the one line it
// prints once it listens, restarting it where it listened when it stops unasked (supervisor.ts),
// and stopping it when the service closes. The child also stops by itself
// when the service dies: it watches its stdin, whose other end only this process holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { fetchWithin, FetchFailed, originFetch } from '../http-client.js';
import type { CoreLog } from '../log.js';
import { ManifestError, readManifest, withSandbox, type SandboxManifest } from './manifest.js';
import { Supervisor, type Running } from './supervisor.js';

/** The sandbox program, as `make build` leaves it beside the service's own modules. */
const PROGRAM = fileURLToPath(new URL('../../sandbox/main.js', import.meta.url));

/** How long a started sandbox may take to listen; it takes well under a second. */
const START_TIMEOUT_MS = 20_000;
/** How long a stopped sandbox may take to close before it is killed. */
const STOP_TIMEOUT_MS = 5_000;
const MANIFEST_TIMEOUT_MS = 5_000;

/** The sandbox could not be started or reached; the message says why and what to do, in one line. */
export class SandboxUnavailable extends Error {
  override readonly name = 'SandboxUnavailable';
}

export interface SandboxLink {
  /** The service's configuration with the sandbox's venues, ledger, parties and credentials. */
  readonly config: Config;
  /** A started sandbox's state (`restarting` from the moment it stops unasked); null for one at SANDBOX_URL, which the service does not run. */
  state(): 'up' | 'restarting' | null;
  /** Stops a started sandbox (one at SANDBOX_URL is left running). */
  close(): Promise<void>;
}

/** The sandbox of a sandbox-mode configuration, found or started. */
export function linkSandbox(config: Config, log: CoreLog): Promise<SandboxLink> {
  return config.sandboxUrl === null ? startSandbox(config, log) : attachSandbox(config, config.sandboxUrl);
}

async function attachSandbox(config: Config, url: string): Promise<SandboxLink> {
  let answer: { status: number; text: string };
  try {
    answer = await fetchWithin(originFetch(url), `${url}/sandbox/v1/manifest`, { method: 'GET', headers: { accept: 'application/json' } }, MANIFEST_TIMEOUT_MS, new AbortController().signal);
  } catch (err) {
    const why = err instanceof FetchFailed ? err.code : 'no answer';
    throw new SandboxUnavailable(`no sandbox answers at SANDBOX_URL ${url} (${why}): start one with make sandbox, or unset SANDBOX_URL to have the service start its own`);
  }
  if (answer.status !== 200) throw new SandboxUnavailable(`SANDBOX_URL ${url} answered HTTP ${answer.status} for the sandbox's manifest: is it a sandbox's URL, as make sandbox prints it?`);
  const manifest = parse(answer.text, `the sandbox at SANDBOX_URL ${url}`);
  return { config: withSandbox(config, manifest, config.ledgerToken!), state: () => null, close: async () => {} };
}

function parse(text: string, source: string) {
  try {
    return readManifest(JSON.parse(text));
  } catch (err) {
    throw new SandboxUnavailable(`${source} sent a manifest the service cannot use (${err instanceof ManifestError ? err.message : 'not JSON'})`);
  }
}

/** What a started sandbox inherits: the basics a process needs, none of the service's secrets or NODE_OPTIONS. */
const INHERITED = ['PATH', 'HOME', 'TMPDIR', 'TEMP', 'TMP', 'LANG', 'LC_ALL', 'TZ', 'SYSTEMROOT'];

/** The started sandbox's settings: the service's own, under the same names and meanings. */
function childEnv(config: Config): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = Object.fromEntries(INHERITED.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
  env.SANDBOX_VENUES_PORT = String(config.sandboxVenuesPort);
  env.LEDGER_URL = config.ledgerUrl;
  env.DATA_DIR = config.dataDir;
  if (config.ledgerToken !== null) env.LEDGER_TOKEN = config.ledgerToken;
  const pools = Object.entries(config.poolParties);
  if (pools.length > 0) env.TRADECRAFT_POOL_PARTIES = pools.map(([pair, party]) => `${pair}=${party}`).join(',');
  return env;
}

/** A started sandbox: the supervisor's handle on its process, and what it announced. */
interface StartedSandbox extends Running {
  readonly manifest: SandboxManifest;
  readonly ledgerToken: string;
  /** The settings that bring a restarted sandbox back where this one listens, with the same token. */
  readonly pinned: NodeJS.ProcessEnv;
}

/** Starts the sandbox program and reads its announcement; a child that fails to announce is killed. */
async function spawnSandbox(env: NodeJS.ProcessEnv, configuredToken: string | null): Promise<StartedSandbox> {
  // A process group of its own: a terminal's Ctrl-C reaches the service alone, which stops the
  // sandbox once its requests have drained; the stdin pipe ends it however else the service ends.
  const child = spawn(process.execPath, [PROGRAM, '--exit-with-stdin'], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    child.kill('SIGTERM');
    await exited;
    clearTimeout(killer);
  };
  try {
    const line = await firstLine(child);
    const { manifest, ledgerToken } = parseAnnouncement(line, configuredToken);
    // Whatever it says from here on (an operator failure) is the sandbox's own log, passed on as is.
    child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.stdout!.resume();
    return { pid: child.pid, exited, stop, manifest, ledgerToken, pinned: pinnedEnv(manifest, ledgerToken) };
  } catch (err) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    throw err;
  }
}

/** The port of each of the sandbox's servers, as the settings that choose them, and its token. */
function pinnedEnv(manifest: SandboxManifest, ledgerToken: string): NodeJS.ProcessEnv {
  const portOf = (url: string) => new URL(url).port;
  const env: NodeJS.ProcessEnv = { SANDBOX_VENUES_PORT: portOf(manifest.sandbox), LEDGER_URL: manifest.ledger, LEDGER_TOKEN: ledgerToken, SANDBOX_GATEWAY_PORT: portOf(manifest.walletGateway) };
  // Every registry is on one server.
  const registry = Object.values(manifest.registries)[0];
  if (registry !== undefined) env.SANDBOX_REGISTRY_PORT = portOf(registry);
  return env;
}

/** Where the service reaches a sandbox: a restarted one must be there again. */
const addresses = (m: SandboxManifest) => JSON.stringify([m.sandbox, m.venues, m.ledger, m.registries, m.walletGateway]);

async function startSandbox(config: Config, log: CoreLog): Promise<SandboxLink> {
  if (!existsSync(PROGRAM)) throw new SandboxUnavailable(`the sandbox program is not built (${PROGRAM}): run make build`);
  const env = childEnv(config);
  const first = await spawnSandbox(env, config.ledgerToken);
  let applied: Config;
  try {
    applied = withSandbox(config, first.manifest, first.ledgerToken);
  } catch (err) {
    await first.stop();
    throw err;
  }
  const supervisor = new Supervisor<StartedSandbox>(first, {
    what: 'the sandbox',
    log,
    firstWaitMs: config.sandboxRestartWaitMs,
    // Where it listened, with the same token: the venues, ledger and registries the service was configured with.
    restart: async () => {
      const next = await spawnSandbox({ ...env, ...first.pinned }, first.ledgerToken);
      if (addresses(next.manifest) !== addresses(first.manifest)) {
        await next.stop();
        throw new SandboxUnavailable('the restarted sandbox listens elsewhere');
      }
      return next;
    },
  });
  log.info({ sandboxPid: first.pid, url: first.manifest.sandbox, ledger: first.manifest.ledger }, 'sandbox started');
  return { config: applied, state: () => (supervisor.state === 'restarting' ? 'restarting' : 'up'), close: () => supervisor.close() };
}

/** The sandbox's line: its manifest, and its ledger's token unless the service set it (LEDGER_TOKEN). */
function parseAnnouncement(line: string, configured: string | null) {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new SandboxUnavailable(`the sandbox printed a line that is not its manifest: ${JSON.stringify(line.slice(0, 200))}`);
  }
  const announced = (value as { ledgerToken?: unknown }).ledgerToken;
  const token = configured ?? (typeof announced === 'string' && /^[\x21-\x7e]+$/.test(announced) ? announced : null);
  if (token === null) throw new SandboxUnavailable('the sandbox announced no ledger token');
  return { manifest: parse(line, 'the started sandbox'), ledgerToken: token };
}

/** What a dying child said last that explains it: its own `sandbox:` line, else an error line. */
function lastWord(stderr: string): string | undefined {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const own = lines.filter((l) => l.startsWith('sandbox: ')).pop();
  return own?.replace(/^sandbox: /, '') ?? lines.find((l) => /Error\b/.test(l)) ?? lines.pop();
}

/** The child's first line on stdout; SandboxUnavailable with its own last word when it ends or stalls first. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    if (!child.stdout || !child.stderr) {
      child.once('error', (e) => reject(new SandboxUnavailable(`the sandbox could not be started: ${e.message}`)));
      return;
    }
    let out = '';
    let err = '';
    const timer = setTimeout(() => finish(new SandboxUnavailable(`the sandbox did not start within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
    const onOut = (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end >= 0) finish(null, out.slice(0, end));
    };
    const onErr = (chunk: Buffer) => void (err += chunk.toString('utf8'));
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      finish(new SandboxUnavailable(`the sandbox did not start: ${lastWord(err) ?? `it exited (${signal ?? `code ${code}`})`}`));
    };
    const onError = (e: Error) => finish(new SandboxUnavailable(`the sandbox could not be started: ${e.message}`));
    const finish = (error: Error | null, line?: string) => {
      clearTimeout(timer);
      child.stdout!.off('data', onOut);
      child.stderr!.off('data', onErr);
      child.off('exit', onExit);
      child.off('error', onError);
      if (error) reject(error);
      else resolve(line!);
    };
    child.stdout!.on('data', onOut);
    child.stderr!.on('data', onErr);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}
