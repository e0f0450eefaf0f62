// OneSwap's wallet auth and swap intents on the sandbox (sandbox/venues/oneswap-intents.ts) and
// their settlement on its ledger (sandbox/ledger/oneswap-desk.ts), over HTTP: a party onboarded
// with its own key by Canton's wallet-sdk signs the challenge with Canton's signing library; the
// wallet's deposit to depositAddress carrying depositReference is a token-standard transfer built
// by Canton's TokenStandardService and submitted through the participant's JSON Ledger API. The
// answers are checked against OneSwap's documented types (fixtures/oneswap-types.ts).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { LedgerClient } from '@canton-network/core-ledger-client';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { createKeyPair, signMessage } from '@canton-network/core-signing-lib';
import { TokenStandardService } from '@canton-network/core-token-standard-service';
import { AuthTokenProvider } from '@canton-network/core-wallet-auth';
import { CustomLogAdapter, LedgerProvider, SDK } from '@canton-network/wallet-sdk';
import { Decimal } from '../../../core/decimal.js';
import { SANDBOX_VENUE_KEY } from '../../../sandbox/venues/wire.js';
import { HOLDING, claims, hint, silent } from '../../helpers/canton.js';
import { testSandbox } from '../../helpers/sandbox.js';
import {
  CANCEL_SWAP_RESPONSE, INTENT_WINDOW_MS, MAX_PRICE_IMPACT_PERCENT, SLIPPAGE, SWAP_INTENT_RESPONSE, SWAP_STATUS, SWAP_STATUS_RESPONSE,
  VERIFY_WALLET_CHALLENGE_RESPONSE, WALLET_CHALLENGE_RESPONSE, shapeErrors,
} from './fixtures/oneswap-types.js';

type S = v3_4.components['schemas'];

// The sandbox's clock, which a test moves past an intent's window.
let skewMs = 0;
const sandbox = await testSandbox({ now: () => new Date(Date.now() + skewMs) });
t.teardown(() => sandbox.close());
const { manifest, ledgerToken } = sandbox;
const userId = claims(ledgerToken).sub!;
const ccAdmin = manifest.instrumentAdmins.Amulet;
const amuletRegistry = manifest.registries[ccAdmin]!;
const oneswap = manifest.venues.oneswap!;
const tokenProvider = AuthTokenProvider.fromToken(ledgerToken, silent);
const provider = new LedgerProvider({ baseUrl: manifest.ledger, accessTokenProvider: tokenProvider });
const service = new TokenStandardService(provider, silent, tokenProvider, false);
const client = new LedgerClient({ baseUrl: new URL(manifest.ledger), logger: pino({ level: 'silent' }), accessTokenProvider: tokenProvider });
const post = <T>(path: string, body: unknown) => client.post(path as never, body as never) as Promise<T>;
const synchronizerId = await client.getSynchronizerId();
const sdk = await SDK.create({ auth: { method: 'static', token: ledgerToken }, ledgerClientUrl: manifest.ledger, logAdapter: new CustomLogAdapter(() => {}) });

async function allocate(name: string): Promise<string> {
  const { partyDetails } = await post<S['AllocatePartyResponse']>('/v2/parties', { partyIdHint: hint(name), identityProviderId: '', synchronizerId, userId });
  return partyDetails!.party;
}

async function control(path: string, body: unknown): Promise<void> {
  const response = await fetch(new URL(path, manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`${path} refused: ${response.status} ${await response.text()}`);
}

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A call to the sandbox OneSwap with its API key (and a wallet token when given). */
async function call(method: string, path: string, body?: unknown, walletToken?: string, apiKey = SANDBOX_VENUE_KEY): Promise<Answer> {
  const headers: Record<string, string> = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  if (walletToken) headers.authorization = `Bearer ${walletToken}`;
  const response = await fetch(`${oneswap}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The wallet-auth flow as the docs show it: requestChallenge, signMessage, verifyChallenge. */
async function signIn(partyId: string, keys = createKeyPair()): Promise<string> {
  const challenge = await call('POST', '/api/v1/wallet-auth/challenge', { partyId });
  const signature = signMessage(challenge.body.message as string, keys.privateKey);
  const verified = await call('POST', '/api/v1/wallet-auth/verify', { partyId, nonce: challenge.body.nonce, signature, publicKey: keys.publicKey });
  if (verified.status !== 200) throw new Error(`sign-in refused: ${JSON.stringify(verified.body)}`);
  return verified.body.token as string;
}

const createSwap = (token: string, params: Record<string, unknown>) => call('POST', '/api/v1/swaps', { fromToken: 'Amulet', toToken: 'USDCx', ...params }, token);
const statusOf = async (token: string, intentId: unknown) => (await call('GET', `/api/v1/swaps/${String(intentId)}`, undefined, token)).body;

/** The wallet's deposit: a token-standard transfer of `amount` CC to `receiver`, `reason` as its reason when given, open for an hour of the sandbox's clock. */
async function deposit(sender: string, receiver: string, amount: string, reason?: string): Promise<void> {
  const expiry = new Date(Date.now() + skewMs + 60 * 60 * 1000);
  const [command, disclosedContracts] = await service.transfer.createTransfer(sender, receiver, amount, ccAdmin, 'Amulet', amuletRegistry, undefined, reason, expiry);
  await post<S['SubmitAndWaitResponse']>('/v2/commands/submit-and-wait', {
    commands: [{ ExerciseCommand: command }], commandId: `oneswap-${randomUUID()}`, userId, actAs: [sender], readAs: [], disclosedContracts, synchronizerId, packageIdSelectionPreference: [],
  });
}

interface Balance {
  readonly Amulet: Decimal;
  readonly USDCx: Decimal;
  readonly locked: Decimal;
}

async function balance(party: string): Promise<Balance> {
  const holdings = await service.listContractsByInterface<{ amount: string; instrumentId: { id: string }; lock: unknown }>(HOLDING, party);
  const sum = (keep: (h: (typeof holdings)[number]['interfaceViewValue']) => boolean) =>
    holdings.filter((h) => keep(h.interfaceViewValue)).reduce((total, h) => total.plus(h.interfaceViewValue.amount), new Decimal(0));
  return { Amulet: sum((h) => h.instrumentId.id === 'Amulet' && h.lock === null), USDCx: sum((h) => h.instrumentId.id === 'USDCx' && h.lock === null), locked: sum((h) => h.lock !== null) };
}

/** The balance once the desk has answered every offer of `party` (nothing locked any more). */
async function settled(party: string): Promise<Balance> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const now = await balance(party);
    if (now.locked.isZero()) return now;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the OneSwap desk did not answer ${party}'s offer`);
}

/** A funded, signed-in local party and its wallet token. */
async function wallet(name: string, cc = '1000'): Promise<{ party: string; token: string }> {
  const party = await allocate(name);
  await control('/sandbox/v1/fund', { party, token: 'CC', amount: cc });
  return { party, token: await signIn(party) };
}

const quoteOut = async (amount: string) => {
  const response = await fetch(`${oneswap}/api/v1/quote?from=Amulet&to=USDCx&amount=${amount}`, { headers: { 'x-api-key': SANDBOX_VENUE_KEY } });
  return new Decimal(((await response.json()) as { outputAmount: string }).outputAmount);
};

t.test('wallet auth: "sign the OneSwap challenge" with the party\'s own key yields a token; a bad signature or another key does not', async (t) => {
  const keys = sdk.keys.generate();
  const { partyId } = await sdk.party.external.create(keys.publicKey, { partyHint: hint('os-ext') }).sign(keys.privateKey).execute();
  const challenge = await call('POST', '/api/v1/wallet-auth/challenge', { partyId });
  t.equal(challenge.status, 200);
  t.strictSame(shapeErrors(challenge.body, WALLET_CHALLENGE_RESPONSE), [], 'the documented WalletChallengeResponse');
  t.equal(challenge.body.partyId, partyId);
  t.match(challenge.body.message, partyId, 'the challenge is bound to the party');

  const good = await call('POST', '/api/v1/wallet-auth/verify', { partyId, nonce: challenge.body.nonce, signature: signMessage(challenge.body.message as string, keys.privateKey), publicKey: keys.publicKey });
  t.equal(good.status, 200);
  t.strictSame(shapeErrors(good.body, VERIFY_WALLET_CHALLENGE_RESPONSE), [], 'the documented VerifyWalletChallengeResponse');
  t.equal(good.body.partyId, partyId);

  const reused = await call('POST', '/api/v1/wallet-auth/verify', { partyId, nonce: challenge.body.nonce, signature: signMessage(challenge.body.message as string, keys.privateKey), publicKey: keys.publicKey });
  t.equal(reused.status, 401, 'a challenge is used up by its verification');

  const again = await call('POST', '/api/v1/wallet-auth/challenge', { partyId });
  const tampered = signMessage(`${String(again.body.message)}!`, keys.privateKey);
  t.equal((await call('POST', '/api/v1/wallet-auth/verify', { partyId, nonce: again.body.nonce, signature: tampered, publicKey: keys.publicKey })).status, 401, 'a signature over another message is refused');

  const other = createKeyPair();
  const third = await call('POST', '/api/v1/wallet-auth/challenge', { partyId });
  const byOther = await call('POST', '/api/v1/wallet-auth/verify', { partyId, nonce: third.body.nonce, signature: signMessage(third.body.message as string, other.privateKey), publicKey: other.publicKey });
  t.equal(byOther.status, 401, 'a good signature by a key that is not the party\'s is refused');
  t.match(byOther.body.error, /key/);

  t.equal((await call('POST', '/api/v1/wallet-auth/challenge', { partyId: `nobody::1220${'9'.repeat(64)}` })).status, 404, 'a party the participant does not host');
  t.equal((await call('POST', '/api/v1/wallet-auth/challenge', { partyId }, undefined, 'os_live_wrong')).status, 401, 'the API key is checked first');
});

t.test('create, status and cancel: the documented shapes, the API key and the wallet token both required', async (t) => {
  const { party, token } = await wallet('os-create');
  t.equal((await createSwap('', { amount: '100' })).status, 401, 'no wallet token');
  t.equal((await call('POST', '/api/v1/swaps', { fromToken: 'Amulet', toToken: 'USDCx', amount: '100' }, token, 'os_live_wrong')).status, 401, 'no API key');
  t.equal((await createSwap(token, { amount: '100', walletAddress: `someone::1220${'1'.repeat(64)}` })).status, 400, 'walletAddress must match the token');
  t.equal((await createSwap(token, { amount: '100', slippageTolerance: 0.0009 })).status, 400, `tolerance below ${SLIPPAGE.min}`);
  t.equal((await createSwap(token, { amount: '100', slippageTolerance: 0.51 })).status, 400, `tolerance above ${SLIPPAGE.max}`);

  const created = await createSwap(token, { amount: '100', walletAddress: party });
  t.equal(created.status, 200);
  const intent = created.body;
  t.strictSame(shapeErrors(intent, SWAP_INTENT_RESPONSE), [], 'the documented SwapIntentResponse');
  t.equal(intent.depositAddress, intent.swapAddress, 'depositAddress is the pool swap party');
  t.not(intent.depositAddress, party);
  t.equal(intent.outputAddress, party, 'output goes back to the depositor');
  t.equal(intent.slippageTolerance, Number(SLIPPAGE.default), 'the default tolerance');
  const expected = await quoteOut('100');
  t.equal(intent.expectedOutput, expected.toFixed(), 'expectedOutput is the quote\'s outputAmount');
  t.equal(intent.minOutput, expected.times(1 - Number(SLIPPAGE.default)).toDecimalPlaces(10, Decimal.ROUND_FLOOR).toFixed(), 'minOutput = expectedOutput × (1 - slippageTolerance)');
  t.equal(Date.parse(intent.expiresAt as string) - Date.now() > INTENT_WINDOW_MS - 60_000, true, 'a 24-hour deposit window');

  t.equal((await createSwap(token, { amount: '50' })).status, 409, 'one active intent per wallet, pool and input token');

  const status = await statusOf(token, intent.intentId);
  t.strictSame(shapeErrors(status, SWAP_STATUS_RESPONSE), [], 'the documented SwapStatusResponse');
  t.equal(status.status, 'pending');
  t.ok(SWAP_STATUS.includes(status.status as (typeof SWAP_STATUS)[number]));

  const stranger = await wallet('os-stranger');
  t.equal((await call('GET', `/api/v1/swaps/${String(intent.intentId)}`, undefined, stranger.token)).status, 404, 'another wallet does not see it');
  t.equal((await call('POST', `/api/v1/swaps/${String(intent.intentId)}/cancel`, undefined, stranger.token)).status, 404, 'nor cancel it');

  const cancelled = await call('POST', `/api/v1/swaps/${String(intent.intentId)}/cancel`, undefined, token);
  t.equal(cancelled.status, 200);
  t.strictSame(shapeErrors(cancelled.body, CANCEL_SWAP_RESPONSE), []);
  t.equal(cancelled.body.success, true);
  t.equal((await statusOf(token, intent.intentId)).status, 'cancelled');
  t.equal((await call('POST', `/api/v1/swaps/${String(intent.intentId)}/cancel`, undefined, token)).status, 409, 'only a pending intent cancels');

  await deposit(party, intent.depositAddress as string, '100', intent.depositReference as string);
  const after = await settled(party);
  t.equal(after.Amulet.toFixed(), '1000', 'a deposit for a cancelled intent is refunded');
  t.equal((await statusOf(token, intent.intentId)).status, 'cancelled');
});

t.test(`"a swap that would move the price beyond ${MAX_PRICE_IMPACT_PERCENT}%" is a 400 at creation; an amount below the traffic cost is a 400 with minimumAmount`, async (t) => {
  const { token } = await wallet('os-impact');
  const big = await createSwap(token, { amount: '3000000' });
  t.equal(big.status, 400);
  t.match(big.body.error, /price impact/i);
  t.equal(big.body.maxPriceImpact, MAX_PRICE_IMPACT_PERCENT);
  const tiny = await createSwap(token, { amount: '0.4' });
  t.equal(tiny.status, 400);
  t.equal(tiny.body.minimumAmount, '0.5', 'the traffic fee in CC');
});

t.test('"OneSwap detects the deposit, executes the swap": completed, at least minOutput paid back, the pool moved', async (t) => {
  const { party, token } = await wallet('os-done');
  const before = await quoteOut('100');
  const intent = (await createSwap(token, { amount: '100', slippageTolerance: 0.005 })).body;
  await deposit(party, intent.depositAddress as string, '100', intent.depositReference as string);
  const after = await settled(party);
  t.equal(after.Amulet.toFixed(), '900');
  t.ok(after.USDCx.gte(intent.minOutput as string), `received ${after.USDCx.toFixed()} ≥ minOutput ${String(intent.minOutput)}`);
  const status = await statusOf(token, intent.intentId);
  t.equal(status.status, 'completed');
  t.equal(status.actualOutput, after.USDCx.toFixed(), 'actualOutput is what arrived');
  t.type(status.matchedAt, 'string');
  t.ok((await quoteOut('100')).lt(before), 'the pool moved: 100 CC now quotes less');
});

t.test('"OneSwap matches deposits by sender": a deposit without the reference settles the sender\'s intent; another party\'s deposit does not', async (t) => {
  const { party, token } = await wallet('os-bysender');
  const intruder = await wallet('os-intruder');
  const intent = (await createSwap(token, { amount: '100' })).body;
  await deposit(intruder.party, intent.depositAddress as string, '100', intent.depositReference as string);
  t.equal((await settled(intruder.party)).Amulet.toFixed(), '1000', 'another party\'s deposit with the reference is refunded');
  t.equal((await statusOf(token, intent.intentId)).status, 'pending', 'and the intent is untouched');
  await deposit(party, intent.depositAddress as string, '100');
  t.ok((await settled(party)).USDCx.gt(0), 'the sender\'s deposit without a reference is paid');
  t.equal((await statusOf(token, intent.intentId)).status, 'completed');
});

t.test('"output fell below minOutput, tokens refunded": slippage_failed', async (t) => {
  const { party, token } = await wallet('os-slip');
  const intent = (await createSwap(token, { amount: '200', slippageTolerance: 0.01 })).body;
  await control('/sandbox/v1/move', { venue: 'oneswap', pair: 'CC/USDCx', bps: -300 });
  await deposit(party, intent.depositAddress as string, '200', intent.depositReference as string);
  const after = await settled(party);
  t.equal(after.Amulet.toFixed(), '1000', 'the 200 CC came back');
  t.equal(after.USDCx.toFixed(), '0');
  const status = await statusOf(token, intent.intentId);
  t.equal(status.status, 'slippage_failed');
  t.equal(status.actualOutput, null);
});

t.test('"a deposit must match the intent": another amount is insufficient_amount and refunded', async (t) => {
  const { party, token } = await wallet('os-amount');
  const intent = (await createSwap(token, { amount: '100' })).body;
  await deposit(party, intent.depositAddress as string, '99', intent.depositReference as string);
  t.equal((await settled(party)).Amulet.toFixed(), '1000');
  t.equal((await statusOf(token, intent.intentId)).status, 'insufficient_amount');
});

t.test('"Swap intents currently remain valid for 24 hours": later the intent is expired and a deposit is refunded', async (t) => {
  const { party, token } = await wallet('os-expiry');
  const intent = (await createSwap(token, { amount: '100' })).body;
  skewMs += INTENT_WINDOW_MS;
  t.teardown(() => {
    skewMs -= INTENT_WINDOW_MS;
  });
  const fresh = await signIn(party);
  t.equal((await statusOf(fresh, intent.intentId)).status, 'expired');
  await deposit(party, intent.depositAddress as string, '100', intent.depositReference as string);
  const after = await settled(party);
  t.equal(after.Amulet.toFixed(), '1000', 'refunded');
  t.equal((await statusOf(fresh, intent.intentId)).status, 'expired');
});

t.test('each status the control API can impose on the next settlement: refunded, or the deposit kept', async (t) => {
  const refunded = ['price_impact_exceeded', 'insufficient_liquidity', 'insufficient_amount', 'output_failed', 'slippage_failed'];
  // The docs: these "require manual investigation by OneSwap".
  const kept = ['no_output_holdings', 'failed', 'refund_failed'];
  for (const outcome of [...refunded, ...kept]) {
    const { party, token } = await wallet(`os-${outcome.replace(/_/g, '-')}`);
    const intent = (await createSwap(token, { amount: '100' })).body;
    await control('/sandbox/v1/oneswap/next-outcome', { status: outcome });
    await deposit(party, intent.depositAddress as string, '100', intent.depositReference as string);
    const after = await settled(party);
    t.equal((await statusOf(token, intent.intentId)).status, outcome, `${outcome}: the intent's status`);
    t.equal(after.Amulet.toFixed(), refunded.includes(outcome) ? '1000' : '900', `${outcome}: ${refunded.includes(outcome) ? 'refunded' : 'the deposit kept'}`);
    t.equal(after.USDCx.toFixed(), '0', `${outcome}: nothing paid`);
  }
  const { party, token } = await wallet('os-after-forced');
  const intent = (await createSwap(token, { amount: '100' })).body;
  await deposit(party, intent.depositAddress as string, '100', intent.depositReference as string);
  await settled(party);
  t.equal((await statusOf(token, intent.intentId)).status, 'completed', 'the queued outcome applies once');
  const refused = await fetch(new URL('/sandbox/v1/oneswap/next-outcome', manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ status: 'completed' }) });
  t.equal(refused.status, 400, 'only failure outcomes can be imposed');
  const unauthorised = await fetch(new URL('/sandbox/v1/oneswap/next-outcome', manifest.ledger), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'failed' }) });
  t.equal(unauthorised.status, 401, 'the control API takes the ledger\'s bearer token');
});
