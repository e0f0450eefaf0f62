// The sandbox's wallet gateway, as a dApp meets it through Canton's official remote provider
// (dapp-sdk's DappAsyncProvider over HTTP and server-sent events): sign-in handed to the dApp's
// window, every answer and event held to the official remote dApp API documents (pinned OpenRPC),
// a transaction parked until its user approves or declines on the gateway's approval page, a message
// parked until its user signs or declines on the sign-message page (messageSignature events), the
// official gateway's refusals at its HTTP statuses, and a swap through it with @bestex/sdk.
import * as providerDapp from '@canton-network/core-provider-dapp';
import type { Provider } from '@canton-network/core-splice-provider';
import { verifySignedTxHash } from '@canton-network/core-signing-lib';
import type { MessageSignatureEvent, RpcTypes as RemoteDappRpcTypes, StatusEvent, TxChangedEvent } from '@canton-network/core-wallet-dapp-remote-rpc-client';
import { createClient, createClientV2, execute, readRefusal, type AppPlan, type ApprovalRequest, type ExecutionStatus } from '@bestex/sdk';
import t from 'tap';
import { listen, testApp } from '../../helpers/app.js';
import { remoteResultErrors } from '../../helpers/dapp-openrpc.js';
import { provideEventSource } from '../../helpers/event-source.js';
import { spendable } from '../../helpers/ledger.js';

// The package's declarations re-export its classes through extension-less paths NodeNext cannot follow.
const { DappAsyncProvider } = providerDapp as unknown as { DappAsyncProvider: new (url: URL | string, sessionToken?: string) => Provider<RemoteDappRpcTypes> };

// The provider runs in a page: it hears the login page's hand-off on `window`, and streams events with EventSource.
const globals = globalThis as { window?: EventTarget };
globals.window ??= new EventTarget();
provideEventSource();

const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200' } });
t.teardown(app.close);
const sandbox = app.sandbox!;
const baseUrl = await listen(app.server);
const client = createClient({ baseUrl });
const clientV2 = createClientV2({ baseUrl });
const dappApi = sandbox.manifest.walletGateway;
const gatewayOrigin = new URL(dappApi).origin;

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${gatewayOrigin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** What the login page does: signs in, then posts the session to the window that opened it. */
async function signIn(hint: string): Promise<{ token: string; party: string }> {
  const { status, body } = await post('/login/', { hint });
  if (status !== 200) throw new Error(`sign-in refused: ${JSON.stringify(body)}`);
  globals.window!.dispatchEvent(new MessageEvent('message', { data: { type: 'SPLICE_WALLET_IDP_AUTH_SUCCESS', token: body.token, sessionId: body.sessionId } }));
  return body as { token: string; party: string };
}

/** A dApp's provider, signed in through the gateway's login as a new funded party. */
async function connected(hint: string) {
  const provider = new DappAsyncProvider(dappApi);
  const status = new Promise<StatusEvent>((resolve) => provider.on('statusChanged', resolve));
  const { party } = await signIn(hint);
  await status;
  const events: TxChangedEvent[] = [];
  provider.on('txChanged', (event: TxChangedEvent) => void events.push(event));
  // The event stream is open once the gateway has a listener for the session: wait for one read.
  await provider.request({ method: 'status' });
  return { provider, party, events };
}

/** The official provider as execute() takes it: a type error here is one every partner's dApp would meet. */
const walletFor = (provider: Parameters<typeof execute>[1]['provider']) => provider;

const until = async (check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

/** What the official HttpTransport throws for a failed call: `{error: {code: <HTTP status>, data: <the body>}}`. */
const thrown = (call: Promise<unknown>): Promise<unknown> =>
  call.then(
    () => {
      throw new Error('the call was answered, not refused');
    },
    (err: unknown) => err,
  );

/** The HTTP status and the JSON-RPC error in the gateway's body, from what the transport threw. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; rpc: { code: number; message: string } }> {
  const { error } = (await thrown(call)) as { error: { code: number; data: string } };
  return { status: error.code, rpc: (JSON.parse(error.data) as { error: { code: number; message: string } }).error };
}

t.test('a dApp not signed in is told where to sign in: connect answers isConnected false and the gateway\'s login page, in the official shape', async (t) => {
  const provider = new DappAsyncProvider(dappApi);
  const connection = await provider.request({ method: 'connect' });
  t.equal(remoteResultErrors('connect', connection), '');
  t.match(connection, { isConnected: false, isNetworkConnected: true, userUrl: `${gatewayOrigin}/login/` });
  const status = await provider.request({ method: 'status' });
  t.equal(remoteResultErrors('status', status), '');
  t.notOk('session' in status, 'no session before sign-in');
  const page = await fetch(`${gatewayOrigin}/login/`);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-security-policy'), /script-src 'self'/);
});

t.test('signing in hands the session to the dApp\'s window: the provider then reads a new party, funded with 1000 CC, and every answer is the remote dApp API\'s own shape', async (t) => {
  const { provider, party } = await connected('gateway-reader');
  t.match(party, /^gateway-reader::1220[0-9a-f]{64}$/);
  t.equal(spendable(sandbox.ledger, party, 'Amulet').toFixed(), '1000');
  for (const method of ['status', 'connect', 'isConnected', 'getActiveNetwork', 'listAccounts', 'getPrimaryAccount'] as const) {
    const answer = await provider.request({ method });
    t.equal(remoteResultErrors(method, answer), '', `${method} conforms`);
  }
  t.match(await provider.request({ method: 'status' }), { connection: { isConnected: true }, session: { accessToken: /\S/ } });
  t.match(await provider.request({ method: 'getPrimaryAccount' }), { partyId: party, primary: true });
  const end = await provider.request({ method: 'ledgerApi', params: { requestMethod: 'get', resource: '/v2/state/ledger-end' } });
  t.equal(remoteResultErrors('ledgerApi', end), '');
  t.type((end as { offset?: unknown }).offset, 'number', 'the participant answered through the gateway');
});

t.test('prepareExecute parks the transaction and answers its approval page; approved there, it is submitted as the party and txChanged says pending, then executed with the ledger\'s update id', async (t) => {
  const { provider, party, events } = await connected('gateway-approver');
  const plan = (await client.plan({ from: 'CC', to: 'USDCx', amount: '10', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-approve` })) as AppPlan;
  let approval: ApprovalRequest | null = null;
  const result = await execute(plan, {
    provider: walletFor(provider),
    registries: sandbox.manifest.registries,
    hooks: {
      onApproval: (request) => {
        approval = request;
        const transactionId = new URL(request.url).searchParams.get('transactionId');
        void post('/approve/', { transactionId, approve: true });
      },
    },
  });
  t.match(approval, { planId: plan.planId, url: new RegExp(`^${gatewayOrigin}/approve/index\\.html\\?transactionId=[0-9a-f-]{36}&commandId=`) }, 'the onApproval hook was given the gateway\'s approval page');
  t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220[0-9a-f]{64}$/ });
  await until(() => events.some((e) => e.status === 'executed'));
  const mine = events.filter((e) => e.commandId === plan.planId);
  t.match(mine, [{ status: 'pending' }, { status: 'executed', payload: { updateId: result.submittedUpdateId } }], 'pending, then executed, with the deposit\'s update id');
  for (const event of mine) t.equal(remoteResultErrors('txChanged', event), '', `txChanged ${event.status} conforms`);
  t.match(await provider.request({ method: 'isConnected' }), { isConnected: true }, 'still signed in');
});

t.test('without an onApproval hook, a browser\'s window.open is given the approval page', async (t) => {
  const { provider, party } = await connected('gateway-opener');
  const plan = (await client.plan({ from: 'CC', to: 'USDCx', amount: '10', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-open` })) as AppPlan;
  const opened: Array<[string, string]> = [];
  const global = globalThis as { open?: (url: string, target: string) => void };
  global.open = (url, target) => {
    opened.push([url, target]);
    void post('/approve/', { transactionId: new URL(url).searchParams.get('transactionId'), approve: true });
  };
  t.teardown(() => void delete global.open);
  const result = await execute(plan, { provider: walletFor(provider), registries: sandbox.manifest.registries });
  t.equal(result.status, 'COMPLETED');
  t.match(opened, [[/\/approve\/index\.html\?transactionId=/, '_blank']]);
});

t.test('declined on the approval page, nothing reaches the ledger and no event is sent, as the official gateway drops it; a second answer is 404', async (t) => {
  const { provider, party, events } = await connected('gateway-decliner');
  const before = sandbox.ledger.ledgerEnd;
  const { userUrl } = await provider.request({ method: 'prepareExecute', params: { commands: [{ ExerciseCommand: { templateId: '#x:Y:Z', contractId: '00', choice: 'Nothing', choiceArgument: {} } }], commandId: 'declined-1' } });
  t.equal(remoteResultErrors('prepareExecute', { userUrl }), '');
  const transactionId = new URL(userUrl).searchParams.get('transactionId');
  const view = await fetch(`${gatewayOrigin}/approve/transaction?transactionId=${transactionId}`);
  t.match(await view.json(), { party, commandId: 'declined-1', commands: 1, choices: ['Nothing'] }, 'the approval page shows whom it acts as and what');
  t.match(await post('/approve/', { transactionId, approve: false }), { status: 200, body: { outcome: 'declined' } });
  t.match(await post('/approve/', { transactionId, approve: true }), { status: 404, body: { error: /no such transaction waits/ } });
  await provider.request({ method: 'status' });
  t.equal(sandbox.ledger.ledgerEnd, before, 'the ledger did not move');
  t.strictSame(events, [], 'no txChanged');
});

/** The messageSignature events the provider hears from now on. */
function signatureEvents(provider: Provider<RemoteDappRpcTypes>): MessageSignatureEvent[] {
  const events: MessageSignatureEvent[] = [];
  provider.on('messageSignature', (event: MessageSignatureEvent) => void events.push(event));
  return events;
}

const CHALLENGE = 'OneSwap wallet authentication\nParty: gateway\nNonce: 00ff\nIssued at: 2026-01-01T00:00:00.000Z';

t.test('"signMessage as the remote dApp API specifies it": parked, answered with its messageId and the sign-message page; signed there, the dApp hears messageSignature signed, a signature of the UTF-8 bytes under its account\'s publicKey', async (t) => {
  const { provider, party } = await connected('gateway-signer');
  const events = signatureEvents(provider);
  const account = await provider.request({ method: 'getPrimaryAccount' });
  t.equal(Buffer.from(account.publicKey, 'base64').length, 32, 'the account shows the session\'s key: a raw Ed25519 key, base64');
  const answer = await provider.request({ method: 'signMessage', params: { message: CHALLENGE } });
  t.equal(remoteResultErrors('signMessage', answer), '', 'the answer conforms');
  t.match(answer.userUrl, new RegExp(`^${gatewayOrigin}/sign-message/index\\.html\\?messageId=${answer.messageId}$`), 'the page dapp-sdk opens, the messageId in its URL as dapp-sdk reads it');
  const page = await fetch(answer.userUrl);
  t.equal(page.status, 200);
  t.match(page.headers.get('content-security-policy'), /default-src 'none'; script-src 'self'/, 'served as the approval page is');
  t.match(await page.text(), /<script type="module" src="\/assets\/sign-message\.js">/);
  t.equal((await fetch(`${gatewayOrigin}/assets/sign-message.js`)).status, 200);
  const view = await fetch(`${gatewayOrigin}/sign-message/message?messageId=${answer.messageId}`);
  t.strictSame(await view.json(), { party, publicKey: account.publicKey, message: CHALLENGE }, 'the page shows whom it signs as, with which key, and the text');
  t.match(await post('/sign-message/', { messageId: answer.messageId, approve: true }), { status: 200, body: { outcome: 'signed' } });
  await until(() => events.some((e) => e.status === 'signed'));
  t.match(events, [{ status: 'pending', messageId: answer.messageId }, { status: 'signed', messageId: answer.messageId, signature: /\S/ }]);
  for (const event of events) t.equal(remoteResultErrors('messageSignature', event), '', `messageSignature ${event.status} conforms`);
  const signature = (events[1] as { signature: string }).signature;
  t.ok(verifySignedTxHash(Buffer.from(CHALLENGE, 'utf8').toString('base64'), account.publicKey, signature), 'verifies under the account\'s publicKey, by Canton\'s signing library');
  t.match(await post('/sign-message/', { messageId: answer.messageId, approve: true }), { status: 404, body: { error: /no such message waits/ } }, 'answered once');
});

t.test('declined on the sign-message page: the dApp hears messageSignature failed, nothing is signed; a second answer is 404; bad params are -32602', async (t) => {
  const { provider } = await connected('gateway-message-decliner');
  const events = signatureEvents(provider);
  const { messageId } = await provider.request({ method: 'signMessage', params: { message: CHALLENGE } });
  t.match(await post('/sign-message/', { messageId, approve: false }), { status: 200, body: { outcome: 'declined' } });
  await until(() => events.some((e) => e.status === 'failed'));
  t.match(events, [{ status: 'pending', messageId }, { status: 'failed', messageId }]);
  t.notOk(events.some((e) => 'signature' in e), 'no signature');
  t.match(await post('/sign-message/', { messageId, approve: true }), { status: 404 });
  t.match(await refusal(provider.request({ method: 'signMessage', params: { message: '' } })), { status: 400, rpc: { code: -32602 } });
  t.match(await refusal(provider.request({ method: 'signMessage', params: { message: 'x', extra: 1 } as never })), { status: 400, rpc: { code: -32602 } });
});

t.test('a OneSwap plan through the gateway with @bestex/sdk: its challenge signed on the sign-message page, its deposit approved on the approval page, COMPLETED; the signature is the session key\'s, which the sandbox\'s OneSwap took for the party', async (t) => {
  const { provider, party } = await connected('gateway-oneswap');
  const plan = await clientV2.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey: `${party}-oneswap` });
  const pages: string[] = [];
  const statuses: ExecutionStatus[] = [];
  const result = await execute(plan, {
    provider: walletFor(provider),
    client: clientV2,
    hooks: {
      onStatus: (status) => void statuses.push(status),
      onApproval: ({ url }) => {
        const page = new URL(url);
        pages.push(page.pathname);
        void (page.pathname.startsWith('/sign-message/')
          ? post('/sign-message/', { messageId: page.searchParams.get('messageId'), approve: true })
          : post('/approve/', { transactionId: page.searchParams.get('transactionId'), approve: true }));
      },
    },
  });
  t.strictSame(pages, ['/sign-message/index.html', '/approve/index.html'], 'the user signed on one page, then approved the deposit on the other');
  t.strictSame(statuses, ['SIGNING', 'SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.match(result, { status: 'COMPLETED', party, error: null, intent: { venueId: 'oneswap' }, outcome: { status: 'completed', basis: 'venue', agrees: true } });
  t.ok(Number(result.received) > 0);
});

t.test('declined on the sign-message page, a OneSwap plan ends USER_REJECTED: nothing signed, nothing submitted', async (t) => {
  const { provider, party } = await connected('gateway-oneswap-decliner');
  const plan = await clientV2.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey: `${party}-oneswap` });
  const before = sandbox.ledger.ledgerEnd;
  const result = await execute(plan, {
    provider: walletFor(provider),
    client: clientV2,
    hooks: { onApproval: ({ url }) => void post('/sign-message/', { messageId: new URL(url).searchParams.get('messageId'), approve: false }) },
  });
  t.match(result, { status: 'USER_REJECTED', error: { code: 'user_rejected', message: /declined to sign the venue's message/ } });
  t.equal(sandbox.ledger.ledgerEnd, before, 'the ledger did not move');
});

t.test('refusals as the official gateway sends them, read right by the SDK: an unknown method 404 (-32601), no session 401, bad params 400 (-32602), a ledger refusal 500 with its cause', async (t) => {
  const { provider } = await connected('gateway-refusals');
  // Made after the sign-in: every provider on the page takes the session the login page hands over.
  const anonymous = new DappAsyncProvider(dappApi);
  const unknown = () => provider.request({ method: 'prepareExecuteAndWait' as 'status' });
  t.match(await refusal(unknown()), { status: 404, rpc: { code: -32601, message: 'Method prepareExecuteAndWait not found' } });
  t.match(readRefusal(await thrown(unknown()), 'prepareExecuteAndWait'), { kind: 'unsupported' }, 'the SDK falls back to prepareExecute');
  t.match(await refusal(anonymous.request({ method: 'getPrimaryAccount' })), { status: 401, rpc: { code: 4100 } });
  t.match(await refusal(provider.request({ method: 'prepareExecute', params: { commands: [] } })), { status: 400, rpc: { code: -32602 } });
  t.match(await refusal(provider.request({ method: 'status', params: { extra: true } } as never)), { status: 400, rpc: { code: -32602 } });
  t.match(await refusal(provider.request({ method: 'ledgerApi', params: { requestMethod: 'get', resource: '/v2/nowhere' } })), { status: 500, rpc: { code: -32603 } });
  const stream = await fetch(`${dappApi}/events?token=not-a-session`);
  t.equal(stream.status, 401, 'no event stream without a session');
});
