// Idempotency records for plans, in the shared-state port so a retry is answered the same on any
// instance. A record is kept per caller and idempotencyKey for its retention, whatever happens to
// the plan it holds; the first plan stored for a key wins, so concurrent identical requests agree
// on one plan. A record holds the request's fingerprint (a digest), the caller it is bound to (a
// digest) and the plan's JSON text: never the taker's party, nor the caller's key or IP.
import { hash } from 'node:crypto';
import { DomainError } from '../errors.js';
import { SharedStateUnavailable, type SharedState } from '../state/shared-state.js';

/** How long a plan's idempotency record is kept: the spec's 5 minutes. */
export const IDEMPOTENCY_RETENTION_MS = 5 * 60_000;

export interface IdempotencyRecord {
  /** The request's fingerprint (core/plans/params.ts). */
  readonly fingerprint: string;
  /** A digest of the caller the plan was made for. */
  readonly boundTo: string;
  /** The plan as sent, byte for byte. */
  readonly plan: string;
}

// crypto.hash, one call: a Hash object per digest cost a plan more than the digest itself.
const digest = (text: string): string => hash('sha256', text, 'base64url');

/** A caller's identity as records keep it: `partner:<key id>` or `app:<client IP>`, digested. */
export const callerDigest = (caller: string): string => digest(`caller\0${caller}`);

export class IdempotencyRecords {
  constructor(
    private readonly state: SharedState,
    private readonly retentionMs = IDEMPOTENCY_RETENTION_MS,
  ) {}

  private key(boundTo: string, idempotencyKey: string): string {
    return `idem:${digest(`${boundTo}\0${idempotencyKey}`)}`;
  }

  /** The record the caller holds under `idempotencyKey`, or null. */
  async find(boundTo: string, idempotencyKey: string): Promise<IdempotencyRecord | null> {
    const stored = await this.unlessUnavailable(this.state.get(this.key(boundTo, idempotencyKey)));
    return stored === null ? null : parseRecord(stored.value);
  }

  /** Stores `record` unless the caller holds one under `idempotencyKey`; returns the record that holds. */
  async claim(idempotencyKey: string, record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const key = this.key(record.boundTo, idempotencyKey);
    if (await this.unlessUnavailable(this.state.setIfAbsent(key, formatRecord(record), this.retentionMs))) return record;
    const winner = await this.find(record.boundTo, idempotencyKey);
    // Held a moment ago and gone now: its retention ended in between; this plan takes the key.
    if (winner === null) return this.claim(idempotencyKey, record);
    return winner;
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
      throw new DomainError('internal', 'plans cannot be made right now: the shared state is unreachable; nothing was created');
    }
  }
}

/** The first line of a record in its line format. */
const RECORD_LINES = 'plan-record/2';

/**
 * A record as the shared state keeps it: a header line, its two digests (base64url) and the plan's
 * JSON text (which holds no raw line break), one per line. Nested in another JSON text, every quote
 * of the plan was escaped on the way in and read back on a replay, and each held plan was larger.
 */
function formatRecord(record: IdempotencyRecord): string {
  return `${RECORD_LINES}\n${record.fingerprint}\n${record.boundTo}\n${record.plan}`;
}

/** A stored record, in its line format or as the JSON object records were kept as before it (a rolling deploy shares them). */
function parseRecord(text: string): IdempotencyRecord {
  if (text.startsWith(`${RECORD_LINES}\n`)) {
    const first = RECORD_LINES.length + 1;
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
