// The embedded key store: every key record in one JSON file, DATA_DIR/keys.json, written by the
// keys CLI (scripts/keys.ts) and read by the running service, possibly at the same time.
//
// Writers (add, revoke, rotate, setOrigins) take an exclusive lock file, keys.json.lock
// (core/keys/file-lock.ts), and under it read the file, change it, write the whole new content to
// a temporary file in the same directory, fsync it, rename it over keys.json and fsync the
// directory. A rename is atomic, so a reader sees the old
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
import path from 'node:path';
import { asUnavailable, errorCode } from './file-errors.js';
import { FileLock } from './file-lock.js';
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

const identityOf = (info: BigIntStats): string => `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
