// Partner keys: the key-store port (where hashed key records live), and the verifier that turns a
// presented key into its partner. A store that cannot be read throws KeyStoreUnavailable, never a
// silent "invalid".
import { generateKey, hashKey, isWellFormedKey, KEY_ID_SHAPE, newKeyId } from './api-key.js';
import type { ComponentHealth } from '../health/component-health.js';

export interface Partner {
  /** The key record's id (`key_...`): safe to log, used to attribute traffic and count its window. */
  readonly id: string;
  readonly name: string;
  /** The fee schema or override (core/quotes/fee-schemas.ts) that applies to this partner. */
  readonly schemaId: string;
  /** The browser origins the key may be used from; null for a server-to-server key (any or no Origin). */
  readonly origins: readonly string[] | null;
}

export type KeyStatus = 'active' | 'revoked';

/** What is stored of a key: never the key itself. */
export interface KeyRecord {
  readonly id: string;
  /** SHA-256 of the key, hex (core/keys/api-key.ts). */
  readonly hash: string;
  readonly name: string;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly status: KeyStatus;
  /** ISO 8601, null while active. */
  readonly revokedAt: string | null;
  readonly schemaId: string;
  /**
   * The browser origins (`https://wallet.example`) a key used in web pages is allowed from: a
   * request whose Origin is not one of them is refused. Absent for a server-to-server key.
   */
  readonly origins?: readonly string[];
  /** `portal` for a key a partner got at the key portal; absent for one the operator's keys CLI made. */
  readonly issuedBy?: 'portal';
}

/** Who made a key: the key portal, or the operator's keys CLI. */
export type KeyIssuer = 'portal' | 'cli';

export const issuerOf = (record: KeyRecord): KeyIssuer => record.issuedBy ?? 'cli';

/** A browser origin as a request's Origin header names it: scheme, host and port, nothing after. */
export function parseOrigin(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.pathname !== '/' || url.search || url.hash || raw.replace(/\/$/, '') !== url.origin) return null;
  return url.origin;
}

const HASH_SHAPE = /^[0-9a-f]{64}$/;
const TIMESTAMP_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** `value` as a key record with exactly the record's fields, or null when any is missing or malformed. */
export function parseKeyRecord(value: unknown): KeyRecord | null {
  if (typeof value !== 'object' || value === null) return null;
  const { id, hash, name, createdAt, status, revokedAt, schemaId, origins, issuedBy } = value as Record<string, unknown>;
  if (typeof id !== 'string' || !KEY_ID_SHAPE.test(id)) return null;
  if (typeof hash !== 'string' || !HASH_SHAPE.test(hash)) return null;
  if (typeof name !== 'string' || name === '') return null;
  if (!isTimestamp(createdAt)) return null;
  if (typeof schemaId !== 'string' || schemaId === '') return null;
  // Records written before keys had origins have none: server-to-server keys, as they were.
  if (origins !== undefined && (!Array.isArray(origins) || origins.length === 0 || !origins.every((o) => typeof o === 'string' && parseOrigin(o) === o))) return null;
  if (issuedBy !== undefined && issuedBy !== 'portal') return null;
  const optional = { ...(origins === undefined ? {} : { origins: origins as string[] }), ...(issuedBy === undefined ? {} : { issuedBy: 'portal' as const }) };
  if (status === 'active' && revokedAt === null) return { id, hash, name, createdAt, status, revokedAt, schemaId, ...optional };
  if (status === 'revoked' && isTimestamp(revokedAt)) return { id, hash, name, createdAt, status, revokedAt, schemaId, ...optional };
  return null;
}

const isTimestamp = (value: unknown): value is string =>
  typeof value === 'string' && TIMESTAMP_SHAPE.test(value) && !Number.isNaN(Date.parse(value));

/** `record` checked before a store keeps it; a TypeError names it when it is not a valid record. */
export function validKeyRecord(record: KeyRecord): KeyRecord {
  const valid = parseKeyRecord(record);
  if (!valid) throw new TypeError(`not a valid key record: ${record.id}`);
  return valid;
}

/** A new active key and the record the store keeps of it: the key itself is shown once, by its issuer. */
export function newKey(
  name: string,
  schemaId: string,
  createdAt = new Date(),
  origins: readonly string[] = [],
  issuedBy: KeyIssuer = 'cli',
): { readonly key: string; readonly record: KeyRecord } {
  const key = generateKey();
  return {
    key,
    record: {
      id: newKeyId(),
      hash: hashKey(key),
      name,
      createdAt: createdAt.toISOString(),
      status: 'active',
      revokedAt: null,
      schemaId,
      ...(origins.length > 0 ? { origins } : {}),
      ...(issuedBy === 'portal' ? { issuedBy } : {}),
    },
  };
}

/** `record` with `origins` as its allowed origins: none makes it a server-to-server key. */
export function withOrigins(record: KeyRecord, origins: readonly string[]): KeyRecord {
  const { origins: _previous, ...rest } = record;
  return origins.length > 0 ? { ...rest, origins: [...origins] } : rest;
}

/** Which record a revocation names: by id, or by the hash of the key itself. */
export type KeySelector = { readonly id: string } | { readonly hash: string };

export interface KeyStore {
  /** The record with this key hash, revoked or not, or null. */
  findByHash(hash: string): Promise<KeyRecord | null>;
  /** Adds a new record; throws when its id or hash is already stored. */
  add(record: KeyRecord): Promise<void>;
  /** Marks the selected record revoked (at `at`) and returns it; null when there is none. Revoking twice keeps the first time. */
  revoke(selector: KeySelector, at: Date): Promise<KeyRecord | null>;
  /** Every record, oldest first. */
  list(): Promise<KeyRecord[]>;
  /**
   * Gives the active record `id` a new key: `hash` (the new key's) replaces its hash, so the old
   * key is no longer found, and everything else stays. Returns the record as stored; null when no
   * active record has that id. Throws when `hash` is already stored.
   */
  rotate(id: string, hash: string): Promise<KeyRecord | null>;
  /** Replaces the active record `id`'s origins (none: a server-to-server key); returns it as stored, or null when no active record has that id. */
  setOrigins(id: string, origins: readonly string[]): Promise<KeyRecord | null>;
  /**
   * A store shared between instances (core/keys/shared-store.ts): the record this instance last
   * read under `hash`, with the store's version read with it, and the shared-state key the
   * version is read from; undefined when none is kept.
   */
  kept?(hash: string): { readonly record: KeyRecord; readonly version: string } | undefined;
  /** Where the store's version is read (the shared-state key), for a store that keeps records. */
  readonly versionKey?: string;
}

export class KeyStoreUnavailable extends Error {
  override readonly name = 'KeyStoreUnavailable';
  /**
   * Whether the key store's own health should record it (logged once, shown in the status). False
   * where another component already reports the cause (an unreachable shared state), or where
   * nothing may be broken (a store that holds no keys yet).
   */
  readonly storeFault: boolean;

  constructor(message: string, options: ErrorOptions & { readonly storeFault?: boolean } = {}) {
    super(message, options);
    this.storeFault = options.storeFault ?? true;
  }
}

export interface KeyVerifier {
  /** The key's partner, or null when the key is malformed, unknown or revoked. */
  verify(presentedKey: string): Promise<Partner | null>;
  /**
   * The key's partner as the record this instance kept says (null: revoked), without reading the
   * store; undefined when no record is kept. Only for a request that reads the store's version in
   * its own round trip, and verifies again when it changed (KeyCheck).
   */
  kept?(presentedKey: string): KeptPartner | undefined;
}

/** A partner as a kept record says, with the store's version that record was read at. */
export interface KeptPartner {
  readonly partner: Partner | null;
  readonly version: string;
  /** The shared-state key the store's version is read from. */
  readonly versionKey: string;
}

/**
 * A key verified from a kept record, to be confirmed by the request's one round trip to the shared
 * state (core/state/shared-state.ts's Exchange reads `versionKey`) before anything is computed
 * or created for it.
 */
export interface KeyCheck {
  readonly versionKey: string;
  /**
   * Resolves when the key still holds at `version` (the version read, null when the store has
   * none): unchanged, at once; changed, after the key is verified again. Else rejects with the
   * request's refusal (invalid_key, or key_verification_unavailable).
   */
  confirm(version: string | null): Promise<void>;
  /** The refusal of a request whose round trip failed: its key could not be verified. */
  unverifiable(): Error;
}

/** Verifies keys against a store. A malformed key is refused before any lookup. */
export class PartnerKeys implements KeyVerifier {
  /** `health` hears whether each lookup could read the store, so an unreadable store is logged and shown in the status. */
  constructor(
    private readonly store: KeyStore,
    private readonly health?: ComponentHealth,
  ) {}

  async verify(presentedKey: string): Promise<Partner | null> {
    if (!isWellFormedKey(presentedKey)) return null;
    let record: KeyRecord | null;
    try {
      record = await this.store.findByHash(hashKey(presentedKey));
    } catch (err) {
      if (err instanceof KeyStoreUnavailable && err.storeFault) this.health?.down(err);
      throw err;
    }
    this.health?.up();
    return partnerOf(record);
  }

  kept(presentedKey: string): KeptPartner | undefined {
    const { versionKey } = this.store;
    if (versionKey === undefined || !isWellFormedKey(presentedKey)) return undefined;
    const kept = this.store.kept?.(hashKey(presentedKey));
    return kept && { partner: partnerOf(kept.record), version: kept.version, versionKey };
  }
}

const partnerOf = (record: KeyRecord | null): Partner | null =>
  record && record.status === 'active' ? { id: record.id, name: record.name, schemaId: record.schemaId, origins: record.origins ?? null } : null;
