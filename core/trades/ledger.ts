// The trade ledger: records each partner plan at each of its states (the plan status's
// TradeRecorder) in the plan status store, and answers a key record's plans a page at a time,
// summed, or as CSV. A row the store cannot take now is kept and written again (each row is the
// plan's whole latest state, so the newest write wins), never failing the plan it records.
import type { Trade, TradePage, TradeSummary } from '../contract/portal.js';
import type { PlanStatus } from '../contract/v2.js';
import type { TrackedPlan } from '../plan-status/status.js';
import type { TradeCursor, TradeRecorder, TradeStore } from '../plan-status/trade-store.js';
import { badRequest } from '../errors.js';
import type { CoreLog } from '../log.js';
import type { StoredTrade } from '../plan-status/trade-store.js';
import { CSV_HEADER, csvLines } from './csv.js';
import { rangeOf, statesOf, type TradeRange } from './range.js';
import { TradeSums } from './summary.js';
import { tradeOf } from './trade.js';

/** The most plans a summary or an export reads. */
export const MAX_EXPORT = 100_000;
/** Plans read at a time by a summary or an export, the event loop free between: a range never holds the service up for long. */
const CHUNK = 1_000;
const DEFAULT_PAGE = 50;

export interface TradeFilter {
  readonly from?: string;
  readonly to?: string;
  readonly status?: string;
}

const cursorText = (c: TradeCursor): string => `${c.createdAtMs}_${c.planId}`;

function cursorOf(text: string | undefined): TradeCursor | null {
  if (text === undefined) return null;
  const at = text.indexOf('_');
  return { createdAtMs: Number(text.slice(0, at)), planId: text.slice(at + 1) };
}

/** Between two tries of the rows the store could not take. */
const RETRY_MS = 5_000;

export class TradeLedger implements TradeRecorder {
  /** Rows not written yet, by plan: the latest of each, numbered in the order they were recorded. */
  private readonly unwritten = new Map<string, { readonly stored: StoredTrade; readonly n: number }>();
  private recorded = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: TradeStore,
    private readonly now: () => Date,
    private readonly log: CoreLog,
    private readonly retryMs: number = RETRY_MS,
  ) {}

  async record(plan: TrackedPlan, status: PlanStatus): Promise<void> {
    if (plan.partnerId === null || plan.trade === undefined) return;
    await this.write({ stored: { partnerId: plan.partnerId, createdAtMs: plan.createdAtMs, trade: tradeOf(plan, plan.trade, status) }, n: ++this.recorded });
  }

  /** Stops trying again (the service is closing); what is still unwritten is in the log's count. */
  close(): void {
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
  }

  private async write(row: { readonly stored: StoredTrade; readonly n: number }): Promise<void> {
    const id = row.stored.trade.planId;
    try {
      await this.store.put(row.stored);
      // Written: unless a newer row of the plan was recorded meanwhile, nothing of it is left to write.
      if ((this.unwritten.get(id)?.n ?? 0) <= row.n) this.unwritten.delete(id);
    } catch (err) {
      if (this.unwritten.size === 0) this.log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'the trade ledger could not write a plan\'s row; it tries again');
      if ((this.unwritten.get(id)?.n ?? 0) < row.n) this.unwritten.set(id, row);
      this.retry ??= setTimeout(() => void this.writeAgain(), this.retryMs).unref();
    }
  }

  private async writeAgain(): Promise<void> {
    this.retry = null;
    for (const row of [...this.unwritten.values()]) await this.write(row);
  }

  async page(partnerId: string, filter: TradeFilter & { readonly limit?: number; readonly cursor?: string }): Promise<TradePage> {
    const range = this.range(filter);
    const limit = filter.limit ?? DEFAULT_PAGE;
    const after = cursorOf(filter.cursor);
    if (after !== null && (after.createdAtMs < range.fromMs || after.createdAtMs >= range.toMs)) throw badRequest('cursor is not of this range: ask the first page again');
    // One more than the page: whether another follows.
    const trades = await this.store.page({ partnerId, fromMs: range.fromMs, toMs: range.toMs, states: statesOf(filter.status) }, after, limit + 1);
    const shown = trades.slice(0, limit);
    const last = shown.at(-1);
    return { trades: shown, nextCursor: trades.length > limit && last ? cursorText({ createdAtMs: Date.parse(last.createdAt), planId: last.planId }) : null };
  }

  async summary(partnerId: string, filter: TradeFilter): Promise<TradeSummary> {
    const range = this.range(filter);
    const sums = new TradeSums();
    for await (const trades of this.chunks(partnerId, range, null)) for (const trade of trades) sums.add(trade);
    return sums.summary(range);
  }

  /** The CSV and the range it covers (its file is named by it). */
  async csv(partnerId: string, filter: TradeFilter): Promise<{ text: string; range: TradeRange }> {
    const range = this.range(filter);
    const parts = [CSV_HEADER];
    for await (const trades of this.chunks(partnerId, range, statesOf(filter.status))) parts.push(csvLines(trades));
    return { text: parts.join(''), range };
  }

  /**
   * Every plan of the range, newest first, CHUNK at a time with the event loop free between; a
   * range of more than MAX_EXPORT is refused, never summed or exported in part.
   */
  private async *chunks(partnerId: string, range: TradeRange, states: ReturnType<typeof statesOf>): AsyncGenerator<Trade[]> {
    const query = { partnerId, fromMs: range.fromMs, toMs: range.toMs, states };
    let after: TradeCursor | null = null;
    for (let read = 0; ; ) {
      const trades = await this.store.page(query, after, CHUNK);
      read += trades.length;
      if (read > MAX_EXPORT) throw badRequest(`from ${range.from} to ${range.to} holds more than ${MAX_EXPORT} plans: ask fewer days`);
      yield trades;
      const last = trades.at(-1);
      if (trades.length < CHUNK || last === undefined) return;
      after = { createdAtMs: Date.parse(last.createdAt), planId: last.planId };
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private range(filter: TradeFilter): TradeRange {
    return rangeOf(filter, this.now().getTime());
  }
}
