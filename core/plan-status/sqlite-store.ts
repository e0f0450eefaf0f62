// The plan status store of one instance, in its data folder (DATA_DIR/plan-status.sqlite): SQLite
// compiled to WebAssembly (node-sqlite3-wasm), which runs unchanged on every supported Node with
// no compiler. The file is this process's alone (an exclusive lock, taken once: the library's
// lock per statement, a directory made and removed, cost a v2 plan most of its CPU; its owner
// named beside it, core/sqlite-file.ts, so a crash's stale lock is taken over). The live
// plans are also held in memory, so the follower's every read asks no SQL; writes are queued and
// committed together, one transaction per turn of the event loop, and every read of the file
// commits what is queued first. Kept past a restart (the follower resumes the live plans), dropped
// after the retention.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import type { PlanStatusEvent } from '../contract/v2.js';
import { releaseOwnership, takeOwnership } from '../sqlite-file.js';
import { Listeners, type PlanStatusStore } from './store.js';
import type { TrackedPlan } from './status.js';

type Write = { readonly sql: string; readonly values: ReadonlyArray<string | number> };

/** A live plan as held in memory: its record, its events so far, and until when it is kept. */
interface Live {
  plan: TrackedPlan;
  events: PlanStatusEvent[];
  keepUntil: number;
}

export class SqlitePlanStore implements PlanStatusStore {
  readonly shared = false;
  private readonly db: InstanceType<typeof sqlite.Database>;
  private readonly file: string;
  private readonly feed = new Listeners();
  private queued: Write[] = [];
  private flushing: NodeJS.Immediate | null = null;
  /** Each live plan and its last seq, so the follower's reads and an append's check need no SQL. */
  private readonly liveplans = new Map<string, Live>();
  private readonly purger: NodeJS.Timeout;

  constructor(dataDir: string, private readonly retentionMs: number, private readonly now: () => number = Date.now) {
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
      'CREATE TABLE IF NOT EXISTS plans (plan_id TEXT PRIMARY KEY, body TEXT NOT NULL, live INTEGER NOT NULL, keep_until INTEGER NOT NULL);' +
        'CREATE TABLE IF NOT EXISTS events (plan_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (plan_id, seq));',
    );
    this.purge();
    for (const row of this.db.all('SELECT body, keep_until AS keepUntil FROM plans WHERE live = 1') as Array<{ body: string; keepUntil: number }>) {
      const plan = JSON.parse(row.body) as TrackedPlan;
      const events = (this.db.all('SELECT body FROM events WHERE plan_id = ? ORDER BY seq', [plan.planId]) as Array<{ body: string }>).map((r) => JSON.parse(r.body) as PlanStatusEvent);
      this.liveplans.set(plan.planId, { plan, events, keepUntil: row.keepUntil });
    }
    this.purger = setInterval(() => this.purge(), 60 * 60_000);
    this.purger.unref();
  }

  subscribe(listener: (event: PlanStatusEvent) => void): () => void {
    return this.feed.subscribe(listener);
  }

  async listening(): Promise<void> {}

  async add(plan: TrackedPlan, first: PlanStatusEvent): Promise<boolean> {
    if (this.kept(plan.planId)) return false;
    // A plan over, made again under its id (the same request once its idempotency record is gone),
    // starts afresh; nothing is read here, so a burst of plans is one commit.
    this.write('DELETE FROM events WHERE plan_id = ?', [plan.planId]);
    this.write('INSERT OR REPLACE INTO plans (plan_id, body, live, keep_until) VALUES (?, ?, 1, ?)', [plan.planId, JSON.stringify(plan), this.now() + this.retentionMs]);
    this.write('INSERT INTO events (plan_id, seq, body) VALUES (?, ?, ?)', [plan.planId, first.seq, JSON.stringify(first)]);
    this.liveplans.set(plan.planId, { plan, events: [first], keepUntil: this.now() + this.retentionMs });
    this.feed.emit(first);
    return true;
  }

  async update(plan: TrackedPlan): Promise<void> {
    const live = this.liveplans.get(plan.planId);
    if (live) live.plan = plan;
    this.write('UPDATE plans SET body = ? WHERE plan_id = ?', [JSON.stringify(plan), plan.planId]);
  }

  async plan(planId: string): Promise<TrackedPlan | null> {
    const live = this.kept(planId);
    if (live) return live.plan;
    this.flush();
    const row = this.db.get('SELECT body FROM plans WHERE plan_id = ? AND keep_until > ?', [planId, this.now()]) as { body: string } | null;
    return row ? (JSON.parse(row.body) as TrackedPlan) : null;
  }

  async events(planId: string, afterSeq: number): Promise<PlanStatusEvent[]> {
    const live = this.kept(planId);
    if (live) return live.events.filter((e) => e.seq > afterSeq);
    this.flush();
    const rows = this.db.all('SELECT body FROM events WHERE plan_id = ? AND seq > ? ORDER BY seq', [planId, afterSeq]) as Array<{ body: string }>;
    return rows.map((r) => JSON.parse(r.body) as PlanStatusEvent);
  }

  async append(event: PlanStatusEvent, terminal: boolean): Promise<boolean> {
    const live = this.kept(event.planId);
    if (live === undefined || event.seq !== live.events.length + 1) return false;
    this.write('INSERT INTO events (plan_id, seq, body) VALUES (?, ?, ?)', [event.planId, event.seq, JSON.stringify(event)]);
    this.write('UPDATE plans SET live = ?, keep_until = ? WHERE plan_id = ?', [terminal ? 0 : 1, this.now() + this.retentionMs, event.planId]);
    if (terminal) this.liveplans.delete(event.planId);
    else {
      live.events.push(event);
      live.keepUntil = this.now() + this.retentionMs;
    }
    this.feed.emit(event);
    return true;
  }

  async live(): Promise<TrackedPlan[]> {
    return [...this.liveplans.keys()].flatMap((id) => this.kept(id)?.plan ?? []);
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
    this.db.close();
    releaseOwnership(this.file);
  }

  private write(sql: string, values: ReadonlyArray<string | number>): void {
    this.queued.push({ sql, values });
    this.flushing ??= setImmediate(() => this.flush());
  }

  private flush(): void {
    if (this.flushing) clearImmediate(this.flushing);
    this.flushing = null;
    if (this.queued.length === 0) return;
    const writes = this.queued;
    this.queued = [];
    this.db.exec('BEGIN');
    try {
      for (const { sql, values } of writes) this.db.run(sql, values as Array<string | number>);
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
  }
}
