// Idempotency records for plans, in the shared-state port so a retry is answered the same on any
// instance. A record is kept per caller and idempotencyKey for its retention, whatever happens to
// the plan it holds; the first plan stored for a key wins, so concurrent identical requests agree
// on one plan. A record holds the request's fingerprint, the caller it is bound to and the plan's
// JSON text: never the taker's party, nor the caller's key or IP. Its key and both digests are
// HMACs under IDEMPOTENCY_SECRET, so whoever reads the store cannot test a guessed taker, caller
// or request against them (a plain digest of a guessable party is a lookup away from the party).
import { createHmac, hash } from 'node:crypto';
import { DomainError } from '../errors.js';
import { SharedStateUnavailable, type SharedState, type WindowCount, type WindowHit } from '../state/shared-state.js';
import type { KeyCheck } from '../keys/partner-keys.js';

/** When to try again while the shared state is unreachable: it is probed every second, and reconnects within a few. */
const UNREACHABLE_RETRY_SECONDS = 5;

/** How long a plan's idempotency record is kept: the spec's 5 minutes. */
export const IDEMPOTENCY_RETENTION_MS = 5 * 60_000;

export interface IdempotencyRecord {
  /** The request's fingerprint (core/plans/params.ts), keyed (PlanRequestDigests). */
  readonly fingerprint: string;
  /** The caller the plan was made for, keyed. */
  readonly boundTo: string;
  /** The plan as sent, byte for byte. */
  readonly plan: string;
}

/** Who asks under which idempotencyKey for what: what records are found and claimed by. */
export interface PlanRequestKey {
  /** `partner:<key id>` or `app:<client IP>`, prefixed `v2:` for a plan asked for in v2 (each version its own records). */
  readonly caller: string;
  readonly idempotencyKey: string;
  /** The request's plain fingerprint (core/plans/params.ts); never stored as it is. */
  readonly fingerprint: string;
}

/** A request's digests as its record keeps them. */
export interface PlanRequestDigests {
  readonly fingerprint: string;
  readonly boundTo: string;
}

// crypto.hash, one call: a Hash object per digest cost a plan more than the digest itself.
const plainDigest = (text: string): string => hash('sha256', text, 'base64url');

/** Where the previous version kept a caller's record: under plain digests (`boundTo`, the caller's). */
const legacyKey = (boundTo: string, request: PlanRequestKey): string => `idem:${plainDigest(`${boundTo}\0${request.idempotencyKey}`)}`;

export class IdempotencyRecords {
  private readonly secret: Buffer;

  /**
   * `secret`: IDEMPOTENCY_SECRET, the same on every instance sharing the state. Records that
   * instances of the previous version wrote (plain digests, under plain keys) are read too where
   * the state is shared, so a retry that reaches a new instance during a rolling deploy replays
   * its plan; the reverse way, an old instance finds nothing and makes a new plan.
   */
  constructor(
    private readonly state: SharedState,
    secret: string | Buffer,
    private readonly retentionMs = IDEMPOTENCY_RETENTION_MS,
  ) {
    this.secret = Buffer.from(secret);
  }

  /** Each request's digests and record key, computed once however often it is looked up or claimed. */
  private readonly keyedRequests = new WeakMap<PlanRequestKey, { readonly digests: PlanRequestDigests; recordKey?: string }>();

  private keyed(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }

  /** A caller (PlanRequestKey.caller) as a record is bound to it: its `boundTo`. */
  callerDigest(caller: string): string {
    return this.keyed(`caller\0${caller}`);
  }

  /** The request's fingerprint and caller as a record keeps them. */
  digests(request: PlanRequestKey): PlanRequestDigests {
    return this.keyedRequest(request).digests;
  }

  private keyedRequest(request: PlanRequestKey): { readonly digests: PlanRequestDigests; recordKey?: string } {
    let known = this.keyedRequests.get(request);
    if (known === undefined) {
      known = { digests: { fingerprint: this.keyed(`fingerprint\0${request.fingerprint}`), boundTo: this.keyed(`caller\0${request.caller}`) } };
      this.keyedRequests.set(request, known);
    }
    return known;
  }

  /**
   * The id of the plan made for the request: derived, keyed by the secret, from the caller, the
   * idempotencyKey and the request's fingerprint (`pl_` and 128 bits of the HMAC). A retry re-made
   * after its record was lost (a store that lost its data) gets the id of the plan made first, and
   * the ledger, which runs a command id at most once (commandId = planId), still runs it at most
   * once; a changed request, or another caller's, never shares an id with an earlier one.
   */
  planId(request: PlanRequestKey): string {
    const { digests } = this.keyedRequest(request);
    return `pl_${createHmac('sha256', this.secret).update(`plan\0${this.key(request)}\0${digests.fingerprint}`).digest().toString('base64url', 0, 16)}`;
  }

  /** Where the caller's record for the request is kept. */
  private key(request: PlanRequestKey): string {
    const known = this.keyedRequest(request);
    return (known.recordKey ??= `idem:${this.keyed(`${known.digests.boundTo}\0${request.idempotencyKey}`)}`);
  }

  /**
   * The record the caller holds under the request's idempotencyKey, or null: where the state is
   * shared, this version's record and the previous version's are read in one round trip.
   */
  async find(request: PlanRequestKey): Promise<IdempotencyRecord | null> {
    const key = this.key(request);
    if (!this.state.shared) {
      const [stored = null] = await this.unlessUnavailable(this.state.getValues([key]));
      return stored === null ? null : parseRecord(stored);
    }
    const legacyBoundTo = plainDigest(`caller\0${request.caller}`);
    const [stored = null, legacy = null] = await this.unlessUnavailable(this.state.getValues([key, legacyKey(legacyBoundTo, request)]));
    if (stored !== null) return parseRecord(stored);
    return legacy === null ? null : this.fromLegacy(request, legacyBoundTo, legacy);
  }

  /** Whether other instances read the same records. */
  get shared(): boolean {
    return this.state.shared;
  }

  /**
   * `find`, with `hitsOnMiss` counted in the same round trip when neither record is held (the
   * windows of a new plan, which a replay is not counted in): their counts, or null when a record
   * is held and none was counted. `key`: a key verified from a kept record, whose store's version
   * is read in the same round trip (`version`), and which is unverifiable when it fails.
   */
  async findCounting(
    request: PlanRequestKey,
    hitsOnMiss: readonly WindowHit[],
    key?: KeyCheck,
  ): Promise<{ readonly record: IdempotencyRecord | null; readonly counts: readonly WindowCount[] | null; readonly version: string | null }> {
    const legacyBoundTo = plainDigest(`caller\0${request.caller}`);
    const reads = this.state.shared ? [this.key(request), legacyKey(legacyBoundTo, request)] : [this.key(request)];
    const exchange = this.state.exchange({ reads, hitsOnMiss, version: key?.versionKey });
    const { reads: [stored = null, legacy = null], hitsOnMiss: counts, version } = await (key ? exchange.catch((err: unknown) => Promise.reject(err instanceof SharedStateUnavailable ? key.unverifiable() : err)) : this.unlessUnavailable(exchange));
    if (stored !== null) return { record: parseRecord(stored.value), counts, version };
    return { record: legacy === null ? null : this.fromLegacy(request, legacyBoundTo, legacy.value), counts, version };
  }

  /**
   * A record of the previous version (plain digests under a plain key), in this version's terms:
   * its digests become this request's when they are this request's plain ones, and stay foreign
   * (a conflict, or another caller's plan) when not.
   */
  private fromLegacy(request: PlanRequestKey, boundTo: string, stored: string): IdempotencyRecord {
    const digests = this.digests(request);
    const legacy = parseRecord(stored);
    return {
      fingerprint: legacy.fingerprint === request.fingerprint ? digests.fingerprint : `legacy:${legacy.fingerprint}`,
      boundTo: legacy.boundTo === boundTo ? digests.boundTo : `legacy:${legacy.boundTo}`,
      plan: legacy.plan,
    };
  }

  /**
   * Stores `record` (made for `request`) unless the caller holds one under its idempotencyKey;
   * returns the record that holds. The in-process state's bound refuses it with SharedStateFull.
   */
  async claim(request: PlanRequestKey, record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const key = this.key(request);
    if (await this.unlessUnavailable(this.state.setIfAbsent(key, formatRecord(record), this.retentionMs))) return record;
    const winner = await this.find(request);
    // Held a moment ago and gone now: its retention ended in between; this plan takes the key.
    if (winner === null) return this.claim(request, record);
    return winner;
  }

  /**
   * Gives back the key `record` was claimed under, while it still holds that record: a plan whose
   * making failed after its claim (what it needs beside the record could not be kept) must not
   * be replayed. Best effort: a failure leaves the record to its retention.
   */
  async release(request: PlanRequestKey, record: IdempotencyRecord): Promise<void> {
    try {
      await this.state.replaceIf(this.key(request), formatRecord(record), null, this.retentionMs);
    } catch {
      // The store is unreachable: the record lapses with its retention.
    }
  }

  /**
   * Without its records a retry could get a second plan, so a plan is refused while the shared
   * state cannot be reached (its health is logged and shown in the status once, elsewhere).
   */
  private async unlessUnavailable<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      const why = err.reason === 'lost' ? 'lost its data' : 'is unreachable';
      throw new DomainError('at_capacity', `plans cannot be made right now: the shared state ${why}; nothing was created; retry in ${UNREACHABLE_RETRY_SECONDS} seconds`, UNREACHABLE_RETRY_SECONDS);
    }
  }
}

/** The first line of a record in its line format, with keyed digests. */
const RECORD_LINES = 'plan-record/3';
/** The line format's first line before its digests were keyed: the previous version's records. */
const LEGACY_RECORD_LINES = 'plan-record/2';

/**
 * A record as the shared state keeps it: a header line, its two digests (base64url) and the plan's
 * JSON text (which holds no raw line break), one per line. Nested in another JSON text, every quote
 * of the plan was escaped on the way in and read back on a replay, and each held plan was larger.
 */
function formatRecord(record: IdempotencyRecord): string {
  return `${RECORD_LINES}\n${record.fingerprint}\n${record.boundTo}\n${record.plan}`;
}

/** A stored record: in the line format (either version), or as the JSON object records were kept as before it. */
function parseRecord(text: string): IdempotencyRecord {
  const header = text.startsWith(`${RECORD_LINES}\n`) ? RECORD_LINES : text.startsWith(`${LEGACY_RECORD_LINES}\n`) ? LEGACY_RECORD_LINES : null;
  if (header !== null) {
    const first = header.length + 1;
    const second = text.indexOf('\n', first);
    const third = second < 0 ? -1 : text.indexOf('\n', second + 1);
    if (third < 0) throw new Error('an idempotency record in the shared state is malformed');
    return { fingerprint: text.slice(first, second), boundTo: text.slice(second + 1, third), plan: text.slice(third + 1) };
  }
  const record = JSON.parse(text) as Partial<IdempotencyRecord> | null;
  if (typeof record?.fingerprint !== 'string' || typeof record.boundTo !== 'string' || typeof record.plan !== 'string') {
    throw new Error('an idempotency record in the shared state is malformed');
  }
  return record as IdempotencyRecord;
}
