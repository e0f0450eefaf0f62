// The OneSwap adapter's wallet auth and swap intents (core/venues/oneswap.ts, the venue port's
// IntentVenue) against fixtures of the shapes OneSwap's docs type, served by the fake fetch the
// quote's test uses. Each fixture names the page its shape comes from; its values are made up
// within that shape (party ids as the service accepts them).
import { inspect } from 'node:util';
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { ONESWAP_BASE_URL, ONESWAP_SWAP_STATUSES, OneSwapVenue } from '../../../core/venues/oneswap.js';
import {
  INTENT_STATES, IntentNotFound, VenueFloorBelowService, WalletChallengeRefused, WalletSignatureRefused, WalletToken, WalletTokenRefused, type IntentRequest,
} from '../../../core/venues/venue.js';
import { VenueHttpError, VenueUnreadable } from '../../../core/venues/venue-http.js';
import { fakeFetch, noDeadline, sentJson, type Reply, type SentRequest } from '../../helpers/venue-fetch.js';

const KEY = 'os_live_test';
const PARTY = `alice::1220${'5a8c'.repeat(16)}`;
const POOL_PARTY = `oneswap-swap::1220${'f'.repeat(64)}`;
/** A token no error message, log line, path or body may carry. */
const TOKEN_TEXT = 'wt_secret_7f3a9c1e';
const token = new WalletToken(TOKEN_TEXT);
const open = noDeadline();

function oneswap(reply: (call: SentRequest) => Reply) {
  const fake = fakeFetch(reply);
  const venue = new OneSwapVenue({ baseUrl: ONESWAP_BASE_URL, headers: { 'X-API-Key': KEY }, timeoutMs: 600_000, fetch: fake.fetch });
  return { venue, calls: fake.calls };
}

const failure = (p: Promise<unknown>): Promise<unknown> => p.then((x) => x, (e: unknown) => e);

// https://docs.oneswap.cc/reference/types, "Wallet auth": WalletChallengeResponse {partyId, nonce, message, expiresIn}.
const challengeBody = `{"partyId": "${PARTY}", "nonce": "n-4f1c", "message": "OneSwap wallet auth\\nparty: ${PARTY}\\nnonce: n-4f1c", "expiresIn": 300}`;
// https://docs.oneswap.cc/reference/types, "Wallet auth": VerifyWalletChallengeResponse {partyId, token}.
const verifyBody = `{"partyId": "${PARTY}", "token": "${TOKEN_TEXT}"}`;

// https://docs.oneswap.cc/reference/types, "Swap": SwapIntentResponse (amounts as strings,
// slippageTolerance a number); https://docs.oneswap.cc/guides/swaps: depositAddress is the pool
// swap party, depositReference goes in the transfer's reason, a 24 h window.
function intentBody(o: { minOutput?: string; expectedAmount?: string; intentId?: string } = {}): string {
  return `{
    "intentId": "${o.intentId ?? 'int_8d2e41'}", "poolId": "Amulet-USDCx",
    "depositAddress": "${POOL_PARTY}", "swapAddress": "${POOL_PARTY}", "depositReference": "osr-8d2e41",
    "inputToken": "Amulet", "inputTokenAdmin": "DSO::1220aa", "outputToken": "USDCx", "outputTokenAdmin": "admin::1220bb",
    "expectedAmount": "${o.expectedAmount ?? '100'}", "expectedOutput": "14.81", "minOutput": ${o.minOutput ?? '"14.662"'},
    "slippageTolerance": 0.01, "outputAddress": "${PARTY}", "expiresAt": "2026-03-29T10:00:00.000Z",
    "instructions": {"step1": "Send 100 Amulet to the deposit address with the reference"}
  }`;
}

// https://docs.oneswap.cc/reference/types, "Swap": SwapStatusResponse.
function statusBody(status: string, actualOutput = 'null'): string {
  return `{
    "intentId": "int_8d2e41", "poolId": "Amulet-USDCx", "status": "${status}", "inputToken": "Amulet", "outputToken": "USDCx",
    "expectedAmount": "100", "expectedOutput": "14.81", "actualOutput": ${actualOutput}, "minOutput": "14.662",
    "slippageTolerance": 0.01, "depositReference": "osr-8d2e41", "outputAddress": "${PARTY}",
    "matchedAt": null, "createdAt": "2026-03-28T10:00:00.000Z", "expiresAt": "2026-03-29T10:00:00.000Z"
  }`;
}

/** The service's request for 100 CC, its floor 1 % under what its quote said. */
const request = (o: Partial<IntentRequest> = {}): IntentRequest => ({
  give: CC, want: USDCX, amount: dec('100'), party: PARTY, walletToken: token, minOutput: dec('14.652'), expectedOutput: dec('14.8'), ...o,
});

t.test('requestChallenge: POST /api/v1/wallet-auth/challenge {partyId} with the API key and no wallet token; the challenge as OneSwap gives it', async (t) => {
  const { venue, calls } = oneswap(() => ({ body: challengeBody }));
  t.strictSame(await venue.requestChallenge(PARTY, open), { party: PARTY, nonce: 'n-4f1c', message: `OneSwap wallet auth\nparty: ${PARTY}\nnonce: n-4f1c`, expiresInSeconds: 300 });
  t.equal(calls.length, 1);
  t.equal(calls[0]?.method, 'POST');
  t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/wallet-auth/challenge');
  t.equal(calls[0]?.headers['X-API-Key'], KEY);
  t.notOk('authorization' in (calls[0]?.headers ?? {}), 'no wallet token exists yet');
  t.strictSame(sentJson(calls[0]), { partyId: PARTY });
});

t.test('requestChallenge: a challenge for another party, or without a nonce or message, is unreadable', async (t) => {
  for (const body of [challengeBody.replace(`"partyId": "${PARTY}"`, `"partyId": "bob::1220${'0'.repeat(64)}"`), challengeBody.replace('"nonce": "n-4f1c"', '"nonce": ""'), `{"partyId": "${PARTY}", "nonce": "n", "expiresIn": 300}`]) {
    const { venue } = oneswap(() => ({ body }));
    t.type(await failure(venue.requestChallenge(PARTY, open)), VenueUnreadable, body.slice(0, 70));
  }
});

t.test('"a party OneSwap will not sign in": requestChallenge\'s 4xx about the party is WalletChallengeRefused; the API key\'s 401 and a 429 are thrown as they are', async (t) => {
  const { venue } = oneswap(() => ({ status: 404, body: '{"error": "Party not found"}' }));
  t.type(await failure(venue.requestChallenge(PARTY, open)), WalletChallengeRefused);
  for (const [status, body] of [[401, '{"error": "Invalid or missing API key"}'], [429, '{"error": "Too many requests"}']] as const) {
    const { venue } = oneswap(() => ({ status, body }));
    const err = await failure(venue.requestChallenge(PARTY, open));
    t.ok(err instanceof VenueHttpError && err.status === status, body);
  }
});

t.test('verifyChallenge: POST /api/v1/wallet-auth/verify {partyId, nonce, signature, publicKey}; the token comes back opaque', async (t) => {
  const { venue, calls } = oneswap(() => ({ body: verifyBody }));
  const got = await venue.verifyChallenge({ party: PARTY, nonce: 'n-4f1c', signature: 'c2lnbmF0dXJl', publicKey: 'cHVibGljS2V5' }, open);
  t.type(got, WalletToken);
  t.equal(got.reveal(), TOKEN_TEXT);
  t.equal(calls[0]?.method, 'POST');
  t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/wallet-auth/verify');
  t.equal(calls[0]?.headers['X-API-Key'], KEY);
  t.strictSame(sentJson(calls[0]), { partyId: PARTY, nonce: 'n-4f1c', signature: 'c2lnbmF0dXJl', publicKey: 'cHVibGljS2V5' });
  for (const shown of [String(got), `${got}`, JSON.stringify({ got }), inspect(got), inspect({ got }, { showHidden: true, depth: 5 })]) {
    t.notMatch(shown, TOKEN_TEXT, `${shown} does not show the token`);
  }
});

t.test('verifyChallenge: a refused signature (400 or 401 not about the API key) is WalletSignatureRefused, code bad_signature', async (t) => {
  for (const [status, body] of [
    [401, '{"error": "Invalid signature"}'],
    [401, '{"error": "Unknown, used or expired challenge"}'],
    [401, '{"error": "publicKey is not the party\'s key"}'],
    [400, '{"error": "signature and publicKey in base64"}'],
  ] as const) {
    const { venue } = oneswap(() => ({ status, body }));
    const err = await failure(venue.verifyChallenge({ party: PARTY, nonce: 'n', signature: 'bad', publicKey: 'k' }, open));
    t.type(err, WalletSignatureRefused, body);
    t.equal((err as WalletSignatureRefused).code, 'bad_signature');
  }
  const { venue } = oneswap(() => ({ status: 401, body: '{"error": "Invalid or missing API key"}' }));
  const err = await failure(venue.verifyChallenge({ party: PARTY, nonce: 'n', signature: 's', publicKey: 'k' }, open));
  t.ok(err instanceof VenueHttpError && err.status === 401, "the operator's key refused is not the wallet's fault: thrown as is");
});

t.test('createIntent: POST /api/v1/swaps with the API key and the wallet token as a Bearer; the intent as OneSwap gives it', async (t) => {
  const { venue, calls } = oneswap(() => ({ body: intentBody() }));
  const got = await venue.createIntent(request(), open);
  t.ok(got.available);
  if (!got.available) return;
  t.strictSame(
    { ...got.intent, amount: got.intent.amount.toFixed(), expectedOutput: got.intent.expectedOutput?.toFixed(), minOutput: got.intent.minOutput.toFixed(), expiresAt: got.intent.expiresAt.toISOString() },
    { intentId: 'int_8d2e41', depositAddress: POOL_PARTY, depositReference: 'osr-8d2e41', amount: '100', expectedOutput: '14.81', minOutput: '14.662', expiresAt: '2026-03-29T10:00:00.000Z' },
  );
  t.equal(calls.length, 1);
  t.equal(calls[0]?.method, 'POST');
  t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/swaps');
  t.equal(calls[0]?.headers['X-API-Key'], KEY);
  t.equal(calls[0]?.headers.authorization, `Bearer ${TOKEN_TEXT}`);
  // (14.8 - 14.652) / 14.8 = 0.01: OneSwap's minOutput 14.8 × 0.99 = 14.652, the floor.
  t.equal(calls[0]?.body, `{"fromToken":"Amulet","toToken":"USDCx","amount":"100","slippageTolerance":0.01,"walletAddress":"${PARTY}"}`);
});

t.test('createIntent: the tolerance is the widest that keeps minOutput at the floor, rounded down to 10 digits, within 0.001-0.5', async (t) => {
  const sent = async (minOutput: string, expectedOutput: string) => {
    const { venue, calls } = oneswap(() => ({ body: intentBody({ minOutput: '"1000"' }) }));
    await venue.createIntent(request({ minOutput: dec(minOutput), expectedOutput: dec(expectedOutput) }), open);
    return (sentJson(calls[0]) as { slippageTolerance: number }).slippageTolerance;
  };
  t.equal(await sent('2', '3'), 0.3333333333, '1/3, down');
  t.equal(await sent('14.8', '14.8'), 0.001, 'no room: the least OneSwap takes');
  t.equal(await sent('14.79', '14.8'), 0.001, 'less room than 0.001: raised');
  t.equal(await sent('1', '14.8'), 0.5, 'more room than 0.5: capped (a higher minimum)');
});

t.test('createIntent: an intent whose minOutput is below the floor, or none, is cancelled and refused (VenueFloorBelowService)', async (t) => {
  for (const minOutput of ['"14.6"', 'null']) {
    const { venue, calls } = oneswap((call) => (call.url.endsWith('/cancel') ? { body: '{"success": true}' } : { body: intentBody({ minOutput }) }));
    const err = await failure(venue.createIntent(request(), open));
    t.type(err, VenueFloorBelowService, minOutput);
    t.equal((err as VenueFloorBelowService).code, 'venue_floor_below_service');
    t.strictSame(calls.map((c) => `${c.method} ${c.url}`), ['POST https://api.oneswap.cc/api/v1/swaps', 'POST https://api.oneswap.cc/api/v1/swaps/int_8d2e41/cancel']);
    t.equal(calls[1]?.headers.authorization, `Bearer ${TOKEN_TEXT}`);
  }
  const { venue } = oneswap((call) => (call.url.endsWith('/cancel') ? { status: 500, body: 'oops' } : { body: intentBody({ minOutput: '"14.6"' }) }));
  t.type(await failure(venue.createIntent(request(), open)), VenueFloorBelowService, 'a failed cancellation changes nothing');
});

t.test('createIntent: an intent for another amount is unreadable, and cancelled', async (t) => {
  const { venue, calls } = oneswap((call) => (call.url.endsWith('/cancel') ? { body: '{"success": true}' } : { body: intentBody({ expectedAmount: '10' }) }));
  t.type(await failure(venue.createIntent(request(), open)), VenueUnreadable);
  t.equal(calls[1]?.url, 'https://api.oneswap.cc/api/v1/swaps/int_8d2e41/cancel');
  const odd = oneswap(() => ({ body: intentBody({ intentId: '../x' }) }));
  t.type(await failure(odd.venue.createIntent(request(), open)), VenueUnreadable, 'an intent id that is no path segment');
  t.equal(odd.calls.length, 1, 'and nothing is cancelled by it');
});

t.test('createIntent: "400 over the 15 % price-impact cap" is insufficient_liquidity; below the traffic cost below_minimum; no pool no_pool', async (t) => {
  for (const [status, body, code] of [
    // https://docs.oneswap.cc/guides/swaps, "Maximum price impact".
    [400, '{"error": "Price impact 23.40% exceeds the maximum of 15%", "maxPriceImpact": 15}', 'insufficient_liquidity'],
    // https://docs.oneswap.cc/guides/error-handling: "The error response includes minimumAmount".
    [400, '{"error": "Amount is below the estimated traffic cost", "minimumAmount": "0.5"}', 'below_minimum'],
    [404, '{"error": "Pool not found for Amulet/CBTC"}', 'no_pool'],
  ] as const) {
    const { venue } = oneswap(() => ({ status, body }));
    t.strictSame(await venue.createIntent(request(), open), { available: false, rejectionCode: code }, body);
  }
});

t.test('createIntent: 401 for the wallet token is WalletTokenRefused; for the API key, an ambiguous pair\'s 409 and other 400s thrown as is', async (t) => {
  const { venue } = oneswap(() => ({ status: 401, body: '{"error": "Invalid or missing wallet token"}' }));
  t.type(await failure(venue.createIntent(request(), open)), WalletTokenRefused);
  for (const [status, body] of [
    [401, '{"error": "Invalid or missing API key"}'],
    [409, '{"error": "Multiple pools match", "code": "ambiguous_pool_pair", "candidates": []}'],
    [400, '{"error": "walletAddress does not match the authenticated wallet"}'],
  ] as const) {
    const { venue } = oneswap(() => ({ status, body }));
    const err = await failure(venue.createIntent(request(), open));
    t.ok(err instanceof VenueHttpError && err.status === status, body);
  }
});

t.test('"another intent awaits its deposit": createIntent\'s 409 for the wallet, pool and input token is the refusal intent_exists', async (t) => {
  const { venue } = oneswap(() => ({ status: 409, body: '{"error": "An active swap intent already exists for this wallet, pool and input token"}' }));
  t.strictSame(await venue.createIntent(request(), open), { available: false, rejectionCode: 'intent_exists' });
});

t.test('intentStatus: GET /api/v1/swaps/<intentId> with the wallet token; every documented status mapped', async (t) => {
  const expected: Record<(typeof ONESWAP_SWAP_STATUSES)[number], (typeof INTENT_STATES)[number]> = {
    pending: 'awaiting_deposit',
    matched: 'in_progress',
    deposit_received: 'in_progress',
    forwarded: 'in_progress',
    processing: 'in_progress',
    sending_output: 'in_progress',
    completed: 'completed',
    slippage_failed: 'refunded',
    price_impact_exceeded: 'refunded',
    insufficient_liquidity: 'refunded',
    insufficient_amount: 'refunded',
    output_failed: 'refunded',
    no_output_holdings: 'failed',
    failed: 'failed',
    refund_failed: 'failed',
    expired: 'expired',
    cancelled: 'cancelled',
  };
  t.strictSame(Object.keys(expected).sort(), [...ONESWAP_SWAP_STATUSES].sort(), 'the docs\' SwapStatus union, whole');
  for (const [status, state] of Object.entries(expected)) {
    const { venue, calls } = oneswap(() => ({ body: statusBody(status, status === 'completed' ? '"14.79"' : 'null') }));
    const got = await venue.intentStatus({ intentId: 'int_8d2e41', walletToken: token }, open);
    t.equal(got.state, state, status);
    t.equal(got.venueStatus, status);
    t.equal(got.actualOutput?.toFixed() ?? null, status === 'completed' ? '14.79' : null);
    t.equal(got.minOutput?.toFixed(), '14.662');
    t.equal(got.expiresAt.toISOString(), '2026-03-29T10:00:00.000Z');
    t.equal(calls[0]?.method, 'GET');
    t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/swaps/int_8d2e41');
    t.equal(calls[0]?.headers['X-API-Key'], KEY);
    t.equal(calls[0]?.headers.authorization, `Bearer ${TOKEN_TEXT}`);
  }
  const { venue } = oneswap(() => ({ body: statusBody('refunded') }));
  t.type(await failure(venue.intentStatus({ intentId: 'int_8d2e41', walletToken: token }, open)), VenueUnreadable, 'a status OneSwap does not document');
  const other = oneswap(() => ({ body: statusBody('pending').replace('"intentId": "int_8d2e41"', '"intentId": "int_other"') }));
  t.type(await failure(other.venue.intentStatus({ intentId: 'int_8d2e41', walletToken: token }, open)), VenueUnreadable, 'another intent\'s status');
});

t.test('intentStatus and cancelIntent: 404 is IntentNotFound, 401 for the token WalletTokenRefused', async (t) => {
  const ref = { intentId: 'int_unknown', walletToken: token };
  const { venue } = oneswap(() => ({ status: 404, body: '{"error": "Swap intent not found"}' }));
  const err = await failure(venue.intentStatus(ref, open));
  t.type(err, IntentNotFound);
  t.equal((err as IntentNotFound).intentId, 'int_unknown');
  t.type(await failure(venue.cancelIntent(ref, open)), IntentNotFound);
  const expired = oneswap(() => ({ status: 401, body: '{"error": "Wallet token expired"}' }));
  t.type(await failure(expired.venue.intentStatus(ref, open)), WalletTokenRefused);
  t.type(await failure(expired.venue.cancelIntent(ref, open)), WalletTokenRefused);
  t.rejects(venue.intentStatus({ intentId: 'a/b', walletToken: token }, open), TypeError, 'an id that is no path segment is never sent');
});

t.test('cancelIntent: POST /api/v1/swaps/<intentId>/cancel with the wallet token; whether it cancelled', async (t) => {
  const ref = { intentId: 'int_8d2e41', walletToken: token };
  const { venue, calls } = oneswap(() => ({ body: '{"success": true}' }));
  t.equal(await venue.cancelIntent(ref, open), true);
  t.equal(calls[0]?.method, 'POST');
  t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/swaps/int_8d2e41/cancel');
  t.equal(calls[0]?.headers['X-API-Key'], KEY);
  t.equal(calls[0]?.headers.authorization, `Bearer ${TOKEN_TEXT}`);
  t.strictSame(sentJson(calls[0]), {});
  t.equal(await oneswap(() => ({ body: '{"success": false}' })).venue.cancelIntent(ref, open), false);
  t.equal(await oneswap(() => ({ status: 409, body: '{"error": "Swap intent is processing, not pending"}' })).venue.cancelIntent(ref, open), false, 'no longer pending');
  t.type(await failure(oneswap(() => ({ body: '{"ok": true}' })).venue.cancelIntent(ref, open)), VenueUnreadable);
});

t.test('the wallet token is in the Authorization header only: never in a path, a body, an error message or what an error logs as', async (t) => {
  // A venue that echoes the token back in every error body, as a careless one might.
  const echo = `{"error": "refused Bearer ${TOKEN_TEXT}"}`;
  const ref = { intentId: 'int_8d2e41', walletToken: token };
  const cases: [string, Reply, (v: OneSwapVenue) => Promise<unknown>][] = [
    ['verify 401', { status: 401, body: echo }, (v) => v.verifyChallenge({ party: PARTY, nonce: 'n', signature: 's', publicKey: 'k' }, open)],
    ['create 401', { status: 401, body: echo }, (v) => v.createIntent(request(), open)],
    ['create 500', { status: 500, body: echo }, (v) => v.createIntent(request(), open)],
    ['create unreadable', { body: `{"intentId": "int_1", "inputToken": "${TOKEN_TEXT}"}` }, (v) => v.createIntent(request(), open)],
    ['status 401', { status: 401, body: echo }, (v) => v.intentStatus(ref, open)],
    ['status 404', { status: 404, body: echo }, (v) => v.intentStatus(ref, open)],
    ['status unreadable', { body: `{"intentId": "int_8d2e41", "status": "${TOKEN_TEXT}"}` }, (v) => v.intentStatus(ref, open)],
    ['cancel 500', { status: 500, body: echo }, (v) => v.cancelIntent(ref, open)],
    ['cancel not JSON', { status: 502, body: `Bad Gateway ${TOKEN_TEXT}` }, (v) => v.cancelIntent(ref, open)],
  ];
  for (const [name, reply, call] of cases) {
    const { venue, calls } = oneswap((c) => (c.url.endsWith('/cancel') && name.startsWith('create') ? { body: '{"success": true}' } : reply));
    const err = await failure(call(venue));
    t.type(err, Error, `${name}: fails`);
    const e = err as Error;
    for (const shown of [e.message, String(e), e.stack ?? '', JSON.stringify(e), inspect(e), inspect({ err: e }, { depth: 5 })]) {
      t.notMatch(shown, TOKEN_TEXT, `${name}: not in ${shown.slice(0, 60)}`);
    }
    for (const c of calls) {
      t.notMatch(c.url, TOKEN_TEXT, `${name}: not in the path`);
      t.notMatch(c.body ?? '', TOKEN_TEXT, `${name}: not in the body`);
    }
  }
  t.notMatch(JSON.stringify(request()), TOKEN_TEXT, 'a logged request shows "[wallet token]"');
  t.match(JSON.stringify(request()), '"walletToken":"[wallet token]"');
});
