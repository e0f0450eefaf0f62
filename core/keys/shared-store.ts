// Partner keys in shared state (Redis when REDIS_URL is set), so every instance behind the load
// balancer and the keys CLI see the same records at once. One map: field = the key's hash, value
// = the record as JSON. A lookup is one field read; revoking, rotating or editing by id and listing
// read the whole map, which holds one field per partner key. Rotation writes the record under its
// new hash, then deletes the old field: from then on, on every instance, the old key is unknown.
// Every change also sets the keys' version anew, in the same transaction; each instance keeps
// the records it has read with the version read with them, and a keyed request that reads the
// version in its own round trip (core/state/rate-windows.ts's exchange) uses a kept record only
// while the version is unchanged: a change at any instance is seen by every other at its next request.
import { KeyStoreUnavailable, parseKeyRecord, validKeyRecord, withOrigins, type KeyRecord, type KeySelector, type KeyStore } from './partner-keys.js';
import { SharedStateUnavailable, type SharedState } from '../state/shared-state.js';

/** The one map every key lives in: field = the key's hash. */
const MAP = 'keys';
/**
 * A field set with the first key, in the same map: a map without it has issued no key yet, or has
 * lost its data (a Redis restarted without persistence, or one that evicted it). Either way a
 * lookup cannot tell a key is unknown, so it is unavailable, a 503, never a 401 for every
 * partner. Neither the status nor the log shows it: before the first key nothing is broken, and
 * the two cannot be told apart here. Not a hash, so never a key's.
 */
const ISSUED_MARKER = 'keys-issued';
/** The keys' version: a key of its own, set to a new random value with every change to the map. */
export const KEYS_VERSION = 'keys:version';
/** Records kept per instance: past it, the oldest kept goes (it is read again at its next use). */
const MAX_KEPT = 10_000;

/** A record as read, with the keys' version read with it. */
export interface KeptRecord {
  readonly record: KeyRecord;
  readonly version: string;
}

export class SharedStateKeyStore implements KeyStore {
  /** `state` stays the caller's: this store does not close it. */
  constructor(private readonly state: SharedState) {}

  readonly versionKey = KEYS_VERSION;

  /** Records read, by hash, oldest read first, each with the version read with it. */
  private readonly keptRecords = new Map<string, KeptRecord>();

  /**
   * The record last read under `hash` on this instance and the version read with it, without a
   * round trip; undefined when none is kept. Only for a caller that reads the version afterwards
   * and reads the record again (findByHash) when it changed.
   */
  kept(hash: string): KeptRecord | undefined {
    return this.keptRecords.get(hash);
  }

  /** Always reads the store: the record, the marker and the version in one round trip. */
  async findByHash(hash: string): Promise<KeyRecord | null> {
    const { values: [value = null, issued = null], version } = await unavailableWhenShared(() => this.state.mapFields(MAP, [hash, ISSUED_MARKER], KEYS_VERSION));
    if (value !== null) return this.keep(this.decode(hash, value), version);
    this.keptRecords.delete(hash);
    if (issued === null) {
      throw new KeyStoreUnavailable(`the shared-state map "${MAP}" holds no keys: none was issued yet, or the store lost its data`, { storeFault: false });
    }
    return null;
  }

  /**
   * `record`, kept with `version` unless there is none to confirm it by: a store last changed by
   * an older version of the service has no version yet (its records are read at each use until its
   * next change), and this process's own state needs none (no other instance changes it).
   */
  private keep(record: KeyRecord, version: string | null): KeyRecord {
    this.keptRecords.delete(record.hash);
    if (version === null || !this.state.shared) return record;
    if (this.keptRecords.size >= MAX_KEPT) this.keptRecords.delete(this.keptRecords.keys().next().value!);
    this.keptRecords.set(record.hash, { record, version });
    return record;
  }

  async add(record: KeyRecord): Promise<void> {
    const valid = validKeyRecord(record);
    // Not atomic with the write below, which the port cannot offer; ids are 48 random bits, so this
    // only catches a caller that reuses one.
    if ((await this.all()).some((r) => r.id === valid.id)) throw new Error(`a key with the id ${valid.id} is already stored`);
    // The marker first: a record stored without it would read as a store that lost its data.
    await unavailableWhenShared(() => this.state.mapSetIfAbsent(MAP, ISSUED_MARKER, new Date().toISOString()));
    const added = await unavailableWhenShared(() => this.state.mapSetIfAbsent(MAP, valid.hash, JSON.stringify(valid), KEYS_VERSION));
    if (!added) throw new Error(`a key with the same hash as ${valid.id} is already stored`);
  }

  // Two revocations of one active key at the same moment both write, and the later time is kept:
  // the port has no compare-and-set, and either way the key ends revoked.
  async revoke(selector: KeySelector, at: Date): Promise<KeyRecord | null> {
    const record = 'hash' in selector ? await this.findByHash(selector.hash) : ((await this.all()).find((r) => r.id === selector.id) ?? null);
    if (!record || record.status === 'revoked') return record;
    const revoked: KeyRecord = { ...record, status: 'revoked', revokedAt: at.toISOString() };
    await unavailableWhenShared(() => this.state.mapSet(MAP, record.hash, JSON.stringify(revoked), KEYS_VERSION));
    return revoked;
  }

  // Like revocation, neither write below is atomic with the read before it: two rotations of one
  // record at once both store a record, and only the later delete's survivor is found; either
  // way the old key ends unknown.
  async rotate(id: string, hash: string): Promise<KeyRecord | null> {
    const record = await this.active(id);
    if (!record) return null;
    const rotated = validKeyRecord({ ...record, hash });
    const added = await unavailableWhenShared(() => this.state.mapSetIfAbsent(MAP, hash, JSON.stringify(rotated), KEYS_VERSION));
    if (!added) throw new Error(`a key with the same hash as ${id}'s new key is already stored`);
    await unavailableWhenShared(() => this.state.mapDelete(MAP, record.hash, KEYS_VERSION));
    return rotated;
  }

  async setOrigins(id: string, origins: readonly string[]): Promise<KeyRecord | null> {
    const record = await this.active(id);
    if (!record) return null;
    const changed = validKeyRecord(withOrigins(record, origins));
    await unavailableWhenShared(() => this.state.mapSet(MAP, record.hash, JSON.stringify(changed), KEYS_VERSION));
    return changed;
  }

  async list(): Promise<KeyRecord[]> {
    return (await this.all()).sort((a, b) => (a.createdAt === b.createdAt ? a.id.localeCompare(b.id) : a.createdAt < b.createdAt ? -1 : 1));
  }

  private async active(id: string): Promise<KeyRecord | null> {
    const record = (await this.all()).find((r) => r.id === id);
    return record?.status === 'active' ? record : null;
  }

  private async all(): Promise<KeyRecord[]> {
    const entries = await unavailableWhenShared(() => this.state.mapEntries(MAP));
    return [...entries].filter(([field]) => field !== ISSUED_MARKER).map(([hash, value]) => this.decode(hash, value));
  }

  /**
   * A stored record, validated. A malformed one makes the store unavailable rather than being
   * skipped: skipped, its partner's key would read as unknown, a silent 401 instead of a 503 that
   * sends an operator to the data. The message names no hash, since the CLI prints it.
   */
  private decode(field: string, value: string): KeyRecord {
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(value);
    } catch {
      // Left null: reported below with every other malformed record.
    }
    const record = parseKeyRecord(parsed);
    if (!record || record.hash !== field) {
      throw new KeyStoreUnavailable(`a record in the shared-state map "${MAP}" is not a valid key record, or is stored under another key's hash`);
    }
    return record;
  }
}

async function unavailableWhenShared<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    // The shared state's own health reports it.
    if (err instanceof SharedStateUnavailable) throw new KeyStoreUnavailable(`key store unavailable: ${err.message}`, { cause: err, storeFault: false });
    throw err;
  }
}
