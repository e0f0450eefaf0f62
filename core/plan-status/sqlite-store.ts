// The plan status store of one instance, in its data folder (DATA_DIR/plan-status.sqlite): SQLite
// compiled to WebAssembly (node-sqlite3-wasm), which runs unchanged on every supported Node with
// no compiler. The file is this process's alone (an exclusive lock, taken once: the library's
// lock per statement, a directory made and removed, cost a v2 plan most of its CPU; its owner
// named beside it, core/sqlite-file.ts, so a crash's stale lock is taken over). The live plans
// are also held in memory, so the follower's every read asks no SQL. Writes are gathered for
// FLUSH_MS and committed together by statements prepared once, each record's JSON handed over as
// UTF-8 bytes (the library copies a string into WebAssembly a character at a time), and every read
// of the file commits what is gathered first. A plan's first event is not written: it is derived
// from the plan's record (status.ts firstEvent) when asked. The trade ledger's rows
// (sqlite-trades.ts) join the same batches. Kept past a restart (the follower resumes the live
// plans), dropped after the retention.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import type { PlanStatusEvent } from '../contract/v2.js';
import { releaseOwnership, takeOwnership } from '../sqlite-file.js';
import { SqliteTradeStore, TRADES_SCHEMA } from './sqlite-trades.js';
import { Listeners, type PlanChanges, type PlanStatusStore } from './store.js';
import { firstEvent, type TrackedPlan } from './status.js';

/** How long writes are gathered before one commit: what a crash of the process may lose of the newest plans' events. */
export const FLUSH_MS = 20;

/** A live plan as held in memory: its record, its events after the first (derived from the record; a file an earlier version wrote holds the first too), and until when it is kept. */
interface Live {
  plan: TrackedPlan;
  events: PlanStatusEvent[];
  keepUntil: number;
}

type Database = InstanceType<typeof sqlite.Database>;
type Statement = ReturnType<Database['prepare']>;
type Value = string | number | Uint8Array;

const STATEMENTS = {
  // A plan over, made again under its id (the same request once its idempotency record is gone), starts afresh: the trigger drops its events.
  add: 'INSERT OR REPLACE INTO plans (plan_id, body, live, keep_until) VALUES (?, ?, 1, ?)',
  update: 'UPDATE plans SET body = ? WHERE plan_id = ?',
  event: 'INSERT INTO events (plan_id, seq, body) VALUES (?, ?, ?)',
  kept: 'UPDATE plans SET live = ?, keep_until = ? WHERE plan_id = ?',
} as const;

export class SqlitePlanStore implements PlanStatusStore {
  readonly shared = false;
  private readonly db: Database;
  private readonly file: string;
  private readonly feed = new Listeners();
  private readonly statements: Readonly<Record<keyof typeof STATEMENTS, Statement>>;
  private queued: Array<{ readonly statement: Statement; readonly values: Value[] }> = [];
  private flushing: NodeJS.Timeout | null = null;
  /** Each live plan and its last seq, so the follower's reads and an append's check need no SQL. */
  private readonly liveplans = new Map<string, Live>();
  /** The plans added or changed since the cursor last answered (`handed`): a set, so a follower kept from reading holds each plan once. */
  private readonly changed = new Set<string>();
  private handed = 0;
  private readonly purger: NodeJS.Timeout;
  /** The trade ledger, in the same file and batches. */
  readonly trades: SqliteTradeStore;

  constructor(
    dataDir: string,
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
    tradeRetentionMs: number = retentionMs,
  ) {
    mkdirSync(dataDir, { recursive: true });
    this.file = join(dataDir, 'plan-status.sqlite');
    takeOwnership(this.file);
    try {
      this.db = new sqlite.Database(this.file);
      // Handed to the OS at each commit: kept across a restart of the process.
      this.db.exec('PRAGMA locking_mode=EXCLUSIVE; PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY;');
    } catch (err) {
      releaseOwnership(this.file);
      throw err;
    }
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS plans (plan_id TEXT PRIMARY KEY, body BLOB NOT NULL, live INTEGER NOT NULL, keep_until INTEGER NOT NULL);' +
        'CREATE TABLE IF NOT EXISTS events (plan_id TEXT NOT NULL, seq INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (plan_id, seq));' +
        'CREATE TRIGGER IF NOT EXISTS plan_afresh AFTER INSERT ON plans BEGIN DELETE FROM events WHERE plan_id = NEW.plan_id; END;' +
        TRADES_SCHEMA,
    );
    const db = this.db;
    this.statements = Object.fromEntries(Object.entries(STATEMENTS).map(([name, sql]) => [name, db.prepare(sql)])) as Record<keyof typeof STATEMENTS, Statement>;
    this.trades = new SqliteTradeStore(db, tradeRetentionMs, now, (statement, values) => this.enqueue(statement, values), () => this.flush());
    this.purge();
    for (const row of this.db.all('SELECT body, keep_until AS keepUntil FROM plans WHERE live = 1') as Array<{ body: string | Uint8Array; keepUntil: number }>) {
      const plan = parsed<TrackedPlan>(row.body);
      this.liveplans.set(plan.planId, { plan, events: this.rows(plan.planId, 0), keepUntil: row.keepUntil });
    }
    this.purger = setInterval(() => this.purge(), 60 * 60_000);
    this.purger.unref();
  }

  subscribe(listener: (event: PlanStatusEvent) => void): () => void {
    return this.feed.subscribe(listener);
  }

  async listening(): Promise<void> {}

  async add(plan: TrackedPlan): Promise<boolean> {
    if (this.kept(plan.planId)) return false;
    const keepUntil = this.now() + this.retentionMs;
    // Nothing is read here, so a burst of plans is one commit. The first event is not written:
    // it is the record's (firstEvent), and most plans' only one; a row for it doubled a plan's cost.
    this.write('add', [plan.planId, json(plan), keepUntil]);
    this.liveplans.set(plan.planId, { plan, events: [], keepUntil });
    this.changed.add(plan.planId);
    // Nobody can be watching a plan not kept before; published all the same to whoever listens.
    if (this.feed.size > 0) this.feed.emit(firstEvent(plan));
    return true;
  }

  async update(plan: TrackedPlan): Promise<void> {
    const live = this.liveplans.get(plan.planId);
    if (live) live.plan = plan;
    this.write('update', [json(plan), plan.planId]);
    this.changed.add(plan.planId);
  }

  async plan(planId: string): Promise<TrackedPlan | null> {
    const live = this.kept(planId);
    if (live) return live.plan;
    this.flush();
    const row = this.db.get('SELECT body FROM plans WHERE plan_id = ? AND keep_until > ?', [planId, this.now()]) as { body: string | Uint8Array } | null;
    return row ? parsed<TrackedPlan>(row.body) : null;
  }

  async events(planId: string, afterSeq: number): Promise<PlanStatusEvent[]> {
    const live = this.kept(planId);
    if (live) return withFirst(live.plan, live.events, afterSeq);
    const plan = await this.plan(planId);
    return plan ? withFirst(plan, this.rows(planId, afterSeq), afterSeq) : [];
  }

  async append(event: PlanStatusEvent, terminal: boolean): Promise<boolean> {
    const live = this.kept(event.planId);
    if (live === undefined || event.seq !== (live.events.at(-1)?.seq ?? 1) + 1) return false;
    const keepUntil = this.now() + this.retentionMs;
    this.write('event', [event.planId, event.seq, json(event)]);
    this.write('kept', [terminal ? 0 : 1, keepUntil, event.planId]);
    if (terminal) this.liveplans.delete(event.planId);
    else {
      live.events.push(event);
      live.keepUntil = keepUntil;
    }
    this.feed.emit(event);
    return true;
  }

  async changes(after: string | null): Promise<PlanChanges> {
    // The one follower of this store has learnt what it was answered when it passes that cursor back.
    const full = after !== String(this.handed);
    const ids = full ? [...this.liveplans.keys()] : [...this.changed];
    this.changed.clear();
    this.handed += 1;
    return { plans: ids.flatMap((id) => this.kept(id)?.plan ?? []), cursor: String(this.handed), full };
  }

  /** A live plan within its retention; one past it is forgotten (its rows go at the next purge). */
  private kept(planId: string): Live | undefined {
    const live = this.liveplans.get(planId);
    if (live && live.keepUntil <= this.now()) {
      this.liveplans.delete(planId);
      return undefined;
    }
    return live;
  }

  async lease(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.purger);
    this.flush();
    for (const statement of Object.values(this.statements)) statement.finalize();
    this.trades.finalize();
    this.db.close();
    releaseOwnership(this.file);
  }

  /** The events kept of a plan after `afterSeq`: those after its first (a file an earlier version wrote holds its first too). */
  private rows(planId: string, afterSeq: number): PlanStatusEvent[] {
    this.flush();
    const rows = this.db.all('SELECT body FROM events WHERE plan_id = ? AND seq > ? ORDER BY seq', [planId, afterSeq]) as Array<{ body: string | Uint8Array }>;
    return rows.map((r) => parsed<PlanStatusEvent>(r.body));
  }

  private write(statement: keyof typeof STATEMENTS, values: Value[]): void {
    this.enqueue(this.statements[statement], values);
  }

  private enqueue(statement: Statement, values: Value[]): void {
    this.queued.push({ statement, values });
    this.flushing ??= setTimeout(() => this.flush(), FLUSH_MS);
  }

  private flush(): void {
    if (this.flushing) clearTimeout(this.flushing);
    this.flushing = null;
    if (this.queued.length === 0) return;
    const writes = this.queued;
    this.queued = [];
    this.db.exec('BEGIN');
    try {
      for (const { statement, values } of writes) statement.run(values);
      this.db.exec('COMMIT');
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }

  private purge(): void {
    this.flush();
    const now = this.now();
    this.db.run('DELETE FROM events WHERE plan_id IN (SELECT plan_id FROM plans WHERE keep_until <= ?)', [now]);
    this.db.run('DELETE FROM plans WHERE keep_until <= ?', [now]);
    this.trades.purge();
  }
}

/** A plan's events after `afterSeq`, its first derived from its record unless kept (by an earlier version). */
const withFirst = (plan: TrackedPlan, kept: readonly PlanStatusEvent[], afterSeq: number): PlanStatusEvent[] => {
  const after = kept.filter((e) => e.seq > afterSeq);
  return afterSeq < 1 && after[0]?.seq !== 1 ? [firstEvent(plan), ...after] : after;
};

/** A record's JSON as UTF-8 bytes: copied into WebAssembly at once, not a character at a time. */
const json = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));

/** A record read back: bytes as written, or text as an earlier version of this file wrote it. */
const parsed = <T>(body: string | Uint8Array): T => JSON.parse(typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as T;
