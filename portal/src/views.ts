// What the page shows: an issued key (once, with its copy button and curl), a key's details, and
// its usage as a table (the data) and a bar per day (decoration: hidden from assistive technology,
// the table says the same).
import type { IssuedKey, KeyView } from './contract/portal.js';
import { el } from './dom.js';
import { usageTable } from './usage.js';

/** The key, shown this once, with a Copy button that writes it to the clipboard. */
export function issuedKey(issued: IssuedKey, heading: string): HTMLElement {
  const keyId = `key-${issued.id}-${Date.now()}`;
  const status = el('span', { class: 'copy-status', role: 'status', 'aria-live': 'polite' });
  const copy = el('button', { type: 'button', class: 'copy', 'aria-describedby': keyId }, 'Copy key');
  copy.addEventListener('click', () => {
    navigator.clipboard.writeText(issued.key).then(
      () => (status.textContent = 'Copied to the clipboard.'),
      () => (status.textContent = 'Copying failed: select the key and copy it by hand.'),
    );
  });
  return el(
    'div',
    { class: 'issued-key' },
    el('h3', {}, heading),
    el('p', { class: 'warning' }, el('strong', {}, 'Copy it now: '), 'this key is shown once and cannot be shown again. Keep it secret, like a password.'),
    el('p', { class: 'key-line' }, el('code', { id: keyId, class: 'key', 'data-testid': 'issued-key' }, issued.key), ' ', copy, ' ', status),
    el('p', {}, `Its id, safe to share and shown in logs: `, el('code', {}, issued.id), '.'),
    el('p', {}, 'A quote with it:'),
    el('pre', { tabindex: '0', 'aria-label': 'A keyed quote with curl' }, el('code', {}, issued.curl)),
  );
}

const originsText = (origins: readonly string[] | null) =>
  origins === null || origins.length === 0 ? 'Any origin, or none: a server-to-server key' : origins.join(', ');

function row(term: string, ...definition: Array<Node | string>): Node[] {
  return [el('dt', {}, term), el('dd', {}, ...definition)];
}

export function details(view: KeyView): Node[] {
  const { feeTerms, window } = view;
  return [
    ...row('Id', el('code', {}, view.id)),
    ...row('Name', view.name),
    ...row('Created', el('time', { datetime: view.createdAt }, new Date(view.createdAt).toUTCString())),
    ...row('Status', view.status),
    ...row(
      'Fee terms',
      `schema ${feeTerms.schemaId}${feeTerms.overrideId === null ? '' : `, override ${feeTerms.overrideId}`}: service fee ${feeTerms.serviceBps} bps, integrator fee up to ${feeTerms.integratorCapBps} bps`,
    ),
    ...row('Allowed origins', originsText(view.origins)),
    ...row('Rate-limit window', `${window.remaining} of ${window.limit} requests left this minute, resets in ${window.resetsInSeconds} s`),
    ...row('Attribution', view.attribution),
  ];
}

export function usage(view: KeyView, now: Date): HTMLElement {
  const table = usageTable(view.usage.days, now);
  const limitHeads = table.limits.length === 0 ? [el('th', { scope: 'col' }, 'Refused (429)')] : table.limits.map((limit) => el('th', { scope: 'col' }, `Refused (429): ${limit}`));
  const head = el('tr', {}, el('th', { scope: 'col' }, 'UTC day'), ...table.operations.map((op) => el('th', { scope: 'col' }, op)), el('th', { scope: 'col' }, 'All requests'), ...limitHeads);
  const body = table.rows.map((r) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row' }, r.date),
      ...r.requests.map((n) => el('td', {}, String(n))),
      el('td', {}, String(r.total)),
      ...(table.limits.length === 0 ? [el('td', {}, '0')] : r.rateLimited.map((n) => el('td', {}, String(n)))),
    ),
  );
  const peak = Math.max(1, ...table.rows.map((r) => r.total));
  const bars = el(
    'ol',
    { class: 'bars', 'aria-hidden': 'true' },
    ...table.rows.map((r) => {
      const bar = el('span', { class: 'bar' });
      // Set through the CSSOM: the page's CSP allows no inline style attribute.
      bar.style.setProperty('--share', String(r.total / peak));
      return el('li', {}, el('span', { class: 'bar-label' }, r.date.slice(5)), bar, el('span', { class: 'bar-value' }, String(r.total)));
    }),
  );
  return el(
    'div',
    {},
    el(
      'div',
      { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-labelledby': 'usage-caption' },
      el('table', {}, el('caption', { id: 'usage-caption' }, 'Requests sent with this key per UTC day and operation, and those refused with 429 by the limit that refused them'), el('thead', {}, head), el('tbody', {}, ...body)),
    ),
    bars,
  );
}
