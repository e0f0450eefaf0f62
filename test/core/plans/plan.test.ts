// The plan core without HTTP: the floor (core/quotes/math.ts), the pure assembler
// (core/plans/assembly.ts), the party-isolation guardrail (core/plans/guardrail.ts), the plan service
// stopping a tampered plan (core/plans/service.ts) and the request fingerprint (core/plans/params.ts),
// against the rules openapi/v1.yaml states for PlanStep, B2cFee and the two plan operations; the
// routes over HTTP are test/handlers/operations/v1/plan.test.ts.
// Expected figures are written out by hand or computed independently in integer arithmetic.
import fc from 'fast-check';
import t from 'tap';
import { dec, toWire } from '../../../core/decimal.js';
import { DomainError } from '../../../core/errors.js';
import { DEFAULT_FEE_SCHEMAS, FeeSchemas } from '../../../core/quotes/fee-schemas.js';
import { hash } from 'node:crypto';
import { IdempotencyRecords, type PlanRequestKey } from '../../../core/plans/idempotency.js';
import { assemblePlan, planFigures, type PlanInputs } from '../../../core/plans/assembly.js';
import { PLAN_VALIDITY_MS } from '../../../core/plan-validity.js';
import { planViolations } from '../../../core/plans/guardrail.js';
import { parsePlanRequest, type PlanRoute } from '../../../core/plans/params.js';
import { PlanService } from '../../../core/plans/service.js';
import { QuoteService } from '../../../core/quotes/service.js';
import { minReceive } from '../../../core/quotes/math.js';
import { SANDBOX_POOL_PARTIES } from '../../../sandbox/venues/market.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState } from '../../../core/state/shared-state.js';
import type { AppPlan, PlanRequest, PlanStep } from '../../../core/contract/v1.js';

const party = (hint: string, digit: string): string => `${hint}::1220${digit.repeat(64)}`;
const TAKER = party('taker', 'a');
const POOL = party('pool', '1');
const SERVICE = party('service-fee', '2');
const B2C = party('b2c-fee', '3');
const RECIPIENT = party('wallet-co', '4');
const STRANGER = party('stranger', '5');
const ALL_PARTIES = [TAKER, POOL, SERVICE, B2C, RECIPIENT, STRANGER];
/** A party's fingerprint part, which alone would identify it too. */
const fingerprintOf = (p: string): string => p.slice(p.indexOf('::') + 2);

const schemas = new FeeSchemas(DEFAULT_FEE_SCHEMAS);
const SECRET = 'plan-core-test-secret-0123456789abcdef';
const CREATED_AT = new Date('2026-11-22T12:00:00.000Z');
/** Written out, not derived from PLAN_VALIDITY_MS: the spec's 90 seconds after creation. */
const EXPIRY = '2026-11-22T12:01:30.000Z';

// ---------------------------------------------------------------------------------------------
// An independent floor: integers of 1e-10, BigInt division (floors for non-negative operands).
const SCALE = 10n ** 10n;
const toUnits = (text: string): bigint => {
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * SCALE + BigInt(frac.padEnd(10, '0'));
};
const fromUnits = (units: bigint): string => {
  const frac = (units % SCALE).toString().padStart(10, '0').replace(/0+$/, '');
  return frac === '' ? (units / SCALE).toString() : `${units / SCALE}.${frac}`;
};
const floorOracle = (net: string, slippageBps: number): string => fromUnits((toUnits(net) * BigInt(10_000 - slippageBps)) / 10_000n);

t.test('"minReceive = floor(net × (1 − slippageBps/10000)) to 10 fractional digits" (property, against integer arithmetic)', async (t) => {
  // 0 < net < 1e9 with 0-10 fractional digits, trailing zeros allowed ("1.50"): the text a venue may give.
  const net = fc.integer({ min: 0, max: 10 }).chain((digits) =>
    fc.bigInt({ min: 1n, max: 10n ** BigInt(9 + digits) - 1n }).map((n) => {
      if (digits === 0) return n.toString();
      const text = n.toString().padStart(digits + 1, '0');
      return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
    }),
  );
  fc.assert(
    fc.property(net, fc.integer({ min: 0, max: 5000 }), (n, s) => toWire(minReceive(dec(n), s)) === floorOracle(n, s)),
    { numRuns: 3000 },
  );
  // The spec's example: 14.9549252252 × 0.995 = 14.88015059907…, floored, never rounded up to …0599 1.
  t.equal(toWire(minReceive(dec('14.9549252252'), 50)), '14.880150599');
  t.equal(floorOracle('14.9549252252', 50), '14.880150599', 'the oracle agrees with the spec example');
  t.equal(toWire(minReceive(dec('14.9549252252'), 0)), '14.9549252252', 'no slippage: the floor is net itself');
  t.equal(toWire(minReceive(dec('123.4500'), 0)), '123.45', 'and in canonical form');
  t.equal(toWire(minReceive(dec('14.9549252253'), 5000)), '7.4774626126', 'half of …253 is …1265, floored');
  t.equal(toWire(minReceive(dec('0.0000000003'), 5000)), '0.0000000001', 'half of 3e-10 floors to 1e-10');
  t.equal(toWire(minReceive(dec('0.0000000001'), 5000)), '0', 'half of the smallest unit floors to 0');
});

// ---------------------------------------------------------------------------------------------
interface Case {
  readonly route: PlanRoute;
  readonly collecting: boolean;
  readonly from?: string;
  readonly to?: string;
  readonly amount?: string;
  readonly net?: string;
  readonly feeBps?: number;
}

/** Plan inputs built by hand, as PlanService would build them from a quote. */
function inputsFor({ route, collecting, from = 'CC', to = 'USDCx', amount = '100', net = '14.9549252252', feeBps }: Case): PlanInputs {
  const body: PlanRequest = { from, to, amount, venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'key-1' };
  const params = parsePlanRequest(feeBps === undefined ? body : { ...body, feeBps, feeRecipient: RECIPIENT }, route);
  return {
    route,
    params,
    net: dec(net),
    asOf: '2026-11-22T11:59:59.500Z',
    terms: route === 'app' ? schemas.b2c : schemas.termsOf('partner-default')!,
    collecting,
    parties: { pool: POOL, serviceFee: SERVICE, b2cFee: B2C },
    planId: 'pl_test',
    createdAt: CREATED_AT,
  };
}
const planFor = (c: Case) => assemblePlan(inputsFor(c));
const feeLegsOf = (plan: AppPlan): PlanStep[] => plan.steps.slice(1);

t.test('assemblePlan: "venue-deposit (always, first: the give amount in the give instrument to the venue\'s pool party for the pair; memo is the floor)", expiring with the plan 90 s after creation', async (t) => {
  t.equal(PLAN_VALIDITY_MS, 90_000);
  for (const c of [{ route: 'app', collecting: true }, { route: 'partner', collecting: false, from: 'USDCx', to: 'CC', amount: '15' }] as const) {
    const plan = planFor(c);
    const [deposit] = plan.steps;
    t.strictSame(deposit, { kind: 'venue-deposit', target: POOL, instrument: c.from === 'USDCx' ? 'USDCx' : 'Amulet', amount: c.amount ?? '100', memo: '14.880150599', expiresAt: EXPIRY }, `${c.route} deposit`);
    t.equal(plan.quoteRef.minReceive, '14.880150599', 'the memo is quoteRef.minReceive');
    t.equal(plan.expiry, EXPIRY);
    t.equal(plan.steps.filter((s) => s.kind === 'venue-deposit').length, 1, 'one deposit only');
  }
});

t.test('assemblePlan: "While fee collection is paused: collectsFees: false, zeroed disclosure, no fee step"', async (t) => {
  for (const c of [{ route: 'app', collecting: false }, { route: 'partner', collecting: false, feeBps: 10 }] as const) {
    const plan = planFor(c);
    t.equal(plan.collectsFees, false);
    t.equal(plan.steps.length, 1, 'the deposit alone');
    t.strictSame(plan.quoteRef.clientFees.service, { bps: 0, amount: '0' });
    t.strictSame(plan.quoteRef.clientFees.integrator, c.route === 'partner' ? { bps: 0, amount: '0', recipient: RECIPIENT } : null);
    t.equal(plan.quoteRef.clientFees.userReceives, '14.9549252252', 'the whole net');
    t.equal(plan.b2cFee, undefined);
  }
});

t.test('assemblePlan: keyless "b2c-fee-transfer (the service fee, in the want instrument, to the service\'s keyless fee party)" and "B2cFee … ccAmount"', async (t) => {
  // CC given: floor(14.9549252252 × 5/10000) = 0.0074774626 USDCx; ccAmount floor(100 × 5/10000) CC.
  const input = planFor({ route: 'app', collecting: true });
  t.equal(input.collectsFees, true);
  t.strictSame(feeLegsOf(input), [{ kind: 'b2c-fee-transfer', target: B2C, instrument: 'USDCx', amount: '0.0074774626', expiresAt: EXPIRY }]);
  t.equal(input.quoteRef.clientFees.service.amount, '0.0074774626');
  t.strictSame(input.b2cFee, { direction: 'input-cc', bps: 5, ccAmount: '0.05' });
  // ccAmount floors too: 5 bps of this amount has 11 fractional digits.
  t.strictSame(planFor({ route: 'app', collecting: true, amount: '123.4567891' }).b2cFee?.ccAmount, '0.0617283945', '123.4567891 × 0.0005 = 0.06172839455, floored');
  // CC wanted: the fee is the leg itself, in CC.
  const output = planFor({ route: 'app', collecting: true, from: 'USDCx', to: 'CC', amount: '15', net: '99.6503497' });
  t.strictSame(feeLegsOf(output), [{ kind: 'b2c-fee-transfer', target: B2C, instrument: 'Amulet', amount: '0.0498251748', expiresAt: EXPIRY }]);
  t.strictSame(output.b2cFee, { direction: 'output-cc', bps: 5, ccAmount: '0.0498251748' });
});

t.test('assemblePlan: partner "service\'s flat fee to the service fee party (fee-escrow-lock) and the full integrator fee to feeRecipient (fee-transfer)"', async (t) => {
  const plan = planFor({ route: 'partner', collecting: true, feeBps: 10 });
  t.strictSame(feeLegsOf(plan), [
    { kind: 'fee-escrow-lock', target: SERVICE, instrument: 'USDCx', amount: '0.0074774626', expiresAt: EXPIRY, beneficiary: 'service' },
    { kind: 'fee-transfer', target: RECIPIENT, instrument: 'USDCx', amount: '0.0149549252', expiresAt: EXPIRY, beneficiary: 'integrator' },
  ]);
  t.strictSame(plan.quoteRef.clientFees, { service: { bps: 5, amount: '0.0074774626' }, integrator: { bps: 10, amount: '0.0149549252', recipient: RECIPIENT }, userReceives: '14.9324928374' });
  t.equal(plan.collectsFees, true);
  t.equal(plan.b2cFee, undefined, 'b2cFee is the keyless plan\'s block');
  t.strictSame(feeLegsOf(planFor({ route: 'partner', collecting: true, feeBps: 0 })).map((s) => s.kind), ['fee-escrow-lock'], 'feeBps 0: no integrator leg');
  t.strictSame(feeLegsOf(planFor({ route: 'partner', collecting: true })).map((s) => s.kind), ['fee-escrow-lock'], 'no integrator fee: no integrator leg');
});

t.test('assemblePlan: "A leg whose fee is zero is left out" (a fee that floors to 0), and collectsFees is false when no leg remains', async (t) => {
  // 9e-8 × 5/10000 = 4.5e-11 and 9e-8 × 10/10000 = 9e-11: both floor to 0.
  for (const c of [{ route: 'app', collecting: true, net: '0.00000009' }, { route: 'partner', collecting: true, feeBps: 10, net: '0.00000009' }] as const) {
    const plan = planFor(c);
    t.equal(plan.steps.length, 1, `${c.route}: no fee leg`);
    t.equal(plan.collectsFees, false);
    t.equal(plan.b2cFee, undefined);
  }
  // 1.5e-7: the service's 7.5e-11 floors to 0, the integrator's 1.5e-10 to 1e-10; one leg remains.
  const one = planFor({ route: 'partner', collecting: true, feeBps: 10, net: '0.00000015' });
  t.strictSame(feeLegsOf(one).map((s) => [s.kind, s.amount]), [['fee-transfer', '0.0000000001']]);
  t.equal(one.collectsFees, true);
});

t.test('assemblePlan: the trustWindow names "the give amount, instrument and the expiry", and one sentence per fee leg', async (t) => {
  for (const c of [{ route: 'app', collecting: false }, { route: 'app', collecting: true }, { route: 'partner', collecting: true, feeBps: 10, from: 'USDCx', to: 'CC', amount: '15.5' }] as const) {
    const plan = planFor(c);
    const deposit = plan.steps[0]!;
    t.match(plan.trustWindow, `Your ${deposit.amount} ${deposit.instrument} stay locked`, `${c.route}: the give amount and instrument`);
    t.match(plan.trustWindow, `by ${EXPIRY}`);
    const legs = feeLegsOf(plan);
    t.equal(plan.trustWindow.split('The fee of ').length - 1, legs.length, 'one fee sentence per leg');
    for (const leg of legs) t.match(plan.trustWindow, `The fee of ${leg.amount} ${leg.instrument} to ${leg.beneficiary === 'integrator' ? 'your integrator' : 'the service'}`);
    for (const p of ALL_PARTIES) t.notMatch(plan.trustWindow, p, 'no party in the text');
  }
});

// ---------------------------------------------------------------------------------------------
const HONEST: readonly Case[] = [
  { route: 'app', collecting: false },
  { route: 'app', collecting: true },
  { route: 'app', collecting: true, from: 'USDCx', to: 'CC', amount: '15', net: '99.6503497' },
  { route: 'app', collecting: true, net: '0.00000009' },
  { route: 'partner', collecting: false, feeBps: 10 },
  { route: 'partner', collecting: true },
  { route: 'partner', collecting: true, feeBps: 10 },
  { route: 'partner', collecting: true, feeBps: 0, from: 'USDCx', to: 'CC', amount: '15', net: '99.6503497' },
  { route: 'partner', collecting: true, feeBps: 10, net: '0.00000015' },
];

t.test('planViolations: an honestly assembled plan "may be returned" (no violation) on every route and fee setting', async (t) => {
  for (const c of HONEST) t.strictSame(planViolations(assemblePlan(inputsFor(c)), inputsFor(c)), [], JSON.stringify(c));
});

t.test('planFigures: computed once per plan and frozen, so an assembler that changes them for the guardrail throws instead', async (t) => {
  for (const c of HONEST) {
    const inputs = inputsFor(c);
    const figures = planFigures(inputs);
    t.strictSame(planViolations(assemblePlan(inputs, figures), inputs, figures), [], JSON.stringify(c));
    t.throws(() => {
      (figures.fees.service as { amount: string }).amount = '0';
    }, TypeError);
    t.throws(() => {
      (figures as { minReceive: string }).minReceive = '0';
    }, TypeError);
    t.throws(() => {
      (figures.b2cFee as { bps: number }).bps = 0;
    }, TypeError);
    if (figures.fees.integrator) {
      t.throws(() => {
        (figures.fees.integrator as { amount: string }).amount = '0';
      }, TypeError);
    }
  }
});

type Tamper = readonly [name: string, c: Case, change: (plan: AppPlan) => void, expected: RegExp];
const APP: Case = { route: 'app', collecting: true };
const PARTNER: Case = { route: 'partner', collecting: true, feeBps: 10 };
const step = (plan: AppPlan, i: number): PlanStep => plan.steps[i]!;
const TAMPERINGS: readonly Tamper[] = [
  ['deposit sent to the taker', APP, (p) => void (step(p, 0).target = TAKER), /step 0 \(venue-deposit\) sends funds back to the taker/],
  ['deposit sent to another party', PARTNER, (p) => void (step(p, 0).target = STRANGER), /deposit's target is not the venue's pool party/],
  ['memo changed', APP, (p) => void (step(p, 0).memo = '14.9'), /deposit's memo is not the pinned floor/],
  ['deposit amount changed', APP, (p) => void (step(p, 0).amount = '1000'), /deposit's amount is not the give amount/],
  ['deposit instrument changed', APP, (p) => void (step(p, 0).instrument = 'USDCx'), /deposit's instrument is not the give instrument/],
  ['b2c fee leg redirected', APP, (p) => void (step(p, 1).target = STRANGER), /step 1 \(b2c-fee-transfer\) does not go to the configured service fee party/],
  ['integrator leg redirected to the service party', PARTNER, (p) => void (step(p, 2).target = SERVICE), /step 2 \(fee-transfer\) does not go to the configured integrator fee party/],
  ['service fee raised', PARTNER, (p) => void (step(p, 1).amount = '0.0074774627'), /step 1 \(fee-escrow-lock\) does not pay the disclosed service fee/],
  [
    'an extra step to an unknown party',
    { route: 'partner', collecting: true },
    (p) => void p.steps.push({ kind: 'fee-transfer', target: STRANGER, instrument: 'USDCx', amount: '1', expiresAt: EXPIRY, beneficiary: 'integrator' }),
    /step 2 \(fee-transfer\) does not go to the configured integrator fee party/,
  ],
  [
    'a fee leg on a non-collecting plan',
    { route: 'app', collecting: false },
    (p) => void p.steps.push({ kind: 'b2c-fee-transfer', target: B2C, instrument: 'USDCx', amount: '0.0074774626', expiresAt: EXPIRY }),
    /step 1 \(b2c-fee-transfer\) collects a fee while fee collection is off/,
  ],
  ['a partner-only kind on an app plan', APP, (p) => void Object.assign(step(p, 1), { kind: 'fee-escrow-lock', target: SERVICE, beneficiary: 'service' }), /step 1 \(fee-escrow-lock\) is not a fee leg this route may carry/],
  ['quoteRef.net changed', APP, (p) => void (p.quoteRef.net = '15'), /quoteRef\.net is not the venue's quoted net/],
  ['expiry changed', PARTNER, (p) => void (p.expiry = '2026-11-22T13:00:00.000Z'), /expiry is not 90 seconds after creation/],
  ['b2cFee direction flipped', APP, (p) => void (p.b2cFee!.direction = 'output-cc'), /the b2cFee block is not/],
  ['b2cFee ccAmount understated', APP, (p) => void (p.b2cFee!.ccAmount = '0.01'), /the b2cFee block is not/],
  ['a beneficiary on a keyless fee leg', APP, (p) => void (step(p, 1).beneficiary = 'integrator'), /step 1 \(b2c-fee-transfer\) does not name its beneficiary as its kind says/],
  ['a partner leg naming the wrong beneficiary', PARTNER, (p) => void (step(p, 1).beneficiary = 'integrator'), /step 1 \(fee-escrow-lock\) does not name its beneficiary as its kind says/],
  ['mode changed', APP, (p) => void ((p as { mode: string }).mode = 'direct'), /mode is not managed-deposit/],
  ['every expiry moved together', APP, (p) => { p.expiry = '2026-11-22T13:00:00.000Z'; for (const s of p.steps) s.expiresAt = p.expiry; }, /step 0 \(venue-deposit\) does not expire with the plan/],
];

t.test('planViolations: "Funds may move only from the taker to the venue\'s pool … or to a configured fee party … A violation names the rule, never a party"', async (t) => {
  const noParty = (violations: readonly string[], name: string) => {
    for (const v of violations) {
      for (const p of ALL_PARTIES) t.notOk(v.includes(p) || v.includes(fingerprintOf(p)), `${name}: "${v}" names no party`);
    }
  };
  for (const [name, c, change, expected] of TAMPERINGS) {
    const inputs = inputsFor(c);
    const plan = structuredClone(assemblePlan(inputs));
    change(plan);
    const violations = planViolations(plan, inputs);
    t.ok(violations.some((v) => expected.test(v)), `${name}: caught (${JSON.stringify(violations)})`);
    noParty(violations, name);
  }
});

// ---------------------------------------------------------------------------------------------
t.test('PlanService: "A violation is 500 guardrail, logged (without the taker party) and counted; nothing is returned or stored"', async (t) => {
  const now = () => CREATED_AT;
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const venues = sandbox.adapters();
  // A deadline no busy machine reaches: the sandbox answers in milliseconds, and a venue marked
  // timeout would leave no plan to tamper with.
  const quotes = new QuoteService({ venues, venueTimeoutMs: 30_000, cacheTtlMs: 10_000, cacheMaxEntries: 100, isVenueDown: () => false, onVenueError: () => {}, now });
  const records = new IdempotencyRecords(new InProcessSharedState(), SECRET);
  const logged: Array<{ level: string; fields: Record<string, unknown>; message: string }> = [];
  const entry = (level: string) => (fields: Record<string, unknown>, message: string) => void logged.push({ level, fields, message });
  const log = { info: entry('info'), warn: entry('warn'), error: entry('error') };
  const serviceWith = (assemble?: (inputs: PlanInputs) => AppPlan) =>
    new PlanService({
      quotes,
      schemas,
      collecting: true,
      supportedVenueId: 'tradecraft',
      venueIds: venues.map((v) => v.id),
      poolParties: SANDBOX_POOL_PARTIES,
      serviceFeeParty: SERVICE,
      b2cFeeParty: B2C,
      records,
      log,
      now,
      assemble,
    });
  // The tampering assembler sends the deposit back to the taker.
  const tampering = serviceWith((inputs) => {
    const plan = assemblePlan(inputs);
    plan.steps[0] = { ...plan.steps[0]!, target: inputs.params.takerParty };
    return plan;
  });
  const params = parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'retry-me' }, 'app');
  const caller = { route: 'app', ip: '127.0.0.1' } as const;

  t.equal(tampering.guardrailTrips, 0);
  for (const trips of [1, 2]) {
    const err = await tampering.create(params, caller, (await tampering.lookup(params, caller)).record).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(err instanceof DomainError && err.code === 'guardrail', `attempt ${trips}: 500 guardrail (${String(err)})`);
    t.notMatch(String(err), TAKER, 'the error names no party');
    t.equal(tampering.guardrailTrips, trips, 'counted');
  }
  const errors = logged.filter((l) => l.level === 'error');
  t.equal(errors.length, 2, 'each trip is logged at error');
  t.match(errors[0]!.fields, { route: 'app', venueId: 'tradecraft', guardrailTrips: 1 });
  t.ok((errors[0]!.fields.violations as string[]).some((v) => /sends funds back to the taker/.test(v)), 'the log names the rule');
  const text = JSON.stringify(logged);
  t.notOk(text.includes(TAKER), 'the log never holds the taker party');
  t.notOk(text.includes(fingerprintOf(TAKER)), "nor its fingerprint part");
  const held = { caller: 'app:127.0.0.1', idempotencyKey: 'retry-me', fingerprint: params.fingerprint };
  t.equal(await records.find(held), null, 'nothing stored under the key');

  // Nothing was stored, so the same key makes a plan, not a replay or a conflict.
  const honest = serviceWith();
  const looked = await honest.lookup(params, caller);
  t.strictSame(looked, { replay: null, record: null }, 'nothing held under the key');
  const made = await honest.create(params, caller, looked.record);
  t.equal(made.replayed, false);
  const plan = JSON.parse(made.json) as AppPlan;
  t.equal(plan.steps[0]!.target, SANDBOX_POOL_PARTIES['CC/USDCx'], 'the deposit goes to the sandbox pool');
  t.equal(plan.idempotencyKey, 'retry-me');
  t.not(await records.find(held), null, 'the honest plan is stored');
  t.equal(honest.guardrailTrips, 0);
});

// ---------------------------------------------------------------------------------------------
t.test('parsePlanRequest: the fingerprint is "equal for the same request however it is spelt … different for any other", and never holds the taker', async (t) => {
  const BASE: PlanRequest = { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'k' };
  const fp = (change: Partial<PlanRequest>, route: PlanRoute = 'app') => parsePlanRequest({ ...BASE, ...change }, route).fingerprint;
  const base = fp({});
  t.equal(fp({ slippageBps: 50 }), base, 'slippageBps 50 is the default');
  t.equal(fp({ slippageBps: '50' }), base, '"50" is 50');
  t.equal(fp({ from: 'cc' }), base, 'cc is CC');
  t.equal(fp({ from: 'Amulet' }), base, 'Amulet is CC');
  t.equal(fp({ amount: '100.0' }), base, '100.0 is 100');
  t.equal(fp({ quoteRef: { venueId: 'tradecraft' } }), base, 'quoteRef is not part of the meaning');

  const others: Array<[string, string]> = [
    ['another amount', fp({ amount: '100.0000000001' })],
    ['another pair', fp({ to: 'CBTC' })],
    ['another venue', fp({ venueId: 'cantex' })],
    ['another taker', fp({ takerParty: STRANGER })],
    ['another slippage', fp({ slippageBps: 51 })],
    ['the partner route', fp({}, 'partner')],
    ['an integrator fee', fp({ feeBps: 10, feeRecipient: RECIPIENT }, 'partner')],
    ['another integrator rate', fp({ feeBps: 9, feeRecipient: RECIPIENT }, 'partner')],
    ['a zero integrator rate', fp({ feeBps: 0, feeRecipient: RECIPIENT }, 'partner')],
    ['another integrator recipient', fp({ feeBps: 10, feeRecipient: STRANGER }, 'partner')],
  ];
  const all = [base, ...others.map(([, f]) => f)];
  t.equal(new Set(all).size, all.length, 'all pairwise different');
  t.not(fp({}, 'partner'), base, 'app and partner differ');
  t.equal(fp({ feeBps: '10', feeRecipient: RECIPIENT }, 'partner'), fp({ feeBps: 10, feeRecipient: RECIPIENT }, 'partner'), 'feeBps "10" is 10');
});

t.test('PlanService: "the plan is bound to the caller that asked": a held record naming another caller is never replayed', async (t) => {
  const params = parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'k' }, 'app');
  // A store that answers every read with a record made for another client, and never takes a
  // new one: as a key-derivation fault or a tampered store would.
  const theirs = new IdempotencyRecords(new InProcessSharedState(), SECRET).digests({ caller: 'app:203.0.113.9', idempotencyKey: 'k', fingerprint: params.fingerprint });
  class ForeignRecords extends InProcessSharedState {
    override async getValues(keys: readonly string[]) {
      return keys.map(() => `plan-record/3\n${theirs.fingerprint}\n${theirs.boundTo}\n{"planId":"pl_theirs"}`);
    }

    override async setIfAbsent() {
      return false;
    }
  }
  const logged: unknown[] = [];
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const service = new PlanService({
    quotes: new QuoteService({ venues: sandbox.adapters(), venueTimeoutMs: 30_000, cacheTtlMs: 10_000, cacheMaxEntries: 10, isVenueDown: () => false, onVenueError: () => {}, now: () => CREATED_AT }),
    schemas,
    collecting: false,
    supportedVenueId: 'tradecraft',
    venueIds: ['tradecraft'],
    poolParties: SANDBOX_POOL_PARTIES,
    serviceFeeParty: null,
    b2cFeeParty: null,
    records: new IdempotencyRecords(new ForeignRecords(), SECRET),
    log: { info: () => {}, warn: () => {}, error: (fields) => void logged.push(fields) },
    now: () => CREATED_AT,
  });
  const caller = { route: 'app', ip: '127.0.0.1' } as const;
  await t.rejects(service.lookup(params, caller), { code: 'guardrail' }, 'a replay');
  await t.rejects(service.create(params, caller, null), { code: 'guardrail' }, 'a create whose record lost to it');
  t.equal(service.guardrailTrips, 2);
  t.notMatch(JSON.stringify(logged), 'pl_theirs', 'the other caller\'s plan is not logged either');
});

t.test('"planId" is derived, keyed by the secret, from the caller, the idempotencyKey and the request: the same request re-made has the same id; a changed request, another caller or another secret never does', async (t) => {
  const request = (over: Partial<PlanRequestKey> = {}): PlanRequestKey => ({ caller: 'app:127.0.0.1', idempotencyKey: 'swap-1', fingerprint: 'fp-1', ...over });
  const records = new IdempotencyRecords(new InProcessSharedState(), SECRET);
  const id = records.planId(request());
  t.match(id, /^pl_[A-Za-z0-9_-]{22}$/, 'pl_ and 16 bytes in base64url, as the spec\'s pattern says');
  t.equal(new IdempotencyRecords(new InProcessSharedState(), SECRET).planId(request()), id, 'the same on another instance, or after every record was lost');
  const others = [
    records.planId(request({ fingerprint: 'fp-2' })),
    records.planId(request({ idempotencyKey: 'swap-2' })),
    records.planId(request({ caller: 'app:127.0.0.2' })),
    records.planId(request({ caller: 'partner:k_1' })),
    new IdempotencyRecords(new InProcessSharedState(), `${SECRET}-other`).planId(request()),
  ];
  t.equal(new Set([id, ...others]).size, 6, 'each change makes another id');
  // Field boundaries cannot be shifted to collide: the parts are separated, and each keyed.
  t.not(records.planId(request({ idempotencyKey: 'a\0b', fingerprint: 'c' })), records.planId(request({ idempotencyKey: 'a', fingerprint: 'b\0c' })));
  const ids = Array.from({ length: 1000 }, (_, n) => records.planId(request({ idempotencyKey: `k-${n}` })));
  t.equal(new Set(ids).size, ids.length, 'no id repeats across a thousand requests');
  const ones = ids.reduce((sum, one) => sum + [...Buffer.from(one.slice(3), 'base64url')].reduce((s, byte) => s + byte.toString(2).replaceAll('0', '').length, 0), 0);
  const share = ones / (ids.length * 128);
  t.ok(share > 0.48 && share < 0.52, `about half the bits are set (${share.toFixed(4)}): an HMAC's, not a counter's`);
});

t.test('IdempotencyRecords: "a record holds the request\'s fingerprint, the caller\'s digest and the plan as sent": the plan\'s text unescaped, never the taker', async (t) => {
  const stored = new Map<string, string>();
  const state = new InProcessSharedState();
  const spy = Object.assign(Object.create(state) as InProcessSharedState, {
    setIfAbsent: (key: string, value: string, ttlMs: number) => {
      stored.set(key, value);
      return state.setIfAbsent(key, value, ttlMs);
    },
  });
  const records = new IdempotencyRecords(spy, SECRET);
  const plan = JSON.stringify({ planId: 'pl_x', note: 'a "quoted" line\nbreak', takerParty: 'kept in the plan the taker receives' });
  const request: PlanRequestKey = { caller: 'app:127.0.0.1', idempotencyKey: 'k1', fingerprint: 'fp_abc-_' };
  const record = { ...records.digests(request), plan };
  t.equal(await records.claim(request, record), record, 'the first claim holds');
  const [raw] = [...stored.values()];
  t.ok(raw!.endsWith(`\n${plan}`), 'the plan is kept byte for byte, not escaped inside another JSON text');
  t.notOk(raw!.includes('127.0.0.1'), 'the caller is kept as a digest');
  t.strictSame(await records.find(request), record, 'read back whole');
  t.strictSame(await records.claim(request, { ...record, plan: '{"planId":"pl_other"}' }), record, 'a later claim gets the held record');
});

t.test('"Idempotency records fingerprint the taker with a keyed hash (an HMAC under a secret all instances share)": no plain digest of the taker, the request or the caller is stored', async (t) => {
  const params = parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'guess-me' }, 'app');
  const request: PlanRequestKey = { caller: 'app:198.51.100.7', idempotencyKey: 'guess-me', fingerprint: params.fingerprint };
  const plainDigests = (text: string) => [hash('sha256', text, 'hex'), hash('sha256', text, 'base64url'), hash('sha256', text, 'base64')];
  const guesses = [
    ...plainDigests(TAKER),
    ...plainDigests(`caller\0${request.caller}`),
    ...plainDigests(request.caller),
    params.fingerprint,
    fingerprintOf(TAKER),
    TAKER,
    '198.51.100.7',
  ];
  const rawOf = async (secret: string) => {
    const stored: string[] = [];
    const state = new InProcessSharedState();
    const spy = Object.assign(Object.create(state) as InProcessSharedState, {
      setIfAbsent: (key: string, value: string, ttlMs: number) => {
        stored.push(key, value);
        return state.setIfAbsent(key, value, ttlMs);
      },
    });
    const records = new IdempotencyRecords(spy, secret);
    await records.claim(request, { ...records.digests(request), plan: '{"planId":"pl_x"}' });
    return stored.join('\n');
  };
  const raw = await rawOf(SECRET);
  for (const guess of guesses) t.notOk(raw.includes(guess), `the stored key and record hold no ${guess.length}-character plain form of a guess`);
  const other = await rawOf(`${SECRET}-other`);
  t.not(other, raw, 'under another secret the same request is stored under other digests: without the secret a guess cannot be tested');
  t.equal(await rawOf(SECRET), raw, 'under the same secret (another instance) the same digests, so any instance replays the plan');
});

t.test('"Records written by the old format must not break replays": on a shared state, a record of the previous version replays its plan, and stays a conflict for another request or another caller', async (t) => {
  const params = parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'rolling' }, 'app');
  const plainDigest = (text: string) => hash('sha256', text, 'base64url');
  const legacyKey = (caller: string) => `idem:${plainDigest(`${plainDigest(`caller\0${caller}`)}\0rolling`)}`;
  const shared = Object.defineProperty(new InProcessSharedState(), 'shared', { value: true });
  const records = new IdempotencyRecords(shared, SECRET);
  const request: PlanRequestKey = { caller: 'app:10.0.0.1', idempotencyKey: 'rolling', fingerprint: params.fingerprint };
  const mine = records.digests(request);
  // As the previous version wrote them: plain digests, in the line format and as JSON.
  await shared.setIfAbsent(legacyKey('app:10.0.0.1'), `plan-record/2\n${params.fingerprint}\n${plainDigest('caller\0app:10.0.0.1')}\n{"planId":"pl_old"}`, 60_000);
  t.strictSame(await records.find(request), { ...mine, plan: '{"planId":"pl_old"}' }, 'the same request by the same caller: the old plan, to replay');
  const changed = await records.find({ ...request, fingerprint: 'another request' });
  t.equal(changed?.plan, '{"planId":"pl_old"}');
  t.not(changed?.fingerprint, records.digests({ ...request, fingerprint: 'another request' }).fingerprint, 'another request under the key: a conflict, not a replay');
  await shared.setIfAbsent(legacyKey('app:10.0.0.2'), JSON.stringify({ fingerprint: params.fingerprint, boundTo: plainDigest('caller\0app:10.0.0.9'), plan: '{"planId":"pl_theirs"}' }), 60_000);
  const foreign = await records.find({ ...request, caller: 'app:10.0.0.2' });
  t.not(foreign?.boundTo, records.digests({ ...request, caller: 'app:10.0.0.2' }).boundTo, 'a JSON record bound to another caller stays bound to it (the guardrail stops it)');
  t.equal(await new IdempotencyRecords(new InProcessSharedState(), SECRET).find(request), null, 'an in-process state holds no other version\'s records, and is not asked for them');
});

// ---------------------------------------------------------------------------------------------
// Rules that `make mutation` found no test for (mutation/equivalent-mutants.md lists the rest).

/** A shared state whose raw values a test sets or reads. */
function rawState(overrides: Partial<Pick<SharedState, 'getValues' | 'setIfAbsent' | 'shared'>>): SharedState {
  return Object.assign(Object.create(new InProcessSharedState()) as SharedState, overrides);
}

/** Who asks under which idempotencyKey for what, as PlanService hands it to the records. */
const asked = (caller: string, idempotencyKey: string, fingerprint = 'fp'): PlanRequestKey => ({ caller, idempotencyKey, fingerprint });

t.test('IdempotencyRecords: "a record is kept per caller and idempotencyKey": another key, or another caller under the same key, holds a record of its own', async (t) => {
  const records = new IdempotencyRecords(new InProcessSharedState(), SECRET);
  const [alice, bob] = ['partner:key_aaaaaaaaaaaa', 'partner:key_bbbbbbbbbbbb'];
  const aliceDigest = records.digests(asked(alice, 'k1')).boundTo;
  const bobDigest = records.digests(asked(bob, 'k1')).boundTo;
  t.not(aliceDigest, bobDigest, 'callers digest apart');
  const first = { fingerprint: 'fp_1', boundTo: aliceDigest, plan: '{"planId":"pl_1"}' };
  t.equal(await records.claim(asked(alice, 'k1'), first), first);
  const second = { fingerprint: 'fp_2', boundTo: aliceDigest, plan: '{"planId":"pl_2"}' };
  t.equal(await records.claim(asked(alice, 'k2'), second), second, 'the same caller under another key: a new record');
  const bobs = { fingerprint: 'fp_3', boundTo: bobDigest, plan: '{"planId":"pl_3"}' };
  t.equal(await records.claim(asked(bob, 'k1'), bobs), bobs, 'another caller under the same key: a new record');
  t.strictSame(await records.find(asked(alice, 'k1')), first);
  t.strictSame(await records.find(asked(alice, 'k2')), second);
  t.strictSame(await records.find(asked(bob, 'k1')), bobs);
  t.equal(await records.find(asked(bob, 'k2')), null, 'a key the caller never used holds nothing');
});

t.test('IdempotencyRecords: a record "held a moment ago and gone now" (its retention ended in between) lets this plan take the key', async (t) => {
  let setCalls = 0;
  const state = new InProcessSharedState();
  const records = new IdempotencyRecords(
    rawState({
      // The first write finds the key held; the read that follows finds it expired.
      setIfAbsent: async (key, value, ttlMs) => (++setCalls === 1 ? false : state.setIfAbsent(key, value, ttlMs)),
      getValues: async (keys) => (setCalls === 1 ? keys.map(() => null) : state.getValues(keys)),
    }),
    SECRET,
  );
  const request = asked('app:127.0.0.1', 'k1');
  const record = { fingerprint: 'fp_1', boundTo: records.digests(request).boundTo, plan: '{"planId":"pl_1"}' };
  t.equal(await records.claim(request, record), record, 'this plan holds the key');
  t.equal(setCalls, 2, 'claimed again once the held record was gone');
  t.strictSame(await records.find(request), record, 'and it is stored');
});

t.test('IdempotencyRecords: "a plan is refused while the shared state cannot be reached" (503 at_capacity with Retry-After, nothing created); any other failure is not disguised as that', async (t) => {
  const unreachable = new IdempotencyRecords(rawState({ getValues: () => Promise.reject(new SharedStateUnavailable('down')), setIfAbsent: () => Promise.reject(new SharedStateUnavailable('down')) }), SECRET);
  const request = asked('app:127.0.0.1', 'k1');
  const record = { fingerprint: 'fp_1', boundTo: unreachable.digests(request).boundTo, plan: '{}' };
  const refusal = { name: 'DomainError', code: 'at_capacity', message: 'plans cannot be made right now: the shared state is unreachable; nothing was created; retry in 5 seconds', retryAfterSeconds: 5 };
  await t.rejects(unreachable.find(request), refusal);
  await t.rejects(unreachable.claim(request, record), refusal);
  const bug = new TypeError('a bug, not an outage');
  const broken = new IdempotencyRecords(rawState({ getValues: () => Promise.reject(bug) }), SECRET);
  await t.rejects(broken.find(request), bug, 'the error itself, not a DomainError');
});

t.test('IdempotencyRecords: "the request\'s fingerprint and caller as a record keeps them": each request and each caller digests apart', async (t) => {
  const records = new IdempotencyRecords(new InProcessSharedState(), SECRET);
  const a = records.digests(asked('app:127.0.0.1', 'k1', 'fp_a'));
  t.not(a.fingerprint, records.digests(asked('app:127.0.0.1', 'k1', 'fp_b')).fingerprint, 'another request, another fingerprint digest: a conflict is seen');
  t.not(a.boundTo, records.digests(asked('app:127.0.0.2', 'k1', 'fp_a')).boundTo, 'another caller, another digest');
  t.not(a.fingerprint, a.boundTo, 'a fingerprint never reads as a caller');
});

t.test('IdempotencyRecords: "records that instances of the previous version wrote are read too where the state is shared": the same request replays, another conflicts, another caller gets nothing of it', async (t) => {
  const plain = (text: string) => hash('sha256', text, 'base64url');
  const caller = 'app:127.0.0.1';
  const oldBoundTo = plain(`caller\0${caller}`);
  const oldKey = `idem:${plain(`${oldBoundTo}\0k1`)}`;
  const state = new InProcessSharedState();
  await state.setIfAbsent(oldKey, `plan-record/2\nfp_old\n${oldBoundTo}\n{"planId":"pl_old"}`, 60_000);
  const records = new IdempotencyRecords(rawState({ shared: true, getValues: (keys) => state.getValues(keys), setIfAbsent: (...args) => state.setIfAbsent(...args) }), SECRET);
  const same = asked(caller, 'k1', 'fp_old');
  t.strictSame(await records.find(same), { ...records.digests(same), plan: '{"planId":"pl_old"}' }, 'the same request: the old plan, under this version\'s digests');
  t.strictSame(await records.find(asked(caller, 'k1', 'fp_other')), { fingerprint: 'legacy:fp_old', boundTo: records.digests(same).boundTo, plan: '{"planId":"pl_old"}' }, 'another request: a fingerprint no request digests to, so a conflict');
  t.equal(await records.find(asked('app:127.0.0.2', 'k1', 'fp_old')), null, 'another caller: a key of its own, holding nothing');
  t.equal(await records.find(asked(caller, 'k2', 'fp_old')), null, 'another idempotencyKey: nothing');
  await state.setIfAbsent(`idem:${plain(`${plain('caller\0app:127.0.0.9')}\0k1`)}`, `plan-record/2\nfp_old\nsomeone-else\n{"planId":"pl_x"}`, 60_000);
  t.strictSame((await records.find(asked('app:127.0.0.9', 'k1', 'fp_old')))?.boundTo, 'legacy:someone-else', 'a record bound to another caller stays foreign');
  const reads: Array<readonly string[]> = [];
  const inProcess = new IdempotencyRecords(rawState({ getValues: (keys) => (reads.push(keys), state.getValues(keys)) }), SECRET);
  t.equal(await inProcess.find(same), null, 'in one process there is no previous version\'s record to read');
  t.strictSame(reads.map((keys) => keys.length), [1], 'nor is one asked for: one key read');
  const current = { ...records.digests(same), plan: '{"planId":"pl_new"}' };
  await records.claim(same, current);
  t.strictSame(await records.find(same), current, 'where both are held, this version\'s record is the one read');
});

t.test('IdempotencyRecords: a stored record without its fingerprint, its caller\'s digest or its plan is "malformed", never read as a record', async (t) => {
  const reading = (value: string) => new IdempotencyRecords(rawState({ getValues: async (keys) => keys.map(() => value) }), SECRET).find(asked('app:127.0.0.1', 'k1'));
  const malformed = { message: 'an idempotency record in the shared state is malformed' };
  for (const header of ['plan-record/3', 'plan-record/2']) {
    await t.rejects(reading(`${header}\nfp_1`), malformed, `${header}: the line format with its fingerprint only`);
    await t.rejects(reading(`${header}\nfp_1\nbound`), malformed, `${header}: the line format without its plan`);
    t.strictSame(await reading(`${header}\nfp_1\nbound\n{"planId":"pl_1"}`), { fingerprint: 'fp_1', boundTo: 'bound', plan: '{"planId":"pl_1"}' }, `${header}: a whole one reads`);
  }
  const whole = { fingerprint: 'fp_1', boundTo: 'bound', plan: '{"planId":"pl_1"}' };
  await t.rejects(reading('null'), malformed, 'JSON null');
  for (const field of ['fingerprint', 'boundTo', 'plan'] as const) {
    await t.rejects(reading(JSON.stringify({ ...whole, [field]: undefined })), malformed, `the JSON form without ${field}`);
    await t.rejects(reading(JSON.stringify({ ...whole, [field]: 7 })), malformed, `the JSON form with a non-string ${field}`);
  }
});

/** Each rule of the guardrail that no tampering above breaks alone, broken alone. */
const MORE_TAMPERINGS: readonly Tamper[] = [
  ['quoteRef.venueId changed', APP, (p) => void (p.quoteRef.venueId = 'cantex'), /^quoteRef\.venueId is not the chosen venue$/],
  ['quoteRef.pair give changed', APP, (p) => void (p.quoteRef.pair.give = 'CBTC'), /^quoteRef\.pair is not the requested pair$/],
  ['quoteRef.pair want changed', PARTNER, (p) => void (p.quoteRef.pair.want = 'CBTC'), /^quoteRef\.pair is not the requested pair$/],
  ['quoteRef.amount changed', APP, (p) => void (p.quoteRef.amount = '1000'), /^quoteRef\.amount is not the requested amount$/],
  ['quoteRef.minReceive changed', APP, (p) => void (p.quoteRef.minReceive = '14.8801505'), /^quoteRef\.minReceive is not floor\(net × \(1 - slippageBps\/10000\)\)$/],
  ['quoteRef.minReceive changed, the memo left', APP, (p) => void (p.quoteRef.minReceive = '14.8801505'), /^the deposit's memo is not the pinned floor$/],
  ['memo and quoteRef.minReceive changed together', PARTNER, (p) => void (p.quoteRef.minReceive = step(p, 0).memo = '14.8801505'), /^the deposit's memo is not the pinned floor$/],
  ['userReceives overstated', PARTNER, (p) => void (p.quoteRef.clientFees.userReceives = '14.9549252252'), /^quoteRef\.clientFees is not the applied schema's disclosure$/],
  ['appliedSchema.schemaId changed', PARTNER, (p) => void (p.quoteRef.appliedSchema.schemaId = 'b2c-default'), /^quoteRef\.appliedSchema is not the terms applied$/],
  ['appliedSchema.overrideId changed', PARTNER, (p) => void (p.quoteRef.appliedSchema.overrideId = 'wallet-co'), /^quoteRef\.appliedSchema is not the terms applied$/],
  ['idempotencyKey changed', APP, (p) => void (p.idempotencyKey = 'key-2'), /^idempotencyKey is not the request's$/],
  ['the deposit moved after the fee leg', APP, (p) => void p.steps.reverse(), /^the first step is not the venue deposit$/],
  ['no steps at all', PARTNER, (p) => void p.steps.splice(0), /^the first step is not the venue deposit$/],
  [
    'an integrator leg to no one, when no integrator fee was asked for',
    { route: 'partner', collecting: true },
    (p) => void p.steps.push({ kind: 'fee-transfer', target: null as unknown as string, instrument: 'USDCx', amount: '0', expiresAt: EXPIRY, beneficiary: 'integrator' }),
    /^step 2 \(fee-transfer\) does not go to the configured integrator fee party$/,
  ],
  ['a deposit where a fee leg goes', APP, (p) => void p.steps.reverse(), /^step 1 \(venue-deposit\) is not a fee leg this route may carry$/],
  ['a fee leg outliving the plan', PARTNER, (p) => void (step(p, 2).expiresAt = '2026-11-22T13:00:00.000Z'), /^step 2 \(fee-transfer\) does not expire with the plan$/],
  ['a fee leg in the give instrument', APP, (p) => void (step(p, 1).instrument = 'Amulet'), /^step 1 \(b2c-fee-transfer\) is not in the want instrument$/],
  ['the service fee paid twice', APP, (p) => void p.steps.push({ ...step(p, 1) }), /^step 2 \(b2c-fee-transfer\) pays the service fee a second time$/],
  ['the integrator fee paid twice', PARTNER, (p) => void p.steps.push({ ...step(p, 2) }), /^step 3 \(fee-transfer\) pays the integrator fee a second time$/],
  ['the partner service leg sent to the keyless fee party', PARTNER, (p) => void (step(p, 1).target = B2C), /^step 1 \(fee-escrow-lock\) does not go to the configured service fee party$/],
  ['the integrator fee raised', PARTNER, (p) => void (step(p, 2).amount = '0.0149549253'), /^step 2 \(fee-transfer\) does not pay the disclosed integrator fee$/],
  [
    'a zero integrator leg',
    { route: 'partner', collecting: true, feeBps: 0 },
    (p) => void p.steps.push({ kind: 'fee-transfer', target: RECIPIENT, instrument: 'USDCx', amount: '0', expiresAt: EXPIRY, beneficiary: 'integrator' }),
    /^step 2 \(fee-transfer\) does not pay the disclosed integrator fee$/,
  ],
  ['the service leg dropped', PARTNER, (p) => void p.steps.splice(1, 1), /^a disclosed service fee has no leg$/],
  ['the integrator leg dropped', PARTNER, (p) => void p.steps.splice(2, 1), /^a disclosed integrator fee has no leg$/],
  ['the keyless fee leg dropped', APP, (p) => void p.steps.splice(1, 1), /^a disclosed service fee has no leg$/],
  ['collectsFees false with fee legs', PARTNER, (p) => void (p.collectsFees = false), /^collectsFees does not say whether the plan has fee legs$/],
  ['collectsFees true without fee legs', { route: 'partner', collecting: false, feeBps: 10 }, (p) => void (p.collectsFees = true), /^collectsFees does not say whether the plan has fee legs$/],
  ['a b2cFee block on a partner plan', PARTNER, (p) => void (p.b2cFee = { direction: 'input-cc', bps: 5, ccAmount: '0.05' }), /^a partner plan carries a b2cFee block$/],
  ['the b2cFee block dropped from a collecting keyless plan', APP, (p) => void delete p.b2cFee, /^the b2cFee block is not present exactly when fees are collected$/],
  [
    'a b2cFee block on a keyless plan that collects nothing',
    { route: 'app', collecting: false },
    (p) => void (p.b2cFee = { direction: 'input-cc', bps: 0, ccAmount: '0' }),
    /^the b2cFee block is not present exactly when fees are collected$/,
  ],
  ['b2cFee bps changed', APP, (p) => void (p.b2cFee!.bps = 4), /^the b2cFee block is not the service line's rate and the fee's size in CC on the swap's CC leg$/],
];

t.test('planViolations: every rule "names the rule, never a party", and each holds alone: "in the amounts the quote gives, with the floor the memo carries"', async (t) => {
  for (const [name, c, change, expected] of MORE_TAMPERINGS) {
    const inputs = inputsFor(c);
    const plan = structuredClone(assemblePlan(inputs));
    change(plan);
    const violations = planViolations(plan, inputs);
    t.ok(violations.some((v) => expected.test(v)), `${name}: caught (${JSON.stringify(violations)})`);
  }
});

t.test('assemblePlan: the trustWindow says each fee leg "stays locked in your wallet" until its payee accepts: the integrator at once, the service "only once the venue has paid you at least" the floor', async (t) => {
  const plan = planFor(PARTNER);
  t.equal(
    plan.trustWindow,
    `Your 100 Amulet stay locked in a transfer offer in your own wallet until the venue accepts it; if the venue does not accept by ${EXPIRY} the offer expires and the funds stay yours.` +
      ` The fee of 0.0074774626 USDCx to the service is offered in the same batch and stays locked in your wallet until the service accepts it, which it does only once the venue has paid you at least 14.880150599 USDCx; if it is not accepted by ${EXPIRY} it stays yours.` +
      ` The fee of 0.0149549252 USDCx to your integrator is offered in the same batch and stays locked in your wallet until your integrator accepts it; if it is not accepted by ${EXPIRY} it stays yours.`,
  );
});

t.test('assemblePlan: a fee leg with no party configured to receive it is a wiring fault, never a leg to nobody', async (t) => {
  const inputs = inputsFor(APP);
  t.throws(() => assemblePlan({ ...inputs, parties: { ...inputs.parties, b2cFee: null } }), new Error('a b2c-fee-transfer leg of 0.0074774626 has no receiving party configured'));
  const partner = inputsFor(PARTNER);
  t.throws(() => assemblePlan({ ...partner, parties: { ...partner.parties, serviceFee: null } }), new Error('a fee-escrow-lock leg of 0.0074774626 has no receiving party configured'));
  t.equal(assemblePlan({ ...inputsFor({ route: 'app', collecting: false }), parties: { ...inputs.parties, b2cFee: null } }).steps.length, 1, 'while fees are paused no party is needed');
});
