// The trade ledger in the plan status store's SQLite file: one row per partner plan, written in
// the store's own batches (its commit every FLUSH_MS), read by the key record and creation time.
import type sqlite from 'node-sqlite3-wasm';
import type { Trade } from '../contract/portal.js';
import type { StoredTrade, TradeCursor, TradeQuery, TradeStore } from './trade-store.js';

type Database = InstanceType<typeof sqlite.Database>;
type Statement = ReturnType<Database['prepare']>;

export const TRADES_SCHEMA =
  'CREATE TABLE IF NOT EXISTS trades (plan_id TEXT PRIMARY KEY, partner_id TEXT NOT NULL, created_at INTEGER NOT NULL, state TEXT NOT NULL, body BLOB NOT NULL, keep_until INTEGER NOT NULL);' +
  'CREATE INDEX IF NOT EXISTS trades_by_partner ON trades (partner_id, created_at, plan_id);';

/** The rows of a range, newest first, after a cursor (created_at, plan_id), in any of the states given as a JSON array (null: all). */
const PAGE = `SELECT body FROM trades
  WHERE partner_id = ? AND created_at >= ? AND created_at < ? AND keep_until > ?
    AND (? IS NULL OR state IN (SELECT value FROM json_each(?)))
    AND (created_at < ? OR (created_at = ? AND plan_id < ?))
  ORDER BY created_at DESC, plan_id DESC LIMIT ?`;

export class SqliteTradeStore implements TradeStore {
  private readonly upsert: Statement;

  constructor(
    private readonly db: Database,
    private readonly retentionMs: number,
    private readonly now: () => number,
    /** The plan store's batch: the write joins its next commit. */
    private readonly enqueue: (statement: Statement, values: Array<string | number | Uint8Array>) => void,
    /** Commits what is queued, so a read sees it. */
    private readonly flush: () => void,
  ) {
    this.upsert = db.prepare('INSERT OR REPLACE INTO trades (plan_id, partner_id, created_at, state, body, keep_until) VALUES (?, ?, ?, ?, ?, ?)');
  }

  async put({ partnerId, createdAtMs, trade }: StoredTrade): Promise<void> {
    this.enqueue(this.upsert, [trade.planId, partnerId, createdAtMs, trade.state, Buffer.from(JSON.stringify(trade)), createdAtMs + this.retentionMs]);
  }

  async page(query: TradeQuery, after: TradeCursor | null, limit: number): Promise<Trade[]> {
    this.flush();
    const states = query.states === null ? null : JSON.stringify([...query.states]);
    // No cursor: the newest first, so "before" a point past every row.
    const at = after?.createdAtMs ?? Number.MAX_SAFE_INTEGER;
    const rows = this.db.all(PAGE, [query.partnerId, query.fromMs, query.toMs, this.now(), states, states, at, at, after?.planId ?? '', limit]) as Array<{ body: Uint8Array }>;
    return rows.map((r) => JSON.parse(Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength).toString('utf8')) as Trade);
  }


  /** Drops the rows past their retention. */
  purge(): void {
    this.db.run('DELETE FROM trades WHERE keep_until <= ?', [this.now()]);
  }

  finalize(): void {
    this.upsert.finalize();
  }
}
