// The bestex sandbox wallet, as a browser extension's content script: it speaks the dApp API to the
// page the way Canton's wallet extensions do (SPLICE_WALLET_REQUEST frames in, SPLICE_WALLET_RESPONSE
// frames out, id-less SPLICE_WALLET_REQUEST frames for its events, EXT_READY answered with
// EXT_ACK and its target), and keeps its user's session with the sandbox wallet gateway, whose
// remote dApp API does the work. It asks its user before anything is signed, in a panel of its
// own on the page. A sandbox wallet, not a safe one: its panel lives in the page's document (a
// real extension asks in its own window), and it trusts the sandbox's login.
const TARGET = 'bestex-sandbox-wallet';
const GATEWAY = new URL(globalThis.BESTEX_SANDBOX_GATEWAY);
const ORIGIN = GATEWAY.origin;

let token = null;
let events = null;
/** The page's executions waiting for the gateway's word on their command, by command id. */
const waiting = new Map();

const failure = (code, message, data) => Object.assign(new Error(message), { rpc: { code, message, ...(data === undefined ? {} : { data }) } });
const respond = (id, payload) => window.postMessage({ type: 'SPLICE_WALLET_RESPONSE', response: { jsonrpc: '2.0', id, ...payload } }, '*');
const notify = (method, params) => window.postMessage({ type: 'SPLICE_WALLET_REQUEST', request: { jsonrpc: '2.0', method, params }, target: TARGET }, '*');

async function gateway(method, params) {
  const response = await fetch(GATEWAY, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: crypto.randomUUID(), method, ...(params === undefined ? {} : { params }) }),
  });
  const answer = await response.json().catch(() => null);
  if (answer?.error) throw failure(answer.error.code, answer.error.message, answer.error.data);
  if (!response.ok || !answer) throw failure(-32603, `the wallet gateway answered HTTP ${response.status}`);
  return answer.result;
}

function listen() {
  events?.close();
  events = new EventSource(`${GATEWAY.href.replace(/\/?$/, '/')}events?token=${encodeURIComponent(token)}`);
  events.addEventListener('txChanged', (message) => {
    for (const event of [].concat(JSON.parse(message.data))) {
      notify('txChanged', event);
      const waiter = waiting.get(event.commandId);
      if (waiter && (event.status === 'executed' || event.status === 'failed')) {
        waiting.delete(event.commandId);
        waiter(event);
      }
    }
  });
}

/** Signs the user in through the gateway's login page, opened from the page's own click. */
function signIn() {
  const login = window.open(`${ORIGIN}/login/`, 'bestex-sandbox-wallet-login', 'popup,width=480,height=640');
  if (!login) return Promise.reject(failure(4001, 'the wallet could not open its sign-in window (a popup blocker?)'));
  return new Promise((resolve) => {
    const heard = (event) => {
      if (event.source !== login || event.origin !== ORIGIN || event.data?.type !== 'SPLICE_WALLET_IDP_AUTH_SUCCESS') return;
      window.removeEventListener('message', heard);
      token = event.data.token;
      listen();
      resolve();
    };
    window.addEventListener('message', heard);
  });
}

/** The wallet's panel: what the dApp asks to sign, and the user's answer. */
function ask(details) {
  return new Promise((resolve) => {
    const host = document.createElement('bestex-sandbox-wallet');
    const root = host.attachShadow({ mode: 'open' });
    root.innerHTML = `<style>
      div { position: fixed; inset: auto 1rem 1rem auto; max-width: 24rem; padding: 1rem; background: #fff; color: #111;
            border: 2px solid #333; border-radius: 8px; font: 15px/1.4 system-ui, sans-serif; z-index: 2147483647; }
      dd { margin: 0 0 0.4rem; overflow-wrap: anywhere; } button { font: inherit; margin-right: 0.5rem; }
    </style><div role="dialog" aria-label="bestex sandbox wallet"><strong>bestex sandbox wallet: sign this transaction?</strong><dl></dl>
    <button type="button" data-answer="approve">Approve</button><button type="button" data-answer="decline">Decline</button></div>`;
    const list = root.querySelector('dl');
    for (const [name, value] of details) {
      const dt = document.createElement('dt');
      dt.textContent = name;
      const dd = document.createElement('dd');
      dd.textContent = value;
      list.append(dt, dd);
    }
    for (const button of root.querySelectorAll('button')) {
      button.addEventListener('click', () => {
        host.remove();
        resolve(button.dataset.answer === 'approve');
      });
    }
    document.documentElement.append(host);
    root.querySelector('button').focus();
  });
}

async function signAndSubmit(params) {
  const { userUrl } = await gateway('prepareExecute', params);
  const transactionId = new URL(userUrl).searchParams.get('transactionId');
  const view = await (await fetch(`${ORIGIN}/approve/transaction?transactionId=${encodeURIComponent(transactionId)}`)).json();
  const approved = await ask([['Acting as', view.party], ['Command id', view.commandId], ['Commands', view.choices.join(', ')]]);
  const outcome = approved ? new Promise((resolve) => waiting.set(view.commandId, resolve)) : null;
  await fetch(`${ORIGIN}/approve/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ transactionId, approve: approved }) });
  if (!approved) throw failure(4001, 'User rejected the request.');
  const event = await outcome;
  if (event.status !== 'executed') throw failure(-32603, 'the ledger refused the transaction');
  return event;
}

async function handle(method, params) {
  switch (method) {
    case 'connect':
      if (!token) await signIn();
      return gateway('isConnected');
    case 'status': {
      const status = await gateway('status');
      return { ...status, provider: { id: TARGET, version: '1.0.0', providerType: 'browser' } };
    }
    case 'disconnect':
      await gateway('disconnect');
      events?.close();
      token = null;
      return null;
    case 'isConnected':
    case 'getActiveNetwork':
    case 'listAccounts':
    case 'getPrimaryAccount':
    case 'ledgerApi':
      return gateway(method, params);
    case 'prepareExecuteAndWait':
      return { tx: await signAndSubmit(params) };
    case 'prepareExecute':
      await signAndSubmit(params);
      return null;
    default:
      throw failure(-32601, `Method ${method} not found`);
  }
}

window.addEventListener('message', (event) => {
  const data = event.data;
  if (event.source !== window || typeof data !== 'object' || data === null) return;
  if (data.type === 'SPLICE_WALLET_EXT_READY' && (!data.target || data.target === TARGET)) {
    window.postMessage({ type: 'SPLICE_WALLET_EXT_ACK', target: TARGET }, '*');
    return;
  }
  if (data.type !== 'SPLICE_WALLET_REQUEST' || data.request?.id === undefined || data.request.id === null) return;
  if (data.target !== undefined && data.target !== TARGET) return;
  const { id, method, params } = data.request;
  handle(method, params).then(
    (result) => respond(id, { result }),
    (err) => respond(id, { error: err.rpc ?? { code: -32603, message: err.message } }),
  );
});
