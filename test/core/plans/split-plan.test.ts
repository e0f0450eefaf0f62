// Split plans (core/plans/service.ts makeSplit, core/plans/split-plan.ts): a v2 plan request naming
// the quote's split, through the service's routes against the sandbox's venues. The legs are
// priced again from the service's own quote; each leg is the plan its venue alone would be; a split
// with a OneSwap leg is its message to sign, completed with the wallet's signature into every leg's
// deposit. The taker signs with Canton's signing library.
import { createHash } from 'node:crypto';
import t, { type Test } from 'tap';
import { createKeyPair, signMessage } from '@canton-network/core-signing-lib';
import { Decimal } from '../../../core/decimal.js';
import { clientFees } from '../../../core/quotes/client-fees.js';
import { splitPlan, splitPlanViolations } from '../../../core/plans/split-plan.js';
import type * as V2 from '../../../core/contract/v2.js';
import { COLLECTING, FEE_PARTIES, testApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';

interface Json {
  [key: string]: any;
}

const app = await testApp({ env: COLLECTING });
t.teardown(() => app.close());
const sandbox = app.sandbox!;

const partyOf = (name: string) => `${name}::1220${createHash('sha256').update(name).digest('hex')}`;

/** A taker the sandbox participant hosts (a local party, which OneSwap signs in under any key). */
async function taker(name: string): Promise<string> {
  const party = partyOf(name);
  const answer = await fetch(new URL('/sandbox/v1/fund', sandbox.manifest.ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party, token: 'CC', amount: '10' }),
  });
  if (answer.status !== 200) throw new Error(`fund: ${answer.status}`);
  return party;
}

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => app.server.inject({ method: 'POST', url, payload: payload as object, headers });
const plan = (body: Json, headers: Record<string, string> = {}) => post(headers['x-api-key'] ? '/api/v2/execute/plan' : '/api/v2/app/plan', { from: 'CC', to: 'USDCx', ...body }, headers);

async function quote(amount: string): Promise<V2.QuoteResponse> {
  const answer = await app.server.inject({ url: `/api/v2/quote?from=CC&to=USDCx&amount=${amount}` });
  return JSON.parse(answer.body) as V2.QuoteResponse;
}

const legsOf = (q: V2.QuoteResponse) => q.split!.legs.map(({ venueId, amount }) => ({ venueId, amount }));
const sum = (values: readonly string[]) => values.reduce((total, v) => total.plus(v), new Decimal(0));

function signed(made: Json): { planId: string; signature: string; publicKey: string } {
  const keys = createKeyPair();
  return { planId: made.planId, signature: signMessage(made.steps[0].message, keys.privateKey), publicKey: keys.publicKey };
}

/** The rules every complete split plan keeps, whatever its legs: its figures recompute and each leg's steps are its own. */
function holdsTogether(t: Test, made: V2.SplitPlan, q: V2.QuoteResponse, slippageBps = 50): void {
  const { split } = made;
  t.equal(split.amount, q.amount, "the split's amount is the quote's");
  t.equal(sum(split.legs.map((l) => l.amount)).toFixed(), new Decimal(split.amount).toFixed(), "the legs' amounts sum to it");
  t.equal(sum(split.legs.map((l) => l.net)).toFixed(), new Decimal(split.net).toFixed(), "the legs' nets to the net");
  t.equal(sum(split.legs.map((l) => l.minReceive)).toFixed(), new Decimal(split.minReceive).toFixed(), "the legs' floors to the floor");
  const best = new Decimal(split.bestExecutable.net);
  t.equal(split.edgeBps, new Decimal(split.net).minus(best).times(10_000).dividedToIntegerBy(best).toNumber(), 'edgeBps recomputes over bestExecutable');
  t.ok(split.edgeBps >= 5);
  split.legs.forEach((leg, i) => {
    t.equal(leg.minReceive, new Decimal(leg.net).times(10_000 - slippageBps).dividedBy(10_000).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed(), `${leg.venueId}: its floor from its own net`);
    const steps = made.steps.filter((s) => 'leg' in s && s.leg === i) as V2.PlanStep[];
    const [deposit, ...fees] = steps;
    t.equal(deposit?.kind, 'venue-deposit', `${leg.venueId}: its deposit heads its steps`);
    t.equal(deposit?.amount, leg.amount, `${leg.venueId}: its deposit is its amount`);
    t.equal(deposit?.settlement, leg.settlement, `${leg.venueId}: settled as its venue settles`);
    t.ok(new Decimal(deposit!.minOut!).gte(leg.minReceive), `${leg.venueId}: its deposit is bound to at least its floor`);
    const fee = sum(fees.map((s) => s.amount));
    const lines = leg.clientFees;
    t.equal(fee.toFixed(), new Decimal(lines.service.amount).plus(lines.integrator?.amount ?? 0).toFixed(), `${leg.venueId}: its fee legs are its own fee lines`);
    t.equal(new Decimal(lines.userReceives).toFixed(), new Decimal(leg.net).minus(fee).toFixed(), `${leg.venueId}: userReceives = net - fees`);
  });
  t.strictSame(
    made.steps.map((s) => (s as V2.PlanStep).leg),
    [...made.steps.map((s) => (s as V2.PlanStep).leg)].sort(),
    'the steps run in leg order',
  );
}

t.test('at 1,000,000 CC the quote\'s split (tradecraft + OneSwap) is planned as OneSwap\'s message to sign, then completed into both deposits and their fee legs in one plan', async (t) => {
  const q = await quote('1000000');
  t.strictSame(q.split!.legs.map((l) => l.venueId), ['oneswap', 'tradecraft']);
  const party = await taker('split-alice');
  const first = await plan({ amount: '1000000', legs: legsOf(q), takerParty: party, idempotencyKey: 'split-1' });
  t.equal(first.statusCode, 200, first.body);
  const made = first.json() as V2.SplitPlan;
  t.equal(made.steps.length, 1);
  t.equal(made.steps[0]!.kind, 'sign-message', 'the one step is the message to sign');
  t.strictSame(made.split.legs.map((l) => [l.venueId, l.amount, l.net]), q.split!.legs.map((l) => [l.venueId, l.amount, l.net]), "each leg priced as the quote's split priced it");
  t.equal(made.split.net, q.split!.net);
  t.equal(made.split.edgeBps, q.split!.edgeBps);
  t.strictSame(made.split.bestExecutable, q.bestExecutable);
  const again = await plan({ amount: '1000000', legs: [...legsOf(q)].reverse(), takerParty: party, idempotencyKey: 'split-1' });
  t.equal(again.body, first.body, 'the same legs in another order are the same request: replayed byte for byte');

  const completed = await post('/api/v2/plan/signature', signed(made));
  t.equal(completed.statusCode, 200, completed.body);
  const full = completed.json() as V2.SplitPlan;
  t.equal(full.planId, made.planId);
  t.equal(full.expiry, made.expiry);
  t.strictSame(full.split, made.split, 'the same split block');
  holdsTogether(t, full, q);
  t.equal(full.intent?.venueId, 'oneswap', 'the plan names the intent its OneSwap leg funds');
  const deposits = full.steps.filter((s) => s.kind === 'venue-deposit') as V2.PlanStep[];
  t.equal(deposits.length, 2, 'one deposit per leg');
  const tradecraft = deposits.find((d) => d.settlement === 'memo-floor')!;
  t.equal(tradecraft.memo, full.split.legs.find((l) => l.venueId === 'tradecraft')!.minReceive, "tradecraft's memo is its leg's floor");
  const oneswap = deposits.find((d) => d.settlement === 'intent-deposit-reference')!;
  t.not(oneswap.target, tradecraft.target, 'each deposit goes to its own venue');
  t.equal(full.steps.filter((s) => s.kind === 'b2c-fee-transfer').length, 2, 'a fee leg per leg');
  t.equal(full.steps.length, 4);
  t.ok(full.collectsFees);
  t.match(full.trustWindow, /one batch of 2 deposits/);
  t.match(full.trustWindow, /a returned deposit's service fee stays yours/);
  const retried = await post('/api/v2/plan/signature', signed(made));
  t.equal(retried.body, completed.body, 'a retry answers the same plan, byte for byte');
});

t.test('a keyed split over three venues (Nightly, OneSwap, tradecraft) at 300,000 CC: Nightly\'s leg goes where its terms say, each leg carries the service\'s and the integrator\'s fee legs', async (t) => {
  const q = await quote('300000');
  t.strictSame(q.split!.legs.map((l) => l.venueId), ['nightly', 'oneswap', 'tradecraft']);
  const { key } = await issueKey(app.core.keyStore);
  const party = await taker('split-bob');
  const integrator = partyOf('split-integrator');
  const first = await plan({ amount: '300000', legs: legsOf(q), takerParty: party, idempotencyKey: 'split-2', feeBps: 5, feeRecipient: integrator, slippageBps: 100 }, { 'x-api-key': key });
  t.equal(first.statusCode, 200, first.body);
  const completed = await post('/api/v2/plan/signature', signed(first.json()), { 'x-api-key': key });
  t.equal(completed.statusCode, 200, completed.body);
  const full = completed.json() as V2.SplitPlan;
  holdsTogether(t, full, q, 100);
  t.match(full.trustWindow, /the service accepts a deposit's fee only once its venue has paid you at least its floor/);
  t.match(full.trustWindow, /until your integrator accepts them/, "the integrator's fees wait on the integrator alone, as a single plan says");
  const nightly = full.steps.find((s) => s.kind === 'venue-deposit' && s.settlement === 'swap-address-memo') as V2.PlanStep;
  t.ok(nightly, "Nightly's leg deposits to its swap address");
  t.not(nightly.memo, full.split.legs[0]!.minReceive, "with Nightly's own memo");
  for (const [i, leg] of full.split.legs.entries()) {
    const fees = full.steps.filter((s) => (s as V2.PlanStep).leg === i && s.kind !== 'venue-deposit') as V2.PlanStep[];
    t.strictSame(fees.map((s) => [s.kind, s.beneficiary]), [['fee-escrow-lock', 'service'], ['fee-transfer', 'integrator']], `${leg.venueId}: the service's and the integrator's fee legs`);
    t.equal(fees[0]!.target, FEE_PARTIES.SERVICE_FEE_PARTY);
    t.equal(fees[1]!.target, integrator);
    const lines = clientFees(new Decimal(leg.net), { schemaId: full.split.appliedSchema.schemaId, overrideId: null, serviceBps: leg.clientFees.service.bps, integratorCapBps: 10 }, { bps: 5, recipient: integrator }, true);
    t.equal(fees[1]!.amount, lines.integrator!.amount, `${leg.venueId}: the integrator's fee is 5 bps of the leg's own net`);
  }
});

t.test('named legs are priced again: legs that no longer beat the best single venue are 409 split_changed, and nothing is kept', async (t) => {
  const party = await taker('split-carol');
  const body = { amount: '1000000', legs: [{ venueId: 'oneswap', amount: '999000' }, { venueId: 'tradecraft', amount: '1000' }], takerParty: party, idempotencyKey: 'split-3' };
  const answer = await plan(body);
  t.equal(answer.statusCode, 409);
  t.match(answer.json(), { code: 'split_changed', error: /no more than 5 bps over tradecraft alone/ });
  const q = await quote('1000000');
  const retried = await plan({ ...body, legs: legsOf(q) });
  t.equal(retried.statusCode, 200, 'the key was not used up: the same key plans the quote\'s split');
});

t.test('a leg a venue cannot take (over Nightly\'s cap) is 409 split_changed; a leg on a venue no wallet can execute is 409 venue_not_executable', async (t) => {
  const party = await taker('split-dan');
  const capped = await plan({ amount: '1000000', legs: [{ venueId: 'nightly', amount: '500000' }, { venueId: 'tradecraft', amount: '500000' }], takerParty: party, idempotencyKey: 'split-4' });
  t.equal(capped.statusCode, 409);
  t.match(capped.json(), { code: 'split_changed', error: /venue nightly cannot take 500000 now/ });
  const cantex = await plan({ amount: '1000000', legs: [{ venueId: 'cantex', amount: '500000' }, { venueId: 'tradecraft', amount: '500000' }], takerParty: party, idempotencyKey: 'split-5' });
  t.equal(cantex.statusCode, 409);
  t.match(cantex.json(), { code: 'venue_not_executable' });
});

t.test('bad legs are 400 bad_request: amounts not summing to the amount, a venue named twice, legs with venueId, legs with quoteRef; and the same key with other legs is idempotency_conflict', async (t) => {
  const party = await taker('split-erin');
  const base = { amount: '1000000', takerParty: party };
  for (const [why, body] of [
    ['amounts that do not sum', { ...base, legs: [{ venueId: 'oneswap', amount: '400000' }, { venueId: 'tradecraft', amount: '500000' }], idempotencyKey: 'split-6' }],
    ['a venue twice', { ...base, legs: [{ venueId: 'tradecraft', amount: '500000' }, { venueId: 'tradecraft', amount: '500000' }], idempotencyKey: 'split-7' }],
    ['legs and venueId', { ...base, venueId: 'tradecraft', legs: [{ venueId: 'oneswap', amount: '500000' }, { venueId: 'tradecraft', amount: '500000' }], idempotencyKey: 'split-8' }],
    ['legs and quoteRef', { ...base, quoteRef: { venueId: 'tradecraft' }, legs: [{ venueId: 'oneswap', amount: '500000' }, { venueId: 'tradecraft', amount: '500000' }], idempotencyKey: 'split-9' }],
    ['one leg', { ...base, legs: [{ venueId: 'tradecraft', amount: '1000000' }], idempotencyKey: 'split-10' }],
  ] as const) {
    const answer = await plan(body);
    t.equal(answer.statusCode, 400, why);
    t.equal(answer.json().code, 'bad_request', why);
  }
  const q = await quote('1000000');
  t.equal((await plan({ ...base, legs: legsOf(q), idempotencyKey: 'split-11' })).statusCode, 200);
  const other = legsOf(q).map((leg, i) => ({ ...leg, amount: new Decimal(leg.amount).plus(i === 0 ? 1 : -1).toFixed() }));
  const conflict = await plan({ ...base, legs: other, idempotencyKey: 'split-11' });
  t.equal(conflict.statusCode, 409);
  t.equal(conflict.json().code, 'idempotency_conflict');
});

t.test("the split guardrail: a split plan whose steps are not its legs' checked steps, whose figures do not sum, or whose edge is overstated trips it", async (t) => {
  const q = await quote('1000000');
  const party = await taker('split-fay');
  const made = (await plan({ amount: '1000000', legs: legsOf(q), takerParty: party, idempotencyKey: 'split-12' })).json() as V2.SplitPlan;
  const full = (await post('/api/v2/plan/signature', signed(made))).json() as V2.SplitPlan;
  // The legs' plans the split was made of, read back from it.
  const legs = full.split.legs.map((leg, i) => ({
    planId: full.planId,
    quoteRef: { venueId: leg.venueId, pair: full.split.pair, amount: leg.amount, asOf: full.split.asOf, net: leg.net, minReceive: leg.minReceive, clientFees: leg.clientFees, appliedSchema: full.split.appliedSchema },
    settlement: leg.settlement,
    steps: (full.steps as V2.PlanStep[]).filter((s) => s.leg === i).map(({ leg: _leg, ...step }) => step),
    registries: full.registries,
    expiry: full.expiry,
    idempotencyKey: full.idempotencyKey,
    trustWindow: 'x',
    collectsFees: true,
  }));
  const basis = { edgeBps: full.split.edgeBps, bestExecutable: full.split.bestExecutable, amount: full.split.amount };
  const rebuilt = splitPlan(legs, basis);
  t.strictSame(splitPlanViolations(rebuilt, legs, basis), [], 'the split as made keeps every rule');
  const swapped = { ...rebuilt, steps: [rebuilt.steps[2]!, rebuilt.steps[3]!, rebuilt.steps[0]!, rebuilt.steps[1]!] };
  t.ok(splitPlanViolations(swapped, legs, basis).length > 0, 'legs out of order');
  const moved = { ...rebuilt, steps: rebuilt.steps.map((s, i) => (i === 0 ? { ...s, target: partyOf('mallory') } : s)) };
  t.ok(splitPlanViolations(moved, legs, basis).length > 0, 'a deposit to another party');
  const overstated = { ...rebuilt, split: { ...rebuilt.split, edgeBps: rebuilt.split.edgeBps + 1 } };
  t.ok(splitPlanViolations(overstated, legs, basis).length > 0, 'an overstated edge');
  const netted = { ...rebuilt, split: { ...rebuilt.split, net: new Decimal(rebuilt.split.net).plus('0.0000000001').toFixed() } };
  t.ok(splitPlanViolations(netted, legs, basis).length > 0, 'a net that is not the legs\' sum');
});
