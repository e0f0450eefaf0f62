// The Webhooks part of a signed-in key's view: its endpoints (register one and see its signing
// secret once, with a Copy button; enable or disable one, rotate its secret, delete it) and one
// endpoint's recent deliveries with every attempt, each with a Replay button. The secret is shown
// until the section is cleared (signing out) or replaced; it is never kept anywhere else.
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, replayDelivery, rotateWebhookSecret, setWebhookEnabled } from './api.js';
import type { IssuedWebhookSecret, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEventType } from './contract/portal.js';
import { webhookUrlProblem, type Problem } from './checks.js';
import { byId, el } from './dom.js';

/** Every event type, in the order a plan reaches them (WebhookEventType's enum, which test/portal/page.test.ts holds this to). */
export const EVENT_TYPES: readonly WebhookEventType[] = [
  'plan.awaiting_signature',
  'plan.planned',
  'plan.deposit_seen',
  'plan.completed',
  'plan.partially_completed',
  'plan.slippage_failed',
  'plan.expired',
  'plan.withdrawn',
  'plan.venue_failed',
  'plan.unobserved',
];

/** What the section needs of the page. */
export interface PageHooks {
  /** The signed-in key; throws when signed out. */
  key(): string;
  /** Runs `action` with `button` busy, its errors shown in `errors`. */
  attempt(errors: HTMLElement, button: HTMLButtonElement | null, action: () => Promise<void>): Promise<void>;
  /** Asks in the page's modal dialog. */
  confirm(title: string, text: string, ok: string): Promise<boolean>;
  /** The error a form's problems are thrown as, `field` taking the focus to fix them. */
  problems(problems: Problem[], field: HTMLElement): Error;
  /** Says `text` in the page's status line. */
  say(text: string): void;
}

const utc = (iso: string): string => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

/** An attempt as a person reads it: when, and what came of it. */
export function attemptText(attempt: WebhookAttempt): string {
  const outcome = attempt.status !== null ? `HTTP ${attempt.status}${attempt.status >= 200 && attempt.status < 300 ? ' (delivered)' : ''}` : (attempt.error ?? 'no answer').replaceAll('_', ' ');
  return `${utc(attempt.at)}: ${outcome}, ${attempt.durationMs} ms`;
}

export class WebhooksSection {
  private readonly errors = byId('webhooks-error');
  private readonly secret = byId('webhook-secret');
  private readonly list = byId<HTMLUListElement>('webhook-list');
  private readonly form = byId<HTMLFormElement>('webhook-form');
  private readonly url = byId<HTMLInputElement>('webhook-url');
  private readonly deliveries = byId('deliveries');
  private endpoints: WebhookEndpoint[] = [];
  /** The endpoint whose deliveries are shown; null when none is. */
  private shown: string | null = null;

  constructor(private readonly page: PageHooks) {
    const boxes = EVENT_TYPES.map((type) => {
      const id = `webhook-event-${type.replace('.', '-')}`;
      const box = el('input', { type: 'checkbox', id, name: 'eventTypes', value: type });
      box.checked = true;
      return el('li', {}, box, ' ', el('label', { for: id, class: 'inline' }, type));
    });
    byId('webhook-events').append(el('ul', { class: 'checks' }, ...boxes));
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.page.attempt(this.errors, this.form.querySelector('button[type=submit]'), () => this.register());
    });
    byId<HTMLButtonElement>('deliveries-refresh').addEventListener('click', (event) => {
      void this.page.attempt(this.errors, event.currentTarget as HTMLButtonElement, async () => {
        if (this.shown !== null) await this.showDeliveries(this.shown);
        this.page.say('Deliveries refreshed.');
      });
    });
  }

  /** Reads the key's endpoints again (and the deliveries shown). */
  async load(): Promise<void> {
    this.endpoints = (await listWebhooks(this.page.key())).endpoints;
    this.renderList();
    if (this.shown !== null) {
      if (this.endpoints.some((e) => e.id === this.shown)) await this.showDeliveries(this.shown);
      else this.hideDeliveries();
    }
  }

  /** Forgets everything shown: the page signed out. */
  clear(): void {
    this.endpoints = [];
    this.shown = null;
    for (const node of [this.errors, this.secret, this.list]) node.replaceChildren();
    this.hideDeliveries();
    this.url.value = '';
  }

  private async register(): Promise<void> {
    const problem = webhookUrlProblem(this.url.value);
    if (problem !== null) throw this.page.problems([{ line: null, value: null, text: problem }], this.url);
    const types = [...this.form.querySelectorAll<HTMLInputElement>('input[name=eventTypes]:checked')].map((box) => box.value as WebhookEventType);
    const first = this.form.querySelector<HTMLInputElement>('input[name=eventTypes]')!;
    if (types.length === 0) throw this.page.problems([{ line: null, value: null, text: 'Choose at least one event for the endpoint to hear.' }], first);
    const issued = await createWebhook(this.page.key(), this.url.value.trim(), types);
    this.url.value = '';
    await this.load();
    this.showSecret(issued, 'Signing secret of your new endpoint');
  }

  private showSecret(issued: IssuedWebhookSecret, heading: string): void {
    const id = `secret-${issued.endpoint.id}`;
    const status = el('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
    const copy = el('button', { type: 'button', class: 'copy', 'aria-describedby': id }, 'Copy secret');
    copy.addEventListener('click', () => {
      navigator.clipboard.writeText(issued.secret).then(
        () => (status.textContent = 'Copied to the clipboard.'),
        () => (status.textContent = 'Copying failed: select the secret and copy it by hand.'),
      );
    });
    this.secret.replaceChildren(
      el(
        'div',
        { class: 'issued-key' },
        el('h4', {}, heading),
        el('p', {}, 'For ', el('code', {}, issued.endpoint.url), '.'),
        el('p', { class: 'warning' }, el('strong', {}, 'Copy it now: '), 'this secret is shown once and cannot be shown again. Keep it secret, like a password.'),
        el('p', { class: 'key-line' }, el('code', { id, class: 'key', 'data-testid': 'webhook-secret' }, issued.secret), ' ', copy, ' ', status),
        el('p', {}, 'Verify each delivery with it and any Standard Webhooks library, on the body as received: its ', el('code', {}, 'webhook-signature'), ' header is signed with it.'),
      ),
    );
    copy.focus();
  }

  private renderList(): void {
    if (this.endpoints.length === 0) {
      this.list.replaceChildren(el('li', { class: 'empty' }, 'No endpoint yet: add one below.'));
      return;
    }
    this.list.replaceChildren(...this.endpoints.map((endpoint) => this.item(endpoint)));
  }

  private item(endpoint: WebhookEndpoint): HTMLElement {
    const urlId = `webhook-url-${endpoint.id}`;
    const button = (text: string, onClick: (button: HTMLButtonElement) => Promise<void>, danger = false) => {
      const b = el('button', { type: 'button', 'aria-describedby': urlId, ...(danger ? { class: 'danger' } : {}) }, text);
      b.addEventListener('click', () => void this.page.attempt(this.errors, b, () => onClick(b)));
      return b;
    };
    const hears = endpoint.eventTypes.length === EVENT_TYPES.length ? 'every event' : endpoint.eventTypes.join(', ');
    return el(
      'li',
      { class: 'webhook' },
      el('p', { class: 'webhook-url' }, el('code', { id: urlId }, endpoint.url), ' ', el('span', { class: endpoint.enabled ? 'badge on' : 'badge off' }, endpoint.enabled ? 'Enabled' : 'Disabled')),
      el('p', {}, `Hears ${hears}. Id `, el('code', {}, endpoint.id), '.'),
      ...(endpoint.previousSecretExpiresAt === null ? [] : [el('p', {}, `The secret it replaced still signs, beside the new one, until ${utc(endpoint.previousSecretExpiresAt)}.`)]),
      el(
        'div',
        { class: 'toolbar' },
        button('Deliveries', async () => {
          await this.showDeliveries(endpoint.id);
          byId('deliveries-title').focus();
        }),
        button(endpoint.enabled ? 'Disable' : 'Enable', async () => {
          await setWebhookEnabled(this.page.key(), endpoint.id, !endpoint.enabled);
          await this.load();
          this.page.say(`${endpoint.url} ${endpoint.enabled ? 'disabled: it is sent nothing until enabled' : 'enabled'}.`);
        }),
        button('Rotate secret…', async () => {
          if (!(await this.page.confirm('Rotate this endpoint\'s secret?', 'A new secret signs its deliveries from now on. The current one keeps signing beside it for 24 hours, so your receiver can switch without missing one.', 'Rotate secret'))) return;
          const issued = await rotateWebhookSecret(this.page.key(), endpoint.id);
          await this.load();
          this.showSecret(issued, 'New signing secret');
        }),
        button(
          'Delete…',
          async () => {
            if (!(await this.page.confirm('Delete this endpoint?', `Nothing more is sent to ${endpoint.url}, and its deliveries are deleted with it.`, 'Delete endpoint'))) return;
            await deleteWebhook(this.page.key(), endpoint.id);
            if (this.secret.querySelector(`#secret-${CSS.escape(endpoint.id)}`)) this.secret.replaceChildren();
            await this.load();
            this.page.say(`Endpoint ${endpoint.url} deleted.`);
            byId('webhooks-title').focus();
          },
          true,
        ),
      ),
    );
  }

  private async showDeliveries(endpointId: string): Promise<void> {
    const endpoint = this.endpoints.find((e) => e.id === endpointId);
    const { deliveries } = await listDeliveries(this.page.key(), endpointId);
    this.shown = endpointId;
    this.deliveries.hidden = false;
    byId('deliveries-title').textContent = `Deliveries to ${endpoint?.url ?? endpointId}`;
    const body = byId('deliveries-body');
    if (deliveries.length === 0) {
      body.replaceChildren(el('p', {}, 'None yet: a delivery is made for each of your plans\' events this endpoint hears.'));
      return;
    }
    body.replaceChildren(
      el(
        'div',
        { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': 'deliveries-caption' },
        el(
          'table',
          { class: 'deliveries' },
          el('caption', { id: 'deliveries-caption' }, 'The 50 most recent deliveries, newest first, each with its attempts, oldest first'),
          el('thead', {}, el('tr', {}, ...['Event', 'State', 'Attempts', 'Next attempt', 'Replay'].map((h) => el('th', { scope: 'col' }, h)))),
          el('tbody', {}, ...deliveries.map((d) => this.row(d))),
        ),
      ),
    );
  }

  private row(delivery: WebhookDelivery): HTMLElement {
    const idCell = `delivery-${delivery.webhookId}`;
    const replay = el('button', { type: 'button', 'aria-describedby': idCell }, 'Replay');
    replay.addEventListener('click', () =>
      void this.page.attempt(this.errors, replay, async () => {
        await replayDelivery(this.page.key(), delivery.endpointId, delivery.webhookId);
        await this.showDeliveries(delivery.endpointId);
        this.page.say(`${delivery.webhookId} queued again, with the same webhook-id.`);
      }),
    );
    return el(
      'tr',
      {},
      el('th', { scope: 'row', id: idCell }, `${delivery.type} (#${delivery.seq}) of plan `, el('code', {}, delivery.planId), el('br'), 'webhook-id ', el('code', {}, delivery.webhookId)),
      el('td', { class: `state ${delivery.state}` }, delivery.state),
      el('td', {}, delivery.attempts.length === 0 ? 'none yet' : el('ol', { class: 'attempts' }, ...delivery.attempts.map((a) => el('li', {}, attemptText(a))))),
      el('td', {}, delivery.nextAttemptAt === null ? '–' : utc(delivery.nextAttemptAt)),
      el('td', {}, replay),
    );
  }

  private hideDeliveries(): void {
    this.shown = null;
    this.deliveries.hidden = true;
    byId('deliveries-body').replaceChildren();
  }
}
