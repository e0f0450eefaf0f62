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

const APPROVE_HTML = html(
  'Approve a transaction',
  'approve.js',
  `<dl id="details"></dl>
<div id="actions" hidden>
<button id="approve" type="button">Approve</button>
<button id="decline" type="button">Decline</button>
</div>`,
);

const APPROVE_JS = `const params = new URLSearchParams(location.search);
const transactionId = params.get('transactionId') || '';
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
const response = await fetch('/approve/transaction?transactionId=' + encodeURIComponent(transactionId));
const view = await response.json();
if (!response.ok) {
  result.textContent = view.error;
} else {
  row('Acting as', view.party);
  row('Command id', view.commandId);
  row('Commands', view.commands + ': ' + view.choices.join(', '));
  actions.hidden = false;
}
const answer = async (approve) => {
  actions.hidden = true;
  result.textContent = approve ? 'Submitting…' : 'Declining…';
  const reply = await fetch('/approve/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transactionId, approve }) });
  const body = await reply.json();
  result.textContent = reply.ok ? (approve ? 'Approved: ' + body.outcome + '.' : 'Declined.') : body.error;
  if (reply.ok && params.has('closeafteraction')) window.close();
};
document.getElementById('approve').addEventListener('click', () => answer(true));
document.getElementById('decline').addEventListener('click', () => answer(false));
`;

const SIGN_HTML = html(
  'Sign a message',
  'sign-message.js',
  `<p>A page asks this wallet to sign the message below. Signing moves no funds: it proves to whoever checks the signature that the party is yours.</p>
<dl id="details"></dl>
<div id="actions" hidden>
<button id="sign" type="button">Sign</button>
<button id="decline" type="button">Decline</button>
</div>`,
);

const SIGN_JS = `const params = new URLSearchParams(location.search);
const messageId = params.get('messageId') || '';
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
const response = await fetch('/sign-message/message?messageId=' + encodeURIComponent(messageId));
const view = await response.json();
if (!response.ok) {
  result.textContent = view.error;
} else {
  row('Signing as', view.party);
  row('With the key', view.publicKey);
  row('Message', view.message);
  actions.hidden = false;
}
const answer = async (approve) => {
  actions.hidden = true;
  result.textContent = approve ? 'Signing…' : 'Declining…';
  const reply = await fetch('/sign-message/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId, approve }) });
  const body = await reply.json();
  result.textContent = reply.ok ? (approve ? 'Signed.' : 'Declined.') : body.error;
  if (reply.ok && params.has('closeafteraction')) window.close();
};
document.getElementById('sign').addEventListener('click', () => answer(true));
document.getElementById('decline').addEventListener('click', () => answer(false));
`;

const CSS = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; color: #111; background: #f6f6f4; }
main { max-width: 32rem; margin: 3rem auto; padding: 1.5rem; background: #fff; border-radius: 8px; }
dt { font-weight: 600; } dd { margin: 0 0 0.5rem; overflow-wrap: anywhere; white-space: pre-wrap; }
button { font: inherit; padding: 0.4rem 1rem; margin-right: 0.5rem; }
input { font: inherit; padding: 0.3rem; }
`;

export const PAGES: Readonly<Record<string, { readonly type: string; readonly text: string }>> = {
  '/login/': { type: 'text/html; charset=utf-8', text: LOGIN_HTML },
  '/login/index.html': { type: 'text/html; charset=utf-8', text: LOGIN_HTML },
  '/approve/index.html': { type: 'text/html; charset=utf-8', text: APPROVE_HTML },
  '/assets/login.js': { type: 'text/javascript; charset=utf-8', text: LOGIN_JS },
  '/assets/approve.js': { type: 'text/javascript; charset=utf-8', text: APPROVE_JS },
  '/sign-message/index.html': { type: 'text/html; charset=utf-8', text: SIGN_HTML },
  '/assets/sign-message.js': { type: 'text/javascript; charset=utf-8', text: SIGN_JS },
  '/assets/gateway.css': { type: 'text/css; charset=utf-8', text: CSS },
};
