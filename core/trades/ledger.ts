// The trade ledger: records each partner plan at each of its states (the plan status's
// TradeRecorder) in the plan status store, and answers a key record's plans a page at a time,
// summed, or as CSV.
import type { Trade, TradePage, TradeSummary } from '../contract/portal.js';
import type { PlanStatus } from '../contract/v2.js';
import type { TrackedPlan } from '../plan-status/status.js';
import type { TradeCursor, TradeRecorder, TradeStore } from '../plan-status/trade-store.js';
import { badRequest } from '../errors.js';
import { tradesCsv } from './csv.js';
import { rangeOf, statesOf, type TradeRange } from './range.js';
import { summarise } from './summary.js';
import { tradeOf } from './trade.js';

/** The most plans a summary or an export reads. */
export const MAX_EXPORT = 100_000;
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

export class TradeLedger implements TradeRecorder {
  constructor(
    private readonly store: TradeStore,
    private readonly now: () => Date,
  ) {}

  async record(plan: TrackedPlan, status: PlanStatus): Promise<void> {
    if (plan.partnerId === null || plan.trade === undefined) return;
    await this.store.put({ partnerId: plan.partnerId, createdAtMs: plan.createdAtMs, trade: tradeOf(plan, plan.trade, status) });
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
    return summarise(await this.all(partnerId, range, null), range);
  }

  /** The CSV and the range it covers (its file is named by it). */
  async csv(partnerId: string, filter: TradeFilter): Promise<{ text: string; range: TradeRange }> {
    const range = this.range(filter);
    return { text: tradesCsv(await this.all(partnerId, range, statesOf(filter.status))), range };
  }

  private all(partnerId: string, range: TradeRange, states: ReturnType<typeof statesOf>): Promise<Trade[]> {
    return this.store.all({ partnerId, fromMs: range.fromMs, toMs: range.toMs, states }, MAX_EXPORT);
  }

  private range(filter: TradeFilter): TradeRange {
    return rangeOf(filter, this.now().getTime());
  }
}
