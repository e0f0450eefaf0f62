// '@bestex/sdk/widget': <bestex-swap>, the embeddable swap widget, a framework-agnostic custom
// element. It quotes (every venue ranked as the quote ranks them, with its net, its fee and where
// it applies, the disclosed fees and the edge; unavailable venues with their reason in words),
// refreshes while shown, and, with a partner key, creates a plan and dispatches
// `bestex:plan` ({plan, quote}, bubbling and composed) for the host to execute with its own
// wallet; the host may hand the execution back (`executionHooks()`) to show its status.
// Importing it defines nothing and touches no window, document or storage: a browser calls
// defineBestexSwap() (the served /sdk/widget.js does), so server-side rendering never breaks.
//
// Attributes (and the same as properties: apiBase, apiKey, from, to, amount, slippageBps, party):
// api-base, api-key, from, to, amount, slippage-bps, party. Theming: CSS custom
// properties (--bestex-accent, --bestex-text, --bestex-muted, --bestex-surface, --bestex-radius)
// and ::part(form), ::part(venues), ::part(venue), ::part(edge), ::part(create), ::part(plan),
// ::part(status), ::part(error).
import { createClient, type AppPlan, type BestexClient, type ExecutionPlan, type QuoteResponse } from './client.js';
import { BestexError } from './errors.js';
import type { ExecutionHooks, ExecutionStatus } from './execution.js';

/** The venue v1 plans execute on; the others are shown with why they cannot be planned yet. */
const PLANNABLE_VENUE = 'tradecraft';
const TOKENS = ['CC', 'USDCx', 'CBTC'] as const;
const DEBOUNCE_MS = 300;
/** The service's quote cache window: a refresh sooner would get the same bytes. */
const REFRESH_MS = 10_000;
const PLAN_VALIDITY_S = 90;
/** The states in which the plan's deposit is on the ledger. */
const ON_LEDGER: readonly ExecutionStatus[] = ['INITIATED', 'COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN'];
/** The longest a retry after a 503 waits. */
const MAX_BACKOFF_S = 60;

/** The contract's bound on slippageBps. */
const MAX_SLIPPAGE_BPS = 5000;

/** The widget's attributes; each is also a property, camel-cased. */
const ATTRIBUTES = ['api-base', 'api-key', 'from', 'to', 'amount', 'slippage-bps', 'party'] as const;

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

const STYLE = `
:host { display: block; font: 14px/1.4 system-ui, sans-serif; color: var(--bestex-text, #1b1f24); background: var(--bestex-surface, #fff);
  border: 1px solid var(--bestex-muted, #6a737d); border-radius: var(--bestex-radius, 8px); padding: 12px; max-width: 40rem; }
form { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; }
label { display: flex; flex-direction: column; font-size: 12px; color: var(--bestex-text, #1b1f24); }
input, select, button { font: inherit; padding: 4px 6px; }
button { background: var(--bestex-accent, #0b5cad); color: #fff; border: 0; border-radius: 4px; padding: 6px 12px; cursor: pointer; }
button:disabled { background: var(--bestex-muted, #6a737d); cursor: not-allowed; }
button:focus-visible, input:focus-visible, select:focus-visible { outline: 3px solid var(--bestex-accent, #0b5cad); outline-offset: 2px; }
table { width: 100%; border-collapse: collapse; margin-top: 8px; }
th, td { text-align: left; padding: 4px; border-bottom: 1px solid #d0d7de; vertical-align: top; }
.unavailable { color: #57606a; }
.note { color: #57606a; font-size: 12px; }
[part=error] { color: #a40e26; }
`;

/** An element, with text content only: nothing the service or the user says is parsed as markup. */
function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(child);
  return node;
}

const Base = ((globalThis as { HTMLElement?: typeof HTMLElement }).HTMLElement ?? class {}) as typeof HTMLElement;

export class BestexSwapElement extends Base {
  static get observedAttributes(): string[] {
    return [...ATTRIBUTES];
  }

  private root: ShadowRoot | null = null;
  private client: BestexClient | null = null;
  private quote: QuoteResponse | null = null;
  private selected = PLANNABLE_VENUE;
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private refresh: ReturnType<typeof setInterval> | undefined;
  /** The plan's validity, counting down. */
  private planTimer: ReturnType<typeof setInterval> | undefined;
  /** The plan line's countdown, stopped once the plan is on the ledger. */
  private planLeft: HTMLElement | undefined;
  /** A refusal's wait (429, 503), counting down or waiting to retry. */
  private waitTimer: ReturnType<typeof setInterval> | undefined;
  private creating = false;
  private lastBest = '';
  private waitUntil = 0;
  private requestSeq = 0;
  /** Retries after a 503 in a row: each waits twice the one before. */
  private busyRetries = 0;
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
        const update = detail.updateId ? ` (update ${detail.updateId})` : '';
        this.parts.status!.textContent = `${status}${update}${detail.note ? `: ${detail.note}` : ''}`;
        this.parts.status!.dataset.status = status;
        this.announce(`Swap ${status.toLowerCase().replace(/_/g, ' ')}${update}`);
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
    const form = el(
      'form',
      { part: 'form', 'aria-label': 'Swap' },
      select('from', 'Sell', this.setting('from', 'CC')),
      select('to', 'Buy', this.setting('to', 'USDCx')),
      input('amount', 'Amount', this.setting('amount', '100'), { inputmode: 'decimal', autocomplete: 'off' }),
      input('slippage-bps', 'Slippage (bps)', this.setting('slippage-bps', '50'), { inputmode: 'numeric', autocomplete: 'off' }),
      input('party', 'Your party', this.setting('party', ''), { autocomplete: 'off', spellcheck: 'false' }),
    );
    const button = el('button', { type: 'submit', part: 'create' }, 'Create plan');
    this.parts.create = button;
    form.append(button);
    form.addEventListener('input', () => this.requote(DEBOUNCE_MS));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.createPlan();
    });
    this.parts.keyNote = el('p', { class: 'note' });
    // Not an alert: a countdown in it would be read out every second. The live region below says it once.
    this.parts.error = el('p', { part: 'error' });
    this.parts.venues = el('div', { part: 'venues' });
    this.parts.plan = el('div', { part: 'plan' });
    this.parts.status = el('p', { part: 'status' });
    this.parts.live = el('p', { 'aria-live': 'polite', class: 'note' });
    this.root.append(style, form, this.parts.keyNote, this.parts.error, this.parts.venues, this.parts.plan, this.parts.status, this.parts.live);
    this.showKeyNote();
  }

  private value(name: string): string {
    return (this.parts[name] as HTMLInputElement | HTMLSelectElement).value.trim();
  }

  private showKeyNote(): void {
    const keyed = Boolean(this.getAttribute('api-key')?.trim());
    (this.parts.create as HTMLButtonElement).disabled = !keyed;
    this.parts.keyNote!.textContent = keyed ? '' : 'Quotes only: creating a plan needs a partner key (api-key).';
  }

  private announce(text: string): void {
    this.parts.live!.textContent = text;
  }

  private requote(delayMs: number): void {
    clearTimeout(this.debounce);
    // While a refusal's wait runs, its own retry asks again.
    if (Date.now() < this.waitUntil) return;
    this.debounce = setTimeout(() => void this.loadQuote(), delayMs);
  }

  private async loadQuote(): Promise<void> {
    const seq = ++this.requestSeq;
    try {
      const quote = await this.api().quote({ from: this.value('from'), to: this.value('to'), amount: this.value('amount') });
      if (seq !== this.requestSeq) return;
      this.quote = quote;
      this.busyRetries = 0;
      this.parts.error!.textContent = '';
      this.renderQuote(quote);
    } catch (err) {
      if (seq === this.requestSeq) this.showError(err, () => void this.loadQuote());
    }
  }

  private renderQuote(quote: QuoteResponse): void {
    const table = el('table', { 'aria-label': `Venues for ${quote.amount} ${quote.pair.give}, best net first` });
    table.append(el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Venue'), el('th', { scope: 'col' }, `You receive (${quote.pair.want})`), el('th', { scope: 'col' }, 'Fees'))));
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
      if (venue.fee) fees.append(el('div', {}, `venue fee ${venue.fee.amount} ${venue.fee.asset}, ${venue.fee.appliedTo === 'on_top' ? 'on top of what you give' : venue.fee.appliedTo === 'deducted_from_give' ? 'taken from what you give' : 'taken from what you receive'} (${venue.feeBps} bps)`));
      else fees.append(el('div', {}, 'no venue fee'));
      if (venue.clientFees) {
        fees.append(el('div', {}, `service ${venue.clientFees.service.amount} (${venue.clientFees.service.bps} bps)`));
        if (venue.clientFees.integrator) fees.append(el('div', {}, `integrator ${venue.clientFees.integrator.amount} (${venue.clientFees.integrator.bps} bps)`));
        fees.append(el('div', {}, `you receive ${venue.clientFees.userReceives}`));
      }
      if (!plannable) fees.append(el('div', { class: 'note' }, 'cannot be planned yet: v1 executes on tradecraft'));
      body.append(el('tr', { part: 'venue' }, name, el('td', {}, venue.net ?? ''), fees));
    }
    table.append(body);
    const edge = quote.edgeBps === null ? 'no second venue to compare' : `best beats the next by ${quote.edgeBps} bps`;
    this.parts.venues!.replaceChildren(table, el('p', { class: 'note', part: 'edge' }, `${edge}; as of ${quote.asOf}`));
    // Said when it changes, not at every refresh.
    const best = quote.best ? `Best: ${quote.best.venueId}, ${quote.best.net} ${quote.pair.want}` : 'No venue can quote this now';
    if (best !== this.lastBest) this.announce(best);
    this.lastBest = best;
  }

  private async createPlan(): Promise<void> {
    const party = this.value('party');
    // One plan per press: a second Enter while the first is asked would make a second plan.
    if (!this.getAttribute('api-key')?.trim() || this.creating) return;
    if (!party) {
      this.parts.error!.textContent = 'Your party is required to create a plan.';
      (this.parts.party as HTMLInputElement).focus();
      return;
    }
    // An empty field is the service's default (50 bps), never 0: Number('') would set the floor at the quoted net.
    const slippageText = this.value('slippage-bps');
    if (slippageText !== '' && !(/^[0-9]{1,4}$/.test(slippageText) && Number(slippageText) <= MAX_SLIPPAGE_BPS)) {
      this.parts.error!.textContent = `Slippage is a whole number of bps from 0 to ${MAX_SLIPPAGE_BPS}; leave it empty for the default (50).`;
      (this.parts['slippage-bps'] as HTMLInputElement).focus();
      return;
    }
    const button = this.parts.create as HTMLButtonElement;
    this.creating = true;
    button.disabled = true;
    try {
      const plan = await this.api().plan({
        from: this.value('from'),
        to: this.value('to'),
        amount: this.value('amount'),
        venueId: this.selected,
        takerParty: party,
        ...(slippageText === '' ? {} : { slippageBps: Number(slippageText) }),
        idempotencyKey: `widget-${globalThis.crypto.randomUUID()}`,
      });
      this.plan = plan;
      this.parts.error!.textContent = '';
      this.showPlan(plan);
      this.dispatchEvent(new CustomEvent('bestex:plan', { detail: { plan, quote: this.quote }, bubbles: true, composed: true }));
    } catch (err) {
      // A refused plan is not retried by itself: the person presses again when told.
      this.showError(err, null);
    } finally {
      this.creating = false;
      button.disabled = false;
    }
  }

  private showPlan(plan: AppPlan | ExecutionPlan): void {
    clearInterval(this.planTimer);
    const left = el('span');
    this.planLeft = left;
    const tick = () => {
      const seconds = Math.max(0, Math.ceil((Date.parse(plan.expiry) - Date.now()) / 1000));
      left.textContent = seconds > 0 ? `valid for ${seconds} s` : 'expired: create a new plan';
      if (seconds === 0) clearInterval(this.planTimer);
    };
    tick();
    this.planTimer = setInterval(tick, 1000);
    this.parts.plan!.replaceChildren(el('p', {}, `Plan ${plan.planId}: deposit ${plan.steps[0]!.amount} ${plan.steps[0]!.instrument}, receive at least ${plan.quoteRef.minReceive} ${plan.quoteRef.pair.want}, `, left));
    this.announce(`Plan created, valid for ${PLAN_VALIDITY_S} seconds`);
  }

  /**
   * Every documented error as a state a person understands. `retry` asks again once a wait is
   * over (a quote); without it (a plan) the person is told when to press again.
   */
  private showError(err: unknown, retry: (() => void) | null): void {
    const error = this.parts.error!;
    clearInterval(this.waitTimer);
    if (!(err instanceof BestexError)) {
      error.textContent = 'Something went wrong.';
      return;
    }
    const wait = (seconds: number, what: string) => {
      this.waitUntil = Date.now() + seconds * 1000;
      let left = seconds;
      const tick = () => {
        error.textContent = `${what}: ${retry ? 'retrying' : 'try again'} in ${left} s.`;
        if (left-- > 0) return;
        clearInterval(this.waitTimer);
        error.textContent = retry ? '' : `${what}: try again now.`;
        retry?.();
      };
      this.announce(`${what}: ${retry ? 'retrying' : 'try again'} in ${seconds} seconds`);
      tick();
      this.waitTimer = setInterval(tick, 1000);
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
      error.textContent = 'That venue cannot be planned right now: quoting again.';
      this.requote(0);
      return;
    }
    error.textContent = err.message;
    this.announce(err.message);
  }
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
