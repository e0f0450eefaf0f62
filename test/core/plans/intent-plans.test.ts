// OneSwap plans in two calls (core/plans/intent-plans.ts, the plan service's sign-message plan, the
// follower, the outcome by planId), through the service's routes against the sandbox's OneSwap,
// reached over HTTP as the real one is. The taker signs OneSwap's challenge with Canton's signing
// library; its deposit is a token-standard transfer built by Canton's TokenStandardService and
// submitted through the sandbox participant's JSON Ledger API. The service's clock (and its
// sandbox's) is the test's, and the follower's rounds are run by the test: nothing waits on time.
import { createHash, randomUUID } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { LedgerClient } from '@canton-network/core-ledger-client';
import { createKeyPair, signMessage } from '@canton-network/core-signing-lib';
import { TokenStandardService } from '@canton-network/core-token-standard-service';
import { AuthTokenProvider } from '@canton-network/core-wallet-auth';
import { LedgerProvider } from '@canton-network/wallet-sdk';
import { dec } from '../../../core/decimal.js';
import { PLAN_VALIDITY_MS } from '../../../core/plan-validity.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { oneswapIntentBook } from '../../../sandbox/venues/oneswap-intents.js';
import { SANDBOX_VENUE_KEY } from '../../../sandbox/venues/wire.js';
import { IntentNotFound, WalletToken, type IntentVenue } from '../../../core/venues/venue.js';
import { claims, silent } from '../../helpers/canton.js';
import { testApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';

interface Json {
  [key: string]: any;
}

/** A shared state that remembers every value written to it: what the service keeps. */
class Remembering extends InProcessSharedState {
  readonly written: string[] = [];
  override async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    this.written.push(value);
    return super.setIfAbsent(key, value, ttlMs);
  }
  override async replaceIf(key: string, expected: string, value: string | null, ttlMs: number): Promise<boolean> {
    if (value !== null) this.written.push(value);
    return super.replaceIf(key, expected, value, ttlMs);
  }
}

/** The service's and its sandbox's clock, ahead of the machine's by what a test moves it. */
let skewMs = 0;
const state = new Remembering();
const app = await testApp({ overrides: { now: () => new Date(Date.now() + skewMs), sharedState: state } });
t.teardown(() => app.close());
const sandbox = app.sandbox!;
const book = oneswapIntentBook(sandbox.market.find((v) => v.id === 'oneswap')!.spec);

const partyOf = (name: string) => `${name}::1220${createHash('sha256').update(name).digest('hex')}`;
const parties: string[] = [];

async function control(path: string, body: unknown): Promise<void> {
  const answer = await fetch(new URL(path, sandbox.manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
}

/** A taker the sandbox participant hosts (a local party, which OneSwap signs in under any key), with 1000 CC. */
async function taker(name: string): Promise<string> {
  const party = partyOf(name);
  parties.push(party);
  await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000' });
  return party;
}

const post = (url: string, payload: unknown, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') =>
  app.server.inject({ method: 'POST', url, payload: payload as object, headers, remoteAddress });

const planFor = (party: string, idempotencyKey: string, extra: Json = {}, headers: Record<string, string> = {}) =>
  post(headers['x-api-key'] ? '/api/v2/execute/plan' : '/api/v2/app/plan', { from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey, ...extra }, headers);

/** The plan's message signed by a key of the taker's: the body of its signature call. */
function signed(plan: Json, message: string = plan.steps[0].message): { planId: string; signature: string; publicKey: string } {
  const keys = createKeyPair();
  return { planId: plan.planId, signature: signMessage(message, keys.privateKey), publicKey: keys.publicKey };
}

const sign = (body: unknown, headers: Record<string, string> = {}, remoteAddress?: string) => post('/api/v2/plan/signature', body, headers, remoteAddress);

/** A OneSwap plan for `party`, and its completion. */
async function completed(party: string, key: string): Promise<{ plan: Json; complete: Json }> {
  const plan = (await planFor(party, key)).json() as Json;
  const answer = await sign(signed(plan));
  if (answer.statusCode !== 200) throw new Error(`the signature answered ${answer.statusCode}: ${answer.body}`);
  return { plan, complete: answer.json() as Json };
}

const outcomeOf = async (party: string, planId: string): Promise<Json> =>
  (await app.server.inject({ url: `/api/v2/outcome?${new URLSearchParams({ party, since: '2026-01-01T00:00:00Z', deadline: '2026-01-01T00:01:30Z', planId }).toString()}` })).json() as Json;

// The wallet's deposit, as test/sandbox/venues/oneswap-intents.test.ts sends it.
const tokens = AuthTokenProvider.fromToken(sandbox.ledgerToken, silent);
const ledger = new LedgerClient({ baseUrl: new URL(sandbox.manifest.ledger), logger: pino({ level: 'silent' }), accessTokenProvider: tokens });
const standard = new TokenStandardService(new LedgerProvider({ baseUrl: sandbox.manifest.ledger, accessTokenProvider: tokens }), silent, tokens, false);
const synchronizerId = await ledger.getSynchronizerId();
const userId = claims(sandbox.ledgerToken).sub!;

/** The complete plan's deposit, sent by its taker as a wallet sends it: to its target, its memo as the reason, expiring with the plan. */
async function deposit(party: string, complete: Json): Promise<void> {
  const [step] = complete.steps as Json[];
  const admin = sandbox.manifest.instrumentAdmins.Amulet;
  const [command, disclosedContracts] = await standard.transfer.createTransfer(party, step!.target, step!.amount, admin, 'Amulet', sandbox.manifest.registries[admin]!, undefined, step!.memo, new Date(step!.expiresAt));
  await ledger.post('/v2/commands/submit-and-wait' as never, {
    commands: [{ ExerciseCommand: command }], commandId: `deposit-${randomUUID()}`, userId, actAs: [party], readAs: [], disclosedContracts, synchronizerId, packageIdSelectionPreference: [],
  } as never);
}

t.test('"a OneSwap plan is a message to sign": one sign-message step holding OneSwap\'s challenge for the taker, no deposit; a replay answers the same bytes', async (t) => {
  const party = await taker('shape');
  const first = await planFor(party, 'shape-1');
  t.equal(first.statusCode, 200, first.body);
  const plan = first.json() as Json;
  t.equal(plan.settlement, 'intent-deposit-reference');
  t.equal(plan.steps.length, 1, 'one step');
  const [step] = plan.steps as Json[];
  t.match(step, { kind: 'sign-message', venueId: 'oneswap', purpose: /proves to OneSwap that this party is yours.*moves no funds/ });
  t.match(step!.message, new RegExp(`Party: ${party}\\nNonce: [0-9a-f]+`), "OneSwap's own challenge, for the taker");
  t.ok(Date.parse(step!.expiresAt) <= Date.parse(plan.expiry), 'to be signed by the plan\'s expiry');
  t.notOk(JSON.stringify(plan).includes('venue-deposit'), 'no deposit yet');
  t.ok(dec(plan.quoteRef.minReceive).lt(plan.quoteRef.net), 'the floor pinned as on any plan');
  t.strictSame(plan.registries.map((r: Json) => r.instrument), ['Amulet']);
  const replay = await planFor(party, 'shape-1');
  t.equal(replay.body, first.body, 'the same bytes, the same challenge');
});

t.test('"OneSwap\'s tolerance is 0.001 to 0.5": slippageBps 9 on oneswap is 400 bad_request, on either route; 10 is planned', async (t) => {
  const party = await taker('slippage');
  const refused = await planFor(party, 'slip-9', { slippageBps: 9 });
  t.equal(refused.statusCode, 400);
  t.match(refused.json(), { code: 'bad_request', error: /'slippageBps' must be at least 10 on venue oneswap: OneSwap's slippage tolerance is 0.001 to 0.5/ });
  const { key } = await issueKey(app.core.keyStore, { name: 'slippage' });
  t.match((await planFor(party, 'slip-9-keyed', { slippageBps: '9' }, { 'x-api-key': key })).json(), { code: 'bad_request' });
  t.equal((await planFor(party, 'slip-10', { slippageBps: 10 })).statusCode, 200);
});

t.test('"signPlan completes it": the deposit to the intent\'s address with its reference as memo, bound to its minimum, at least the floor; the plan\'s figures unchanged; a retry answers the same bytes', async (t) => {
  const party = await taker('complete');
  const { plan, complete } = await completed(party, 'complete-1');
  const intent = book.match(party, 'Amulet', undefined)!;
  t.ok(intent, 'OneSwap holds the intent');
  t.strictSame(complete.intent, { venueId: 'oneswap', intentId: intent.intentId, expiresAt: new Date(intent.expiresAt).toISOString() });
  const [deposit, ...legs] = complete.steps as Json[];
  t.match(deposit, { kind: 'venue-deposit', target: `oneswap-swap::1220${'f'.repeat(64)}`, amount: '100', memo: intent.depositReference, settlement: 'intent-deposit-reference', expiresAt: plan.expiry });
  t.equal(deposit!.minOut, intent.minOutput.toFixed(), "minOut: the intent's minOutput");
  t.ok(dec(deposit!.minOut).gte(plan.quoteRef.minReceive), 'at least the floor');
  t.strictSame(legs, [], 'no fee legs while fees are not collected');
  for (const field of ['planId', 'quoteRef', 'expiry', 'idempotencyKey', 'registries', 'collectsFees']) t.strictSame(complete[field], plan[field], `${field} unchanged`);
  const again = await sign(signed(plan));
  t.equal(again.statusCode, 200);
  t.equal(again.body, JSON.stringify(complete), 'a retry, with another signature, answers the same bytes');
  t.equal(book.match(party, 'Amulet', undefined)?.intentId, intent.intentId, 'and OneSwap still holds the one intent');
});

t.test('"one intent per plan": concurrent signatures of one plan make one intent, and all answer it', async (t) => {
  const party = await taker('concurrent');
  const plan = (await planFor(party, 'concurrent-1')).json() as Json;
  const body = signed(plan);
  const answers = await Promise.all([1, 2, 3, 4].map(() => sign(body)));
  t.strictSame(answers.map((a) => a.statusCode), [200, 200, 200, 200]);
  t.equal(new Set(answers.map((a) => a.body)).size, 1, 'the same bytes');
  t.equal((answers[0]!.json() as Json).intent.intentId, book.match(party, 'Amulet', undefined)?.intentId, "the intent OneSwap holds (a second would have been refused: one per wallet, pool and input)");
});

t.test('"a bad signature": 400 bad_signature, nothing created; the challenge is used up, so a retry with a good one answers the same', async (t) => {
  const party = await taker('badsig');
  const plan = (await planFor(party, 'badsig-1')).json() as Json;
  const bad = await sign(signed(plan, `${plan.steps[0].message} (tampered)`));
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { code: 'bad_signature', error: /refused the wallet's signature.*make a new plan with a new idempotencyKey/, action: 'make a new plan with a new idempotencyKey and sign its message' });
  t.equal(book.match(party, 'Amulet', undefined), undefined, 'no intent');
  const retry = await sign(signed(plan));
  t.equal(retry.statusCode, 400);
  t.equal(retry.body, bad.body);
});

t.test('"only its caller completes a plan": another IP, a key, or an unknown planId is 404 plan_not_found; a keyed plan needs its key', async (t) => {
  const party = await taker('caller');
  const plan = (await planFor(party, 'caller-1')).json() as Json;
  const body = signed(plan);
  const { key } = await issueKey(app.core.keyStore, { name: 'caller' });
  for (const [what, answer] of [
    ['another IP', await sign(body, {}, '10.0.0.9')],
    ['a key', await sign(body, { 'x-api-key': key })],
    ['an unknown planId', await sign({ ...body, planId: 'pl_0000000000000000000000' })],
  ] as const) {
    t.equal(answer.statusCode, 404, what);
    t.match(answer.json(), { code: 'plan_not_found', action: 'make a new plan' }, what);
  }
  const keyedParty = await taker('caller-keyed');
  const keyed = (await planFor(keyedParty, 'caller-keyed-1', {}, { 'x-api-key': key })).json() as Json;
  t.equal((await sign(signed(keyed))).statusCode, 404, 'a keyed plan without its key');
  t.equal((await sign(signed(keyed), { 'x-api-key': key })).statusCode, 200, 'with it');
  t.equal((await sign(body)).statusCode, 200, 'the keyless plan by its own caller, the others refused first');
});

t.test('"after expiry nothing is created": a plan signed after its expiry is 409 plan_expired', async (t) => {
  const party = await taker('expired');
  const plan = (await planFor(party, 'expired-1')).json() as Json;
  skewMs = PLAN_VALIDITY_MS + 1000;
  t.teardown(() => void (skewMs = 0));
  const late = await sign(signed(plan));
  t.equal(late.statusCode, 409);
  t.match(late.json(), { code: 'plan_expired', action: 'make a new plan with a new idempotencyKey' });
  t.equal(book.match(party, 'Amulet', undefined), undefined, 'no intent');
});

t.test('"an expired plan\'s intent is cancelled": the follower cancels an intent its plan left unfunded, and the outcome says expired', async (t) => {
  const party = await taker('lapsed');
  const { plan, complete } = await completed(party, 'lapsed-1');
  await app.core.intentFollower.tick();
  t.match(await outcomeOf(party, plan.planId), { status: 'pending', basis: 'venue', venueStatus: 'pending', intentId: complete.intent.intentId, depositUpdateId: null, received: null }, 'before the plan expires: awaiting the deposit');
  t.equal(book.get(complete.intent.intentId)?.status, 'pending', 'not cancelled before the plan expires');
  // Past the plan's expiry, within the follower's grace (two rounds of INTENT_POLL_INTERVAL_MS, 5 s by default): not yet.
  skewMs = PLAN_VALIDITY_MS + 1000;
  t.teardown(() => void (skewMs = 0));
  await app.core.intentFollower.tick();
  t.equal(book.get(complete.intent.intentId)?.status, 'pending', 'a deposit accepted just before the expiry may not show yet: not cancelled within the grace');
  skewMs = PLAN_VALIDITY_MS + 11_000;
  await app.core.intentFollower.tick();
  t.equal(book.get(complete.intent.intentId)?.status, 'cancelled', 'cancelled at OneSwap');
  t.match(await outcomeOf(party, plan.planId), { status: 'expired', basis: 'venue', venueId: 'oneswap', venueStatus: 'cancelled' });
});

t.test('"a followed intent writes only its own status": a status of another intent under the same plan id (an earlier plan re-made under it) leaves this plan\'s as it is', async (t) => {
  const party = await taker('own-status');
  const { plan, complete } = await completed(party, 'own-status-1');
  const before = await outcomeOf(party, plan.planId);
  t.match(before, { status: 'pending', basis: 'venue', intentId: complete.intent.intentId });
  const status = { intentId: 'an-earlier-intent', state: 'completed' as const, venueStatus: 'completed', actualOutput: dec('14.9'), minOutput: null, expiresAt: new Date() };
  await app.core.intentPlans.recordFollowed(`${plan.planId}\0not-this-party\0oneswap\0an-earlier-intent`, status);
  t.strictSame(await outcomeOf(party, plan.planId), before, "this plan's intent's status, unchanged");
});

t.test('"no intent the instance could not follow": while it follows INTENT_FOLLOW_MAX intents the signature is 503 at_capacity with Retry-After, nothing is made at OneSwap, and the plan is signed once there is room', async (t) => {
  const party = await taker('follower-full');
  const plan = (await planFor(party, 'follower-full-1')).json() as Json;
  const follower = app.core.intentFollower;
  // Intents of a venue that no longer knows them: the next round lets every one of them go.
  const gone = { id: 'elsewhere', intentStatus: async ({ intentId }: { intentId: string }) => Promise.reject(new IntentNotFound('elsewhere', intentId)) } as unknown as IntentVenue;
  for (let i = 0; follower.hasRoom; i++) {
    follower.follow({ key: `filler-${i}`, venue: gone, ref: { intentId: `filler-${i}`, walletToken: new WalletToken('unused') }, planExpiry: Date.now() + 60_000, tokenExpiry: Date.now() + 600_000 });
  }
  const body = signed(plan);
  const full = await sign(body);
  t.equal(full.statusCode, 503);
  t.match(full.json(), { code: 'at_capacity' });
  t.equal(full.headers['retry-after'], '5');
  t.equal(book.match(party, 'Amulet', undefined), undefined, 'no intent made');
  await follower.tick();
  t.ok(follower.hasRoom, 'the fillers let go');
  const later = await sign(body);
  t.equal(later.statusCode, 200, 'the same signature completes the plan once there is room');
});

// The swap that completes last: it moves OneSwap's pool, below what the quotes cached before it pay.
for (const [forced, status] of [['slippage_failed', 'slippage_failed'], ['refund_failed', 'venue_failed'], [null, 'completed']] as const) {
  t.test(`"the outcome by planId is OneSwap's": a deposit ${forced === null ? 'swapped' : `ending ${forced}`} reads ${status}, basis venue`, async (t) => {
    const party = await taker(`outcome-${status}`);
    const { plan, complete } = await completed(party, `outcome-${status}`);
    await control('/sandbox/v1/oneswap/next-outcome', { status: forced });
    await deposit(party, complete);
    await app.core.intentFollower.tick();
    const outcome = await outcomeOf(party, plan.planId);
    t.match(outcome, { status, basis: 'venue', venueId: 'oneswap', venueStatus: forced ?? 'completed', intentId: complete.intent.intentId, depositUpdateId: null });
    if (status === 'completed') t.ok(dec(outcome.received).gte(complete.steps[0].minOut), `received ${outcome.received}: at least the deposit's minOut, so the floor`);
    else t.equal(outcome.received, null, 'nothing paid');
    const other = await outcomeOf(partyOf('someone-else'), plan.planId);
    t.notOk('basis' in other, "another party's query with the planId reads the ledger, as without it");
  });
}

t.test('"the intent\'s minimum below the floor": OneSwap\'s pool moved after the plan, the signature is 502 venue_floor_below_service and the intent cancelled, so the taker\'s next plan completes', async (t) => {
  const party = await taker('floor');
  // An amount no earlier test quoted: its floor is the pool's now.
  const plan = (await planFor(party, 'floor-1', { amount: '101' })).json() as Json;
  await control('/sandbox/v1/move', { venue: 'oneswap', pair: 'CC/USDCx', bps: -300 });
  const refused = await sign(signed(plan));
  t.equal(refused.statusCode, 502);
  t.match(refused.json(), { code: 'venue_floor_below_service', error: new RegExp(`below the service's floor of ${plan.quoteRef.minReceive.replace('.', '\\.')}`) });
  t.equal(book.match(party, 'Amulet', undefined), undefined, 'no intent of the taker awaits a deposit');
  const next = (await planFor(party, 'floor-2', { amount: '102' })).json() as Json;
  t.equal((await sign(signed(next))).statusCode, 200, 'a second intent on the same pool is not refused: the first was cancelled');
});

t.test('"redaction": across every flow above, no log line holds a taker\'s party, the OneSwap API key or a wallet token, and the shared state never holds a party or a token', async (t) => {
  const logs = app.rawLogs();
  t.ok(logs.length > 0);
  for (const party of parties) {
    t.notOk(logs.includes(party), 'no taker in the log');
    t.notOk(state.written.some((v) => v.includes(party)), 'no taker in the shared state');
  }
  t.notOk(logs.includes(SANDBOX_VENUE_KEY), 'no API key in the log');
  t.notOk(/osw_[0-9a-f]{8}/.test(logs), 'no wallet token in the log');
  t.notOk(state.written.some((v) => /osw_[0-9a-f]{8}/.test(v)), 'no wallet token in the shared state');
});

