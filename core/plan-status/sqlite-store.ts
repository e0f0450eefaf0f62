// The plan status store of one instance, in its data folder (DATA_DIR/plan-status.sqlite): SQLite
// compiled to WebAssembly (node-sqlite3-wasm), which runs unchanged on every supported Node with
// no compiler. Writes are queued and committed together, one transaction per turn of the event
// loop, so a burst of plans costs one commit; every read commits what is queued first. Kept past
// a restart (the follower resumes the live plans), dropped after the retention.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import sqlite from 'node-sqlite3-wasm';
import type { PlanStatusEvent } from '../contract/v2.js';
import { Listeners, type PlanStatusStore } from './store.js';
import type { TrackedPlan } from './status.js';

type Write = { readonly sql: string; readonly values: ReadonlyArray<string | number> };

export class SqlitePlanStore implements PlanStatusStore {
  readonly shared = false;
  private readonly db: InstanceType<typeof sqlite.Database>;
  private readonly feed = new Listeners();
  private queued: Write[] = [];
  private flushing: NodeJS.Immediate | null = null;
  /** Each live plan's last seq, so an append is checked without a read. */
  private readonly lastSeq = new Map<string, number>();
  private readonly purger: NodeJS.Timeout;

  constructor(dataDir: string, private readonly retentionMs: number, private readonly now: () => number = Date.now) {
    mkdirSync(dataDir, { recursive: true });
    this.db = new sqlite.Database(join(dataDir, 'plan-status.sqlite'));
    // Handed to the OS at each commit: kept across a restart of the process.
    this.db.exec('PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY;');
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS plans (plan_id TEXT PRIMARY KEY, body TEXT NOT NULL, live INTEGER NOT NULL, keep_until INTEGER NOT NULL);' +
        'CREATE TABLE IF NOT EXISTS events (plan_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (plan_id, seq));',
    );
    this.purge();
    for (const row of this.db.all('SELECT p.plan_id AS id, MAX(e.seq) AS seq FROM plans p JOIN events e ON e.plan_id = p.plan_id WHERE p.live = 1 GROUP BY p.plan_id') as Array<{ id: string; seq: number }>) {
      this.lastSeq.set(row.id, row.seq);
    }
    this.purger = setInterval(() => this.purge(), 60 * 60_000);
    this.purger.unref();
  }

  subscribe(listener: (event: PlanStatusEvent) => void): () => void {
    return this.feed.subscribe(listener);
  }

  async listening(): Promise<void> {}

  async add(plan: TrackedPlan, first: PlanStatusEvent): Promise<boolean> {
    this.flush();
    if (this.db.get('SELECT 1 AS one FROM plans WHERE plan_id = ?', [plan.planId])) return false;
    this.write('INSERT INTO plans (plan_id, body, live, keep_until) VALUES (?, ?, 1, ?)', [plan.planId, JSON.stringify(plan), this.now() + this.retentionMs]);
    this.write('INSERT INTO events (plan_id, seq, body) VALUES (?, ?, ?)', [plan.planId, first.seq, JSON.stringify(first)]);
    this.lastSeq.set(plan.planId, first.seq);
    this.feed.emit(first);
    return true;
  }

  async update(plan: TrackedPlan): Promise<void> {
    this.write('UPDATE plans SET body = ? WHERE plan_id = ?', [JSON.stringify(plan), plan.planId]);
  }

  async plan(planId: string): Promise<TrackedPlan | null> {
    this.flush();
    const row = this.db.get('SELECT body FROM plans WHERE plan_id = ? AND keep_until > ?', [planId, this.now()]) as { body: string } | null;
    return row ? (JSON.parse(row.body) as TrackedPlan) : null;
  }

  async events(planId: string, afterSeq: number): Promise<PlanStatusEvent[]> {
    this.flush();
    const rows = this.db.all('SELECT body FROM events WHERE plan_id = ? AND seq > ? ORDER BY seq', [planId, afterSeq]) as Array<{ body: string }>;
    return rows.map((r) => JSON.parse(r.body) as PlanStatusEvent);
  }

  async append(event: PlanStatusEvent, terminal: boolean): Promise<boolean> {
    const last = this.lastSeq.get(event.planId);
    if (last === undefined || event.seq !== last + 1) return false;
    this.write('INSERT INTO events (plan_id, seq, body) VALUES (?, ?, ?)', [event.planId, event.seq, JSON.stringify(event)]);
    this.write('UPDATE plans SET live = ?, keep_until = ? WHERE plan_id = ?', [terminal ? 0 : 1, this.now() + this.retentionMs, event.planId]);
    if (terminal) this.lastSeq.delete(event.planId);
    else this.lastSeq.set(event.planId, event.seq);
    this.feed.emit(event);
    return true;
  }

  async live(): Promise<TrackedPlan[]> {
    this.flush();
    return (this.db.all('SELECT body FROM plans WHERE live = 1') as Array<{ body: string }>).map((r) => JSON.parse(r.body) as TrackedPlan);
  }

  async lease(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.purger);
    this.flush();
    this.db.close();
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
