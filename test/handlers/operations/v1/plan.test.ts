// The plan routes over HTTP: POST /api/app/plan (keyless) and POST /api/execute/plan (keyed), as
// openapi/v1.yaml states them. The arithmetic, the assembly and the guardrail are tested without
// HTTP in test/core/plans/plan.test.ts.
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { InProcessSharedState } from '../../../../core/state/in-process.js';
import type { Venue } from '../../../../core/venues/venue.js';
import type { AppPlan, QuoteResponse } from '../../../../core/contract/v1.js';
import { COLLECTING, FEE_PARTIES, testApp, type TestApp, type TestAppOptions } from '../../../helpers/app.js';
import { issueKey } from '../../../helpers/keys.js';
import { assertRecordsPrivate, inProcessEntries } from '../../../helpers/stored.js';

const TAKER = `alice::1220${'b'.repeat(64)}`;
const RECIPIENT = `wallet-co::1220${'a'.repeat(64)}`;
const POOL_USDCX = `tradecraft-pool-cc-usdcx::1220${'c'.repeat(64)}`;
const POOL_CBTC = `tradecraft-pool-cc-cbtc::1220${'d'.repeat(64)}`;

let keys = 0;
const body = (overrides: Record<string, unknown> = {}) => ({
  from: 'CC',
  to: 'USDCx',
  amount: '100',
  venueId: 'tradecraft',
  takerParty: TAKER,
  idempotencyKey: `key-${++keys}`,
  ...overrides,
});

const appPlan = (app: TestApp, payload: unknown, headers: Record<string, string> = {}, remoteAddress?: string) =>
  app.server.inject({ method: 'POST', url: '/api/app/plan', payload: payload as object, headers, ...(remoteAddress ? { remoteAddress } : {}) });
const partnerPlan = (app: TestApp, key: string, payload: unknown) =>
  app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: payload as object, headers: { 'x-api-key': key } });
const quote = async (app: TestApp, query: string, key?: string) =>
  (await app.server.inject({ url: `/api/quote?${query}`, headers: key ? { 'x-api-key': key } : {} })).json<QuoteResponse>();

async function started(t: { teardown: (fn: () => Promise<void>) => void }, options: TestAppOptions = {}): Promise<{ app: TestApp; key: string }> {
  const app = await testApp(options);
  t.teardown(app.close);
  return { app, key: (await issueKey(app.core.keyStore)).key };
}

function plan(res: LightMyRequestResponse): AppPlan {
  if (res.statusCode !== 200) throw new Error(`expected a plan, got ${res.statusCode}: ${res.body}`);
  return res.json<AppPlan>();
}

t.test('"Both routes build the plan through the same core as the quote, with the same numbers"', async (t) => {
  const { app, key } = await started(t, { env: COLLECTING });
  const keyless = await quote(app, 'from=CC&to=USDCx&amount=100');
  const keyed = await quote(app, `from=CC&to=USDCx&amount=100&feeBps=5&feeRecipient=${RECIPIENT}`, key);
  const venue = keyed.venues.find((v) => v.venueId === 'tradecraft')!;
  const fromApp = plan(await appPlan(app, body()));
  const fromPartner = plan(await partnerPlan(app, key, body({ feeBps: 5, feeRecipient: RECIPIENT })));
  for (const p of [fromApp, fromPartner]) {
    t.equal(p.quoteRef.net, keyless.venues.find((v) => v.venueId === 'tradecraft')!.net, "the venue's net in the quote");
    t.equal(p.quoteRef.asOf, keyless.asOf, 'from the same base quote');
  }
  t.strictSame(fromPartner.quoteRef.clientFees, venue.clientFees, "the keyed plan discloses the keyed quote's fee block");
  t.strictSame(fromPartner.quoteRef.appliedSchema, keyed.appliedSchema);
  t.strictSame(fromApp.quoteRef.appliedSchema, { schemaId: 'b2c-default', overrideId: null }, 'the keyless plan, the B2C schema');
});

t.test('"the same numbers as the quote", plan after plan: each plan takes the base quote of its own parameters, whichever combination came before', async (t) => {
  const { app } = await started(t);
  for (const [from, to, amount] of [['CC', 'USDCx', '100'], ['CC', 'USDCx', '250.5'], ['CC', 'CBTC', '100'], ['CC', 'USDCx', '100']] as const) {
    const quoted = await quote(app, `from=${from}&to=${to}&amount=${amount}`);
    const made = plan(await appPlan(app, body({ from, to, amount })));
    t.equal(made.quoteRef.net, quoted.venues.find((v) => v.venueId === 'tradecraft')!.net, `${amount} ${from} for ${to}: the venue's net in its own quote`);
    t.equal(made.quoteRef.asOf, quoted.asOf, `${amount} ${from} for ${to}: from that quote`);
  }
});

/** floor(net × (10000 − s) / 10000) in integer units of 1e-10, independently of decimal.js. */
function floorOf(net: string, slippageBps: number): string {
  const [whole, fraction = ''] = net.split('.');
  const units = (BigInt(whole! + fraction.padEnd(10, '0')) * BigInt(10_000 - slippageBps)) / 10_000n;
  const digits = units.toString().padStart(11, '0');
  const tail = digits.slice(-10).replace(/0+$/, '');
  return tail ? `${digits.slice(0, -10)}.${tail}` : digits.slice(0, -10);
}

t.test('"minReceive = floor(net × (1 − slippageBps/10000)) to 10 fractional digits, pinned in quoteRef.minReceive and carried in the deposit memo"', async (t) => {
  const { app, key } = await started(t);
  const net = (await quote(app, 'from=CC&to=USDCx&amount=100')).venues.find((v) => v.venueId === 'tradecraft')!.net!;
  t.equal(floorOf('14.9549252252', 50), '14.880150599', 'the independent floor on the spec example');
  for (const [slippageBps, bps] of [[undefined, 50], [0, 0], ['75', 75], [5000, 5000]] as const) {
    const request = body(slippageBps === undefined ? {} : { slippageBps });
    for (const p of [plan(await appPlan(app, request)), plan(await partnerPlan(app, key, request))]) {
      t.equal(p.quoteRef.minReceive, floorOf(net, bps), `slippageBps ${String(slippageBps)}`);
      t.equal(p.steps[0]!.memo, p.quoteRef.minReceive, 'the memo carries the floor');
    }
  }
});

t.test('"steps: one venue-deposit (target = the venue\'s pool party for the pair, instrument = the give instrument, amount = the give amount, memo = the floor, expiresAt)"', async (t) => {
  const { app } = await started(t);
  for (const [from, to, amount, pool, instrument] of [
    ['CC', 'USDCx', '100', POOL_USDCX, 'Amulet'],
    ['USDCx', 'CC', '12.5', POOL_USDCX, 'USDCx'],
    ['Amulet', 'CBTC', '5000', POOL_CBTC, 'Amulet'],
    ['CBTC', 'cc', '0.001', POOL_CBTC, 'CBTC'],
  ] as const) {
    const p = plan(await appPlan(app, body({ from, to, amount })));
    t.equal(p.steps.length, 1, `${from}->${to}: no fee step while fees are paused`);
    t.strictSame(p.steps[0], { kind: 'venue-deposit', target: pool, instrument, amount, memo: p.quoteRef.minReceive, expiresAt: p.expiry }, `${from}->${to}`);
    t.equal(p.mode, 'managed-deposit');
  }
});

t.test('"expiry is 90 s after creation"; trustWindow says what the user trusts and until when; planId is unguessable', async (t) => {
  const created = new Date('2026-11-22T12:00:00.000Z');
  const { app } = await started(t, { overrides: { now: () => created } });
  const p = plan(await appPlan(app, body()));
  t.equal(p.expiry, '2026-11-22T12:01:30.000Z');
  t.equal(
    p.trustWindow,
    'Your 100 Amulet stay locked in a transfer offer in your own wallet until the venue accepts it; if the venue does not accept by 2026-11-22T12:01:30.000Z the offer expires and the funds stay yours.',
  );
  const ids = new Set<string>();
  for (let i = 0; i < 50; i++) ids.add(plan(await appPlan(app, body())).planId);
  t.equal(ids.size, 50, 'every plan its own id');
  for (const id of ids) t.match(id, /^pl_[A-Za-z0-9_-]{22}$/, '128 random bits');
});

t.test('"While FEE_COLLECTION_ENABLED is false: collectsFees: false, zeroed disclosure, no fee step"', async (t) => {
  const { app, key } = await started(t);
  for (const p of [plan(await appPlan(app, body())), plan(await partnerPlan(app, key, body({ feeBps: 7, feeRecipient: RECIPIENT })))]) {
    t.equal(p.collectsFees, false);
    t.equal(p.steps.length, 1);
    t.equal(p.b2cFee, undefined);
    t.equal(p.quoteRef.clientFees.service.amount, '0');
    t.equal(p.quoteRef.clientFees.userReceives, p.quoteRef.net);
  }
});

t.test('collecting: "keyless adds a b2c-fee-transfer step and the b2cFee block (direction, bps, ccAmount)"', async (t) => {
  const { app } = await started(t, { env: COLLECTING });
  const sell = plan(await appPlan(app, body()));
  t.equal(sell.collectsFees, true);
  t.strictSame(sell.steps[1], { kind: 'b2c-fee-transfer', target: FEE_PARTIES.B2C_FEE_PARTY, instrument: 'USDCx', amount: sell.quoteRef.clientFees.service.amount, expiresAt: sell.expiry });
  t.strictSame(sell.b2cFee, { direction: 'input-cc', bps: 5, ccAmount: '0.05' }, '5 bps of the 100 CC given');
  const buy = plan(await appPlan(app, body({ from: 'USDCx', to: 'CC' })));
  t.equal(buy.steps[1]!.instrument, 'Amulet', 'a fee leg is in the want instrument');
  t.strictSame(buy.b2cFee, { direction: 'output-cc', bps: 5, ccAmount: buy.steps[1]!.amount });
});

t.test('collecting: "keyed adds the fee legs — the service\'s flat fee to the service fee party and the full integrator fee to feeRecipient, each with beneficiary"', async (t) => {
  const { app, key } = await started(t, { env: COLLECTING });
  const p = plan(await partnerPlan(app, key, body({ feeBps: '10', feeRecipient: RECIPIENT })));
  const fees = p.quoteRef.clientFees;
  t.strictSame(p.steps.slice(1), [
    { kind: 'fee-escrow-lock', target: FEE_PARTIES.SERVICE_FEE_PARTY, instrument: 'USDCx', amount: fees.service.amount, expiresAt: p.expiry, beneficiary: 'service' },
    { kind: 'fee-transfer', target: RECIPIENT, instrument: 'USDCx', amount: fees.integrator!.amount, expiresAt: p.expiry, beneficiary: 'integrator' },
  ]);
  t.equal(fees.integrator!.bps, 10);
  t.equal(p.b2cFee, undefined, 'no B2C block on the partner route');
  const noIntegrator = plan(await partnerPlan(app, key, body()));
  t.strictSame(noIntegrator.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock'], 'no integrator fee, no integrator leg');
  const zero = plan(await partnerPlan(app, key, body({ feeBps: 0, feeRecipient: RECIPIENT })));
  t.strictSame(zero.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock'], 'a zero integrator fee has no leg');
});

t.test('"A collecting keyless plan with no configured fee destination is 503 fee_unconfigured", and stores nothing', async (t) => {
  let stored = 0;
  class Counting extends InProcessSharedState {
    override async setIfAbsent(key: string, value: string, ttlMs: number) {
      stored += 1;
      return super.setIfAbsent(key, value, ttlMs);
    }
  }
  const { app } = await started(t, { env: { FEE_COLLECTION_ENABLED: 'true', SERVICE_FEE_PARTY: FEE_PARTIES.SERVICE_FEE_PARTY }, overrides: { sharedState: new Counting() } });
  const res = await appPlan(app, body());
  t.equal(res.statusCode, 503);
  t.match(res.json(), { code: 'fee_unconfigured' });
  t.equal(stored, 0, 'no record stored');
});

t.test('"v1 plans only the supported venue tradecraft; any other venue from the quote gets 409 venue_unavailable"; a pair with no CC leg is 409 unsupported_pair', async (t) => {
  const { app, key } = await started(t);
  for (const send of [(p: unknown) => appPlan(app, p), (p: unknown) => partnerPlan(app, key, p)]) {
    for (const venueId of ['cantex', 'oneswap', 'nightly', 'temple']) {
      const res = await send(body({ venueId }));
      t.equal(res.statusCode, 409, venueId);
      t.match(res.json(), { code: 'venue_unavailable', error: `venue ${venueId} is not executable in v1: plans are built for tradecraft only` });
    }
    t.match((await send(body({ venueId: 'nope' }))).json(), { code: 'bad_request', error: "unknown venue 'nope': integrated venues are cantex, nightly, oneswap, temple, tradecraft" });
    const pair = await send(body({ from: 'USDCx', to: 'CBTC' }));
    t.equal(pair.statusCode, 409);
    t.match(pair.json(), { code: 'unsupported_pair' });
  }
});

t.test('"as does the supported venue when it cannot currently quote the pair"; no pool is 400 no_pool; a failing venue is 502 quote_failed on the keyed route', async (t) => {
  const { app, key } = await started(t, { env: { TRADECRAFT_POOL_PARTIES: `CC/USDCx=${POOL_USDCX}` } });
  const dust = await appPlan(app, body({ amount: '0.0000000001' }));
  t.equal(dust.statusCode, 409, 'an amount whose output rounds to nothing');
  t.match(dust.json(), { code: 'venue_unavailable', error: 'venue tradecraft cannot quote 0.0000000001 CC for USDCx now (below_minimum)' });
  const noPool = await partnerPlan(app, key, body({ to: 'CBTC' }));
  t.equal(noPool.statusCode, 400, 'a pair without a configured pool party');
  t.match(noPool.json(), { code: 'no_pool' });

  const failing = (venues: Venue[]): Venue[] =>
    venues.map((v): Venue => (v.id === 'tradecraft' ? { id: v.id, settlementMode: v.settlementMode, probe: (s) => v.probe(s), quote: () => Promise.reject(new Error('boom')) } : v));
  const { app: broken, key: brokenKey } = await started(t, { overrides: (sandbox) => ({ venues: failing(sandbox.adapters()) }) });
  const keyed = await partnerPlan(broken, brokenKey, body());
  t.equal(keyed.statusCode, 502);
  t.match(keyed.json(), { code: 'quote_failed', action: 'retry' });
  const keyless = await appPlan(broken, body());
  t.equal(keyless.statusCode, 409, 'the keyless contract knows no 502: the venue is not quoting now');
  t.match(keyless.json(), { code: 'venue_unavailable', error: /\(venue_error\)/ });
});

t.test('validation: "slippageBps 0–5000, integer or its string form; default 50"; takerParty format-checked; fee params; quoteRef; a body that is not JSON', async (t) => {
  const { app, key } = await started(t);
  const refused = async (res: LightMyRequestResponse, code: string, error: RegExp, what: string) => {
    t.equal(res.statusCode, 400, what);
    t.match(res.json(), { code, error }, what);
  };
  for (const slippageBps of [5001, -1, 50.5, '5001', '050', 'fifty', null]) {
    await refused(await appPlan(app, body({ slippageBps })), 'bad_request', /slippageBps/, `slippageBps ${JSON.stringify(slippageBps)}`);
  }
  for (const slippageBps of [0, 5000, '0', '5000']) t.equal((await appPlan(app, body({ slippageBps }))).statusCode, 200, `slippageBps ${JSON.stringify(slippageBps)}`);
  for (const takerParty of ['alice', `alice::1220${'B'.repeat(64)}`, `::1220${'b'.repeat(64)}`, 'x'.repeat(300)]) {
    await refused(await partnerPlan(app, key, body({ takerParty })), 'bad_party', /takerParty/, `keyed takerParty ${takerParty.slice(0, 20)}`);
    await refused(await appPlan(app, body({ takerParty })), 'bad_request', /takerParty/, `keyless takerParty ${takerParty.slice(0, 20)}`);
  }
  await refused(await appPlan(app, body({ feeBps: 5 })), 'bad_request', /not accepted on the keyless plan route/, 'keyless feeBps');
  await refused(await appPlan(app, body({ feeRecipient: 'junk', feeBps: 'junk' })), 'bad_request', /not accepted on the keyless plan route/, 'keyless fee params, whatever their values');
  const missing = await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: body() });
  t.equal(missing.statusCode, 400);
  t.match(missing.json(), { code: 'missing_key' });
  await refused(await partnerPlan(app, key, body({ feeBps: 5 })), 'bad_fee_params', /must be sent together/, 'only feeBps');
  await refused(await partnerPlan(app, key, body({ feeRecipient: RECIPIENT })), 'bad_fee_params', /must be sent together/, 'only feeRecipient');
  await refused(await partnerPlan(app, key, body({ feeBps: 11, feeRecipient: RECIPIENT })), 'bad_fee_params', /feeBps/, 'over the cap');
  await refused(await partnerPlan(app, key, body({ feeBps: 5, feeRecipient: 'wallet-co' })), 'bad_fee_params', /feeRecipient/, 'a bad recipient');
  await refused(await appPlan(app, body({ quoteRef: { venueId: 'cantex' } })), 'bad_request', /'quoteRef.venueId' \(cantex\) must equal 'venueId' \(tradecraft\)/, 'quoteRef disagreeing');
  t.equal((await appPlan(app, body({ quoteRef: { venueId: 'tradecraft' } }))).statusCode, 200, 'quoteRef agreeing');
  await refused(await appPlan(app, body({ extra: 1 })), 'bad_request', /unknown body field 'extra'/, 'an unknown field');
  await refused(await appPlan(app, body({ amount: '0' })), 'bad_request', /'amount' must be a positive decimal string of at most 1000000000/, 'a zero amount');
  await refused(await appPlan(app, body({ to: 'ETH' })), 'unknown_token', /known symbols are CC, USDCx, CBTC/, 'an unknown token');
  const notJson = await app.server.inject({ method: 'POST', url: '/api/app/plan', payload: 'from=CC', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(notJson.statusCode, 400);
  t.match(notJson.json(), { code: 'bad_request', error: /must be JSON/ });
});

t.test('a taker or fee recipient that is one of the plan\'s receivers is refused as bad input (400), never built into a plan the guardrail must stop', async (t) => {
  const { app, key } = await started(t, { env: COLLECTING });
  const refused = async (res: LightMyRequestResponse, code: string, what: string) => {
    t.equal(res.statusCode, 400, what);
    t.match(res.json(), { code }, what);
  };
  await refused(await appPlan(app, body({ takerParty: POOL_USDCX })), 'bad_request', 'keyless taker = the pool party');
  await refused(await appPlan(app, body({ takerParty: FEE_PARTIES.B2C_FEE_PARTY })), 'bad_request', 'keyless taker = the B2C fee party');
  await refused(await partnerPlan(app, key, body({ takerParty: FEE_PARTIES.SERVICE_FEE_PARTY })), 'bad_party', 'keyed taker = the service fee party');
  await refused(await partnerPlan(app, key, body({ feeBps: 5, feeRecipient: TAKER })), 'bad_party', 'the recipient is the taker');
  await refused(await partnerPlan(app, key, body({ feeBps: 5, feeRecipient: POOL_USDCX })), 'bad_fee_params', 'the recipient is the pool');
  t.equal(app.core.plans.guardrailTrips, 0, 'no guardrail trip');
});

t.test('"Every 4xx changes nothing and stores nothing": the idempotencyKey of a refused request is still free', async (t) => {
  const { app, key } = await started(t);
  const request = body({ feeBps: 5, feeRecipient: RECIPIENT });
  for (const bad of [{ ...request, feeBps: 11 }, { ...request, venueId: 'cantex' }, { ...request, from: 'USDCx', to: 'CBTC' }, { ...request, takerParty: 'x' }]) {
    t.ok((await partnerPlan(app, key, bad)).statusCode >= 400);
  }
  t.equal((await partnerPlan(app, key, request)).statusCode, 200, 'the same key then makes a plan, not a conflict');
});

t.test('idempotency: "The same idempotencyKey from the same caller returns the same plan — same planId, numbers and expiry — for 5 minutes, even after the plan itself expired"', async (t) => {
  let clock = Date.parse('2026-11-22T12:00:00.000Z');
  const state = new InProcessSharedState(() => clock);
  const { app, key } = await started(t, { overrides: { sharedState: state, now: () => new Date(clock) } });
  for (const send of [(p: unknown) => appPlan(app, p), (p: unknown) => partnerPlan(app, key, p)]) {
    const request = body();
    const first = await send(request);
    clock += 120_000;
    const replay = await send({ ...request, slippageBps: '50', from: 'amulet' });
    t.equal(replay.body, first.body, 'byte for byte, after the plan expired, however the same request is spelt');
    clock += 179_000;
    t.equal((await send(request)).body, first.body, 'still at 4 min 59 s');
    clock += 2_000;
    const remade = plan(await send(request));
    t.not(remade.expiry, plan(first).expiry, 'after 5 minutes the record is gone: a new plan is made');
    t.equal(remade.planId, plan(first).planId, 'under the same planId (derived from the caller, the key and the request): the ledger runs it at most once');
  }
});

t.test('idempotency: "A replay carries no rate-limit headers and does not consume the window"', async (t) => {
  const { app, key } = await started(t, { env: { RATE_LIMIT_KEYED_PER_MINUTE: '3', RATE_LIMIT_KEYLESS_PER_MINUTE: '3' } });
  const request = body();
  const first = await partnerPlan(app, key, request);
  t.equal(first.headers['x-ratelimit-remaining'], '2');
  for (let i = 0; i < 5; i++) {
    const replay = await partnerPlan(app, key, request);
    t.equal(replay.statusCode, 200);
    t.equal(replay.headers['x-ratelimit-limit'], undefined, 'no X-RateLimit-Limit');
    t.equal(replay.headers['x-ratelimit-remaining'], undefined, 'no X-RateLimit-Remaining');
  }
  t.equal((await partnerPlan(app, key, body())).headers['x-ratelimit-remaining'], '1', 'the replays took nothing from the window');
  const keyless = body();
  t.equal((await appPlan(app, keyless)).statusCode, 200);
  for (let i = 0; i < 5; i++) t.equal((await appPlan(app, keyless)).statusCode, 200, 'keyless replays are not counted either');
  t.equal((await appPlan(app, body())).statusCode, 200);
  t.equal((await appPlan(app, body())).statusCode, 200, 'the third keyless plan of the window');
  t.equal((await appPlan(app, body())).statusCode, 429, 'the fourth is over the window');
  t.equal((await appPlan(app, keyless)).statusCode, 200, 'a replay still answers over the limit');
  const replays = app.logs().filter((l) => l.plan === 'replayed');
  t.ok(replays.length >= 11, 'replays are marked in the access log');
});

t.test('idempotency: "The same idempotencyKey with a different body is a clear 409 error", per caller and per route', async (t) => {
  const { app, key } = await started(t, { env: { TRUST_PROXY: '1' } });
  const other = (await issueKey(app.core.keyStore, { name: 'other' })).key;
  const request = body();
  const first = plan(await partnerPlan(app, key, request));
  for (const changed of [{ amount: '101' }, { slippageBps: 51 }, { takerParty: `bob::1220${'b'.repeat(64)}` }, { feeBps: 1, feeRecipient: RECIPIENT }, { from: 'USDCx', to: 'CC' }]) {
    const res = await partnerPlan(app, key, { ...request, ...changed });
    t.equal(res.statusCode, 409, JSON.stringify(changed));
    t.match(res.json(), { code: 'idempotency_conflict', error: `idempotencyKey '${request.idempotencyKey}' was already used for a different plan request in the last 5 minutes; send a new idempotencyKey`, action: 'send a new idempotencyKey' });
  }
  t.equal(plan(await partnerPlan(app, key, request)).planId, first.planId, 'the original request still replays');
  t.not(plan(await partnerPlan(app, other, request)).planId, first.planId, 'another key has its own idempotencyKeys');
  t.not(plan(await appPlan(app, request)).planId, first.planId, 'the keyless route has its own');
  const fromIp = (ip: string) => appPlan(app, request, { 'x-forwarded-for': ip });
  t.not(plan(await fromIp('203.0.113.7')).planId, plan(await fromIp('203.0.113.8')).planId, 'each client IP has its own');
  t.equal((await fromIp('203.0.113.7')).statusCode, 200);
});

t.test('idempotency: "the same caller" is the partner key itself, not its name: two keys named alike (names are free text at the portal) never share a plan or an idempotencyKey', async (t) => {
  const { app } = await started(t);
  const first = (await issueKey(app.core.keyStore, { name: 'wallet-co' })).key;
  const second = (await issueKey(app.core.keyStore, { name: 'wallet-co' })).key;
  const request = body();
  const mine = plan(await partnerPlan(app, first, request));
  const theirs = await partnerPlan(app, second, request);
  t.equal(theirs.statusCode, 200, 'the second key\'s first use of the idempotencyKey makes a plan');
  t.not(plan(theirs).planId, mine.planId, 'a plan of its own, not the first key\'s replayed');
  const conflicting = await partnerPlan(app, second, { ...request, amount: '101' });
  t.equal(conflicting.statusCode, 409, 'each key conflicts only with its own use of the idempotencyKey');
  const otherAmount = await partnerPlan(app, first, { ...body(), idempotencyKey: `${request.idempotencyKey}-b`, amount: '101' });
  t.equal(otherAmount.statusCode, 200);
  t.equal((await partnerPlan(app, second, { ...body(), idempotencyKey: `${request.idempotencyKey}-b` })).statusCode, 200, 'the second key may use the first key\'s idempotencyKey for another request');
  t.equal(plan(await partnerPlan(app, first, request)).planId, mine.planId, 'and the first key still replays its own');
});

t.test('idempotency: "Concurrent identical requests produce exactly one plan", on one instance and across two sharing their state', async (t) => {
  const shared = new InProcessSharedState();
  const { app: one, key } = await started(t, { overrides: { sharedState: shared } });
  const { app: two } = await started(t, { overrides: { sharedState: shared, keyStore: one.core.keyStore } });
  const request = body();
  const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => partnerPlan(i % 2 ? one : two, key, request)));
  t.strictSame([...new Set(answers.map((r) => r.statusCode))], [200]);
  t.equal(new Set(answers.map((r) => plan(r).planId)).size, 1, 'one planId');
  t.equal(new Set(answers.map((r) => r.body)).size, 1, 'one body, byte for byte');
  const keyless = body();
  const keylessAnswers = await Promise.all(Array.from({ length: 20 }, (_, i) => appPlan(i % 2 ? one : two, keyless)));
  t.equal(new Set(keylessAnswers.map((r) => plan(r).planId)).size, 1, 'one keyless planId');
});

t.test('idempotency: "A record holds digests of the request and the caller and the plan\'s JSON: never the taker\'s party, key or IP", as the in-process store keeps it', async (t) => {
  const state = new InProcessSharedState();
  const { app } = await started(t, { overrides: { sharedState: state } });
  const { key, record } = await issueKey(app.core.keyStore, { name: 'privacy' });
  const taker = `privacy-taker::1220${'5a'.repeat(32)}`;
  const ip = '198.51.100.77';
  const keyless = await appPlan(app, body({ takerParty: taker }), {}, ip);
  const keyed = await partnerPlan(app, key, body({ takerParty: taker }));
  t.strictSame([keyless.statusCode, keyed.statusCode], [200, 200], 'both plans made');
  assertRecordsPrivate(t, inProcessEntries(state), { plans: [keyless.body, keyed.body], takerParty: taker, ip, apiKey: key, keyId: record.id });
});

t.test('plans never log the taker party, the key or the fee recipient', async (t) => {
  const { app, key } = await started(t, { env: COLLECTING });
  await appPlan(app, body());
  const request = body({ feeBps: 5, feeRecipient: RECIPIENT });
  await partnerPlan(app, key, request);
  await partnerPlan(app, key, request);
  await partnerPlan(app, key, { ...request, amount: '5' });
  await partnerPlan(app, key, body({ takerParty: `${TAKER}B` }));
  const raw = app.rawLogs();
  t.match(raw, /"plan":"created"/, 'the plans were logged');
  for (const secret of [TAKER, '1220bbbb', key, RECIPIENT]) t.notMatch(raw, secret);
});

t.test('status: "mode is live when the service can issue execution plans now"; plans: served', async (t) => {
  const { app } = await started(t);
  const status = (await app.server.inject('/api/status')).json<{ mode: string; components: Array<{ component: string; state: string }> }>();
  t.equal(status.mode, 'live');
  t.strictSame(status.components.find((c) => c.component === 'plans'), { component: 'plans', state: 'served' });
});

t.test('"Bounded memory": at STATE_MAX_PLAN_RECORDS a new plan is refused in the contract\'s terms (503 at_capacity with Retry-After on both routes, nothing created), logged once, while replays of held plans, conflicts, quotes and the status keep answering', async (t) => {
  const { app, key } = await started(t, { env: { STATE_MAX_PLAN_RECORDS: '3' } });
  const held = [body(), body(), body()];
  const made: string[] = [];
  for (const request of held) made.push((await appPlan(app, request)).body);
  t.ok(made.every((text) => JSON.parse(text).planId), 'three plans fill the bound');

  const refused = await appPlan(app, body());
  t.equal(refused.statusCode, 503, 'keyless: 503');
  t.match(refused.json(), { code: 'at_capacity', action: 'retry after Retry-After', error: /nothing was created/ });
  const retryAfter = Number(refused.headers['retry-after']);
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 300, `with Retry-After in whole seconds within the 5-minute retention (${refused.headers['retry-after']})`);
  t.equal(refused.headers['cache-control'], 'no-store');
  const keyed = await partnerPlan(app, key, body());
  t.equal(keyed.statusCode, 503, 'keyed: 503 too');
  t.match(keyed.json(), { code: 'at_capacity', action: 'retry after Retry-After', error: /nothing was created/ });
  t.match(keyed.headers['retry-after'], /^[1-9][0-9]*$/);
  const again = body();
  t.equal((await appPlan(app, again)).statusCode, 503);
  t.equal((await appPlan(app, again)).statusCode, 503, 'a refused request left nothing to replay');

  for (const [i, request] of held.entries()) {
    const replay = await appPlan(app, request);
    t.equal(replay.statusCode, 200, `held plan ${i + 1} replays`);
    t.equal(replay.body, made[i], 'byte for byte');
  }
  t.equal((await appPlan(app, { ...held[0], amount: '5' })).statusCode, 409, 'another request under a held key is still a conflict');
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=100')).statusCode, 200, 'keyless quotes answer');
  t.equal((await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=7', headers: { 'x-api-key': key } })).statusCode, 200, 'keyed quotes answer');
  const status = await app.server.inject('/api/status');
  t.equal(status.statusCode, 200, 'the status answers');
  t.match(status.json(), { mode: 'monitor', state: 'degraded', components: [{}, {}, {}, {}, {}, { component: 'plans', state: 'at_capacity' }] }, 'and says the bound is biting: plans at_capacity, monitor, degraded');

  const warned = app.logs().filter((l) => l.bound === 'plan-records');
  t.equal(warned.length, 1, 'the bound is logged once, not per refusal');
  t.match(warned[0], { level: 40, max: 3, msg: /STATE_MAX_PLAN_RECORDS/ });
  t.equal(app.core.stateCapacity.refusals('plan-records'), 4, 'every refusal counted');
});

t.test('"Per-caller fairness": an address (its /64 for IPv6) may make PLAN_RECORDS_PER_IP new plans and a key PLAN_RECORDS_PER_KEY within a record\'s retention; past its share a caller gets 429 with Retry-After before any venue is asked, while other callers, replays and the global bound are untouched', async (t) => {
  const { app, key } = await started(t, { env: { PLAN_RECORDS_PER_IP: '2', PLAN_RECORDS_PER_KEY: '3', STATE_MAX_PLAN_RECORDS: '50' } });
  const first = body();
  const mine = [first, body()];
  for (const request of mine) t.equal((await appPlan(app, request, {}, '203.0.113.7')).statusCode, 200);
  const over = await appPlan(app, body(), {}, '203.0.113.7');
  t.equal(over.statusCode, 429, 'the third new plan from the address: 429');
  t.match(over.json(), { code: 'rate_limited', error: /this address has made 2 plans in the last 5 minutes/ });
  const retryAfter = Number(over.headers['retry-after']);
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 300, `Retry-After within the 5-minute window (${over.headers['retry-after']})`);
  t.equal((await appPlan(app, first, {}, '203.0.113.7')).statusCode, 200, 'a replay makes no record and is still answered');
  t.equal((await appPlan(app, body(), {}, '203.0.113.8')).statusCode, 200, 'another address is served');
  // IPv6: one /64 is one caller, whatever its interface ids.
  t.equal((await appPlan(app, body(), {}, '2001:db8:1:2::a')).statusCode, 200);
  t.equal((await appPlan(app, body(), {}, '2001:db8:1:2::b')).statusCode, 200);
  t.equal((await appPlan(app, body(), {}, '2001:db8:1:2:ffff::c')).statusCode, 429, 'a third address in the same /64: 429');
  t.equal((await appPlan(app, body(), {}, '2001:db8:1:3::a')).statusCode, 200, 'the next /64 is another caller');

  for (let i = 0; i < 3; i++) t.equal((await partnerPlan(app, key, body())).statusCode, 200, `key plan ${i + 1}`);
  const keyOver = await partnerPlan(app, key, body());
  t.equal(keyOver.statusCode, 429, 'the key past its share: 429');
  t.match(keyOver.json(), { code: 'rate_limited', error: /this key has made 3 plans/ });
  const other = (await issueKey(app.core.keyStore, { name: 'another partner' })).key;
  t.equal((await partnerPlan(app, other, body())).statusCode, 200, 'another key is served');
  t.equal(app.core.stateCapacity.refusals('plan-records'), 0, 'the global bound never refused');
  t.match((await app.server.inject('/api/status')).json(), { components: [{}, {}, {}, {}, {}, { component: 'plans', state: 'served' }] });
});
