// The embedded key store: every key record in one JSON file, DATA_DIR/keys.json, written by the
// keys CLI (scripts/keys.ts) and read by the running service, possibly at the same time.
//
// Writers (add, revoke, rotate, setOrigins) take an exclusive lock file, keys.json.lock, and under it read the file,
// change it, write the whole new content to a temporary file in the same directory, fsync it,
// rename it over keys.json and fsync the directory. A rename is atomic, so a reader sees the old
// file or the new one and never half of one, and a writer that dies at any point leaves keys.json
// as it was: readers take no lock.
//
// The service must not read the file per request, yet must see a key created or revoked by the
// CLI within seconds: it keeps the parsed file in memory and looks at the file again (one stat)
// at most once per refresh interval, re-reading it only when its identity (inode, size, mtime,
// ctime) changed. A file that cannot be read or parsed makes lookups throw KeyStoreUnavailable
// (the service answers 503, not 401) rather than keep serving what it held before.
import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyStoreUnavailable, parseKeyRecord, validKeyRecord, withOrigins, type KeyRecord, type KeySelector, type KeyStore } from './partner-keys.js';

export interface FileKeyStoreOptions {
  /** The least time between two looks at the file for changes, in ms (default 1000). */
  readonly refreshIntervalMs?: number;
  /** The clock the refresh interval is measured on, in ms (default a monotonic clock). */
  readonly now?: () => number;
  /** How long a writer waits for the lock before it gives up, in ms (default 5000). */
  readonly lockTimeoutMs?: number;
  /** The age past which a lock is stale whoever holds it, in ms (default 30000). */
  readonly staleLockMs?: number;
}

const FORMAT_VERSION = 1;
interface Snapshot {
  readonly records: readonly KeyRecord[];
  readonly byHash: ReadonlyMap<string, KeyRecord>;
}

interface Loaded {
  readonly snapshot: Snapshot;
  /** What the snapshot was read from: the file's identity, or "absent". */
  readonly identity: string;
}

const ABSENT: Loaded = { snapshot: { records: [], byHash: new Map() }, identity: 'absent' };

export class FileKeyStore implements KeyStore {
  private readonly refreshIntervalMs: number;
  private readonly now: () => number;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;
  private loaded: Loaded | null = null;
  private failure: KeyStoreUnavailable | null = null;
  private checkedAt = -Infinity;
  private checking: Promise<void> | null = null;
  /** Bumped by this instance's own writes, so a look at the file begun before one is not kept. */
  private epoch = 0;

  constructor(
    readonly file: string,
    options: FileKeyStoreOptions = {},
  ) {
    this.refreshIntervalMs = options.refreshIntervalMs ?? 1000;
    this.now = options.now ?? (() => performance.now());
    this.lockTimeoutMs = options.lockTimeoutMs ?? 5000;
    this.staleLockMs = options.staleLockMs ?? 30_000;
  }

  async findByHash(hash: string): Promise<KeyRecord | null> {
    return (await this.current()).byHash.get(hash) ?? null;
  }

  async list(): Promise<KeyRecord[]> {
    return [...(await this.current()).records];
  }

  async add(record: KeyRecord): Promise<void> {
    const valid = validKeyRecord(record);
    await this.update((records) => {
      if (records.some((r) => r.id === valid.id || r.hash === valid.hash)) {
        throw new Error(`a key with the id ${valid.id} or the same hash is already stored`);
      }
      return { records: [...records, valid], result: undefined };
    });
  }

  async revoke(selector: KeySelector, at: Date): Promise<KeyRecord | null> {
    return this.update((records) => {
      const i = records.findIndex('id' in selector ? (r) => r.id === selector.id : (r) => r.hash === selector.hash);
      const record = records[i];
      if (!record || record.status === 'revoked') return { records: null, result: record ?? null };
      const revoked: KeyRecord = { ...record, status: 'revoked', revokedAt: at.toISOString() };
      return { records: records.map((r, j) => (j === i ? revoked : r)), result: revoked };
    });
  }

  async rotate(id: string, hash: string): Promise<KeyRecord | null> {
    return this.replaceActive(id, (record, records) => {
      if (records.some((r) => r.hash === hash)) throw new Error(`a key with the same hash as ${id}'s new key is already stored`);
      return { ...record, hash };
    });
  }

  async setOrigins(id: string, origins: readonly string[]): Promise<KeyRecord | null> {
    return this.replaceActive(id, (record) => withOrigins(record, origins));
  }

  /** Replaces the active record `id` with what `change` makes of it, under the lock; null when there is none. */
  private async replaceActive(id: string, change: (record: KeyRecord, records: readonly KeyRecord[]) => KeyRecord): Promise<KeyRecord | null> {
    return this.update((records) => {
      const i = records.findIndex((r) => r.id === id);
      const record = records[i];
      if (!record || record.status !== 'active') return { records: null, result: null };
      const changed = validKeyRecord(change(record, records));
      return { records: records.map((r, j) => (j === i ? changed : r)), result: changed };
    });
  }

  private async current(): Promise<Snapshot> {
    const epoch = this.epoch;
    if (this.now() - this.checkedAt >= this.refreshIntervalMs) {
      this.checking ??= this.check();
      await this.checking;
    }
    if (epoch !== this.epoch) return this.current();
    if (this.failure) throw this.failure;
    return this.loaded!.snapshot;
  }

  private async check(): Promise<void> {
    const epoch = this.epoch;
    let loaded: Loaded | null = null;
    let failure: KeyStoreUnavailable | null = null;
    try {
      loaded = await this.load(this.loaded);
    } catch (err) {
      failure = asUnavailable(err, `cannot read ${this.file}`);
    }
    if (epoch !== this.epoch) return;
    // The last good snapshot is kept through a failure: a file that held keys and has vanished
    // must still read as unavailable at the next look, not as an empty store.
    if (loaded) this.loaded = loaded;
    this.failure = failure;
    this.checkedAt = this.now();
    this.checking = null;
  }

  private async load(previous: Loaded | null): Promise<Loaded> {
    // Writers replace the file by rename, so it is never missing in between: a file that held keys
    // and is gone (an unmounted volume, a deleted DATA_DIR) is a store that cannot be read, a 503,
    // not an empty store that would turn every partner's key into a 401.
    const absent = (): Loaded => {
      if (previous && previous.snapshot.records.length > 0) throw new KeyStoreUnavailable(`${this.file}, which held keys, has disappeared`);
      return ABSENT;
    };
    let info: BigIntStats;
    try {
      info = await stat(this.file, { bigint: true });
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return absent();
      throw err;
    }
    if (previous?.identity === identityOf(info)) return previous;
    let handle;
    try {
      handle = await open(this.file, 'r');
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return absent();
      throw err;
    }
    try {
      // The identity and the content come from the same open file, so a rename in between
      // cannot pair one file's identity with another's content.
      const opened = await handle.stat({ bigint: true });
      if (!opened.isFile()) throw new KeyStoreUnavailable(`${this.file} is not a regular file`);
      const records = this.parse(await handle.readFile('utf8'));
      return { snapshot: { records, byHash: new Map(records.map((r) => [r.hash, r])) }, identity: identityOf(opened) };
    } finally {
      await handle.close();
    }
  }

  /**
   * The records of a file's content. Anything off, down to one malformed record, makes the whole
   * store unavailable: skipping a record would turn its partner's key into a silent 401.
   */
  private parse(text: string): KeyRecord[] {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new KeyStoreUnavailable(`${this.file} is not valid JSON (${(err as Error).message}); restore it from a backup`);
    }
    const file = data as { version?: unknown; keys?: unknown } | null;
    if (typeof file !== 'object' || file === null || file.version !== FORMAT_VERSION || !Array.isArray(file.keys)) {
      throw new KeyStoreUnavailable(`${this.file} is not a key store (expected {"version": ${FORMAT_VERSION}, "keys": [...]})`);
    }
    const records: KeyRecord[] = [];
    const seen = new Set<string>();
    for (const [i, value] of (file.keys as unknown[]).entries()) {
      const record = parseKeyRecord(value);
      if (!record) throw new KeyStoreUnavailable(`${this.file}: keys[${i}] is not a valid key record`);
      if (seen.has(record.id) || seen.has(record.hash)) throw new KeyStoreUnavailable(`${this.file}: keys[${i}] repeats an earlier record's id or hash`);
      seen.add(record.id).add(record.hash);
      records.push(record);
    }
    return records;
  }

  /** Runs `change` on the file's records under the lock and writes what it returns, if anything. */
  private async update<T>(change: (records: readonly KeyRecord[]) => { records: KeyRecord[] | null; result: T }): Promise<T> {
    const dir = path.dirname(this.file);
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw asUnavailable(err, `cannot create ${dir}`);
    }
    const lock = await FileLock.acquire(`${this.file}.lock`, this.lockTimeoutMs, this.staleLockMs);
    try {
      await this.removeOrphans(dir);
      let text: string | null = null;
      try {
        text = await readFile(this.file, 'utf8');
      } catch (err) {
        if (errorCode(err) !== 'ENOENT') throw asUnavailable(err, `cannot read ${this.file}`);
      }
      const { records, result } = change(text === null ? [] : this.parse(text));
      if (records) await this.replace(dir, records, lock);
      return result;
    } finally {
      this.epoch += 1;
      this.checking = null;
      this.checkedAt = -Infinity;
      await lock.release();
    }
  }

  private async replace(dir: string, records: readonly KeyRecord[], lock: FileLock): Promise<void> {
    const temp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(`${JSON.stringify({ version: FORMAT_VERSION, keys: records }, null, 2)}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await lock.confirm();
      await rename(temp, this.file);
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw asUnavailable(err, `cannot write ${this.file}`);
    }
    // Without this the rename itself may not survive a power cut, though the data would.
    try {
      const handle = await open(dir, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw asUnavailable(err, `cannot sync ${dir}`);
    }
  }

  /**
   * Deletes temporary files other writers left. Under the lock no live writer owns one, except one
   * whose lock was broken as stale: deleting its file makes its late rename fail instead of
   * overwriting this write.
   */
  private async removeOrphans(dir: string): Promise<void> {
    const prefix = `${path.basename(this.file)}.`;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      throw asUnavailable(err, `cannot list ${dir}`);
    }
    for (const name of names) {
      if (name.startsWith(prefix) && /^\d+\.[0-9a-f]{12}\.tmp$/.test(name.slice(prefix.length))) {
        await unlink(path.join(dir, name)).catch(() => {});
      }
    }
  }
}

// The lock. A writer holds keys.json.lock, created with O_EXCL, for the few milliseconds of a
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

interface LockFile {
  readonly content: string;
  readonly ino: bigint;
  readonly mtimeNs: bigint;
  readonly pid?: unknown;
  readonly host?: unknown;
  readonly token?: unknown;
}

class FileLock {
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

const identityOf = (info: BigIntStats): string => `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;

const errorCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

function asUnavailable(err: unknown, what: string): KeyStoreUnavailable {
  if (err instanceof KeyStoreUnavailable) return err;
  return new KeyStoreUnavailable(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
