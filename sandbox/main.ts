// `make sandbox`: the sandbox as a program of its own, in the foreground. It prints one JSON line
// on stdout once its venues and its ledger listen (sandbox/manifest.ts), keeps the same in
// DATA_DIR/sandbox.json while it runs (the wallet CLI reads it; on stopping it gives the file back
// to a sandbox still running whose file it replaced), and stops on SIGINT or SIGTERM.
// The service starts it the same way with --exit-with-stdin: it then also stops when the
// service's end of its stdin closes, which happens however the service ends, so no sandbox is
// left listening behind a dead service.
//
// Its settings are the service's variables of the same names and meanings: SANDBOX_VENUES_PORT
// (the venues' port, 0: any free port), SANDBOX_REGISTRY_PORT and SANDBOX_GATEWAY_PORT (the token
// registries' and the wallet gateway's, 0 by default; the service sets them, with the others, to
// restart a sandbox that stopped where it listened), LEDGER_URL (where its ledger listens, an http:// loopback
// URL with a port, 0: any), LEDGER_TOKEN (the ledger's bearer token; unset, it chooses a random
// one and says it in its line, which whoever set a token of their own needs not read again),
// TRADECRAFT_POOL_PARTIES (the pool parties, the sandbox's own by default), DATA_DIR (./data).
//
// `--without-batching-utility` starts its participant without Splice's batching utility package
// (splice-util-token-standard-wallet), as a participant that never uploaded it: a deposit's fee legs
// cannot then ride with it in one CIP-0112 batch. Its manifest says which (`batchingUtility`).
//
// A fault of its own, for benchmarks and tests: SANDBOX_HANG_PATHS, comma-separated path prefixes on
// the venues' server (e.g. /nightly/nswap/quote): a request whose path starts with one is read and
// never answered, until its client gives up or the sandbox stops. Hang a quote path, not the
// venue's probe path, so the venue stays live and every quote waits on it. A sandbox the service
// starts never has it (the variable is not passed on).
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parsePoolParties, sandboxLedgerUrl } from '../core/config.js';
import { ListenError } from './loopback-server.js';
import { ANNOUNCEMENT_FILE, type SandboxAnnouncement } from './manifest.js';
import { startSandbox, type Sandbox } from './sandbox.js';
import { sandboxLedgerToken } from './ledger/ledger-token.js';

class SettingError extends Error {}

function setting<T>(name: string, fallback: T, parse: (raw: string) => T | undefined, expected: string): T {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = parse(raw.trim());
  if (value === undefined) throw new SettingError(`${name} must be ${expected}`);
  return value;
}

const port = (raw: string) => (/^[0-9]{1,5}$/.test(raw) && Number(raw) <= 65535 ? Number(raw) : undefined);
const pathPrefixes = (raw: string) => {
  const prefixes = raw.split(',').map((p) => p.trim());
  return prefixes.every((p) => /^\/[\x21-\x7e]*$/.test(p)) ? prefixes : undefined;
};

const contentOf = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** Whether another process that wrote `content` (a sandbox's file) still runs, so that its file still says where it is. */
function writerRuns(content: string): boolean {
  let pid: unknown;
  try {
    pid = (JSON.parse(content) as { pid?: unknown }).pid;
  } catch {
    return false;
  }
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * It holds the ledger's token: its owner's to read, as keys.json is, whatever an older file's mode
 * was (a new file, renamed over it).
 */
function writeOwnerOnly(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
  renameSync(temporary, file);
}

/**
 * The file is the process's that wrote it: while it is still this sandbox's own, it goes back to
 * the one it replaced if that sandbox still runs (two sharing a DATA_DIR), or goes. Replaced
 * since by another sandbox, it is that one's, and left alone.
 */
function forget(file: string, ours: string, replaced: string | null): void {
  if (contentOf(file) !== ours) return;
  try {
    if (replaced !== null && writerRuns(replaced)) writeOwnerOnly(file, replaced);
    else rmSync(file);
  } catch {
    // Gone meanwhile: nothing of ours left.
  }
}

const FLAGS = ['--exit-with-stdin', '--without-batching-utility'];

async function main(): Promise<void> {
  const unknown = process.argv.slice(2).find((arg) => !FLAGS.includes(arg));
  if (unknown !== undefined) throw new SettingError(`unknown argument ${unknown.slice(0, 60)}; the sandbox takes ${FLAGS.join(' and ')}`);
  const ledgerUrl = new URL(setting('LEDGER_URL', 'http://127.0.0.1:0', sandboxLedgerUrl, 'an http:// URL on this machine (127.0.0.1, localhost or [::1]) with a port and no path (port 0: any free port)'));
  const dataDir = setting('DATA_DIR', './data', (raw) => raw, 'a directory path');
  const given = setting<string | undefined>('LEDGER_TOKEN', undefined, (raw) => (/^[\x21-\x7e]+$/.test(raw) ? raw : undefined), 'printable ASCII without spaces');
  let sandbox: Sandbox;
  try {
    sandbox = await startSandbox({
      venuesPort: setting('SANDBOX_VENUES_PORT', 0, port, 'an integer from 0 to 65535'),
      registryPort: setting('SANDBOX_REGISTRY_PORT', 0, port, 'an integer from 0 to 65535'),
      gatewayPort: setting('SANDBOX_GATEWAY_PORT', 0, port, 'an integer from 0 to 65535'),
      ledgerHost: ledgerUrl.hostname.replace(/^\[|\]$/g, ''),
      ledgerPort: Number(ledgerUrl.port),
      ledgerToken: given ?? sandboxLedgerToken(randomBytes(24).toString('base64url')),
      poolParties: setting<Record<string, string> | undefined>('TRADECRAFT_POOL_PARTIES', undefined, parsePoolParties, '"CC/USDCx=<party>,CC/CBTC=<party>"'),
      hangPaths: setting<string[]>('SANDBOX_HANG_PATHS', [], pathPrefixes, 'comma-separated paths, each starting with /'),
      batchingUtility: !process.argv.includes('--without-batching-utility'),
      // Names the failure, never its message, which may quote a party.
      onOperatorError: (err) => console.error(`sandbox: the pool operator failed on a deposit offer (${err instanceof Error ? err.name : typeof err}); it stays open`),
    });
  } catch (err) {
    if (err instanceof ListenError) throw new SettingError(err.message);
    throw err;
  }
  const announcement: SandboxAnnouncement = { ...sandbox.manifest, ledgerToken: sandbox.ledgerToken, pid: process.pid };
  const file = path.join(dataDir, ANNOUNCEMENT_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const replaced = contentOf(file);
  const ours = `${JSON.stringify(announcement, null, 2)}\n`;
  writeOwnerOnly(file, ours);
  // The token is said only when the sandbox chose it: whoever set LEDGER_TOKEN knows it.
  const { ledgerToken, ...said } = announcement;
  process.stdout.write(`${JSON.stringify(given === undefined ? { ...said, ledgerToken } : said)}\n`);

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    forget(file, ours, replaced);
    // Again once closed: while it closed it still ran, so a sandbox that stopped meanwhile may have given it back.
    const exit = (code: number) => {
      forget(file, ours, replaced);
      process.exit(code);
    };
    sandbox.close().then(
      () => exit(0),
      () => exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (process.argv.includes('--exit-with-stdin')) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.resume();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof SettingError ? `sandbox: ${err.message}` : `sandbox: could not start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
