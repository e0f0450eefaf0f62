// The key portal page: get a key, sign in with one, see its usage, rotate, revoke, edit origins,
// manage its webhooks (webhooks.ts), see its trades (trades.ts).
// The signed-in key lives in `signedIn` only: never in a cookie, storage or the URL, so reloading
// or closing the page forgets it, and signing out drops it.
import { createKey, PortalError, readKey, revokeKey, rotateKey, setOrigins } from './api.js';
import type { KeyView } from './contract/portal.js';
import { nameProblem, readOrigins, waitInWords, type Problem } from './checks.js';
import { byId, el } from './dom.js';
import { details, issuedKey, usage } from './views.js';
import { TradesSection } from './trades.js';
import { WebhooksSection } from './webhooks.js';

let signedIn: string | null = null;

const notice = byId<HTMLParagraphElement>('notice');
const account = byId<HTMLElement>('account');
const signInSection = byId<HTMLElement>('sign-in');
const signInInput = byId<HTMLInputElement>('sign-in-key');
const originsInput = byId<HTMLTextAreaElement>('origins-input');
const accountErrors = byId('account-error');

/** What the page found wrong in a form before sending it; `field` takes the focus to fix it. */
class FormProblems extends Error {
  constructor(
    readonly problems: readonly Problem[],
    readonly field: HTMLElement,
  ) {
    super('the form has problems');
  }
}

const problemItem = ({ line, value, text }: Problem) => (line === null ? el('li', {}, text) : el('li', {}, `Line ${line}, `, el('code', {}, value ?? ''), `: ${text}`));

function showError(target: HTMLElement, error: unknown): void {
  if (error instanceof FormProblems) {
    target.replaceChildren(el('p', {}, el('strong', {}, 'Not sent: '), 'fix this first.'), el('ul', {}, ...error.problems.map(problemItem)));
    error.field.focus();
    return;
  }
  const problem = error instanceof PortalError ? error : new PortalError(0, 'internal', 'something went wrong in this page', 'reload the page and try again');
  // Retry-After says when, which the page says in words in place of the action that names the header.
  const next = problem.retryAfterSeconds !== null ? `. Try again ${waitInWords(problem.retryAfterSeconds)}.` : problem.action === null ? '' : ` (${problem.action}).`;
  target.replaceChildren(el('p', {}, el('strong', {}, 'Refused: '), problem.message, next, ' ', el('span', { class: 'code' }, `[${problem.code}]`)));
}

/** The origins of a textarea, or FormProblems naming each line to fix. */
function originsOf(field: HTMLTextAreaElement): string[] {
  const { origins, problems } = readOrigins(field.value);
  if (problems.length > 0) throw new FormProblems(problems, field);
  return origins;
}

/** Runs `action` with `button` (if any) busy, its errors shown in `errors`. */
async function attempt(errors: HTMLElement, button: HTMLButtonElement | null, action: () => Promise<void>): Promise<void> {
  errors.replaceChildren();
  // A disabled button loses the focus: a keyboard user gets it back where they were.
  const hadFocus = button !== null && document.activeElement === button;
  if (button) button.disabled = true;
  try {
    await action();
  } catch (error) {
    // The signed-in key revoked or rotated elsewhere: the page can do nothing more with it.
    if (account.contains(errors) && signedIn !== null && error instanceof PortalError && error.code === 'invalid_key') {
      signOut(`Signed out: ${error.message}.`);
      return;
    }
    showError(errors, error);
  } finally {
    if (button) button.disabled = false;
    if (button && hadFocus && button.isConnected && document.activeElement === document.body) button.focus();
  }
}

function render(view: KeyView): void {
  byId('details').replaceChildren(...details(view));
  byId('usage').replaceChildren(usage(view, new Date()));
  originsInput.value = (view.origins ?? []).join('\n');
}

async function signIn(key: string): Promise<void> {
  const view = await readKey(key);
  signedIn = key;
  render(view);
  account.hidden = false;
  signInSection.hidden = true;
  notice.textContent = `Signed in with ${view.id} (${view.name}).`;
  byId('account-title').focus();
  // Shown as they come: a failure to read them is the webhooks' or the trades' to show, not the sign-in's.
  void attempt(byId('webhooks-error'), null, () => webhooks.load());
  void attempt(byId('trades-error'), null, async () => {
    await trades.load();
  });
}

function signOut(message: string): void {
  signedIn = null;
  account.hidden = true;
  signInSection.hidden = false;
  for (const id of ['details', 'usage', 'rotated', 'created', 'account-error', 'origins-saved']) byId(id).replaceChildren();
  webhooks.clear();
  trades.clear();
  originsInput.value = '';
  notice.textContent = message;
  signInInput.focus();
}

/** Asks in a modal dialog; Cancel has the focus first, so Enter alone never destroys anything. */
function confirmAction(title: string, text: string, ok: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  byId('confirm-title').textContent = title;
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = ok;
  return new Promise((resolve) => {
    const done = (answer: boolean) => () => {
      dialog.removeEventListener('close', onClose);
      okButton.removeEventListener('click', onOk);
      cancelButton.removeEventListener('click', onCancel);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const okButton = byId<HTMLButtonElement>('confirm-ok');
    const cancelButton = byId<HTMLButtonElement>('confirm-cancel');
    const onOk = done(true);
    const onCancel = done(false);
    const onClose = done(false);
    okButton.addEventListener('click', onOk);
    cancelButton.addEventListener('click', onCancel);
    dialog.addEventListener('close', onClose);
    dialog.showModal();
  });
}

const submitter = (form: HTMLFormElement) => form.querySelector<HTMLButtonElement>('button[type=submit]');

const signedInKey = () => {
  if (signedIn === null) throw new PortalError(401, 'missing_key', 'you are signed out', 'sign in with your key');
  return signedIn;
};

const webhooks = new WebhooksSection({
  key: signedInKey,
  attempt,
  confirm: confirmAction,
  problems: (problems, field) => new FormProblems(problems, field),
  say: (text) => (notice.textContent = text),
});

const trades = new TradesSection({
  key: signedInKey,
  attempt,
  problems: (problems, field) => new FormProblems(problems, field),
  say: (text) => (notice.textContent = text),
});

const createName = byId<HTMLInputElement>('create-name');
const createNameProblem = byId('create-name-problem');

/** Says at once, beside the field, that the name is over its limit: a paste is kept whole, never cut. */
function showNameProblem(): void {
  const problem = createName.value.trim() === '' ? null : nameProblem(createName.value);
  createNameProblem.textContent = problem ?? '';
  createName.setAttribute('aria-invalid', String(problem !== null));
}
createName.addEventListener('input', showNameProblem);

byId<HTMLFormElement>('create-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const errors = byId('create-error');
  const origins = byId<HTMLTextAreaElement>('create-origins');
  void attempt(errors, submitter(form), async () => {
    const problem = nameProblem(createName.value);
    if (problem !== null) throw new FormProblems([{ line: null, value: null, text: problem }], createName);
    const issued = await createKey(createName.value.trim(), originsOf(origins));
    createName.value = '';
    showNameProblem();
    origins.value = '';
    const use = el('button', { type: 'button' }, 'Sign in with this key');
    use.addEventListener('click', () => void attempt(errors, use, () => signIn(issued.key)));
    byId('created').replaceChildren(issuedKey(issued, `Your new key, ${issued.name}`), el('p', {}, use));
    byId('created').querySelector<HTMLButtonElement>('button.copy')?.focus();
  });
});

byId<HTMLFormElement>('sign-in-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const key = signInInput.value.trim();
  void attempt(byId('sign-in-error'), submitter(form), async () => {
    if (key === '') throw new PortalError(400, 'missing_key', 'paste a key to sign in', 'get a key above if you have none');
    await signIn(key);
    signInInput.value = '';
  });
});

byId<HTMLButtonElement>('refresh').addEventListener('click', (event) => {
  void attempt(accountErrors, event.currentTarget as HTMLButtonElement, async () => {
    render(await readKey(signedInKey()));
    await webhooks.load();
    await trades.load();
    notice.textContent = 'Refreshed.';
  });
});

byId<HTMLButtonElement>('rotate').addEventListener('click', (event) => {
  const button = event.currentTarget as HTMLButtonElement;
  void attempt(accountErrors, button, async () => {
    if (!(await confirmAction('Rotate this key?', 'A new key replaces it: the current key stops working within seconds, everywhere it is used. Its id, name, fee terms, origins and usage stay.', 'Rotate key'))) return;
    const old = signedInKey();
    const issued = await rotateKey(old);
    signedIn = issued.key;
    // The key just created, if it is the one rotated away, no longer works: only the live key stays shown.
    const created = byId('created');
    if (created.querySelector('[data-testid=issued-key]')?.textContent === old) created.replaceChildren();
    byId('rotated').replaceChildren(issuedKey(issued, 'Your rotated key'));
    render(await readKey(issued.key));
    byId('rotated').querySelector<HTMLButtonElement>('button.copy')?.focus();
  });
});

byId<HTMLButtonElement>('revoke').addEventListener('click', (event) => {
  void attempt(accountErrors, event.currentTarget as HTMLButtonElement, async () => {
    if (!(await confirmAction('Revoke this key?', 'It stops working within seconds, everywhere it is used, and cannot be restored. You can get a new key at any time.', 'Revoke key'))) return;
    const revoked = await revokeKey(signedInKey());
    signOut(`Key ${revoked.id} revoked: it no longer works. You are signed out.`);
  });
});

byId<HTMLButtonElement>('sign-out').addEventListener('click', () => signOut('Signed out: the key is no longer in this page.'));

byId<HTMLFormElement>('origins-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const saved = byId('origins-saved');
  saved.textContent = '';
  void attempt(accountErrors, submitter(form), async () => {
    const stored = await setOrigins(signedInKey(), originsOf(originsInput));
    render(await readKey(signedInKey()));
    saved.textContent = stored.origins === null || stored.origins.length === 0 ? 'Saved: the key is taken from any origin.' : `Saved: the key is taken from ${stored.origins.join(', ')} only.`;
  });
});
