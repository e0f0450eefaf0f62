// The trade ledger's port: each partner plan's row at its latest state, kept by the plan status
// store's adapter (the same SQLite file, the same Redis) for the ledger's own retention after the
// plan's creation, read back a page at a time, newest first. What a row holds is core/trades/'s;
// here it is kept by the key record, the plan's creation and its state.
import type { Trade } from '../contract/portal.js';
import type { PlanStatus } from '../contract/v2.js';
import type { TrackedPlan } from './status.js';

export interface StoredTrade {
  /** The key record (`key_...`) whose plan it is. */
  readonly partnerId: string;
  readonly createdAtMs: number;
  readonly trade: Trade;
}

export interface TradeQuery {
  readonly partnerId: string;
  /** Plans created at or after it. */
  readonly fromMs: number;
  /** Plans created before it. */
  readonly toMs: number;
  /** Only plans in these states; null for all. */
  readonly states: ReadonlySet<Trade['state']> | null;
}

/** Where a page ends: the last plan on it, by creation then id (newest first). */
export interface TradeCursor {
  readonly createdAtMs: number;
  readonly planId: string;
}

export interface TradeStore {
  /** Keeps the plan's row as it is now (replacing the one before). */
  put(stored: StoredTrade): Promise<void>;
  /** Up to `limit` rows after `after` (null: from the newest), newest first. */
  page(query: TradeQuery, after: TradeCursor | null, limit: number): Promise<Trade[]>;
}

/** Hears a partner's plan at each of its states, its first included (core/trades/ records it). */
export interface TradeRecorder {
  /** Never rejects: a row that cannot be written now is the recorder's to write again. */
  record(plan: TrackedPlan, status: PlanStatus): Promise<void>;
}
