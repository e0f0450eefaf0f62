// The sandbox wallet gateway's pages for its user: sign in (a new party, handed to the dApp that
// opened the page), approve or decline a transaction a dApp parked, and sign or decline a message
// a dApp asked to have signed. Served with a CSP that allows only these same-origin scripts and
// styles.
const html = (title: string, script: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · bestex sandbox wallet</title>
<link rel="stylesheet" href="/assets/gateway.css">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
<p id="result" role="status" aria-live="polite"></p>
</main>
</body>
</html>
`;

const LOGIN_HTML = html(
  'Sign in',
  'login.js',
  `<p>The bestex sandbox wallet signs you in as a new party on the sandbox participant, funded with 1000 CC from its faucet, and hands your session to the page that opened this one.</p>
<form id="login">
<label for="hint">Party name</label>
<input id="hint" name="hint" required pattern="[A-Za-z0-9_\\-]{1,64}" value="sandbox-user">
<button type="submit">Sign in</button>
</form>`,
);

const LOGIN_JS = `const form = document.getElementById('login');
const result = document.getElementById('result');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const hint = form.hint.value + '-' + Date.now().toString(36);
  result.textContent = 'Signing in…';
  const response = await fetch('/login/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hint }) });
  const answer = await response.json();
  if (!response.ok) {
    result.textContent = 'Could not sign in: ' + answer.error;
    return;
  }
  result.textContent = 'Signed in as ' + answer.party + '. You can close this window.';
  if (window.opener) {
    window.opener.postMessage({ type: 'SPLICE_WALLET_IDP_AUTH_SUCCESS', token: answer.token, sessionId: answer.sessionId }, '*');
    window.close();
  }
});
`;

/** A page where the user decides on something a dApp parked: what it shows, and how each answer is sent and said. */
interface Decision {
  readonly title: string;
  readonly script: string;
  readonly intro: string;
  /** The query parameter naming what is decided on, and the path under which it is read and answered. */
  readonly idParam: string;
  readonly path: string;
  readonly yes: string;
  /** The page's script: `view` (what the gateway answered) shown as rows. */
  readonly rows: string;
  readonly doing: string;
  /** The words for an answered approval, from the reply's `body`. */
  readonly done: string;
}

const decisionHtml = ({ title, script, intro, yes }: Decision) =>
  html(
    title,
    script,
    `${intro}<dl id="details"></dl>
<div id="actions" hidden>
<button id="approve" type="button">${yes}</button>
<button id="decline" type="button">Decline</button>
</div>`,
  );

const decisionJs = ({ idParam, path, rows, doing, done }: Decision) => `const params = new URLSearchParams(location.search);
const id = params.get('${idParam}') || '';
const details = document.getElementById('details');
const actions = document.getElementById('actions');
const result = document.getElementById('result');
const row = (name, value) => {
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = value;
  details.append(dt, dd);
};
const response = await fetch('${path}?${idParam}=' + encodeURIComponent(id));
const view = await response.json();
if (!response.ok) {
  result.textContent = view.error;
} else {
${rows}
  actions.hidden = false;
}
const answer = async (approve) => {
  actions.hidden = true;
  result.textContent = approve ? '${doing}' : 'Declining…';
  const reply = await fetch('${path.slice(0, path.lastIndexOf('/') + 1)}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ${idParam}: id, approve }) });
  const body = await reply.json();
  result.textContent = reply.ok ? (approve ? ${done} : 'Declined.') : body.error;
  if (reply.ok && params.has('closeafteraction')) window.close();
};
document.getElementById('approve').addEventListener('click', () => answer(true));
document.getElementById('decline').addEventListener('click', () => answer(false));
`;

const APPROVE: Decision = {
  title: 'Approve a transaction',
  script: 'approve.js',
  intro: '',
  idParam: 'transactionId',
  path: '/approve/transaction',
  yes: 'Approve',
  rows: `  row('Acting as', view.party);
  row('Command id', view.commandId);
  row('Commands', view.commands + ': ' + view.choices.join(', '));`,
  doing: 'Submitting…',
  done: `'Approved: ' + body.outcome + '.'`,
};

const SIGN: Decision = {
  title: 'Sign a message',
  script: 'sign-message.js',
  intro: '<p>A page asks this wallet to sign the message below. Signing moves no funds: it proves to whoever checks the signature that the party is yours.</p>\n',
  idParam: 'messageId',
  path: '/sign-message/message',
  yes: 'Sign',
  rows: `  row('Signing as', view.party);
  row('With the key', view.publicKey);
  row('Message', view.message);`,
  doing: 'Signing…',
  done: `'Signed.'`,
};

const CSS = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #111; background: #f6f6f4; }
main { max-width: 32rem; margin: 3rem auto; padding: 1.5rem; background: #fff; border-radius: 8px; }
dt { font-weight: 600; } dd { margin: 0 0 0.5rem; overflow-wrap: anywhere; white-space: pre-wrap; }
button { font: inherit; padding: 0.4rem 1rem; margin-right: 0.5rem; }
input { font: inherit; padding: 0.3rem; }
`;

export const PAGES: Readonly<Record<string, { readonly type: string; readonly text: string }>> = {
  '/login/': { type: 'text/html; charset=utf-8', text: LOGIN_HTML },
  '/login/index.html': { type: 'text/html; charset=utf-8', text: LOGIN_HTML },
  '/approve/index.html': { type: 'text/html; charset=utf-8', text: decisionHtml(APPROVE) },
  '/assets/login.js': { type: 'text/javascript; charset=utf-8', text: LOGIN_JS },
  '/assets/approve.js': { type: 'text/javascript; charset=utf-8', text: decisionJs(APPROVE) },
  '/sign-message/index.html': { type: 'text/html; charset=utf-8', text: decisionHtml(SIGN) },
  '/assets/sign-message.js': { type: 'text/javascript; charset=utf-8', text: decisionJs(SIGN) },
  '/assets/gateway.css': { type: 'text/css; charset=utf-8', text: CSS },
};
