// <bestex-swap>'s behaviour: the custom element's state (the quote, the selected venue or split,
// the plan and its legs, refusals' waits and the person's errors), its lifecycle, its requests to
// the service (a split the wallet cannot batch planned again on one venue) and when it redraws. It
// speaks the API version its api-version attribute names (1 unless it says 2). What it draws comes
// from render.ts, the rules it applies from rules.ts. Importing it touches no DOM: a
// browser's HTMLElement is read where there is one, and defining it is the caller's
// (defineBestexSwap).
import { createClient, createClientV2, type BestexClient, type BestexClientV2 } from '../client.js';
import type { AppPlan, ExecutionPlan, QuoteResponse } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import { fromUnits } from '../decimal.js';
import { BestexError } from '../errors.js';
import { isSplitPlan } from '../plan.js';
import { isTerminal, type ExecutionHooks, type ExecutionStatus, type LegUpdate } from '../execution/types.js';
import { bestLine, el, layout, splitPlanLegs, splitRoute, venueTable, type TokenView } from './render.js';
import {
  AMOUNT,
  AMOUNT_RULE,
  BATCHING_UNAVAILABLE,
  batchingFallback,
  fieldOf,
  isV2Quote,
  legFate,
  legRequests,
  MAX_BACKOFF_S,
  MAX_SLIPPAGE_BPS,
  ON_LEDGER,
  percent,
  PLANNABLE_VENUE,
  planRoute,
  priceImpactBps,
  quoteProblem,
  REASONS,
  REFERENCE_DIVISOR,
  serviceDisagreement,
  serviceWords,
  units,
  venueName,
  warningBps,
  type ActionError,
  type LegProgress,
  type Reference,
  type Route,
} from './rules.js';

const DEBOUNCE_MS = 300;
/** The service's quote cache window: a refresh sooner would get the same bytes. */
const REFRESH_MS = 10_000;

/** The widget's attributes; each is also a property, camel-cased. */
const ATTRIBUTES = ['api-base', 'api-key', 'api-version', 'from', 'to', 'amount', 'slippage-bps', 'party', 'price-impact-warning-bps'] as const;
/** The attributes that make a new client: what it asks, and how. */
const CLIENT_ATTRIBUTES = ['api-base', 'api-key', 'api-version'];
/** The fields a quote depends on: a change of another field asks for no quote. */
const QUOTED_FIELDS = ['from', 'to', 'amount'];

type Quote = QuoteResponse | V2.QuoteResponse;
type Plan = AppPlan | ExecutionPlan | V2.AppPlan | V2.ExecutionPlan | V2.SplitPlan;
/** A plan request but for its route (`venueId` or `legs`) and its idempotency key. */
type PlanBase = Omit<V2.PlanRequest, 'venueId' | 'legs' | 'idempotencyKey'>;

const Base = ((globalThis as { HTMLElement?: typeof HTMLElement }).HTMLElement ?? class {}) as typeof HTMLElement;

export class BestexSwapElement extends Base {
  static get observedAttributes(): string[] {
    return [...ATTRIBUTES];
  }

  private root: ShadowRoot | null = null;
  private client: BestexClient | BestexClientV2 | null = null;
  /** A v1 quote, or with api-version="2" a v2 one. */
  private quote: Quote | null = null;
  /** The quote for a thousandth of the amount, or why there is none: each venue's price-impact reference. */
  private small: { amount: string; quote: Quote } | { unknown: string } | null = null;
  /** The venue the person chose, or the split (SPLIT_CHOICE); in v1 only its one execution venue can be. */
  private chosen: string | null = null;
  private debounce: ReturnType<typeof setTimeout> | undefined;
  private refresh: ReturnType<typeof setInterval> | undefined;
  /** The plan's validity, counting down. */
  private planTimer: ReturnType<typeof setInterval> | undefined;
  /** The plan line's countdown, stopped once the plan is on the ledger. */
  private planLeft: HTMLElement | undefined;
  /** The symbol of the plan's want instrument, for its status. */
  private planWant = '';
  /** The split plan shown, what its request was but for its route, and the quote it came from: a wallet that cannot batch it has it re-planned on one venue. */
  private splitPlanned: { plan: V2.SplitPlan; base: PlanBase; quote: Quote | null } | null = null;
  /** What each leg of the split plan executing became, by its index, as execute() reports them. */
  private legs = new Map<number, LegProgress>();
  /** The plan whose status the widget follows from the service (watch), once its deposit is on the ledger, and how to stop following it. */
  private watched: { planId: string; stop: AbortController } | null = null;
  /** The wallet's own view of the plan followed: the last status execute() reported. */
  private executed: ExecutionStatus | null = null;
  /** The service's status of the plan followed, or why there is none. */
  private service: V2.PlanStatus | { unavailable: string } | null = null;
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
  private readonly view: TokenView = { token: (nameOrSymbol) => this.token(nameOrSymbol), symbol: (nameOrSymbol) => this.symbol(nameOrSymbol) };

  /** The plan the widget made last, if any: a v2 plan with api-version="2". */
  plan: Plan | null = null;

  // Each attribute as a property of the same meaning (apiBase is api-base), reflected to it;
  // defined from ATTRIBUTES below the class.
  declare apiBase: string | null;
  declare apiKey: string | null;
  declare apiVersion: string | null;
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
    this.unwatch();
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
    if (CLIENT_ATTRIBUTES.includes(name)) this.client = null;
    if (name === 'api-version') {
      // A quote of the other version is not drawn, nor a choice made in it kept.
      this.requestSeq += 1;
      this.quote = null;
      this.chosen = null;
    }
    const input = this.parts[name];
    if (input instanceof HTMLInputElement || input instanceof HTMLSelectElement) input.value = value ?? '';
    this.requote(DEBOUNCE_MS);
    this.showKeyNote();
  }

  /**
   * Hooks for the SDK's execute: the widget shows the execution's status as it goes, and a split's
   * legs as each settles. A split the wallet cannot batch (REFUSED, batching_unavailable: nothing
   * signed) is re-planned on the best venue alone and dispatched again.
   */
  executionHooks(): ExecutionHooks {
    return {
      onStatus: (status: ExecutionStatus, detail) => {
        const split = this.splitPlanned?.plan.planId === detail.planId ? this.splitPlanned : null;
        if (split && status === 'REFUSED' && detail.error?.code === BATCHING_UNAVAILABLE) {
          void this.planAlone(split);
          return;
        }
        // Once on the ledger the plan's validity no longer counts: its countdown stops and says so.
        if (ON_LEDGER.includes(status) && this.planLeft) {
          clearInterval(this.planTimer);
          this.planLeft.textContent = 'sent to the ledger';
        }
        const line = this.parts.status!;
        line.replaceChildren(status);
        // The wallet is about to ask its user to sign: say what and why before it does.
        if (status === 'SIGNING') line.append(': sign the message your wallet shows you');
        if (status === 'COMPLETED' && detail.received) line.append(`: received ${detail.received} `, this.token(this.planWant), ...(split ? [' in all, every leg paid'] : []));
        if (status === 'PARTIALLY_COMPLETED') line.append(`: received ${detail.received ?? '0'} `, this.token(this.planWant), ' from the legs paid; the others were not, each leg as listed below');
        if (detail.updateId) line.append(` (update ${detail.updateId})`);
        // A split's end lists each leg's fate below, which the SDK's note repeats; a refusal's reason stays.
        const note = split && ON_LEDGER.includes(status) ? detail.error?.message : detail.note;
        if (note) line.append(`: ${note}`);
        line.dataset.status = status;
        // Each leg's fate is shown once the deposits are on the ledger.
        if (split && ON_LEDGER.includes(status)) this.renderLegs();
        if (this.plan?.planId === detail.planId) {
          this.executed = status;
          // Once the wallet's batch is on the ledger, the service's own status is shown beside it.
          if (ON_LEDGER.includes(status)) this.watchPlan(this.plan);
          this.renderService();
        }
      },
      onLeg: (update: LegUpdate) => {
        const leg = this.splitPlanned?.plan.planId === update.planId ? this.splitPlanned.plan.split.legs[update.index] : undefined;
        if (!leg) return;
        this.legs.set(update.index, { venueId: leg.venueId, amount: leg.amount, status: update.status, received: update.received });
        this.renderLegs();
      },
    };
  }

  private setting(name: string, fallback: string): string {
    return this.getAttribute(name)?.trim() || fallback;
  }

  /** Whether the widget speaks version 2 (api-version="2"); anything else is version 1. */
  private v2(): boolean {
    return this.getAttribute('api-version')?.trim() === '2';
  }

  private api(): BestexClient | BestexClientV2 {
    const key = this.getAttribute('api-key')?.trim();
    const options = { baseUrl: this.setting('api-base', globalThis.location?.origin ?? ''), ...(key ? { apiKey: key } : {}) };
    this.client ??= this.v2() ? createClientV2(options) : createClient(options);
    return this.client;
  }

  /**
   * What a plan is made on: v1's one execution venue; in v2 the person's choice while the quote
   * says it can be executed, else the quote's split while it has one, else its bestExecutable.
   */
  private route(): Route | null {
    if (!this.v2()) return { venueId: PLANNABLE_VENUE };
    return this.quote && isV2Quote(this.quote) ? planRoute(this.quote, this.chosen) : null;
  }

  /** The one venue a plan is made on and the price impact measured on; null for a split. */
  private selected(): string | null {
    const route = this.route();
    return route && 'venueId' in route ? route.venueId : null;
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
    const { form, dismiss, nodes } = layout(this.parts, (name, fallback) => this.setting(name, fallback));
    form.addEventListener('input', (event) => {
      const name = (event.target as HTMLInputElement).name;
      if (this.actionError && (this.actionError.field === null || this.actionError.field === name)) this.showActionError(null);
      if (QUOTED_FIELDS.includes(name)) this.requote(DEBOUNCE_MS);
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.createPlan();
    });
    dismiss.addEventListener('click', () => {
      const field = this.actionError?.field;
      this.showActionError(null);
      (this.parts[field ?? 'create'] ?? this.parts.create!).focus();
    });
    this.root.append(...nodes);
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

  private async loadQuote(): Promise<void> {
    const seq = ++this.requestSeq;
    const problem = quoteProblem(this.value('amount'), this.value('from'), this.value('to'));
    if (problem) {
      // No request, and no table of another amount's quote left on screen.
      this.quote = null;
      this.small = null;
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
      const [quote, reference] = await Promise.all([this.api().quote({ from, to, amount }), this.smallQuote(from, to, small)]);
      if (seq !== this.requestSeq) return;
      this.names.set(from, quote.pair.give);
      this.names.set(to, quote.pair.want);
      this.quote = quote;
      this.small = reference;
      this.busyRetries = 0;
      this.say('quoteText', '');
      this.renderQuote(quote);
    } catch (err) {
      if (seq === this.requestSeq) this.showError(err, () => void this.loadQuote());
    }
  }

  /** The quote for `small`, or why there is none: the impact line says so, the quote stands. */
  private async smallQuote(from: string, to: string, small: string): Promise<{ amount: string; quote: Quote } | { unknown: string }> {
    if (small === '0') return { unknown: 'the amount is too small to measure against a smaller one' };
    try {
      return { amount: small, quote: await this.api().quote({ from, to, amount: small }) };
    } catch (err) {
      return { unknown: `no quote for ${small}: ${err instanceof Error ? err.message : 'the request failed'}` };
    }
  }

  /** `venueId`'s gross for the small amount, or why it has none. */
  private reference(venueId: string): Reference | null {
    const small = this.small;
    if (!small || 'unknown' in small) return small;
    const venue = small.quote.venues.find((v) => v.venueId === venueId);
    if (venue?.available && venue.gross) return { amount: small.amount, gross: venue.gross };
    return { unknown: `${venueId} does not quote ${small.amount}: ${REASONS[venue?.rejectionCode ?? ''] ?? 'no quote'}` };
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

  private renderQuote(quote: Quote): void {
    const choose = (choice: string) => {
      this.chosen = choice;
      this.renderImpact();
    };
    const route = this.route();
    const table = venueTable(quote, this.selected(), this.view, choose);
    // A v2 quote's split is a route of its own, above the venues it splits across.
    const split = isV2Quote(quote) && quote.split ? [splitRoute({ ...quote, split: quote.split }, route !== null && 'split' in route, this.view, choose)] : [];
    const edge = quote.edgeBps === null ? 'no second venue to compare' : `best beats the next by ${quote.edgeBps} bps`;
    this.keepingFocus(() => this.parts.venues!.replaceChildren(...split, table, el('p', { class: 'note', part: 'edge' }, `${edge}; as of ${quote.asOf}`)));
    this.renderBest(quote);
    this.renderImpact();
  }

  /** The best quote beside the best the person can execute now, and why they differ when they do. */
  private renderBest(quote: Quote): void {
    const { line, note } = bestLine(quote, this.view);
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
    const route = this.route();
    const selected = this.selected();
    const venue = this.quote?.venues.find((v) => v.venueId === selected);
    const reference = venue ? this.reference(venue.venueId) : null;
    const line: Array<Node | string> = [];
    let warning = '';
    // The split's figures are each venue's price for its own leg: its impact is in what each leg pays.
    if (route && 'split' in route) line.push('Price impact: each venue is given only its leg, and what each leg pays above is after that leg\'s own price impact.');
    else if (this.quote && reference && venue?.available && venue.gross) {
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
    const route = this.route();
    if (route === null) {
      this.showActionError({ text: 'No venue you can execute quotes this now: there is nothing to plan.', field: null }, true);
      return;
    }
    const base: PlanBase = { from: this.value('from'), to: this.value('to'), amount, takerParty: party, ...(slippageText === '' ? {} : { slippageBps: Number(slippageText) }) };
    const quote = this.quote;
    const idempotencyKey = newIdempotencyKey();
    // Only a v2 quote has a split.
    const ask = 'split' in route ? () => (this.api() as BestexClientV2).plan({ ...base, legs: legRequests(route.split), idempotencyKey }) : () => this.api().plan({ ...base, venueId: route.venueId, idempotencyKey });
    await this.planAndDispatch(ask, base, quote, null);
  }

  /**
   * A split plan the wallet could not batch (REFUSED, batching_unavailable: nothing was signed)
   * re-planned on the venue it beat, alone, under a new idempotency key, the person told why.
   */
  private async planAlone(refused: { plan: V2.SplitPlan; base: PlanBase; quote: Quote | null }): Promise<void> {
    const { venueId } = refused.plan.split.bestExecutable;
    const why = batchingFallback(venueId);
    this.parts.status!.replaceChildren(`REFUSED: ${why}`);
    this.parts.status!.dataset.status = 'REFUSED';
    // A plan the person is asking for meanwhile takes the place of this one.
    if (this.creating) return;
    await this.planAndDispatch(() => (this.api() as BestexClientV2).plan({ ...refused.base, venueId, idempotencyKey: newIdempotencyKey() }), refused.base, refused.quote, why);
  }

  /** Asks for a plan, shows it (after `why`, when it replaces another) and dispatches bestex:plan with the quote it came from. */
  private async planAndDispatch(ask: () => Promise<Plan>, base: PlanBase, quote: Quote | null, why: string | null): Promise<void> {
    this.creating = true;
    this.showKeyNote();
    try {
      const plan = await ask();
      this.plan = plan;
      this.splitPlanned = isSplitPlan(plan) ? { plan, base, quote } : null;
      this.showPlan(plan, why);
      this.dispatchEvent(new CustomEvent('bestex:plan', { detail: { plan, quote }, bubbles: true, composed: true }));
    } catch (err) {
      // A refused plan is not retried by itself: the person presses again when told.
      this.showError(err, null);
    } finally {
      this.creating = false;
      this.showKeyNote();
    }
  }

  private showPlan(plan: Plan, why: string | null): void {
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
    this.legs = new Map();
    this.parts.legs!.replaceChildren();
    this.parts.legs!.hidden = true;
    this.unwatch();
    this.executed = null;
    this.renderService();
    const first = plan.steps[0]!;
    const before = why === null ? [] : [el('p', {}, why)];
    if (isSplitPlan(plan)) {
      this.planWant = plan.split.pair.want;
      const how =
        first.kind === 'sign-message'
          ? `sign ${venueName(first.venueId)}'s message in your wallet (it moves no funds), then deposit each leg, all in one batch`
          : 'deposit each leg, all in one batch';
      this.parts.plan!.replaceChildren(...before, el('p', {}, `Plan ${plan.planId}: split across ${plan.split.legs.length} venues: ${how}, `, left, ':'), splitPlanLegs(plan, this.view));
    } else {
      this.planWant = plan.quoteRef.pair.want;
      const receive = [`, receive at least ${plan.quoteRef.minReceive} `, this.token(plan.quoteRef.pair.want), ', ', left] as const;
      this.parts.plan!.replaceChildren(...before, this.singlePlanLine(plan, receive));
    }
    this.parts.status!.replaceChildren();
    delete this.parts.status!.dataset.status;
    this.parts.plan!.focus();
  }

  /** A one-venue plan in one line: its deposit (after a venue's message to sign, when it has one) and its floor. */
  private singlePlanLine(plan: Exclude<Plan, V2.SplitPlan>, receive: readonly (Node | string)[]): HTMLElement {
    const first = plan.steps[0]!;
    if (first.kind === 'sign-message') {
      // A venue that signs its user in first (OneSwap): nothing is deposited until the wallet has signed its message.
      return el('p', {}, `Plan ${plan.planId}: sign ${venueName(first.venueId)}'s message in your wallet (it moves no funds), then deposit ${plan.quoteRef.amount} `, this.token(plan.quoteRef.pair.give), ...receive);
    }
    // v1 names the instrument by its id, v2 by its id and admin.
    const instrument = typeof first.instrument === 'string' ? first.instrument : first.instrument.id;
    return el('p', {}, `Plan ${plan.planId}: deposit ${first.amount} `, this.token(instrument), ...receive);
  }

  /**
   * Follows `plan`'s status from the service (a v2 plan's; v1 has none): each event redraws the
   * service's line. A keyed plan is read with the widget's key.
   */
  private watchPlan(plan: Plan): void {
    if (!this.v2() || this.watched?.planId === plan.planId) return;
    const stop = new AbortController();
    this.watched = { planId: plan.planId, stop };
    const current = () => this.watched?.stop === stop;
    const watch = (this.api() as BestexClientV2).watch(plan, {
      signal: stop.signal,
      onStatus: (event) => {
        if (!current()) return;
        this.service = event.status;
        this.renderService();
      },
    });
    watch.done.catch((err: unknown) => {
      // A service that does not serve plan statuses (501) has no reading to give: nothing is said.
      if (!current() || (err instanceof BestexError && err.status === 501)) return;
      this.service = { unavailable: err instanceof Error ? err.message : 'the request failed' };
      this.renderService();
    });
  }

  private unwatch(): void {
    this.watched?.stop.abort();
    this.watched = null;
    this.service = null;
  }

  /** The service's status beside the wallet's own, and, quietly, when the two differ: the wallet's view stands. */
  private renderService(): void {
    const line = this.parts.service!;
    const service = this.service;
    line.hidden = service === null;
    delete line.dataset.state;
    delete line.dataset.agrees;
    if (service === null) {
      line.replaceChildren();
      return;
    }
    if ('unavailable' in service) {
      line.textContent = `The service's own status of this plan is not available (${service.unavailable}); your wallet's view above is what counts.`;
      return;
    }
    const differs = serviceDisagreement(this.executed, service);
    line.textContent = `The service reads: ${serviceWords(service, this.symbol(service.pair.want))}.${differs ? ` ${differs}` : ''}`;
    line.dataset.state = service.state;
    if (service.terminal && this.executed !== null && isTerminal(this.executed)) line.dataset.agrees = String(differs === null);
  }

  /** The split plan's legs under its status: each leg's venue and what became of it so far. */
  private renderLegs(): void {
    const planned = this.splitPlanned;
    if (!planned) return;
    const [give, want] = [this.symbol(planned.plan.split.pair.give), this.symbol(planned.plan.split.pair.want)];
    const items = planned.plan.split.legs.map((leg, index) => {
      const progress = this.legs.get(index) ?? { venueId: leg.venueId, amount: leg.amount, status: 'INITIATED' };
      return el('li', { part: 'leg', 'data-status': progress.status }, `${venueName(leg.venueId)}: ${legFate(progress, give, want)}`);
    });
    this.parts.legs!.replaceChildren(...items);
    this.parts.legs!.hidden = false;
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
    if (err.code === 'split_changed') {
      show('The split changed since it was quoted: quoting again, to show the route as it is now.');
      this.requote(0);
      return;
    }
    if (err.code === 'venue_not_executable') {
      show('That venue cannot be executed through this service: quoting again, to plan on one that can.');
      this.requote(0);
      return;
    }
    show(err.message);
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

/** A plan request's idempotency key: a new one for every plan the widget asks for. */
const newIdempotencyKey = (): string => `widget-${globalThis.crypto.randomUUID()}`;

/** Defines <bestex-swap> (or `tag`) where a browser can: nowhere else, and once. */
export function defineBestexSwap(tag = 'bestex-swap'): void {
  const registry = (globalThis as { customElements?: CustomElementRegistry }).customElements;
  if (registry && !registry.get(tag)) registry.define(tag, BestexSwapElement);
}
