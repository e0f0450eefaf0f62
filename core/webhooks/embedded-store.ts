// The webhook store without Redis: one SQLite file, DATA_DIR/webhooks.sqlite (node-sqlite3-wasm:
// SQLite compiled to WebAssembly, so no native build, on any platform Node runs on). Made on the
// first endpoint's registration, so a service that has none opens nothing. Its calls are
// synchronous, about 0.4 ms a write even with `synchronous=OFF` and the journal in memory, so every
// write is queued and a batch written in one transaction on the next turn of the event loop; none
// is made on the swap API's path. A scheduler reads the due deliveries when a write adds one, when
// an attempt ends and at the next due time, so pending deliveries resume after a restart.
//
// `synchronous=OFF`: a write reaches the operating system at its commit, not the disk; a process
// crash loses nothing, a machine crash may lose the last second. Redis (redis-store.ts) is the
// store for a deployment that needs more.
//
// The file is this process's alone, locked once (`locking_mode=EXCLUSIVE`): the library locks a
// file by making a directory beside it, for every statement otherwise. A crashed process leaves
// that directory behind, so the store has an owner file naming its process, and the next owner
// takes over (and removes the stale lock) only from a process that is gone.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Database } from 'node-sqlite3-wasm';
import type { CoreLog } from '../log.js';
import { releaseOwnership, takeOwnership } from '../sqlite-file.js';
import { isPlanEventType } from './messages.js';
import { SendAborted } from './sender.js';
import { DELIVERY_RETENTION_MS, withAttempt, type Attempt, type Delivery, type DeliveryRunner, type DeliveryState, type Settled, type StoredEndpoint, type WebhookStore } from './store.js';

export const EMBEDDED_FILE = 'webhooks.sqlite';

/** The longest the scheduler sleeps, whatever is due: a safety net, as every change wakes it. */
const MAX_SLEEP_MS = 5_000;
const PURGE_EVERY_MS = 3_600_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS endpoints (
  id TEXT PRIMARY KEY,
  partner_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS endpoints_by_partner ON endpoints (partner_id, created_at);
CREATE TABLE IF NOT EXISTS deliveries (
  endpoint_id TEXT NOT NULL,
  plan_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  partner_id TEXT NOT NULL,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  window_started_at INTEGER NOT NULL,
  state TEXT NOT NULL,
  next_attempt_at INTEGER,
  attempts TEXT NOT NULL,
  PRIMARY KEY (endpoint_id, plan_id, seq)
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS deliveries_recent ON deliveries (endpoint_id, created_at);
`;

// Due, and no earlier delivery of the same plan to the same endpoint pending; none being sent already.
const ELIGIBLE = `
  d.state = 'pending'
  AND NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.endpoint_id = d.endpoint_id AND e.plan_id = d.plan_id AND e.state = 'pending' AND e.seq < d.seq)
  AND (d.endpoint_id || ' ' || d.plan_id || ' ' || d.seq) NOT IN (SELECT value FROM json_each(:busy))`;

interface Write {
  readonly op: (db: Database) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

type Row = Record<string, number | string | null>;

export interface EmbeddedOptions {
  readonly dataDir: string;
  readonly concurrency: number;
  /** Where an unexpected failure of a delivery's run is retried from (WEBHOOK_FIRST_RETRY_MS). */
  readonly firstRetryMs: number;
  readonly log: CoreLog;
  readonly now?: () => number;
}

export class EmbeddedWebhookStore implements WebhookStore {
  private db: Database | null = null;
  private opening: Promise<Database> | null = null;
  private writes: Write[] = [];
  private flushing: Promise<void> | null = null;
  private runner: DeliveryRunner | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Map<string, Promise<void>>();
  /** `closing`: nothing more is handed out; the attempts in flight still keep what they did. */
  private state: 'open' | 'closing' | 'closed' = 'open';
  private lastPurge = 0;
  private readonly file: string;
  private readonly now: () => number;

  constructor(private readonly options: EmbeddedOptions) {
    this.file = path.join(options.dataDir, EMBEDDED_FILE);
    this.now = options.now ?? Date.now;
  }

  async endpoints(partnerId: string): Promise<StoredEndpoint[]> {
    const db = await this.database(false);
    if (!db) return [];
    return db.all('SELECT record FROM endpoints WHERE partner_id = ? ORDER BY created_at, id', [partnerId]).map((r) => JSON.parse(String(r.record)) as StoredEndpoint);
  }

  addEndpoint(endpoint: StoredEndpoint, max: number): Promise<boolean> {
    return this.write((db) => {
      const count = Number(db.get('SELECT COUNT(*) AS n FROM endpoints WHERE partner_id = ?', [endpoint.partnerId])?.n ?? 0);
      if (count >= max) return false;
      db.run('INSERT INTO endpoints (id, partner_id, created_at, record) VALUES (?, ?, ?, ?)', [endpoint.id, endpoint.partnerId, endpoint.createdAt, JSON.stringify(endpoint)]);
      return true;
    });
  }

  replaceEndpoint(endpoint: StoredEndpoint): Promise<boolean> {
    return this.write((db) => db.run('UPDATE endpoints SET record = ? WHERE id = ? AND partner_id = ?', [JSON.stringify(endpoint), endpoint.id, endpoint.partnerId]).changes > 0);
  }

  removeEndpoint(partnerId: string, endpointId: string): Promise<boolean> {
    return this.write((db) => {
      const removed = db.run('DELETE FROM endpoints WHERE id = ? AND partner_id = ?', [endpointId, partnerId]).changes > 0;
      if (removed) db.run('DELETE FROM deliveries WHERE endpoint_id = ?', [endpointId]);
      return removed;
    });
  }

  enqueue(deliveries: readonly Delivery[]): Promise<void> {
    return this.write((db) => {
      for (const d of deliveries) {
        db.run(
          'INSERT OR IGNORE INTO deliveries (endpoint_id, plan_id, seq, partner_id, type, body, created_at, window_started_at, state, next_attempt_at, attempts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          [d.endpointId, d.planId, d.seq, d.partnerId, d.type, d.body, d.createdAt, d.windowStartedAt, d.state, d.nextAttemptAt, JSON.stringify(d.attempts)],
        );
      }
    });
  }

  async deliveries(endpointIds: readonly string[], limit: number): Promise<Delivery[]> {
    const db = await this.database(false);
    if (!db) return [];
    return db
      .all('SELECT * FROM deliveries WHERE endpoint_id IN (SELECT value FROM json_each(?)) ORDER BY created_at DESC, seq DESC LIMIT ?', [JSON.stringify(endpointIds), limit])
      .map((r) => deliveryOf(r as Row));
  }

  replay(endpointId: string, planId: string, seq: number, now: number): Promise<Delivery | null> {
    return this.write((db) => {
      const key = [endpointId, planId, seq];
      if (db.run("UPDATE deliveries SET state = 'pending', next_attempt_at = ?, window_started_at = ? WHERE endpoint_id = ? AND plan_id = ? AND seq = ?", [now, now, ...key]).changes === 0) return null;
      return deliveryOf(db.get('SELECT * FROM deliveries WHERE endpoint_id = ? AND plan_id = ? AND seq = ?', key) as Row);
    });
  }

  start(runner: DeliveryRunner): void {
    this.runner = runner;
    // A file from a previous run may hold pending deliveries: they resume now.
    if (!existsSync(this.file)) return;
    this.database(false).then(
      () => this.wake(0),
      (err: unknown) => this.options.log.error({ err }, 'webhook store unreadable: its deliveries are not sent'),
    );
  }

  async close(): Promise<void> {
    this.state = 'closing';
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.inFlight.values());
    await this.opening?.catch(() => undefined);
    await this.flush();
    this.state = 'closed';
    if (this.db) {
      this.db.close();
      this.db = null;
      releaseOwnership(this.file);
    }
  }

  /** The database, opened (and, with `create`, made) once; null when it does not exist and `create` is false. */
  private async database(create: boolean): Promise<Database | null> {
    if (this.db) return this.db;
    if (!this.opening) {
      if (!create && !existsSync(this.file)) return null;
      this.opening = this.open();
    }
    return this.opening;
  }

  private async open(): Promise<Database> {
    // Loaded on first use: a service without webhook endpoints never compiles the WebAssembly.
    const { default: sqlite } = await import('node-sqlite3-wasm');
    mkdirSync(this.options.dataDir, { recursive: true });
    takeOwnership(this.file);
    try {
      const db = new sqlite.Database(this.file);
      db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA synchronous = OFF; PRAGMA journal_mode = MEMORY;');
      db.exec(SCHEMA);
      this.db = db;
      return db;
    } catch (err) {
      releaseOwnership(this.file);
      throw err;
    }
  }

  /** Runs `op` in the next batch's transaction; resolves with what it returned once the batch is committed. */
  private write<T>(op: (db: Database) => T): Promise<T> {
    if (this.state === 'closed') return Promise.reject(new Error('the webhook store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.writes.push({ op, resolve: resolve as (value: unknown) => void, reject });
      this.flushing ??= new Promise<void>((done) => setImmediate(done)).then(() => this.flush());
    });
  }

  private async flush(): Promise<void> {
    const batch = this.writes;
    this.writes = [];
    this.flushing = null;
    if (batch.length === 0) return;
    let db: Database;
    try {
      if (this.state === 'closed') throw new Error('the webhook store is closed');
      db = (await this.database(true))!;
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const results: Array<() => void> = [];
    db.exec('BEGIN');
    for (const w of batch) {
      try {
        const value = w.op(db);
        results.push(() => w.resolve(value));
      } catch (err) {
        results.push(() => w.reject(err));
      }
    }
    try {
      db.exec('COMMIT');
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const settle of results) settle();
    this.wake(0);
  }

  /** Reads the due deliveries in `ms`, unless it is woken sooner. */
  private wake(ms: number): void {
    if (this.state !== 'open' || !this.runner || !this.db) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.schedule(), ms);
    this.timer.unref();
  }

  /** Hands out what is due, up to the free places, then sleeps until the next is due. */
  private schedule(): void {
    const db = this.db;
    if (this.state !== 'open' || !this.runner || !db) return;
    const now = this.now();
    if (now - this.lastPurge > PURGE_EVERY_MS) {
      this.lastPurge = now;
      void this.write((d) => d.run("DELETE FROM deliveries WHERE state <> 'pending' AND created_at < ?", [now - DELIVERY_RETENTION_MS]));
    }
    const busy = JSON.stringify([...this.inFlight.keys()]);
    const free = this.options.concurrency - this.inFlight.size;
    if (free > 0) {
      const due = db.all(`SELECT * FROM deliveries d WHERE ${ELIGIBLE} AND d.next_attempt_at <= :now ORDER BY d.next_attempt_at LIMIT :limit`, { ':busy': busy, ':now': now, ':limit': free });
      for (const row of due) this.launch(deliveryOf(row as Row));
    }
    if (this.inFlight.size >= this.options.concurrency) return;
    const next = db.get(`SELECT MIN(d.next_attempt_at) AS due FROM deliveries d WHERE ${ELIGIBLE}`, { ':busy': JSON.stringify([...this.inFlight.keys()]) })?.due;
    this.wake(next === null || next === undefined ? MAX_SLEEP_MS : Math.min(MAX_SLEEP_MS, Math.max(0, Number(next) - now)));
  }

  private launch(delivery: Delivery): void {
    const key = `${delivery.endpointId} ${delivery.planId} ${delivery.seq}`;
    const run = this.runner!.run(delivery).then(
      (settled) => this.settle(delivery, settled),
      (err: unknown) => {
        if (err instanceof SendAborted) return;
        this.options.log.error({ endpointId: delivery.endpointId, err }, 'webhook delivery could not be attempted');
        return this.write((db) => db.run("UPDATE deliveries SET next_attempt_at = ? WHERE endpoint_id = ? AND plan_id = ? AND seq = ? AND state = 'pending'", [this.now() + this.options.firstRetryMs, delivery.endpointId, delivery.planId, delivery.seq])).then(() => undefined);
      },
    );
    this.inFlight.set(
      key,
      run.catch(() => undefined).finally(() => {
        this.inFlight.delete(key);
        this.wake(0);
      }),
    );
  }

  private async settle(delivery: Delivery, settled: Settled): Promise<void> {
    const key = [delivery.endpointId, delivery.planId, delivery.seq];
    if (settled.kind === 'dropped') {
      await this.write((db) => db.run('DELETE FROM deliveries WHERE endpoint_id = ? AND plan_id = ? AND seq = ?', key));
      return;
    }
    const after = withAttempt(delivery, settled);
    await this.write((db) =>
      db.run('UPDATE deliveries SET state = ?, next_attempt_at = ?, attempts = ? WHERE endpoint_id = ? AND plan_id = ? AND seq = ?', [after.state, after.nextAttemptAt, JSON.stringify(after.attempts), ...key]),
    );
  }
}

function deliveryOf(row: Row): Delivery {
  const type = String(row.type);
  if (!isPlanEventType(type)) throw new Error(`a stored delivery has the unknown type ${type}`);
  return {
    endpointId: String(row.endpoint_id),
    partnerId: String(row.partner_id),
    planId: String(row.plan_id),
    seq: Number(row.seq),
    type,
    body: String(row.body),
    createdAt: Number(row.created_at),
    windowStartedAt: Number(row.window_started_at),
    state: String(row.state) as DeliveryState,
    nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
    attempts: JSON.parse(String(row.attempts)) as Attempt[],
  };
}
