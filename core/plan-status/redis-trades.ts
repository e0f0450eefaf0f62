// The trade ledger in the plan status store's Redis: each partner plan's row (`bx:tl:r:<planId>`)
// and each key record's plans by creation time (`bx:tl:p:<key record>`, a sorted set), each kept
// the ledger's retention after the plan's creation, so every instance reads one ledger.
import type { Redis } from 'ioredis';
import type { Trade } from '../contract/portal.js';
import type { StoredTrade, TradeCursor, TradeQuery, TradeStore } from './trade-store.js';

const rowKey = (planId: string) => `bx:tl:r:${planId}`;
const partnerKey = (partnerId: string) => `bx:tl:p:${partnerId}`;
/** Ids read at a time while a page is filled. */
const CHUNK = 500;

export class RedisTradeStore implements TradeStore {
  constructor(
    private readonly client: Redis,
    private readonly retentionMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async put({ partnerId, createdAtMs, trade }: StoredTrade): Promise<void> {
    const keptMs = createdAtMs + this.retentionMs - this.now();
    if (keptMs <= 0) return;
    await this.client
      .multi()
      .set(rowKey(trade.planId), JSON.stringify(trade), 'PX', keptMs)
      .zadd(partnerKey(partnerId), createdAtMs, trade.planId)
      .zremrangebyscore(partnerKey(partnerId), '-inf', `(${this.now() - this.retentionMs}`)
      .pexpire(partnerKey(partnerId), this.retentionMs)
      .exec();
  }

  async page(query: TradeQuery, after: TradeCursor | null, limit: number): Promise<Trade[]> {
    const found: Trade[] = [];
    const max = after ? String(after.createdAtMs) : `(${query.toMs}`;
    for (let offset = 0; ; offset += CHUNK) {
      // Newest first; a millisecond's ties in id order, descending, as SQLite reads them.
      const flat = await this.client.zrevrangebyscore(partnerKey(query.partnerId), max, query.fromMs, 'WITHSCORES', 'LIMIT', offset, CHUNK);
      const entries: Array<{ planId: string; at: number }> = [];
      for (let i = 0; i < flat.length; i += 2) entries.push({ planId: flat[i]!, at: Number(flat[i + 1]) });
      const wanted = entries.filter((e) => e.at < query.toMs && (after === null || e.at < after.createdAtMs || (e.at === after.createdAtMs && e.planId < after.planId)));
      const texts = wanted.length === 0 ? [] : await this.client.mget(wanted.map((e) => rowKey(e.planId)));
      for (const text of texts) {
        if (text === null) continue;
        const trade = JSON.parse(text) as Trade;
        if (query.states === null || query.states.has(trade.state)) found.push(trade);
        if (found.length === limit) return found;
      }
      if (entries.length < CHUNK) return found;
    }
  }

}
