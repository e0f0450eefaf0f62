// A SQLite file one process owns (the embedded stores in DATA_DIR: core/plan-status/, core/webhooks/).
// The file is locked once, for the process (`locking_mode=EXCLUSIVE`): node-sqlite3-wasm locks by
// making a `<file>.lock` directory, which a killed process leaves behind. So the owner is named in
// `<file>.owner`, and a next process takes the file over (removing the stale lock) only from one
// that is gone.
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** The stores this process owns: a second store on one file in one process is refused as another process's would be. */
const OWNED = new Set<string>();

const ownerFile = (file: string): string => `${file}.owner`;

/**
 * Makes this process the store's one owner, or throws naming the owner it found: a live process on
 * this host, or any on another (its pid cannot be checked there). An owner that is gone (no such
 * pid, or this very pid in an earlier life, as a container's pid 1 is) is taken over, with the
 * SQLite lock it left.
 */
export function takeOwnership(file: string): void {
  if (OWNED.has(file)) throw new Error(`${file} is open already in this process`);
  const me = { pid: process.pid, host: hostname() };
  for (let tries = 0; tries < 3; tries++) {
    try {
      writeFileSync(ownerFile(file), JSON.stringify(me), { flag: 'wx', mode: 0o600 });
      rmSync(`${file}.lock`, { recursive: true, force: true });
      OWNED.add(file);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const held = ownerOf(file);
    if (held !== null && (held.host !== me.host || (held.pid !== me.pid && isAlive(held.pid)))) {
      throw new Error(`${file} is in use by process ${held.pid} on ${held.host}: one instance per DATA_DIR (if that process is gone, remove ${ownerFile(file)})`);
    }
    rmSync(ownerFile(file), { force: true });
  }
  throw new Error(`${file}: could not take it over from the process that left ${ownerFile(file)}`);
}

export function releaseOwnership(file: string): void {
  OWNED.delete(file);
  const held = ownerOf(file);
  if (held?.pid === process.pid && held.host === hostname()) unlinkSync(ownerFile(file));
}

/** Who the owner file names; null for one that is unreadable or half written (its writer is gone). */
function ownerOf(file: string): { pid: number; host: string } | null {
  try {
    const held = JSON.parse(readFileSync(ownerFile(file), 'utf8')) as { pid?: unknown; host?: unknown };
    return typeof held.pid === 'number' && typeof held.host === 'string' ? { pid: held.pid, host: held.host } : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
