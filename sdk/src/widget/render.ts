// The widget's DOM, built from text only (nothing the service or the person says is parsed as
// markup): the shadow root's layout with the parts the element updates, the quote's venue table,
// a v2 quote's split and its headline, each drawn from a v1 or a v2 quote as its shape says, and a
// split plan's legs. It holds no state and touches no document until called: the element does both.
import type { QuoteResponse } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import { edgeWords, executionReason, isV2Quote, PLANNABLE_VENUE, REASONS, SPLIT_CHOICE, SPLIT_SETTLEMENT, TOKENS, venueName } from './rules.js';
import { STYLE } from './style.js';

/** An element, with text content only: nothing the service or the user says is parsed as markup. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/** How a token is shown: as the person chose it (CC), with its registry name (Amulet) where that differs. */
export interface TokenView {
  token(nameOrSymbol: string): Node;
  symbol(nameOrSymbol: string): string;
}

/**
 * The shadow root's content, in focus order, each part the element updates named in `parts`; the
 * form and the dismiss button are returned for the element's listeners.
 */
export function layout(parts: Record<string, HTMLElement>, setting: (name: string, fallback: string) => string): { form: HTMLFormElement; dismiss: HTMLButtonElement; nodes: Node[] } {
  const style = el('style');
  style.textContent = STYLE;
  const select = (name: string, label: string, value: string) => {
    const node = el('select', { name, 'aria-label': label });
    for (const token of TOKENS) node.append(el('option', { value: token }, token));
    node.value = value;
    parts[name] = node;
    return el('label', {}, label, node);
  };
  const input = (name: string, label: string, value: string, attributes: Record<string, string> = {}) => {
    const node = el('input', { name, value, ...attributes });
    parts[name] = node;
    return el('label', {}, label, node);
  };
  // The headline is the one live line of the quote: said when it changes, not at every refresh.
  parts.best = el('p', { part: 'best', 'aria-live': 'polite' });
  parts['best-note'] = el('p', { part: 'best-note' });
  parts.venues = el('div', { part: 'venues' });
  parts.impact = el('p', { part: 'impact' });
  parts.impactWarning = el('div');
  const quote = el('div', { class: 'quote' }, parts.best, parts['best-note'], parts.venues, parts.impact, parts.impactWarning);
  const button = el('button', { type: 'submit', part: 'create' }, 'Create plan');
  parts.create = button;
  // DOM order is focus order: what to swap, where, how much slippage, who, then Create plan.
  const form = el(
    'form',
    { part: 'form', 'aria-label': 'Swap' },
    select('from', 'Sell', setting('from', 'CC')),
    select('to', 'Buy', setting('to', 'USDCx')),
    input('amount', 'Amount', setting('amount', '100'), { inputmode: 'decimal', autocomplete: 'off' }),
    quote,
    input('slippage-bps', 'Slippage (bps)', setting('slippage-bps', '50'), { inputmode: 'numeric', autocomplete: 'off' }),
    input('party', 'Your party', setting('party', ''), { autocomplete: 'off', spellcheck: 'false' }),
    button,
  );
  parts.keyNote = el('p', { class: 'note' });
  // Polite, and quiet while a wait counts down: a countdown would otherwise be read out every second.
  parts.actionText = el('span', { hidden: '' });
  parts.quoteText = el('span', { hidden: '' });
  parts.error = el('p', { part: 'error', 'aria-live': 'polite' }, parts.actionText, parts.quoteText);
  const dismiss = el('button', { type: 'button', part: 'dismiss', hidden: '' }, 'Dismiss');
  parts.dismiss = dismiss;
  // Focused when a plan is made, so the focus leaves the button for what it made, never for the page.
  parts.plan = el('div', { part: 'plan', role: 'region', 'aria-label': 'Your plan', tabindex: '-1' });
  parts.status = el('p', { part: 'status', role: 'status' });
  // The service's own status of the plan, beside the wallet's: quiet (no live region), as the wallet's view is what counts.
  parts.service = el('p', { part: 'service', class: 'note', hidden: '' });
  // A split plan's legs, each with what became of it: drawn by the execution's hooks.
  parts.legs = el('ul', { part: 'legs', 'aria-label': 'What became of each leg', hidden: '' });
  return { form, dismiss, nodes: [style, form, parts.keyNote, parts.error, dismiss, parts.plan, parts.status, parts.service, parts.legs] };
}

/**
 * The quote's venues, best net first, the plannable ones offered as a choice (in v1 its one
 * execution venue; in v2 each the quote says is executable), the others with why not; a v2 quote's
 * table says of every venue whether it can be executed, and why not in words.
 */
export function venueTable(quote: QuoteResponse | V2.QuoteResponse, selected: string | null, view: TokenView, onChoose: (venueId: string) => void): HTMLTableElement {
  const v2 = isV2Quote(quote);
  const want = view.symbol(quote.pair.want);
  const table = el('table', { 'aria-label': `Venues for ${quote.amount} ${view.symbol(quote.pair.give)}, best net first` });
  const heads = ['Venue', `You receive (${want})`, 'Fees', ...(v2 ? ['Can you execute it'] : [])];
  table.append(el('thead', {}, el('tr', {}, ...heads.map((head) => el('th', { scope: 'col' }, head)))));
  const body = el('tbody');
  for (const venue of quote.venues) {
    const execution = 'execution' in venue ? venue.execution : null;
    const plannable = venue.available && (execution ? execution.executable : venue.venueId === PLANNABLE_VENUE);
    const choice = el('input', { type: 'radio', name: 'venue', value: venue.venueId, 'aria-label': `Plan on ${venue.venueId}` });
    choice.disabled = !plannable;
    choice.checked = plannable && selected === venue.venueId;
    choice.addEventListener('change', () => onChoose(venue.venueId));
    const name = el('td', {}, el('label', {}, choice, ` ${venue.venueId}`));
    const executes = execution ? [el('td', { part: 'execution' }, execution.executable ? 'yes' : `no: ${executionReason(execution.reason)}`)] : [];
    if (!venue.available) {
      body.append(el('tr', { part: 'venue', class: 'unavailable' }, name, el('td', {}, 'unavailable'), el('td', {}, REASONS[venue.rejectionCode ?? ''] ?? String(venue.rejectionCode)), ...executes));
      continue;
    }
    const fees = el('td');
    if (venue.fee) {
      const where = venue.fee.appliedTo === 'on_top' ? 'on top of what you give' : venue.fee.appliedTo === 'deducted_from_give' ? 'taken from what you give' : 'taken from what you receive';
      fees.append(el('div', {}, `venue fee ${venue.fee.amount} `, view.token(venue.fee.asset), `, ${where} (${venue.feeBps} bps)`));
    } else fees.append(el('div', {}, 'no venue fee'));
    if (venue.clientFees) {
      fees.append(el('div', {}, `service ${venue.clientFees.service.amount} (${venue.clientFees.service.bps} bps)`));
      if (venue.clientFees.integrator) fees.append(el('div', {}, `integrator ${venue.clientFees.integrator.amount} (${venue.clientFees.integrator.bps} bps)`));
      fees.append(el('div', {}, `you receive ${venue.clientFees.userReceives}`));
    }
    if (!plannable && !v2) fees.append(el('div', { class: 'note' }, `cannot be planned yet: v1 executes on ${PLANNABLE_VENUE}`));
    body.append(el('tr', { part: 'venue' }, name, el('td', {}, venue.net ?? ''), fees, ...executes));
  }
  table.append(body);
  return table;
}

/**
 * A v2 quote's split, shown as a route the person can take (a choice in the venues' group,
 * `SPLIT_CHOICE`): how many venues, each leg's venue, what it is given and what it pays, the total
 * and its edge over the best venue alone, and how the legs are deposited and settled.
 */
export function splitRoute(quote: V2.QuoteResponse & { split: V2.SplitQuote }, checked: boolean, view: TokenView, onChoose: (choice: string) => void): HTMLElement {
  const { split, bestExecutable } = quote;
  const [give, want] = [quote.pair.give, quote.pair.want];
  const choice = el('input', { type: 'radio', name: 'venue', value: SPLIT_CHOICE });
  choice.checked = checked;
  choice.addEventListener('change', () => onChoose(SPLIT_CHOICE));
  const legs = el('ul', { 'aria-label': 'The split\'s legs' });
  for (const leg of split.legs) legs.append(el('li', { part: 'split-leg' }, `${venueName(leg.venueId)}: gives ${leg.amount} `, view.token(give), `, pays ${leg.net} `, view.token(want)));
  const against = bestExecutable ? `, ${edgeWords(split.edgeBps)} more than ${venueName(bestExecutable.venueId)} alone (${bestExecutable.net} ` : '';
  return el(
    'div',
    { part: 'split', role: 'group', 'aria-label': 'Split route' },
    el('label', {}, choice, ` Split across ${split.legs.length} venues`),
    legs,
    el('p', { part: 'split-total' }, `In all: ${split.net} `, view.token(want), ...(bestExecutable ? [against, view.token(want), ')'] : [])),
    el('p', { class: 'note' }, SPLIT_SETTLEMENT),
  );
}

/** A split plan's legs, each its deposit, its venue and its floor, and the floor of them all. */
export function splitPlanLegs(plan: V2.SplitPlan, view: TokenView): HTMLElement {
  const { split } = plan;
  const [give, want] = [split.pair.give, split.pair.want];
  const legs = el('ol', { 'aria-label': 'Its legs' });
  for (const leg of split.legs) legs.append(el('li', { part: 'plan-leg' }, `deposit ${leg.amount} `, view.token(give), ` to ${venueName(leg.venueId)}, which must pay at least ${leg.minReceive} `, view.token(want)));
  return el('div', {}, legs, el('p', {}, `At least ${split.minReceive} `, view.token(want), ` in all when every leg is paid (${split.net} quoted, ${edgeWords(split.edgeBps)} more than ${venueName(split.bestExecutable.venueId)} alone). ${SPLIT_SETTLEMENT}`));
}

/** The best quote beside the best the person can execute now, and why they differ when they do. */
export function bestLine(quote: QuoteResponse | V2.QuoteResponse, view: TokenView): { line: Array<Node | string>; note: string } {
  if (isV2Quote(quote)) return bestLineV2(quote, view);
  const want = quote.pair.want;
  const executable = quote.venues.find((v) => v.venueId === PLANNABLE_VENUE);
  const line: Array<Node | string> = [];
  let note = '';
  if (!quote.best) line.push('No venue can quote this now');
  else {
    line.push(`Best quote: ${quote.best.venueId} ${quote.best.net} `, view.token(want), ' · Best you can execute now: ');
    if (executable?.available) line.push(`${PLANNABLE_VENUE} ${executable.net} `, view.token(want));
    else line.push('none');
    if (!executable?.available) note = `Plans are made on ${PLANNABLE_VENUE} only for now, and it cannot quote this: ${REASONS[executable?.rejectionCode ?? ''] ?? 'it is not quoting'}.`;
    else if (quote.best.venueId !== PLANNABLE_VENUE) note = `Plans are made on ${PLANNABLE_VENUE} only for now: ${quote.best.venueId} quotes more but cannot be executed through this widget yet.`;
  }
  return { line, note };
}

/**
 * v2's headline: the best quote alone when its venue can be executed; beside the best executable
 * one (`bestExecutable`, or the quote's split, which nets more) only when it cannot, with its
 * reason in words.
 */
function bestLineV2(quote: V2.QuoteResponse, view: TokenView): { line: Array<Node | string>; note: string } {
  const want = quote.pair.want;
  const { best, bestExecutable, split } = quote;
  if (!best) return { line: ['No venue can quote this now'], note: '' };
  const execution = quote.venues.find((v) => v.venueId === best.venueId)?.execution;
  // A split nets more than any executable venue alone: it is the best the person can execute.
  const splitLine = split ? [`a split across ${split.legs.length} venues ${split.net} `, view.token(want)] : null;
  if (execution?.executable) {
    if (splitLine) return { line: ['Best quote: ', ...splitLine, `, ${edgeWords(split!.edgeBps)} more than ${best.venueId} alone, and you can execute it now`], note: '' };
    return { line: [`Best quote: ${best.venueId} ${best.net} `, view.token(want), ', and you can execute it now'], note: '' };
  }
  const line: Array<Node | string> = [`Best quote: ${best.venueId} ${best.net} `, view.token(want), ' · Best you can execute now: '];
  if (splitLine) line.push(...splitLine);
  else if (bestExecutable) line.push(`${bestExecutable.venueId} ${bestExecutable.net} `, view.token(want));
  else line.push('none');
  const reason = executionReason(execution?.reason ?? null);
  const note = bestExecutable
    ? `${best.venueId} quotes more, but cannot be executed through this service: ${reason}`
    : `No venue you can execute quotes this now. ${best.venueId} cannot be executed through this service: ${reason}`;
  return { line, note };
}
