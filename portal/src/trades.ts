// The Trades part of a signed-in key's view: its ledger for UTC days it chooses (at first the
// service's default, the last 30) and optionally one state: plans and volume per day as charts
// with their table, success by venue, slippage, fees, the latest swaps with a More button that
// follows the page's cursor, and the same swaps as the service's CSV, fetched with the key as a
// header and saved from memory (the key never goes in a URL, so no link could carry it).
import { exportTrades, listTrades, tradeSummary, type TradeFilter } from './api.js';
import type { TradeState } from './contract/portal.js';
import { tradeRangeProblem } from './checks.js';
import { byId, el } from './dom.js';
import { activity, fees, slippage, stateText, swapRow, swapsTable, venues } from './trade-views.js';
import type { PageHooks } from './webhooks.js';

/** Every state a plan shows, in the order a plan reaches them (TradeState's enum, which test/portal/page.test.ts holds this to). */
export const TRADE_STATES: readonly TradeState[] = [
  'awaiting_signature',
  'planned',
  'deposit_seen',
  'completed',
  'partially_completed',
  'slippage_failed',
  'expired',
  'withdrawn',
  'venue_failed',
  'unobserved',
];

/** Swaps listed at a time: a screenful to read, More for the next. */
export const SWAPS_PER_PAGE = 20;

/** The file's name, as the service's Content-Disposition names it. */
export const csvName = (filter: TradeFilter) => `bestex-trades-${filter.from}-${filter.to}.csv`;

export class TradesSection {
  private readonly errors = byId('trades-error');
  private readonly form = byId<HTMLFormElement>('trades-form');
  private readonly from = byId<HTMLInputElement>('trades-from');
  private readonly to = byId<HTMLInputElement>('trades-to');
  private readonly status = byId<HTMLSelectElement>('trades-status');
  private readonly more = byId<HTMLButtonElement>('trades-more');
  private readonly download = byId<HTMLButtonElement>('trades-download');
  private readonly saved = byId('trades-saved');
  private readonly parts = { activity: byId('trades-activity'), venues: byId('trades-venues'), slippage: byId('trades-slippage'), fees: byId('trades-fees'), list: byId('trades-list') };
  /** The filter of what is shown, which More and Download CSV follow; null before the first load. */
  private filter: TradeFilter | null = null;
  private cursor: string | null = null;

  constructor(private readonly page: Pick<PageHooks, 'key' | 'attempt' | 'problems' | 'say'>) {
    this.status.append(el('option', { value: '' }, 'Any state'), ...TRADE_STATES.map((state) => el('option', { value: state }, stateText(state))));
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.page.attempt(this.errors, this.form.querySelector('button[type=submit]'), async () => this.page.say(await this.load()));
    });
    this.more.addEventListener('click', () => void this.page.attempt(this.errors, this.more, () => this.next()));
    this.download.addEventListener('click', () => void this.page.attempt(this.errors, this.download, () => this.save()));
  }

  /**
   * Reads the ledger for the days and state chosen; with no days chosen yet, the service's default
   * days, which the inputs then show. Answers what was shown, in a sentence.
   */
  async load(): Promise<string> {
    const key = this.page.key();
    const status = this.status.value === '' ? [] : [this.status.value as TradeState];
    let days: { from: string; to: string } | undefined;
    if (this.from.value !== '' || this.to.value !== '') {
      const problem = tradeRangeProblem(this.from.value, this.to.value);
      if (problem !== null) throw this.page.problems([{ line: null, value: null, text: problem }], this.to.value === '' && this.from.value !== '' ? this.to : this.from);
      days = { from: this.from.value, to: this.to.value };
    }
    const summary = await tradeSummary(key, days);
    const filter: TradeFilter = { from: summary.from, to: summary.to, status };
    const first = await listTrades(key, filter, SWAPS_PER_PAGE, null);
    this.filter = filter;
    this.cursor = first.nextCursor;
    this.from.value = filter.from;
    this.to.value = filter.to;
    this.parts.activity.replaceChildren(activity(summary));
    this.parts.venues.replaceChildren(venues(summary));
    this.parts.slippage.replaceChildren(slippage(summary));
    this.parts.fees.replaceChildren(fees(summary));
    const state = status.length === 0 ? '' : `, ${stateText(status[0]!)} only`;
    this.parts.list.replaceChildren(
      first.trades.length === 0 ? el('p', {}, `No swap from ${filter.from} to ${filter.to}${state}.`) : swapsTable(first.trades, `, from ${filter.from} to ${filter.to}${state}`),
    );
    this.more.hidden = this.cursor === null;
    this.download.hidden = false;
    this.saved.textContent = '';
    return `Trades from ${filter.from} to ${filter.to}: ${summary.plans} plans, ${summary.completed} completed.`;
  }

  /** The next page of swaps, added below those shown. */
  private async next(): Promise<void> {
    if (this.filter === null || this.cursor === null) return;
    const page = await listTrades(this.page.key(), this.filter, SWAPS_PER_PAGE, this.cursor);
    this.cursor = page.nextCursor;
    this.parts.list.querySelector('tbody')?.append(...page.trades.map(swapRow));
    this.more.hidden = this.cursor === null;
    // The button gone, the focus goes to the swaps rather than to the page's top.
    if (this.more.hidden) this.parts.list.querySelector<HTMLElement>('.table-wrap')?.focus();
    this.page.say(`${page.trades.length} more swap${page.trades.length === 1 ? '' : 's'} shown${this.cursor === null ? ': that is all of them' : ''}.`);
  }

  /** Every swap of the filter shown (all pages) as the service's CSV, saved as a file from memory. */
  private async save(): Promise<void> {
    if (this.filter === null) return;
    const filter = this.filter;
    const text = await exportTrades(this.page.key(), filter);
    const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
    const link = el('a', { href: url, download: csvName(filter), hidden: '' });
    document.body.append(link);
    link.click();
    link.remove();
    // Kept a while: the browser reads the file after the click returns.
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    this.saved.textContent = `Downloading ${csvName(filter)}.`;
  }

  /** Forgets everything shown: the page signed out. */
  clear(): void {
    this.filter = null;
    this.cursor = null;
    for (const node of [this.errors, this.saved, ...Object.values(this.parts)]) node.replaceChildren();
    this.from.value = '';
    this.to.value = '';
    this.status.value = '';
    this.more.hidden = true;
    this.download.hidden = true;
  }
}
