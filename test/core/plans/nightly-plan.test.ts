// v2 plans on a venue that sets its own terms for the taker (swap-address-memo: Nightly), in the
// plan core without HTTP: the plan service asks the venue's adapter for its terms once every check
// has passed (core/plans/service.ts), the deposit goes where they say with their memo and is bound
// to their minimum, and the guardrail (core/plans/guardrail.ts) checks those against the terms, in
// the plan and in its v2 shape. The sandbox's Nightly is reached through the service's own adapter,
// over HTTP; its quote book tells which memos it issued. v1's and tradecraft's plans are unchanged.
import t from 'tap';
import { dec, toWire } from '../../../core/decimal.js';
import { DomainError } from '../../../core/errors.js';
import { DEFAULT_FEE_SCHEMAS, FeeSchemas } from '../../../core/quotes/fee-schemas.js';
import { IdempotencyRecords } from '../../../core/plans/idempotency.js';
import { assemblePlan, planFigures, type PlanInputs } from '../../../core/plans/assembly.js';
import { planViolations, v2PlanViolations } from '../../../core/plans/guardrail.js';
import { parsePlanRequest, type PlanRoute } from '../../../core/plans/params.js';
import { PlanQuota } from '../../../core/plans/plan-quota.js';
import { PlanService, type PlanCaller, type PlanServiceOptions } from '../../../core/plans/service.js';
import { v2Plan } from '../../../core/plans/v2-plan.js';
import { QuoteService } from '../../../core/quotes/service.js';
import { RateWindows } from '../../../core/state/rate-windows.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { venueExecution } from '../../../core/execution/venues.js';
import { InstrumentRegistries } from '../../../core/execution/tokens.js';
import { isExecutableVenue, VenueFloorBelowService, type ExecutableVenue, type ExecutionTermsRequest, type VenueExecutionTerms } from '../../../core/venues/venue.js';
import { NIGHTLY_SWAP_ADDRESS, nightlyQuoteBook } from '../../../sandbox/venues/nightly.js';
import { SANDBOX_POOL_PARTIES } from '../../../sandbox/venues/market.js';
import { testSandbox } from '../../helpers/sandbox.js';
import type { AppPlan as V1Plan } from '../../../core/contract/v1.js';
import type { V2TransferPlan as V2Plan } from '../../../core/plans/v2-plan.js';

const party = (hint: string, digit: string): string => `${hint}::1220${digit.repeat(64)}`;
const TAKER = party('taker', 'a');
const SERVICE = party('service-fee', '2');
const B2C = party('b2c-fee', '3');
const RECIPIENT = party('wallet-co', '4');
const STRANGER = party('stranger', '5');
const SWAP = party('swap-address', '6');
const SECRET = 'nightly-plan-test-secret-0123456789abcdef';
const CREATED_AT = new Date('2026-11-22T12:00:00.000Z');
const schemas = new FeeSchemas(DEFAULT_FEE_SCHEMAS);

const sandbox = await testSandbox();
t.teardown(() => sandbox.close());
const adapters = sandbox.adapters(30_000);
const nightlyAdapter = adapters.find((v) => v.id === 'nightly')!;
if (!isExecutableVenue(nightlyAdapter)) throw new Error('the Nightly adapter gives no execution terms');
const nightly: ExecutableVenue = nightlyAdapter;
const nightlySpec = sandbox.market.find((v) => v.id === 'nightly')!.spec;

async function moveNightly(bps: number): Promise<void> {
  const response = await fetch(new URL('/sandbox/v1/move', sandbox.manifest.ledger), {
    method: 'POST', headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ venue: 'nightly', pair: 'CC/USDCx', bps }),
  });
  if (response.status !== 200) throw new Error(`the move was refused: ${await response.text()}`);
}

/** The Nightly adapter, counting the terms it is asked for; `answer` replaces its answer when given. */
function counted(answer?: (request: ExecutionTermsRequest) => Promise<VenueExecutionTerms>): ExecutableVenue & { asked: ExecutionTermsRequest[] } {
  const asked: ExecutionTermsRequest[] = [];
  return Object.assign(Object.create(nightly) as ExecutableVenue, {
    asked,
    executionTerms: (request: ExecutionTermsRequest, deadline: Parameters<ExecutableVenue['executionTerms']>[1]) => {
      asked.push(request);
      return answer ? answer(request) : nightly.executionTerms(request, deadline);
    },
  });
}

interface Setup {
  readonly venue?: ExecutableVenue;
  readonly collecting?: boolean;
  readonly perIp?: number;
  /** A quote cache of its own, with a window of a minute: the quote a plan's floor comes from stays while the venue moves. */
  readonly cacheTtlMs?: number;
}

function service({ venue = nightly, collecting = false, perIp, cacheTtlMs = 1 }: Setup = {}) {
  const quotes = new QuoteService({ venues: adapters, venueTimeoutMs: 30_000, cacheTtlMs, cacheMaxEntries: 100, isVenueDown: () => false, onVenueError: () => {}, now: () => new Date() });
  const records = new IdempotencyRecords(new InProcessSharedState(), SECRET);
  const quota = perIp === undefined ? undefined : new PlanQuota(new RateWindows(new InProcessSharedState()), { perIp, perKey: perIp, windowMs: 300_000 });
  const warnings: Array<Record<string, unknown>> = [];
  const log = { info: () => {}, warn: (fields: Record<string, unknown>) => void warnings.push(fields), error: () => {} };
  const options: PlanServiceOptions = {
    quotes,
    schemas,
    collecting,
    supportedVenueId: 'tradecraft',
    venueIds: adapters.map((v) => v.id),
    poolParties: SANDBOX_POOL_PARTIES,
    serviceFeeParty: SERVICE,
    b2cFeeParty: B2C,
    records,
    ...(quota ? { quota } : {}),
    executableVenues: { nightly: venue },
    venueTimeoutMs: 30_000,
    log,
    now: () => CREATED_AT,
  };
  return { plans: new PlanService(options), options, quotes, records, warnings };
}

const V2_APP: PlanCaller = { route: 'app', ip: '127.0.0.1', contract: 'v2' };
const partnerCaller = (contract: 'v1' | 'v2'): PlanCaller => ({ route: 'partner', partner: { id: 'partner-1', name: 'partner', schemaId: 'partner-default', origins: null }, contract });

function paramsFor(idempotencyKey: string, venueId = 'nightly', extra: Record<string, unknown> = {}, route: PlanRoute = 'app') {
  return parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId, takerParty: TAKER, idempotencyKey, ...extra }, route);
}

async function make(plans: PlanService, params: ReturnType<typeof paramsFor>, caller: PlanCaller) {
  const held = await plans.lookup(params, caller);
  return plans.create(params, caller, held.record, held.quotaCount);
}

const failure = (promise: Promise<unknown>): Promise<unknown> => promise.then(() => null, (err: unknown) => err);

t.test('a v2 Nightly plan is made from the terms Nightly gives the taker: to its swapAddress, with its memo, bound to its minOutAmount, at or above the floor taken from the quote\'s net', async (t) => {
  const venue = counted();
  const { plans } = service({ venue });
  const made = await make(plans, paramsFor('nightly-made'), V2_APP);
  t.equal(made.replayed, false);
  const plan = JSON.parse(made.json) as V2Plan;
  t.equal(venue.asked.length, 1, 'Nightly asked once');
  const [asked] = venue.asked;
  t.equal(asked!.recipient, TAKER, 'with the taker as recipient');
  t.equal(toWire(asked!.expectedOut), plan.quoteRef.net, "expectedOut: the quote's net");
  t.equal(toWire(asked!.floor), plan.quoteRef.minReceive, 'floor: quoteRef.minReceive');
  t.equal(plan.quoteRef.minReceive, toWire(dec(plan.quoteRef.net).times(0.995).toDecimalPlaces(10, 1)), 'the floor is v1\'s rule: floor(net × (1 - 50/10000))');
  t.equal(plan.settlement, 'swap-address-memo');
  t.equal(plan.steps.length, 1);
  const [deposit] = plan.steps;
  t.equal(deposit!.kind, 'venue-deposit');
  t.equal(deposit!.target, NIGHTLY_SWAP_ADDRESS, 'the sandbox\'s swapAddress');
  t.equal(deposit!.instrument.id, 'Amulet');
  t.equal(deposit!.amount, '100', 'the give amount');
  t.equal(deposit!.settlement, 'swap-address-memo');
  const redeemed = nightlyQuoteBook(nightlySpec).redeem(deposit!.memo!);
  t.ok('quote' in redeemed, 'the memo is one the sandbox\'s Nightly issued');
  if ('quote' in redeemed) {
    t.equal(redeemed.quote.recipient, TAKER, 'for the taker');
    t.equal(deposit!.minOut, toWire(redeemed.quote.minOutAmount), 'minOut: that quote\'s minOutAmount');
  }
  t.ok(dec(deposit!.minOut!).gte(dec(plan.quoteRef.minReceive)), 'minOut >= quoteRef.minReceive');
});

t.test('a keyed v2 Nightly plan collects as any venue does: the fee legs in the want instrument, the figures of the same rule', async (t) => {
  const { plans } = service({ collecting: true });
  const params = paramsFor('nightly-keyed-fees', 'nightly', { feeBps: 5, feeRecipient: RECIPIENT }, 'partner');
  const plan = JSON.parse((await make(plans, params, partnerCaller('v2'))).json) as V2Plan;
  const fee = toWire(dec(plan.quoteRef.net).times(5).div(10_000).toDecimalPlaces(10, 1));
  t.strictSame(plan.quoteRef.clientFees, { integrator: { bps: 5, amount: fee, recipient: RECIPIENT }, service: { bps: 5, amount: fee }, userReceives: toWire(dec(plan.quoteRef.net).minus(fee).minus(fee)) });
  t.strictSame(plan.steps.map((s) => [s.kind, s.target, s.instrument.id, s.amount, s.memo, s.minOut, s.settlement, s.beneficiary ?? null]), [
    ['venue-deposit', NIGHTLY_SWAP_ADDRESS, 'Amulet', '100', plan.steps[0]!.memo, plan.steps[0]!.minOut, 'swap-address-memo', null],
    ['fee-escrow-lock', SERVICE, 'USDCx', fee, null, null, null, 'service'],
    ['fee-transfer', RECIPIENT, 'USDCx', fee, null, null, null, 'integrator'],
  ]);
  t.equal(plan.collectsFees, true);
});

t.test('"replay returns the same bytes without asking the venue again"', async (t) => {
  const venue = counted();
  const { plans } = service({ venue });
  const params = paramsFor('nightly-replay');
  const made = await make(plans, params, V2_APP);
  const again = await plans.lookup(params, V2_APP);
  t.equal(again.replay, made.json, 'the same bytes');
  t.equal(venue.asked.length, 1, 'Nightly was asked once, for the plan made');
});

t.test('Nightly\'s minimum below the floor (its pool moved since the cached quote): 502 venue_floor_below_service, nothing created, the caller\'s share given back', async (t) => {
  const { plans, quotes, records } = service({ perIp: 1, cacheTtlMs: 60_000 });
  const params = paramsFor('nightly-below');
  // The quote the floor comes from, cached; then Nightly pays 3 % less.
  const { json } = await quotes.baseQuote(params);
  t.ok(JSON.parse(json).venues.some((v: { venueId: string; available: boolean }) => v.venueId === 'nightly' && v.available));
  await moveNightly(-300);
  t.teardown(() => moveNightly(300));
  const err = await failure(make(plans, params, V2_APP));
  t.ok(err instanceof VenueFloorBelowService, String(err));
  t.equal((err as DomainError).code, 'venue_floor_below_service');
  t.match((err as Error).message, /^venue nightly would guarantee at least [0-9.]+, below the service's floor of [0-9.]+; nothing was created: re-quote and plan again$/);
  t.equal(await records.find({ caller: 'v2:app:127.0.0.1', idempotencyKey: 'nightly-below', fingerprint: params.fingerprint }), null, 'no record kept');
  // The share of one plan is still whole: a tradecraft plan is made, and only then is the share spent.
  t.equal((await make(plans, paramsFor('after-below', 'tradecraft'), V2_APP)).replayed, false, 'the refused plan did not spend the share');
  t.match(await failure(make(plans, paramsFor('over-share', 'tradecraft'), V2_APP)), { code: 'rate_limited' }, 'the plan made did');
});

t.test('Nightly refusing its terms is answered as a venue refusing the plan\'s quote: 409 venue_unavailable, or on the keyed route 502 quote_failed for no answer; nothing created, the share given back', async (t) => {
  const cases: Array<[string, (r: ExecutionTermsRequest) => Promise<VenueExecutionTerms>, PlanCaller, string, RegExp]> = [
    ['maintenance', async () => ({ available: false, rejectionCode: 'maintenance' }), V2_APP, 'venue_unavailable', /^venue nightly cannot execute 100 CC for USDCx now \(maintenance\); nothing was created$/],
    ['above the maximum, keyed', async () => ({ available: false, rejectionCode: 'above_maximum' }), partnerCaller('v2'), 'venue_unavailable', /\(above_maximum\)/],
    ['timeout, keyed', async () => ({ available: false, rejectionCode: 'timeout' }), partnerCaller('v2'), 'quote_failed', /^venue nightly did not give its terms for this plan \(timeout\); nothing was created; retry$/],
    ['an unreadable answer', () => Promise.reject(new Error(`unreadable, for ${TAKER}`)), V2_APP, 'venue_unavailable', /\(venue_error\)/],
    ['an unreadable answer, keyed', () => Promise.reject(new Error('unreadable')), partnerCaller('v2'), 'quote_failed', /\(venue_error\)/],
    [
      'a memo no plan step can hold',
      async (r) => ({ available: true, terms: { target: SWAP, memo: 'two words', magicAddress: null, minOut: r.floor, fromAmount: r.amount, toAmount: r.expectedOut, priceImpact: null } }),
      V2_APP,
      'venue_unavailable',
      /\(venue_error\)/,
    ],
  ];
  for (const [name, answer, caller, code, message] of cases) {
    const { plans, records, warnings } = service({ venue: counted(answer), perIp: 1 });
    const route = caller.route;
    const params = paramsFor(`refused-${name}`, 'nightly', {}, route);
    const err = await failure(make(plans, params, caller));
    t.ok(err instanceof DomainError && err.code === code, `${name}: ${code} (${String(err)})`);
    t.match((err as Error).message, message, name);
    t.equal(await records.find({ caller: `v2:${route === 'app' ? 'app:127.0.0.1' : 'partner:partner-1'}`, idempotencyKey: params.idempotencyKey, fingerprint: params.fingerprint }), null, `${name}: nothing kept`);
    t.notMatch(JSON.stringify(warnings), TAKER, `${name}: no log line holds the taker`);
    t.equal((await make(plans, paramsFor(`then-${name}`, 'tradecraft', {}, route), caller)).replayed, false, `${name}: the share was given back`);
  }
});

t.test('a taker or fee recipient that is the venue\'s swap address is refused as the request\'s fault, before anything is made', async (t) => {
  const swapTerms = async (r: ExecutionTermsRequest): Promise<VenueExecutionTerms> => ({ available: true, terms: { target: SWAP, memo: 'nswap-x', magicAddress: null, minOut: r.floor, fromAmount: r.amount, toAmount: r.expectedOut, priceImpact: null } });
  const { plans } = service({ venue: counted(swapTerms) });
  const asTaker = parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'nightly', takerParty: SWAP, idempotencyKey: 'swap-taker' }, 'app');
  t.match(await failure(make(plans, asTaker, V2_APP)), { code: 'bad_request', message: /'takerParty' is one of the plan's receivers/ });
  const asRecipient = paramsFor('swap-recipient', 'nightly', { feeBps: 5, feeRecipient: SWAP }, 'partner');
  t.match(await failure(make(plans, asRecipient, partnerCaller('v2'))), { code: 'bad_fee_params' });
});

t.test('tradecraft and v1 plans are made as before: the venue\'s terms are never asked, and v1\'s bytes are those of a service without Nightly\'s adapter', async (t) => {
  const venue = counted();
  // One cached quote for both services: a plan's asOf is its quote's.
  const { plans, options } = service({ venue, cacheTtlMs: 60_000 });
  const v2 = JSON.parse((await make(plans, paramsFor('tradecraft-v2', 'tradecraft'), V2_APP)).json) as V2Plan;
  t.equal(v2.steps[0]!.target, SANDBOX_POOL_PARTIES['CC/USDCx']);
  t.equal(v2.steps[0]!.memo, v2.quoteRef.minReceive);
  t.equal(v2.steps[0]!.minOut, v2.quoteRef.minReceive);
  const v1Caller: PlanCaller = { route: 'app', ip: '127.0.0.1' };
  const v1 = await make(plans, paramsFor('tradecraft-v1', 'tradecraft'), v1Caller);
  t.equal(venue.asked.length, 0, 'Nightly never asked');
  const { executableVenues: _, ...withoutNightly } = options;
  const without = new PlanService({ ...withoutNightly, records: new IdempotencyRecords(new InProcessSharedState(), SECRET) });
  const before = await make(without, paramsFor('tradecraft-v1', 'tradecraft'), v1Caller);
  t.equal(v1.json, before.json, 'the same v1 plan, byte for byte');
  t.match(await failure(make(plans, paramsFor('nightly-v1'), v1Caller)), { code: 'venue_unavailable', message: 'venue nightly is not executable in v1: plans are built for tradecraft only' }, 'v1 plans tradecraft alone');
  const pair = parsePlanRequest({ from: 'USDCx', to: 'CBTC', amount: '100', venueId: 'nightly', takerParty: TAKER, idempotencyKey: 'no-cc' }, 'app');
  t.match(await failure(make(plans, pair, V2_APP)), { code: 'unsupported_pair', message: 'the pair USDCx/CBTC is not executable: every swap has a CC leg' }, 'v2 says no version');
  t.match(await failure(make(plans, pair, v1Caller)), { code: 'unsupported_pair', message: 'the pair USDCx/CBTC is not executable: every v1 swap has a CC leg' }, 'v1 keeps its words');
});

// ---------------------------------------------------------------------------------------------
// The guardrail, on plan inputs built by hand as the service builds them from Nightly's terms.
const TERMS = { memo: 'nswap-0123456789abcdef', minOut: '14.8801508222' };

function nightlyInputs(route: PlanRoute, collecting: boolean): PlanInputs {
  const params = parsePlanRequest(
    { from: 'CC', to: 'USDCx', amount: '100', venueId: 'nightly', takerParty: TAKER, idempotencyKey: 'key-1', ...(route === 'partner' ? { feeBps: 5, feeRecipient: RECIPIENT } : {}) },
    route,
  );
  return {
    route,
    params,
    net: dec('14.9549254495'),
    asOf: '2026-11-22T11:59:59.500Z',
    terms: route === 'app' ? schemas.b2c : schemas.termsOf('partner-default')!,
    collecting,
    parties: { pool: SWAP, serviceFee: SERVICE, b2cFee: B2C },
    venueTerms: TERMS,
    planId: 'pl_test',
    createdAt: CREATED_AT,
  };
}

const REGISTRIES = new InstrumentRegistries({ instrumentAdmins: null, registries: {} });
const shape = (plan: V1Plan, inputs: PlanInputs): V2Plan => v2Plan(plan, venueExecution('nightly'), REGISTRIES, inputs.venueTerms);

t.test('guardrail: an honest Nightly plan passes, in the plan and in its v2 shape; its deposit is the terms\' target and memo, its minOut theirs', async (t) => {
  for (const [route, collecting] of [['app', false], ['app', true], ['partner', true]] as const) {
    const inputs = nightlyInputs(route, collecting);
    const plan = assemblePlan(inputs);
    t.strictSame(planViolations(plan, inputs), [], `${route} ${collecting}`);
    const shaped = shape(plan, inputs);
    t.strictSame(v2PlanViolations(shaped, plan, inputs, 'swap-address-memo'), [], `${route} ${collecting}: the v2 shape`);
    t.strictSame([shaped.steps[0]!.target, shaped.steps[0]!.memo, shaped.steps[0]!.minOut], [SWAP, TERMS.memo, TERMS.minOut]);
    t.equal(planFigures(inputs).minReceive, '14.8801508222', 'the floor, from the net as in v1');
  }
});

type Tamper = readonly [name: string, change: (plan: V1Plan, inputs: PlanInputs) => PlanInputs | void, expected: RegExp];
const TAMPERINGS: readonly Tamper[] = [
  ['the deposit sent elsewhere than the terms\' address', (p) => void (p.steps[0]!.target = STRANGER), /^the deposit's target is not the address the venue's terms name$/],
  ['the deposit sent to the venue\'s pool of another settlement', (p) => void (p.steps[0]!.target = SANDBOX_POOL_PARTIES['CC/USDCx']!), /^the deposit's target is not the address the venue's terms name$/],
  ['the deposit sent to the taker', (p) => void (p.steps[0]!.target = TAKER), /^step 0 \(venue-deposit\) sends funds back to the taker$/],
  ['the terms naming the taker as the address', (p, i) => { p.steps[0]!.target = TAKER; return { ...i, parties: { ...i.parties, pool: TAKER } }; }, /^step 0 \(venue-deposit\) sends funds back to the taker$/],
  ['the memo changed', (p) => void (p.steps[0]!.memo = 'nswap-ffffffffffffffff'), /^the deposit's memo is not the venue's own memo$/],
  ['the floor as the memo, not the venue\'s', (p) => void (p.steps[0]!.memo = p.quoteRef.minReceive), /^the deposit's memo is not the venue's own memo$/],
  ['the venue\'s minimum below the floor', (_p, i) => ({ ...i, venueTerms: { ...TERMS, minOut: '14.8801508221' } }), /^the venue's minimum is below the pinned floor$/],
  ['the venue\'s minimum no amount', (_p, i) => ({ ...i, venueTerms: { ...TERMS, minOut: 'lots' } }), /^the venue's minimum is below the pinned floor$/],
];

t.test('guardrail: "target is the venue\'s terms target, memo exactly the terms\' memo, minOut at least the floor, the taker never a receiver": each tampering trips it', async (t) => {
  for (const [name, change, expected] of TAMPERINGS) {
    const honest = nightlyInputs('app', true);
    const plan = structuredClone(assemblePlan(honest));
    const inputs = change(plan, honest) ?? honest;
    const violations = planViolations(plan, inputs);
    t.ok(violations.some((v) => expected.test(v)), `${name}: caught (${JSON.stringify(violations)})`);
    t.notOk(violations.some((v) => [TAKER, SWAP, STRANGER].some((p) => v.includes(p))), `${name}: names no party`);
  }
});

type V2Tamper = readonly [name: string, change: (shaped: V2Plan) => void, expected: RegExp];
const V2_TAMPERINGS: readonly V2Tamper[] = [
  ['minOut lowered to below the floor', (s) => void (s.steps[0]!.minOut = '14'), /^step 0 \(venue-deposit\) is not bound to at least the pinned floor$/],
  ['minOut raised above the venue\'s own', (s) => void (s.steps[0]!.minOut = '15'), /^step 0 \(venue-deposit\) is not bound to at least the pinned floor$/],
  ['minOut dropped', (s) => void (s.steps[0]!.minOut = null), /^step 0 \(venue-deposit\) is not bound to at least the pinned floor$/],
  ['the deposit redirected after the check', (s) => void (s.steps[0]!.target = STRANGER), /^step 0 \(venue-deposit\) is not the checked plan's step$/],
  ['the memo changed after the check', (s) => void (s.steps[0]!.memo = 'nswap-ffffffffffffffff'), /^step 0 \(venue-deposit\) is not the checked plan's step$/],
  ['a fee leg redirected after the check', (s) => void (s.steps[1]!.target = STRANGER), /^step 1 \(b2c-fee-transfer\) is not the checked plan's step$/],
  ['the deposit said to settle as tradecraft', (s) => void (s.steps[0]!.settlement = 'memo-floor'), /^step 0 \(venue-deposit\) does not settle as the venue settles$/],
  ['the plan said to settle as tradecraft', (s) => void (s.settlement = 'memo-floor'), /^settlement is not how the venue settles$/],
  ['a minimum on a fee leg', (s) => void (s.steps[1]!.minOut = '1'), /^step 1 \(b2c-fee-transfer\) is a fee leg with a venue's settlement or minimum$/],
  ['a step dropped', (s) => void s.steps.pop(), /^the steps are not the checked plan's$/],
  ['quoteRef changed', (s) => void (s.quoteRef.minReceive = '1'), /^quoteRef is not the checked plan's$/],
];

t.test('guardrail, v2 shape: the steps the guardrail checked, unchanged, and the deposit bound to the venue\'s minimum, never below the floor', async (t) => {
  for (const [name, change, expected] of V2_TAMPERINGS) {
    const inputs = nightlyInputs('app', true);
    const plan = assemblePlan(inputs);
    const shaped = structuredClone(shape(plan, inputs));
    change(shaped);
    const violations = v2PlanViolations(shaped, plan, inputs, 'swap-address-memo');
    t.ok(violations.some((v) => expected.test(v)), `${name}: caught (${JSON.stringify(violations)})`);
  }
});

t.test('guardrail: tradecraft\'s rules are unchanged: its memo is the floor, and its v2 minOut the floor', async (t) => {
  const inputs = { ...nightlyInputs('app', false), parties: { pool: SANDBOX_POOL_PARTIES['CC/USDCx']!, serviceFee: SERVICE, b2cFee: B2C } };
  delete (inputs as { venueTerms?: unknown }).venueTerms;
  const plan = assemblePlan(inputs);
  t.equal(plan.steps[0]!.memo, '14.8801508222');
  t.strictSame(planViolations(plan, inputs), []);
  const shaped = v2Plan(plan, venueExecution('tradecraft'), REGISTRIES);
  t.strictSame(v2PlanViolations(shaped, plan, inputs, 'memo-floor'), []);
  const tampered = structuredClone(plan);
  tampered.steps[0]!.memo = TERMS.memo;
  t.ok(planViolations(tampered, inputs).includes("the deposit's memo is not the pinned floor"), 'a memo other than the floor trips it');
});
