// What the Trades section shows of the key's ledger: the plans and completed swaps per UTC day and
// the volume per token as bar charts (images to assistive technology) with the same figures as a
// table, success by venue, realised slippage against the floor, fees per token, and the swaps
// themselves. Every figure is the contract's string as answered; sums are exact (amounts.ts).
import { percent, sum } from './amounts.js';
import { barChart } from './bar-chart.js';
import type { FeePair, Token, Trade, TradeDay, TradeFees, TradeSummary } from './contract/portal.js';
import { el } from './dom.js';

/** The tokens in the contract's order (Token's enum, which test/portal/page.test.ts holds this to). */
export const TOKENS: readonly Token[] = ['Amulet', 'USDCx', 'CBTC'];

const DAY_MS = 86_400_000;
const NONE = '–';

/** Every UTC day from `from` to `to`, both included: the chart's groups, a day without plans at zero. */
export function daysFrom(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += DAY_MS) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

const amountIn = (list: TradeDay['given'], token: Token): string => list.find((a) => a.token === token)?.amount ?? '0';

/** The volume columns the days have: given per give token, then received per want token, in the contract's token order. */
export function volumeColumns(days: readonly TradeDay[]): Array<{ side: 'given' | 'received'; token: Token }> {
  const sides = ['given', 'received'] as const;
  return sides.flatMap((side) => TOKENS.filter((token) => days.some((day) => day[side].some((a) => a.token === token))).map((token) => ({ side, token })));
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const table = (captionId: string, caption: string, className: string, head: string[], rows: HTMLElement[], foot: HTMLElement[] = []) =>
  el(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': captionId },
    el(
      'table',
      { class: className },
      el('caption', { id: captionId }, caption),
      el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))),
      el('tbody', {}, ...rows),
      ...(foot.length === 0 ? [] : [el('tfoot', {}, ...foot)]),
    ),
  );

const cells = (values: readonly string[]) => values.map((v) => el('td', {}, v));

/** The charts of the days from `from` to `to`, and their figures as a table. */
export function activity(summary: TradeSummary): HTMLElement {
  const { from, to, days } = summary;
  if (summary.plans === 0) return el('p', {}, `No plan made with this key from ${from} to ${to}.`);
  const groups = daysFrom(from, to);
  const byDate = new Map(days.map((d) => [d.date, d]));
  const busiest = days.reduce((top, d) => (d.plans > top.plans ? d : top));
  const counts = barChart({
    label: `Plans and completed swaps per UTC day from ${from} to ${to}: ${plural(summary.plans, 'plan')}, ${summary.completed} completed, on ${plural(days.length, 'day')}; the most in a day ${plural(busiest.plans, 'plan')}, on ${busiest.date}.`,
    groups,
    width: 720,
    series: [
      { name: 'plans', className: 'plans', values: groups.map((d) => String(byDate.get(d)?.plans ?? 0)) },
      { name: 'completed', className: 'completed', values: groups.map((d) => String(byDate.get(d)?.completed ?? 0)) },
    ],
  });
  const columns = volumeColumns(days);
  const volumeTokens = TOKENS.filter((token) => columns.some((c) => c.token === token));
  const volumes = volumeTokens.map((token) => {
    const given = groups.map((d) => amountIn(byDate.get(d)?.given ?? [], token));
    const received = groups.map((d) => amountIn(byDate.get(d)?.received ?? [], token));
    return figure(
      `Volume in ${token}`,
      barChart({
        label: `Volume in ${token} per UTC day from ${from} to ${to}: ${sum(given)} ${token} given, ${sum(received)} ${token} received.`,
        groups,
        width: 360,
        series: [
          { name: `${token} given`, className: 'given', values: given },
          { name: `${token} received`, className: 'received', values: received },
        ],
      }),
      [['given', 'Given'], ['received', 'Received']],
    );
  });
  const columnName = ({ side, token }: { side: 'given' | 'received'; token: Token }) => `${side === 'given' ? 'Given' : 'Received'} (${token})`;
  const rows = days.map((d) => el('tr', {}, el('th', { scope: 'row' }, d.date), ...cells([String(d.plans), String(d.completed), ...columns.map((c) => amountIn(d[c.side], c.token))])));
  const total = el(
    'tr',
    {},
    el('th', { scope: 'row' }, 'All days'),
    ...cells([String(summary.plans), String(summary.completed), ...columns.map((c) => sum(days.map((d) => amountIn(d[c.side], c.token))))]),
  );
  return el(
    'div',
    {},
    figure('Plans and completed swaps', counts, [['plans', 'Plans'], ['completed', 'Completed']]),
    volumes.length === 0 ? el('p', { class: 'hint' }, 'No volume yet: a plan counts its volume once a venue paid it.') : el('div', { class: 'volume-charts' }, ...volumes),
    table(
      'trade-days-caption',
      `The charts' figures: each UTC day with a plan from ${from} to ${to}; volume of the paid legs, per token`,
      'trade-days',
      ['UTC day', 'Plans', 'Completed', ...columns.map(columnName)],
      rows,
      [total],
    ),
  );
}

function figure(caption: string, chart: SVGSVGElement, legend: Array<[className: string, text: string]>): HTMLElement {
  return el(
    'figure',
    { class: 'chart-figure' },
    el('figcaption', {}, caption),
    chart,
    // The chart's key, for the eye only: the chart's name and its table say the same in words.
    el('ul', { class: 'legend', 'aria-hidden': 'true' }, ...legend.map(([className, text]) => el('li', {}, el('span', { class: `swatch ${className}` }), text))),
  );
}

export function venues(summary: TradeSummary): HTMLElement {
  if (summary.venues.length === 0) return el('p', {}, 'No leg routed to a venue in these days.');
  return table(
    'trade-venues-caption',
    'Each venue\'s legs, those that ended, and those the venue paid (completed); the success rate is completed of ended',
    'trade-venues',
    ['Venue', 'Legs', 'Ended', 'Completed', 'Success rate'],
    summary.venues.map((v) =>
      el('tr', {}, el('th', { scope: 'row' }, v.venueId), ...cells([String(v.legs), String(v.ended), String(v.completed), v.successRate === null ? `${NONE} (none ended)` : percent(v.successRate)])),
    ),
  );
}

const bps = (value: string | null) => (value === null ? `${NONE} (none paid)` : `${value} bps`);

export function slippage(summary: TradeSummary): HTMLElement {
  const s = summary.slippage;
  const item = (term: string, definition: string, id: string) => [el('dt', {}, term), el('dd', { 'data-testid': id }, definition)];
  return el(
    'dl',
    { class: 'details' },
    ...item('Plans paid', String(s.paid), 'slippage-paid'),
    ...item('Average slippage', bps(s.averageBps), 'slippage-average'),
    ...item('Worst slippage', bps(s.worstBps), 'slippage-worst'),
    ...item('Paid below the floor', String(s.belowFloor), 'slippage-below-floor'),
  );
}

const pair = (p: FeePair) => [p.service, p.integrator];

export function fees(summary: TradeSummary): HTMLElement {
  if (summary.fees.length === 0) return el('p', {}, 'No fee in these days.');
  return table(
    'trade-fees-caption',
    'Fees per want token: disclosed on the plans\' fee lines, and collected on their paid legs',
    'trade-fees',
    ['Token', 'Service fee disclosed', 'Integrator fee disclosed', 'Service fee collected', 'Integrator fee collected'],
    summary.fees.map((f) => el('tr', {}, el('th', { scope: 'row' }, f.token), ...cells([...pair(f.disclosed), ...pair(f.collected)]))),
  );
}

const utc = (iso: string): string => `${iso.slice(0, 19).replace('T', ' ')} UTC`;
export const stateText = (state: string): string => state.replaceAll('_', ' ');

/** A plan's fees in a line each: disclosed, then collected, service + integrator, in its want token. */
export const feeLines = (f: TradeFees): [string, string] => [`Disclosed ${f.disclosed.service} + ${f.disclosed.integrator} ${f.token}`, `Collected ${f.collected.service} + ${f.collected.integrator} ${f.token}`];

const lines = (texts: readonly Array<Node | string>[]) => texts.flatMap((parts, i) => (i === 0 ? parts : [el('br'), ...parts]));

/** A swap's row: its columns in swapsTable's order. */
export function swapRow(trade: Trade): HTMLElement {
  const settled = trade.legs.filter((leg) => leg.settlementUpdateId !== null);
  return el(
    'tr',
    { 'data-plan-id': trade.planId },
    el('th', { scope: 'row' }, el('time', { datetime: trade.createdAt }, utc(trade.createdAt)), el('br'), el('code', {}, trade.planId)),
    el('td', { class: `state ${trade.state}` }, stateText(trade.state)),
    el('td', {}, `${trade.pair.give} to ${trade.pair.want}`),
    el('td', {}, `${trade.amount} ${trade.pair.give}`),
    el('td', {}, trade.received === null ? NONE : `${trade.received} ${trade.pair.want}`),
    el('td', {}, trade.slippageBps === null ? NONE : `${trade.slippageBps} bps`),
    el('td', {}, trade.legs.map((leg) => leg.venueId).join(', ')),
    el('td', { class: 'update-ids' }, ...(settled.length === 0 ? [NONE] : lines(settled.map((leg) => [el('code', {}, leg.settlementUpdateId!)])))),
    el('td', { class: 'fees' }, ...lines(feeLines(trade.fees).map((line) => [line]))),
  );
}

export const SWAP_COLUMNS = ['Created', 'State', 'Pair', 'Amount', 'Received', 'Slippage', 'Venues', 'Settlement update ids', 'Fees (service + integrator)'];

export function swapsTable(trades: readonly Trade[], filtered: string): HTMLElement {
  return table('trade-swaps-caption', `The key's swaps, newest first${filtered}`, 'trade-swaps', SWAP_COLUMNS, trades.map(swapRow));
}
