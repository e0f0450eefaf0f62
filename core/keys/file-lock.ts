// The key store's writer lock (core/keys/file-store.ts): a lock file beside keys.json, held by
// one writer at a time across processes and hosts sharing DATA_DIR.
//
// A writer holds keys.json.lock, created with O_EXCL, for the few milliseconds of a
// read-modify-write; the file holds its pid, host, time and a random token. A writer that dies
// leaves it behind, so a lock is stale, and may be broken, when its pid is dead on this host or
// it is older than staleLockMs (another host's pid cannot be checked, nor can a lock whose
// content was never written).
//
// Breaking is where two processes could both win: both see the same stale lock, one deletes it
// and takes a new lock, and the other's delete then removes that new lock. So a breaker first
// takes a second lock, keys.json.lock.break, and under it deletes the lock only if it is still
// the very one it judged stale (same content, inode and mtime). A break lock left by a breaker
// that died is itself broken by the same staleness rule, without a guard: a race there needs a
// breaker to die inside its three system calls. Finally a writer confirms it still holds its lock
// just before its rename, so one that stalled past staleLockMs, had its lock broken and woke up
// writes nothing (bar a stall of its own between that check and the rename).
import { randomBytes } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { asUnavailable, errorCode } from './file-errors.js';
import { KeyStoreUnavailable } from './partner-keys.js';

interface LockFile {
  readonly content: string;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly pid?: unknown;
  readonly host?: unknown;
  readonly token?: unknown;
}

/** The lock one writer holds over a read-modify-write of the file it guards. */
export class FileLock {
  private constructor(
    private readonly file: string,
    private readonly token: string,
  ) {}

  static async acquire(file: string, timeoutMs: number, staleMs: number): Promise<FileLock> {
    const token = randomBytes(8).toString('hex');
    const content = JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString(), token });
    const deadline = Date.now() + timeoutMs;
    try {
      for (;;) {
        if (await create(file, content)) return new FileLock(file, token);
        const holder = await inspect(file);
        if (holder && isStale(holder, staleMs) && (await breakStale(file, holder, content, staleMs))) continue;
        if (Date.now() >= deadline) {
          throw new KeyStoreUnavailable(
            `${file} has been held for over ${timeoutMs} ms by ${describe(holder)}: another keys command is writing; try again` +
              ` (a lock left by a process that died is broken by itself once it is ${staleMs / 1000} s old)`,
          );
        }
        await sleep(5 + Math.random() * 20);
      }
    } catch (err) {
      throw asUnavailable(err, `cannot lock ${file}`);
    }
  }

  /** Throws unless this writer still holds the lock. */
  async confirm(): Promise<void> {
    if ((await inspect(this.file))?.token !== this.token) {
      throw new KeyStoreUnavailable(`the lock ${this.file} was broken while this writer held it; nothing was written, try again`);
    }
  }

  async release(): Promise<void> {
    if ((await inspect(this.file).catch(() => null))?.token === this.token) await unlink(this.file).catch(() => {});
  }
}

/** Creates `file` with `content` unless it exists; true when created. */
async function create(file: string, content: string): Promise<boolean> {
  let handle;
  try {
    handle = await open(file, 'wx', 0o600);
  } catch (err) {
    if (errorCode(err) === 'EEXIST') return false;
    throw err;
  }
  try {
    await handle.writeFile(content);
  } catch (err) {
    await handle.close();
    await unlink(file).catch(() => {});
    throw err;
  }
  await handle.close();
  return true;
}

/** The lock file's content and identity; null when there is none. */
async function inspect(file: string): Promise<LockFile | null> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return null;
    throw err;
  }
  try {
    const info = await handle.stat({ bigint: true });
    const content = await handle.readFile('utf8');
    let fields: object = {};
    try {
      const parsed: unknown = JSON.parse(content);
      if (typeof parsed === 'object' && parsed !== null) fields = parsed;
    } catch {
      // Created but not yet written, or written by a writer that died: only its age can tell.
    }
    return { ...fields, content, ino: info.ino, mtimeNs: info.mtimeNs };
  } finally {
    await handle.close();
  }
}

function isStale(lock: LockFile, staleMs: number): boolean {
  if (Date.now() - Number(lock.mtimeNs / 1_000_000n) > staleMs) return true;
  return lock.host === hostname() && typeof lock.pid === 'number' && !isAlive(lock.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === 'EPERM';
  }
}

const sameLock = (a: LockFile, b: LockFile): boolean => a.content === b.content && a.ino === b.ino && a.mtimeNs === b.mtimeNs;

/** Deletes the stale lock `stale` if no other breaker is at it and it is still there; true when it is gone. */
async function breakStale(file: string, stale: LockFile, content: string, staleMs: number): Promise<boolean> {
  const guard = `${file}.break`;
  if (!(await create(guard, content))) {
    const breaker = await inspect(guard);
    if (breaker && isStale(breaker, staleMs)) await unlink(guard).catch(() => {});
    return false;
  }
  try {
    const current = await inspect(file);
    if (current === null) return true;
    if (!sameLock(current, stale)) return false;
    await unlink(file);
    return true;
  } finally {
    await unlink(guard).catch(() => {});
  }
}

function describe(holder: LockFile | null): string {
  if (!holder) return 'another writer';
  const pid = typeof holder.pid === 'number' ? `pid ${holder.pid}` : 'an unknown process';
  const host = typeof holder.host === 'string' && holder.host !== hostname() ? ` on ${holder.host}` : '';
  return `${pid}${host}`;
}
