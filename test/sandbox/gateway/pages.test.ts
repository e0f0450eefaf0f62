// The sandbox wallet gateway's pages as its user meets them, in Debian's Chromium (playwright-core,
// nothing downloaded): the sign-message page shows whom it signs as, with which key, and the text,
// and its Sign and Decline buttons answer the dApp; the approval page shows the transaction, and
// its Decline button drops it. Without Chromium the tests are skipped with a loud notice, unless
// REQUIRE_CHROMIUM=1 (CI installs it) makes that a failure.
import * as providerDapp from '@canton-network/core-provider-dapp';
import type { Provider } from '@canton-network/core-splice-provider';
import { verifySignedTxHash } from '@canton-network/core-signing-lib';
import type { MessageSignatureEvent, RpcTypes as RemoteDappRpcTypes, StatusEvent } from '@canton-network/core-wallet-dapp-remote-rpc-client';
import type { Browser, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { listen, testApp } from '../../helpers/app.js';
import { chromiumSkip, launchChromium } from '../../helpers/chromium.js';
import { provideEventSource } from '../../helpers/event-source.js';

// The package's declarations re-export its classes through extension-less paths NodeNext cannot follow.
const { DappAsyncProvider } = providerDapp as unknown as { DappAsyncProvider: new (url: URL | string, sessionToken?: string) => Provider<RemoteDappRpcTypes> };

// The provider runs in a page: it hears the login page's hand-off on `window`, and streams events with EventSource.
const globals = globalThis as { window?: EventTarget };
globals.window ??= new EventTarget();
provideEventSource();

const skip = chromiumSkip('the wallet gateway page tests');
const app = await testApp();
t.teardown(app.close);
await listen(app.server);
const dappApi = app.sandbox!.manifest.walletGateway;
const gatewayOrigin = new URL(dappApi).origin;

let launched: Promise<Browser> | undefined;
const browser = (): Promise<Browser> => (launched ??= launchChromium());
t.teardown(async () => {
  if (launched) await (await launched).close();
});

const until = async (check: () => boolean) => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

/** A dApp signed in through the gateway's login, as a new funded party, hearing its messageSignature events. */
async function connected(hint: string) {
  const provider = new DappAsyncProvider(dappApi);
  const status = new Promise<StatusEvent>((resolve) => provider.on('statusChanged', resolve));
  const response = await fetch(`${gatewayOrigin}/login/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hint }) });
  const session = (await response.json()) as { token: string; sessionId: string; party: string };
  globals.window!.dispatchEvent(new MessageEvent('message', { data: { type: 'SPLICE_WALLET_IDP_AUTH_SUCCESS', token: session.token, sessionId: session.sessionId } }));
  await status;
  const events: MessageSignatureEvent[] = [];
  provider.on('messageSignature', (event: MessageSignatureEvent) => void events.push(event));
  await provider.request({ method: 'status' });
  return { provider, party: session.party, events };
}

/** The page at `url`, once it shows what is to be decided on. */
async function decisionPage(t: Test, url: string): Promise<Page> {
  const page = await (await browser()).newPage();
  t.teardown(() => page.close());
  await page.goto(url);
  await page.locator('#actions').waitFor({ state: 'visible' });
  return page;
}

/** The page's rows, name to value. */
const rows = async (page: Page): Promise<Record<string, string>> =>
  page.evaluate(() => Object.fromEntries([...document.querySelectorAll('dt')].map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? ''])));

const MESSAGE = 'OneSwap wallet authentication\nParty: page\nNonce: 0a0b\nIssued at: 2026-01-01T00:00:00.000Z';

t.test('the sign-message page shows whom it signs as, with which key, and the text; pressing Sign answers the dApp with a signature of the text under that key', skip, async (t) => {
  const { provider, party, events } = await connected('page-signer');
  const { publicKey } = await provider.request({ method: 'getPrimaryAccount' });
  const { messageId, userUrl } = (await provider.request({ method: 'signMessage', params: { message: MESSAGE } })) as { messageId: string; userUrl: string };
  const page = await decisionPage(t, userUrl);
  t.equal(await page.locator('h1').innerText(), 'Sign a message');
  t.match(await page.locator('main').innerText(), /Signing moves no funds/, 'the page says signing moves no funds');
  t.strictSame(await rows(page), { 'Signing as': party, 'With the key': publicKey, Message: MESSAGE });
  await page.getByRole('button', { name: 'Sign' }).click();
  await page.locator('#result', { hasText: 'Signed.' }).waitFor();
  await until(() => events.some((e) => e.status === 'signed'));
  const signed = events.find((e) => e.status === 'signed') as { messageId: string; signature: string } | undefined;
  t.equal(signed?.messageId, messageId);
  t.ok(verifySignedTxHash(Buffer.from(MESSAGE, 'utf8').toString('base64'), publicKey, signed!.signature), "the signature verifies under the account's key, by Canton's signing library");
  t.equal(await page.locator('#actions').isHidden(), true, 'nothing more to press');
});

t.test('pressing Decline on the sign-message page answers the dApp that nothing was signed', skip, async (t) => {
  const { provider, events } = await connected('page-message-decliner');
  const { messageId, userUrl } = (await provider.request({ method: 'signMessage', params: { message: MESSAGE } })) as { messageId: string; userUrl: string };
  const page = await decisionPage(t, userUrl);
  await page.getByRole('button', { name: 'Decline' }).click();
  await page.locator('#result', { hasText: 'Declined.' }).waitFor();
  await until(() => events.some((e) => e.status === 'failed'));
  t.match(events.find((e) => e.status === 'failed'), { messageId });
  t.notOk(events.some((e) => e.status === 'signed'), 'no signature');
});

t.test('the approval page shows whom the transaction acts as and what it does; pressing Decline drops it, and the ledger does not move', skip, async (t) => {
  const { provider, party } = await connected('page-tx-decliner');
  const before = app.sandbox!.ledger.ledgerEnd;
  const { userUrl } = (await provider.request({
    method: 'prepareExecute',
    params: { commands: [{ ExerciseCommand: { templateId: '#x:Y:Z', contractId: '00', choice: 'Nothing', choiceArgument: {} } }], commandId: 'page-declined-1' },
  })) as { userUrl: string };
  const page = await decisionPage(t, userUrl);
  t.equal(await page.locator('h1').innerText(), 'Approve a transaction');
  t.strictSame(await rows(page), { 'Acting as': party, 'Command id': 'page-declined-1', Commands: '1: Nothing' });
  await page.getByRole('button', { name: 'Decline' }).click();
  await page.locator('#result', { hasText: 'Declined.' }).waitFor();
  t.equal(app.sandbox!.ledger.ledgerEnd, before, 'the ledger did not move');
});
