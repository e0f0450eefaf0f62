// '@bestex/sdk/widget': <bestex-swap>, the embeddable swap widget, a framework-agnostic custom
// element. It quotes (every venue ranked as the quote ranks them, with its net, its fee and where
// it applies, the disclosed fees and the edge; unavailable venues with their reason in words), heads
// the table with the best quote beside the best the person can execute now, shows the execution
// venue's price impact, refreshes while shown, and, with a partner key, creates a plan and
// dispatches `bestex:plan` ({plan, quote}, bubbling and composed) for the host to execute with its
// own wallet; the host may hand the execution back (`executionHooks()`) to show its status.
// Importing it defines nothing and touches no window, document or storage: a browser calls
// defineBestexSwap() (the served /sdk/widget.js does), so server-side rendering never breaks.
// docs/widget.md is its guide.
//
// Attributes (and the same as properties: apiBase, apiKey, from, to, amount, slippageBps, party,
// priceImpactWarningBps): api-base, api-key, from, to, amount, slippage-bps, party,
// price-impact-warning-bps. Theming: CSS custom properties (--bestex-accent, --bestex-text,
// --bestex-muted, --bestex-surface, --bestex-radius) and ::part(form), ::part(best),
// ::part(best-note), ::part(venues), ::part(venue), ::part(edge), ::part(impact),
// ::part(impact-warning), ::part(create), ::part(error), ::part(dismiss), ::part(plan), ::part(status).
import { createClient, type BestexClient } from './client.js';
import type { AppPlan, ExecutionPlan, QuoteResponse } from './contract/v1.js';
import { fromUnits, toUnits } from './decimal.js';
import { BestexError } from './errors.js';
import type { ExecutionHooks, ExecutionStatus } from './execution.js';

/** The venue v1 plans execute on; the others are shown with why they cannot be planned yet. */
const PLANNABLE_VENUE = 'tradecraft';
const TOKENS = ['CC', 'USDCx', 'CBTC'] as const;
const DEBOUNCE_MS = 300;
/** The service's quote cache window: a refresh sooner would get the same bytes. */
const REFRESH_MS = 10_000;
/** The states in which the plan's deposit is on the ledger. */
const ON_LEDGER: readonly ExecutionStatus[] = ['INITIATED', 'COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN'];
/** The longest a retry after a 503 waits. */
const MAX_BACKOFF_S = 60;

/** The contract's bound on slippageBps. */
const MAX_SLIPPAGE_BPS = 5000;

/** The contract's Amount: positive, at most 1,000,000,000, at most 10 fractional digits. */
const AMOUNT = /^(([0-9]{1,9}|0[0-9]{9})(\.[0-9]{1,10})?|1000000000(\.0{1,10})?)$/;
const AMOUNT_RULE = 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.';

/**
 * The price impact is measured against a quote for this fraction of the amount: small enough that
 * its own impact is negligible on any pool deep enough to quote the amount, large enough to stay
 * clear of a Decimal's 10 fractional digits.
 */
const REFERENCE_DIVISOR = 1000n;
/** Above this impact (1 %), unless the host sets price-impact-warning-bps, the widget warns. */
const DEFAULT_IMPACT_WARNING_BPS = 100;
const MAX_IMPACT_WARNING_BPS = 10_000;

/** The widget's attributes; each is also a property, camel-cased. */
const ATTRIBUTES = ['api-base', 'api-key', 'from', 'to', 'amount', 'slippage-bps', 'party', 'price-impact-warning-bps'] as const;
/** The fields a quote depends on: a change of another field asks for no quote. */
const QUOTED_FIELDS = ['from', 'to', 'amount'];

const REASONS: Readonly<Record<string, string>> = {
  no_pool: 'no pool for this pair',
  below_minimum: 'below the venue\'s minimum size',
  above_maximum: 'above the venue\'s maximum size',
  insufficient_liquidity: 'not enough liquidity for this amount',
  timeout: 'the venue did not answer in time',
  venue_error: 'the venue answered with an error',
  maintenance: 'the venue is in maintenance',
  venue_down: 'the venue is down',
};

/** The service names a field in its words ('takerParty'); the widget's field for it. */
const FIELDS_NAMED: ReadonlyArray<readonly [RegExp, string]> = [
  [/'takerParty'/, 'party'],
  [/'slippageBps'/, 'slippage-bps'],
  [/'amount'/, 'amount'],
  [/'from'/, 'from'],
  [/'to'/, 'to'],
];

const STYLE = `
:host { display: block; font: 14px/1.4 system-ui, sans-serif; color: var(--bestex-text, #1b1f24); background: var(--bestex-surface, #fff);
  border: 1px solid var(--bestex-muted, #6a737d); border-radius: var(--bestex-radius, 8px); padding: 12px; max-width: 40rem; }
form { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
.quote { flex-basis: 100%; }
label { display: flex; flex-direction: column; font-size: 12px; color: var(--bestex-text, #1b1f24); }
input, select, button { font: inherit; padding: 4px 6px; }
button { background: var(--bestex-accent, #0b5cad); color: #fff; border: 0; border-radius: 4px; padding: 6px 12px; cursor: pointer; }
button[aria-disabled=true] { background: var(--bestex-muted, #6a737d); cursor: not-allowed; }
button:focus-visible, input:focus-visible, select:focus-visible, [tabindex="-1"]:focus-visible { outline: 3px solid var(--bestex-accent, #0b5cad); outline-offset: 2px; }
table { width: 100%; border-collapse: collapse; margin-top: 8px; }
th, td { text-align: left; padding: 4px; border-bottom: 1px solid #d0d7de; vertical-align: top; }
.unavailable { color: #57606a; }
.note, [part=best-note], [part=edge], [part=impact] { color: #57606a; font-size: 12px; }
[part=best] { font-weight: 600; margin-bottom: 0; }
[part=error], [part=impact-warning] { color: #a40e26; }
[part=error] span { display: block; }
[title] { text-decoration: underline dotted; }
[hidden] { display: none !important; }
`;

/** An element, with text content only: nothing the service or the user says is parsed as markup. */
function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

/** An amount in 1e-10 units; the contract's Amount may carry leading zeros, a Decimal may not. */
const units = (text: string): bigint => toUnits(text.replace(/^0+(?=[0-9])/, ''));

/** bps as a percentage with two decimals: 7143 is "71.43 %". */
const percent = (bps: bigint): string => `${bps / 100n}.${String(bps % 100n).padStart(2, '0')} %`;

/**
 * How much worse, in bps, `amount` is paid (`gross`) than `small` is (`smallGross`), rounded up:
 * the reference price is taken at the top of its last digit's rounding, so the impact shown is
 * never less than the pool's. Never negative.
 */
function priceImpactBps(amount: string, gross: string, small: string, smallGross: string): bigint {
  const [a, g, s, r] = [units(amount), units(gross), units(small), units(smallGross) + 1n];
  const whole = a * r;
  const lost = whole - g * s;
  return lost <= 0n ? 0n : (lost * 10_000n + whole - 1n) / whole;
}

/** What an attribute sets the warning at: a whole number of bps up to 10,000, else the default. */
function warningBps(text: string | null): number {
  const trimmed = text?.trim() ?? '';
  return /^[0-9]{1,5}$/.test(trimmed) && Number(trimmed) <= MAX_IMPACT_WARNING_BPS ? Number(trimmed) : DEFAULT_IMPACT_WARNING_BPS;
}

/** A problem the person has to act on, and the field it concerns (null: the plan as a whole). */
interface ActionError {
  readonly text: string;
  readonly field: string | null;
}

/** The execution venue's quote for a small part of the amount, or why there is none. */
type Reference = { readonly amount: string; readonly gross: string } | { readonly unknown: string };

const Base = ((globalThis as { HTMLElement?: typeof HTMLElement }).HTMLElement ?? class {}) as typeof HTMLElement;

export class BestexSwapElement extends Base {
  static get observedAttributes(): string[] {
    return [...ATTRIBUTES];
  }

  private root: ShadowRoot | null = null;
  private client: BestexClient | null = null;
  private quote: QuoteResponse | null = null;
  private reference: Reference | null = null;
  private selected = PLANNABLE_VENUE;
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private refresh: ReturnType<typeof setInterval> | undefined;
  /** The plan's validity, counting down. */
  private planTimer: ReturnType<typeof setInterval> | undefined;
  /** The plan line's countdown, stopped once the plan is on the ledger. */
  private planLeft: HTMLElement | undefined;
  /** The symbol of the plan's want instrument, for its status. */
  private planWant = '';
  /** A refusal's wait (429, 503), counting down or waiting to retry. */
  private waitTimer: ReturnType<typeof setInterval> | undefined;
  private creating = false;
  private lastBest = '';
  private lastImpact = '';
  private lastWarning = '';
  private waitUntil = 0;
  private requestSeq = 0;
  /** Retries after a 503 in a row: each waits twice the one before. */
  private busyRetries = 0;
  /** What the person must act on: it stays through refreshes until they do. */
  private actionError: ActionError | null = null;
  /** Registry names (Amulet) by the symbols the person chose (CC), as the quotes resolve them. */
  private readonly names = new Map<string, string>();
  private readonly parts: Record<string, HTMLElement> = {};

  /** The plan the widget made last, if any. */
  plan: AppPlan | ExecutionPlan | null = null;

  // Each attribute as a property of the same meaning (apiBase is api-base), reflected to it;
  // defined from ATTRIBUTES below the class.
  declare apiBase: string | null;
  declare apiKey: string | null;
  declare from: string | null;
  declare to: string | null;
  declare amount: string | null;
  declare slippageBps: string | null;
  declare party: string | null;
  declare priceImpactWarningBps: string | null;

  connectedCallback(): void {
    if (!this.root) this.build();
    this.client = null;
    this.requote(0);
    this.refresh = setInterval(() => {
      if (document.visibilityState === 'visible' && Date.now() >= this.waitUntil) this.requote(0);
    }, REFRESH_MS);
  }

  disconnectedCallback(): void {
    clearInterval(this.refresh);
    clearInterval(this.planTimer);
    clearInterval(this.waitTimer);
    clearTimeout(this.debounce);
  }

  attributeChangedCallback(name: string, previous: string | null, value: string | null): void {
    if (previous === value || !this.root) return;
    if (name === 'price-impact-warning-bps') {
      this.renderImpact();
      return;
    }
    if (name === 'api-base' || name === 'api-key') this.client = null;
    const input = this.parts[name];
    if (input instanceof HTMLInputElement || input instanceof HTMLSelectElement) input.value = value ?? '';
    this.requote(DEBOUNCE_MS);
    this.showKeyNote();
  }

  /** Hooks for the SDK's execute: the widget shows the execution's status as it goes. */
  executionHooks(): ExecutionHooks {
    return {
      onStatus: (status: ExecutionStatus, detail) => {
        // Once on the ledger the plan's validity no longer counts: its countdown stops and says so.
        if (ON_LEDGER.includes(status) && this.planLeft) {
          clearInterval(this.planTimer);
          this.planLeft.textContent = 'sent to the ledger';
        }
        const line = this.parts.status!;
        line.replaceChildren(status);
        if (status === 'COMPLETED' && detail.received) line.append(`: received ${detail.received} `, this.token(this.planWant));
        if (detail.updateId) line.append(` (update ${detail.updateId})`);
        if (detail.note) line.append(`: ${detail.note}`);
        line.dataset.status = status;
      },
    };
  }

  private setting(name: string, fallback: string): string {
    return this.getAttribute(name)?.trim() || fallback;
  }

  private api(): BestexClient {
    const key = this.getAttribute('api-key')?.trim();
    this.client ??= createClient({ baseUrl: this.setting('api-base', globalThis.location?.origin ?? ''), ...(key ? { apiKey: key } : {}) });
    return this.client;
  }

  /** A token as the person chose it (CC), its registry name (Amulet) in its title where that differs. */
  private token(nameOrSymbol: string): Node {
    const symbol = [...this.names].find(([, name]) => name === nameOrSymbol)?.[0] ?? nameOrSymbol;
    const name = this.names.get(symbol);
    return name && name !== symbol ? el('span', { title: `${name}, the registry's name for ${symbol}` }, symbol) : document.createTextNode(symbol);
  }

  private symbol(nameOrSymbol: string): string {
    return this.token(nameOrSymbol).textContent ?? nameOrSymbol;
  }

  private build(): void {
    this.root = this.attachShadow({ mode: 'open' });
    const style = el('style');
    style.textContent = STYLE;
    const select = (name: string, label: string, value: string) => {
      const node = el('select', { name, 'aria-label': label });
      for (const token of TOKENS) node.append(el('option', { value: token }, token));
      node.value = value;
      this.parts[name] = node;
      return el('label', {}, label, node);
    };
    const input = (name: string, label: string, value: string, attributes: Record<string, string> = {}) => {
      const node = el('input', { name, value, ...attributes });
      this.parts[name] = node;
      return el('label', {}, label, node);
    };
    // The headline is the one live line of the quote: said when it changes, not at every refresh.
    this.parts.best = el('p', { part: 'best', 'aria-live': 'polite' });
    this.parts['best-note'] = el('p', { part: 'best-note' });
    this.parts.venues = el('div', { part: 'venues' });
    this.parts.impact = el('p', { part: 'impact' });
    this.parts.impactWarning = el('div');
    const quote = el('div', { class: 'quote' }, this.parts.best, this.parts['best-note'], this.parts.venues, this.parts.impact, this.parts.impactWarning);
    const button = el('button', { type: 'submit', part: 'create' }, 'Create plan');
    this.parts.create = button;
    // DOM order is focus order: what to swap, where, how much slippage, who, then Create plan.
    const form = el(
      'form',
      { part: 'form', 'aria-label': 'Swap' },
      select('from', 'Sell', this.setting('from', 'CC')),
      select('to', 'Buy', this.setting('to', 'USDCx')),
      input('amount', 'Amount', this.setting('amount', '100'), { inputmode: 'decimal', autocomplete: 'off' }),
      quote,
      input('slippage-bps', 'Slippage (bps)', this.setting('slippage-bps', '50'), { inputmode: 'numeric', autocomplete: 'off' }),
      input('party', 'Your party', this.setting('party', ''), { autocomplete: 'off', spellcheck: 'false' }),
      button,
    );
    form.addEventListener('input', (event) => {
      const name = (event.target as HTMLInputElement).name;
      if (this.actionError && (this.actionError.field === null || this.actionError.field === name)) this.showActionError(null);
      if (QUOTED_FIELDS.includes(name)) this.requote(DEBOUNCE_MS);
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.createPlan();
    });
    this.parts.keyNote = el('p', { class: 'note' });
    // Polite, and quiet while a wait counts down: a countdown would otherwise be read out every second.
    this.parts.actionText = el('span', { hidden: '' });
    this.parts.quoteText = el('span', { hidden: '' });
    this.parts.error = el('p', { part: 'error', 'aria-live': 'polite' }, this.parts.actionText, this.parts.quoteText);
    const dismiss = el('button', { type: 'button', part: 'dismiss', hidden: '' }, 'Dismiss');
    dismiss.addEventListener('click', () => {
      const field = this.actionError?.field;
      this.showActionError(null);
      (this.parts[field ?? 'create'] ?? this.parts.create!).focus();
    });
    this.parts.dismiss = dismiss;
    // Focused when a plan is made, so the focus leaves the button for what it made, never for the page.
    this.parts.plan = el('div', { part: 'plan', role: 'region', 'aria-label': 'Your plan', tabindex: '-1' });
    this.parts.status = el('p', { part: 'status', role: 'status' });
    this.root.append(style, form, this.parts.keyNote, this.parts.error, dismiss, this.parts.plan, this.parts.status);
    this.showKeyNote();
  }

  private value(name: string): string {
    return (this.parts[name] as HTMLInputElement | HTMLSelectElement).value.trim();
  }

  private showKeyNote(): void {
    const keyed = Boolean(this.getAttribute('api-key')?.trim());
    // aria-disabled, not disabled: a disabled button drops the focus to the page.
    this.parts.create!.setAttribute('aria-disabled', String(!keyed || this.creating));
    this.parts.keyNote!.textContent = keyed ? '' : 'Quotes only: creating a plan needs a partner key (api-key).';
  }

  /** Sets one of the two lines of the error part; `ticking` keeps a countdown's every second unsaid. */
  private say(line: 'actionText' | 'quoteText', text: string, ticking = false): void {
    this.parts.error!.setAttribute('aria-live', ticking ? 'off' : 'polite');
    const node = this.parts[line]!;
    node.textContent = text;
    node.hidden = text === '';
  }

  private showActionError(error: ActionError | null, focus = false): void {
    this.actionError = error;
    this.say('actionText', error?.text ?? '');
    this.parts.dismiss!.hidden = error === null;
    if (focus && error?.field) this.parts[error.field]?.focus();
  }

  private requote(delayMs: number): void {
    clearTimeout(this.debounce);
    // While a refusal's wait runs, its own retry asks again.
    if (Date.now() < this.waitUntil) return;
    this.debounce = setTimeout(() => void this.loadQuote(), delayMs);
  }

  /** Why the form cannot be quoted as it is, in words; null when it can. */
  private quoteProblem(): string | null {
    const amount = this.value('amount');
    if (amount === '') return 'Enter an amount to quote.';
    if (!AMOUNT.test(amount) || /^[0.]*$/.test(amount)) return AMOUNT_RULE;
    if (this.value('from') === this.value('to')) return 'Sell and Buy are the same token: choose another to quote.';
    return null;
  }

  private async loadQuote(): Promise<void> {
    const seq = ++this.requestSeq;
    const problem = this.quoteProblem();
    if (problem) {
      // No request, and no table of another amount's quote left on screen.
      this.quote = null;
      this.reference = null;
      this.keepingFocus(() => this.parts.venues!.replaceChildren());
      for (const part of ['best', 'best-note']) this.parts[part]!.replaceChildren();
      this.lastBest = '';
      this.renderImpact();
      this.say('quoteText', problem);
      return;
    }
    const from = this.value('from');
    const to = this.value('to');
    const amount = this.value('amount');
    const small = fromUnits(units(amount) / REFERENCE_DIVISOR);
    try {
      const [quote, reference] = await Promise.all([this.api().quote({ from, to, amount }), this.referenceQuote(from, to, small)]);
      if (seq !== this.requestSeq) return;
      this.names.set(from, quote.pair.give);
      this.names.set(to, quote.pair.want);
      this.quote = quote;
      this.reference = reference;
      this.busyRetries = 0;
      this.say('quoteText', '');
      this.renderQuote(quote);
    } catch (err) {
      if (seq === this.requestSeq) this.showError(err, () => void this.loadQuote());
    }
  }

  /** The selected venue's gross for `small`, or why it has none: the impact line says so, the quote stands. */
  private async referenceQuote(from: string, to: string, small: string): Promise<Reference> {
    if (small === '0') return { unknown: 'the amount is too small to measure against a smaller one' };
    try {
      const quote = await this.api().quote({ from, to, amount: small });
      const venue = quote.venues.find((v) => v.venueId === this.selected);
      if (venue?.available && venue.gross) return { amount: small, gross: venue.gross };
      return { unknown: `${this.selected} does not quote ${small}: ${REASONS[venue?.rejectionCode ?? ''] ?? 'no quote'}` };
    } catch (err) {
      return { unknown: `no quote for ${small}: ${err instanceof Error ? err.message : 'the request failed'}` };
    }
  }

  /** Runs `redraw`; a focus it took away from the venue table goes back to the same venue's choice. */
  private keepingFocus(redraw: () => void): void {
    const active = this.root!.activeElement;
    const inVenues = active !== null && this.parts.venues!.contains(active);
    const venueId = active instanceof HTMLInputElement ? active.value : null;
    redraw();
    if (!inVenues) return;
    const same = Array.from(this.parts.venues!.querySelectorAll<HTMLInputElement>('input[name=venue]')).find((choice) => choice.value === venueId && !choice.disabled);
    (same ?? this.parts.amount!).focus();
  }

  private renderQuote(quote: QuoteResponse): void {
    const want = this.symbol(quote.pair.want);
    const table = el('table', { 'aria-label': `Venues for ${quote.amount} ${this.symbol(quote.pair.give)}, best net first` });
    table.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Venue'), el('th', { scope: 'col' }, `You receive (${want})`), el('th', { scope: 'col' }, 'Fees'))));
    const body = el('tbody');
    for (const venue of quote.venues) {
      const plannable = venue.available && venue.venueId === PLANNABLE_VENUE;
      const choice = el('input', { type: 'radio', name: 'venue', value: venue.venueId, 'aria-label': `Plan on ${venue.venueId}` });
      choice.disabled = !plannable;
      choice.checked = plannable && this.selected === venue.venueId;
      choice.addEventListener('change', () => (this.selected = venue.venueId));
      const name = el('td', {}, el('label', {}, choice, ` ${venue.venueId}`));
      if (!venue.available) {
        body.append(el('tr', { part: 'venue', class: 'unavailable' }, name, el('td', {}, 'unavailable'), el('td', {}, REASONS[venue.rejectionCode ?? ''] ?? String(venue.rejectionCode))));
        continue;
      }
      const fees = el('td');
      if (venue.fee) {
        const where = venue.fee.appliedTo === 'on_top' ? 'on top of what you give' : venue.fee.appliedTo === 'deducted_from_give' ? 'taken from what you give' : 'taken from what you receive';
        fees.append(el('div', {}, `venue fee ${venue.fee.amount} `, this.token(venue.fee.asset), `, ${where} (${venue.feeBps} bps)`));
      } else fees.append(el('div', {}, 'no venue fee'));
      if (venue.clientFees) {
        fees.append(el('div', {}, `service ${venue.clientFees.service.amount} (${venue.clientFees.service.bps} bps)`));
        if (venue.clientFees.integrator) fees.append(el('div', {}, `integrator ${venue.clientFees.integrator.amount} (${venue.clientFees.integrator.bps} bps)`));
        fees.append(el('div', {}, `you receive ${venue.clientFees.userReceives}`));
      }
      if (!plannable) fees.append(el('div', { class: 'note' }, `cannot be planned yet: v1 executes on ${PLANNABLE_VENUE}`));
      body.append(el('tr', { part: 'venue' }, name, el('td', {}, venue.net ?? ''), fees));
    }
    table.append(body);
    const edge = quote.edgeBps === null ? 'no second venue to compare' : `best beats the next by ${quote.edgeBps} bps`;
    this.keepingFocus(() => this.parts.venues!.replaceChildren(table, el('p', { class: 'note', part: 'edge' }, `${edge}; as of ${quote.asOf}`)));
    this.renderBest(quote);
    this.renderImpact();
  }

  /** The best quote beside the best the person can execute now, and why they differ when they do. */
  private renderBest(quote: QuoteResponse): void {
    const want = quote.pair.want;
    const executable = quote.venues.find((v) => v.venueId === PLANNABLE_VENUE);
    const line: Array<Node | string> = [];
    let note = '';
    if (!quote.best) line.push('No venue can quote this now');
    else {
      line.push(`Best quote: ${quote.best.venueId} ${quote.best.net} `, this.token(want), ' · Best you can execute now: ');
      if (executable?.available) line.push(`${PLANNABLE_VENUE} ${executable.net} `, this.token(want));
      else line.push('none');
      if (!executable?.available) note = `Plans are made on ${PLANNABLE_VENUE} only for now, and it cannot quote this: ${REASONS[executable?.rejectionCode ?? ''] ?? 'it is not quoting'}.`;
      else if (quote.best.venueId !== PLANNABLE_VENUE) note = `Plans are made on ${PLANNABLE_VENUE} only for now: ${quote.best.venueId} quotes more but cannot be executed through this widget yet.`;
    }
    const text = line.map((part) => (typeof part === 'string' ? part : part.textContent)).join('');
    // Rewritten only when it changes: the live line is said once per change, not at every refresh.
    if (text !== this.lastBest) {
      this.parts.best!.replaceChildren(...line);
      this.parts['best-note']!.textContent = note;
    }
    this.lastBest = text;
  }

  /** The selected venue's price impact for this amount, and a warning above the host's threshold. */
  private renderImpact(): void {
    const venue = this.quote?.venues.find((v) => v.venueId === this.selected);
    const reference = this.reference;
    const line: Array<Node | string> = [];
    let warning = '';
    if (this.quote && reference && venue?.available && venue.gross) {
      if ('unknown' in reference) line.push(`Price impact on ${venue.venueId}: not known (${reference.unknown}).`);
      else {
        const bps = priceImpactBps(this.quote.amount, venue.gross, reference.amount, reference.gross);
        line.push(`Price impact on ${venue.venueId}: ${percent(bps)}, this amount's price against that of ${reference.amount} `, this.token(this.quote.pair.give), ', before fees.');
        const threshold = BigInt(warningBps(this.getAttribute('price-impact-warning-bps')));
        if (bps > threshold) warning = `Warning: a price impact of ${percent(bps)} is above ${percent(threshold)}. This amount moves the price against you; a smaller amount gets a better price.`;
      }
    }
    const text = line.map((part) => (typeof part === 'string' ? part : part.textContent)).join('');
    // Redrawn only when it changes: an alert redrawn at every refresh would be said at every refresh.
    if (text === this.lastImpact && warning === this.lastWarning) return;
    this.lastImpact = text;
    this.lastWarning = warning;
    this.parts.impact!.replaceChildren(...line);
    this.parts.impactWarning!.replaceChildren(...(warning ? [el('p', { part: 'impact-warning', role: 'alert' }, warning)] : []));
  }

  private async createPlan(): Promise<void> {
    // One plan per press: a second Enter while the first is asked would make a second plan.
    if (!this.getAttribute('api-key')?.trim() || this.creating) return;
    // Each press answers for itself: what an earlier one found gives way to what this one finds.
    this.showActionError(null);
    const party = this.value('party');
    const amount = this.value('amount');
    if (amount === '' || !AMOUNT.test(amount) || /^[0.]*$/.test(amount)) {
      this.showActionError({ text: amount === '' ? 'Enter an amount to create a plan.' : AMOUNT_RULE, field: 'amount' }, true);
      return;
    }
    if (!party) {
      this.showActionError({ text: 'Your party is required to create a plan.', field: 'party' }, true);
      return;
    }
    // An empty field is the service's default (50 bps), never 0: Number('') would set the floor at the quoted net.
    const slippageText = this.value('slippage-bps');
    if (slippageText !== '' && !(/^[0-9]{1,4}$/.test(slippageText) && Number(slippageText) <= MAX_SLIPPAGE_BPS)) {
      this.showActionError({ text: `Slippage is a whole number of bps from 0 to ${MAX_SLIPPAGE_BPS}; leave it empty for the default (50).`, field: 'slippage-bps' }, true);
      return;
    }
    this.creating = true;
    this.showKeyNote();
    try {
      const plan = await this.api().plan({
        from: this.value('from'),
        to: this.value('to'),
        amount,
        venueId: this.selected,
        takerParty: party,
        ...(slippageText === '' ? {} : { slippageBps: Number(slippageText) }),
        idempotencyKey: `widget-${globalThis.crypto.randomUUID()}`,
      });
      this.plan = plan;
      this.showPlan(plan);
      this.dispatchEvent(new CustomEvent('bestex:plan', { detail: { plan, quote: this.quote }, bubbles: true, composed: true }));
    } catch (err) {
      // A refused plan is not retried by itself: the person presses again when told.
      this.showError(err, null);
    } finally {
      this.creating = false;
      this.showKeyNote();
    }
  }

  private showPlan(plan: AppPlan | ExecutionPlan): void {
    clearInterval(this.planTimer);
    const left = el('span');
    this.planLeft = left;
    this.planWant = plan.quoteRef.pair.want;
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((Date.parse(plan.expiry) - Date.now()) / 1000));
      left.textContent = seconds > 0 ? `valid for ${seconds} s` : 'expired: create a new plan';
      if (seconds === 0) clearInterval(this.planTimer);
    };
    tick();
    this.planTimer = setInterval(tick, 1000);
    const deposit = plan.steps[0]!;
    this.parts.plan!.replaceChildren(
      el('p', {}, `Plan ${plan.planId}: deposit ${deposit.amount} `, this.token(deposit.instrument), `, receive at least ${plan.quoteRef.minReceive} `, this.token(plan.quoteRef.pair.want), ', ', left),
    );
    this.parts.status!.replaceChildren();
    delete this.parts.status!.dataset.status;
    this.parts.plan!.focus();
  }

  /**
   * Every documented error as a state a person understands. `retry` asks again once a wait is
   * over (a quote, whose words go with the next quote); without it (a plan) the person is told when
   * to press again, and the words stay until they act.
   */
  private showError(err: unknown, retry: (() => void) | null): void {
    clearInterval(this.waitTimer);
    const show = (text: string, ticking = false) => {
      if (retry) this.say('quoteText', text, ticking);
      else if (ticking) this.say('actionText', text, true);
      else this.showActionError({ text, field: err instanceof BestexError ? fieldOf(err) : null }, true);
    };
    if (!(err instanceof BestexError)) {
      show('Something went wrong.');
      return;
    }
    const wait = (seconds: number, what: string) => {
      this.waitUntil = Date.now() + seconds * 1000;
      let left = seconds;
      show(`${what}: ${retry ? 'retrying' : 'try again'} in ${left} s.`);
      left -= 1;
      this.waitTimer = setInterval(() => {
        // A plan's wait ends with its words: the person dismissed them or acted.
        if (!retry && this.actionError === null) {
          clearInterval(this.waitTimer);
          return;
        }
        if (left > 0) {
          show(`${what}: ${retry ? 'retrying' : 'try again'} in ${left--} s.`, true);
          return;
        }
        clearInterval(this.waitTimer);
        if (retry) {
          show('');
          retry();
        } else show(`${what}: try again now.`);
      }, 1000);
    };
    if (err.status === 429) {
      wait(err.retryAfterSeconds ?? 60, 'Too many requests');
      return;
    }
    if (err.status === 503) {
      const seconds = Math.min(MAX_BACKOFF_S, (err.retryAfterSeconds ?? 5) * 2 ** this.busyRetries);
      this.busyRetries += 1;
      wait(seconds, 'The service is busy');
      return;
    }
    if (err.code === 'venue_unavailable') {
      show('That venue cannot be planned right now: quoting again.');
      this.requote(0);
      return;
    }
    show(err.message);
  }
}

/** The widget's field a refusal of the service concerns, as its message names it. */
function fieldOf(err: BestexError): string | null {
  if (err.code === 'bad_party') return 'party';
  return FIELDS_NAMED.find(([pattern]) => pattern.test(err.message))?.[1] ?? null;
}

for (const attribute of ATTRIBUTES) {
  Object.defineProperty(BestexSwapElement.prototype, attribute.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()), {
    get(this: HTMLElement) {
      return this.getAttribute(attribute);
    },
    set(this: HTMLElement, value: string | null) {
      if (value === null) this.removeAttribute(attribute);
      else this.setAttribute(attribute, value);
    },
  });
}

/** Defines <bestex-swap> (or `tag`) where a browser can: nowhere else, and once. */
export function defineBestexSwap(tag = 'bestex-swap'): void {
  const registry = (globalThis as { customElements?: CustomElementRegistry }).customElements;
  if (registry && !registry.get(tag)) registry.define(tag, BestexSwapElement);
}
