// The SDK's execution client (@bestex/sdk's execute, resume and withdraw) over the sandbox, used
// as a partner uses the package: quote -> plan -> execute through the sandbox wallet
// ('@bestex/sdk/sandbox') -> tracked on the taker's own ledger view, cross-checked with GET
// /api/outcome. Each test quotes the rule it checks.
import { spawn } from 'node:child_process';
import t from 'tap';
import { createClient, execute, localStorageStorage, memoryStorage, resume, withdraw, type AppPlan, type CantonProvider, type ExecutionHooks, type ExecutionResult, type ExecutionStatus, type PlanStep, type StepUpdate } from '@bestex/sdk';
import { fileStorage } from '@bestex/sdk/node';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Decimal } from '../../../core/decimal.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { poolUserGets } from '../../../sandbox/venues/tradecraft.js';
import { COLLECTING, listen, testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { spendable } from '../../helpers/ledger.js';
import { plainChild } from '../../helpers/plain-child.js';
import { tempDir } from '../../helpers/temp.js';

let takers = 0;
const newTaker = () => `sdk-exec-${++takers}::1220${'6'.repeat(64)}`;

interface World {
  readonly app: TestApp;
  readonly baseUrl: string;
  readonly taker: string;
  readonly provider: CantonProvider;
  /** The sandbox's token registries, by instrument admin, as its manifest names them. */
  readonly registries: Readonly<Record<string, string>>;
  readonly client: ReturnType<typeof createClient>;
  plan(amount?: string, key?: string): Promise<AppPlan>;
  fund(token: 'CC' | 'USDCx', amount: string): Promise<void>;
  /** The deposit offers the taker has made, ever. */
  offers(): number;
  control(path: string, body: unknown): Promise<void>;
}

async function world(t: { teardown(fn: () => Promise<void>): void }, options: TestAppOptions = {}): Promise<World> {
  const app = await testApp({ ...options, env: { QUOTE_CACHE_TTL_MS: '1', ...options.env } });
  t.teardown(app.close);
  const baseUrl = await listen(app.server);
  const taker = newTaker();
  const sandbox = app.sandbox!;
  const provider = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party: taker });
  const client = createClient({ baseUrl });
  let keys = 0;
  const control = async (resource: string, body: unknown) => {
    await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource, body } });
  };
  return {
    app,
    baseUrl,
    taker,
    provider,
    registries: sandbox.manifest.registries,
    client,
    plan: async (amount = '100') =>
      (await client.plan({ from: 'CC', to: 'USDCx', amount, venueId: 'tradecraft', takerParty: taker, idempotencyKey: `${taker}-${++keys}` })) as AppPlan,
    fund: (token, amount) => control('/sandbox/v1/fund', { party: taker, token, amount }),
    offers: () =>
      sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).flatMap((tx) => tx.events).filter((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction') && (e.createArgument as { transfer: { sender: string } }).transfer.sender === taker).length,
    control,
  };
}

/**
 * Runs `call` (an expression over `plan`, `provider` and `storage`, awaited) in a new Node process,
 * as a reloaded page or a restarted app would: the SDK as installed, the sandbox wallet of
 * `w`'s taker and its registries, file storage in `dir`. Answers the result it prints.
 */
async function inNewProcess(w: World, dir: string, plan: AppPlan, call: string): Promise<{ code: unknown; result: ExecutionResult | null; stderr: string }> {
  const sandbox = w.app.sandbox!;
  const script = `
    import { execute, resume } from '@bestex/sdk';
    import { fileStorage } from '@bestex/sdk/node';
    import { sandboxProvider } from '@bestex/sdk/sandbox';
    const provider = sandboxProvider({ ledgerUrl: process.env.LEDGER, token: process.env.TOKEN, party: process.env.PARTY });
    const registries = JSON.parse(process.env.REGISTRIES);
    const storage = fileStorage(process.env.DIR);
    const plan = JSON.parse(process.env.PLAN_JSON);
    console.log(JSON.stringify(await ${call}));
  `;
  const child = spawn(...plainChild(process.execPath, ['--input-type=module', '-e', script]), {
    env: { ...process.env, REGISTRIES: JSON.stringify(sandbox.manifest.registries), LEDGER: sandbox.manifest.ledger, TOKEN: sandbox.ledgerToken, PARTY: w.taker, PLAN_JSON: JSON.stringify(plan), DIR: dir },
  });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  return { code, result: out.trim() === '' ? null : (JSON.parse(out) as ExecutionResult), stderr };
}

/** Hooks that record what they are told. */
function recorder(): ExecutionHooks & { statuses: ExecutionStatus[]; steps: StepUpdate[] } {
  const statuses: ExecutionStatus[] = [];
  const steps: StepUpdate[] = [];
  return { statuses, steps, onStatus: (status) => void statuses.push(status), onStep: (update) => void steps.push(update) };
}

/** The smallest Daml Decimal amount. */
const ONE_UNIT = '0.0000000001';

const balance = (w: World, instrument: string) => spendable(w.app.sandbox!.ledger, w.taker, instrument).toFixed();

/**
 * What the SDK's result must say was realised, worked out here with decimal.js: the price
 * received per unit given, rounded down to 10 digits; the slippage from the quote's net in bps,
 * rounded up (toward a worse figure: a loss of 6.2 bps reads 7, a gain of 6.8 bps reads -6); and
 * the payout less the floor.
 */
const realisedOf = (plan: AppPlan, received: string) => {
  const net = new Decimal(plan.quoteRef.net);
  return {
    price: new Decimal(received).div(plan.quoteRef.amount).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed(),
    // `|| 0`: a gain of less than 1 bps rounds up to -0, which the SDK's count reads as 0.
    slippageBps: net.minus(received).times(10_000).div(net).toDecimalPlaces(0, Decimal.ROUND_CEIL).toNumber() || 0,
    aboveFloor: new Decimal(received).minus(plan.quoteRef.minReceive).toFixed(),
  };
};

t.test('quote -> plan -> execute: hooks fire INITIATED then COMPLETED; "the update id equals the outcome endpoint\'s"; the result shows what was received against the quote', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, client: w.client, hooks });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.strictSame(hooks.steps.map((s) => [s.index, s.step.kind, s.state]), [[0, 'venue-deposit', 'pending'], [0, 'venue-deposit', 'submitted'], [0, 'venue-deposit', 'accepted']]);
  t.match(result, { status: 'COMPLETED', party: w.taker, depositUpdateId: /^1220[0-9a-f]{64}$/, submittedUpdateId: /^1220[0-9a-f]{64}$/, error: null });
  const service = await w.client.outcome({ party: w.taker, since: new Date(Date.parse(plan.expiry) - 90_000).toISOString(), deadline: plan.expiry });
  t.equal(service.status, 'completed');
  t.equal(service.depositUpdateId, result.depositUpdateId, 'the SDK and the service read the same update');
  t.match(result.outcome, { status: 'completed', agrees: true });
  t.equal(result.received, balance(w, 'USDCx'), 'what was received is what the taker holds');
  t.ok(new Decimal(result.received!).gte(plan.quoteRef.minReceive), 'at least the floor');
  t.strictSame(result.realised, realisedOf(plan, result.received!), 'realised against the quote: price, slippage from quoteRef.net, the margin over minReceive');
  t.equal(balance(w, 'Amulet'), '900');
});

t.test('realised figures when the pool moves between quote and settlement: "slippage against quoteRef.net, in bps (negative: better)" rounded so a loss is never understated and a gain never overstated', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  // The plan's floor is 50 bps under net: a 7 bps move pays below net and above the floor. Unmoved,
  // the pool pays net to its last digit (the quote reads the reserves as the wire rounds them):
  // a hair either side of net, which reads 0 bps.
  const cases: Array<[string, number | null, (received: Decimal, net: Decimal) => boolean]> = [
    ['at net', null, (received, net) => received.minus(net).abs().lte(ONE_UNIT)],
    ['just below net', -7, (received, net) => received.lt(net)],
    ['above net', 7, (received, net) => received.gt(net)],
  ];
  for (const [where, bps, holds] of cases) {
    const plan = await w.plan('100');
    if (bps !== null) await w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps });
    const result = await execute(plan, { provider: w.provider, registries: w.registries });
    t.equal(result.status, 'COMPLETED', where);
    const received = new Decimal(result.received!);
    const net = new Decimal(plan.quoteRef.net);
    t.ok(holds(received, net), `${where}: the payout ${received.toFixed()} against net ${net.toFixed()}`);
    t.ok(received.gt(plan.quoteRef.minReceive), `${where}: above the floor`);
    const exact = net.minus(received).times(10_000).div(net);
    // A whole number of bps would read the same under any rounding: the check needs a fraction.
    if (bps !== null) t.notOk(exact.isInteger(), `${where}: ${exact.toFixed()} bps is between two whole bps`);
    t.strictSame(result.realised, realisedOf(plan, result.received!), `${where}: ${exact.toFixed()} bps`);
  }
});

t.test('realised figures for a payout a whole number of bps under net: "slippage against quoteRef.net, in bps" reads exactly that number, not one more', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan('100');
  const sandbox = w.app.sandbox!;
  const pays = poolUserGets(sandbox.market.find((v) => v.id === 'tradecraft')!.spec, sandbox.ledger.poolFor(CC, USDCX)!.pool, CC, USDCX, new Decimal(plan.quoteRef.amount));
  // A plan states its own net: at twice what the pool pays, the payout is exactly 5,000 bps under it.
  const halved: AppPlan = { ...plan, quoteRef: { ...plan.quoteRef, net: pays.times(2).toFixed() } };
  const result = await execute(halved, { provider: w.provider, registries: w.registries });
  t.match(result, { status: 'COMPLETED', received: pays.toFixed() });
  t.equal(result.realised!.slippageBps, 5000);
  t.strictSame(result.realised, realisedOf(halved, result.received!));
});

t.test('"price worse than the floor -> SLIPPAGE_FAILED": a pool move before execute, the deposit refunded', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan('200');
  await w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 });
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, client: w.client, hooks });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'INITIATED', 'SLIPPAGE_FAILED']);
  t.match(result, { status: 'SLIPPAGE_FAILED', depositUpdateId: /^1220/, received: null, realised: null, outcome: { status: 'slippage_failed', agrees: true } });
  t.equal(hooks.steps.at(-1)?.state, 'returned');
  t.equal(balance(w, 'Amulet'), '1000', 'the funds are back');
});

t.test('"a client refuses an expired plan": refused before anything is signed, nothing submitted', async (t) => {
  const w = await world(t, { overrides: { now: () => new Date(Date.now() - 120_000) } });
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const before = w.app.sandbox!.ledger.ledgerEnd;
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, hooks });
  t.match(result, { status: 'REFUSED', error: { name: 'BestexError', code: 'plan_expired', message: /expired at .* s ago; .*re-plan with a new idempotencyKey/ } });
  t.strictSame(hooks.statuses, ['REFUSED']);
  t.equal(w.app.sandbox!.ledger.ledgerEnd, before, 'no transaction');
});

/** The SDK's own list of the checks it makes before signing, read from the package as installed. */
const { PLAN_CHECKS } = (await import(new URL('./plan.js', import.meta.resolve('@bestex/sdk')).href)) as { PLAN_CHECKS: ReadonlyArray<{ readonly id: string }> };

type Tamper = (plan: AppPlan) => AppPlan;
const withStep = (index: number, change: Partial<PlanStep>): Tamper => (plan) => ({ ...plan, steps: plan.steps.map((step, i) => (i === index ? { ...step, ...change } : step)) });
const withQuote = (change: Partial<AppPlan['quoteRef']>): Tamper => (plan) => ({ ...plan, quoteRef: { ...plan.quoteRef, ...change } });
const later = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString();

/**
 * One plan tampered one way per check the SDK makes, each refused by that check (its own error);
 * a check may have more than one row. The base plan is a partner's: a deposit, an escrowed
 * service fee and an integrator fee.
 */
const TAMPERED: ReadonlyArray<{ check: string; what: string; tamper: Tamper; refusal: { code: string; message: RegExp } }> = [
  { check: 'plan-id', what: 'no planId', tamper: (plan) => ({ ...plan, planId: '' }), refusal: { code: 'plan_unverifiable', message: /it has no planId/ } },
  { check: 'mode', what: 'another mode', tamper: (plan) => ({ ...plan, mode: 'direct' as never }), refusal: { code: 'plan_unverifiable', message: /mode "direct" is not managed-deposit/ } },
  { check: 'expiry-date-time', what: 'an expiry that is no date-time', tamper: (plan) => ({ ...plan, expiry: 'soon' }), refusal: { code: 'plan_unverifiable', message: /its expiry is not a date-time/ } },
  { check: 'not-expired', what: 'an expired plan', tamper: (plan) => ({ ...plan, expiry: later(new Date().toISOString(), -5_000) }), refusal: { code: 'plan_expired', message: /expired at \S+, [1-9][0-9]? s ago/ } },
  { check: 'quote-ref', what: 'no quoteRef', tamper: (plan) => ({ ...plan, quoteRef: undefined as never }), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'quote-ref', what: 'an unknown give instrument', tamper: (plan) => withQuote({ pair: { ...plan.quoteRef.pair, give: 'DOGE' } as never })(plan), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'quote-ref', what: 'an unknown want instrument', tamper: (plan) => withQuote({ pair: { ...plan.quoteRef.pair, want: 'DOGE' } as never })(plan), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'quote-ref', what: 'an amount that is no decimal', tamper: withQuote({ amount: '1e2' }), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'quote-ref', what: 'a floor that is no decimal', tamper: withQuote({ minReceive: '-1' }), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'quote-ref', what: 'a net that is no decimal', tamper: withQuote({ net: '' }), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'has-steps', what: 'no steps', tamper: (plan) => ({ ...plan, steps: [] }), refusal: { code: 'plan_unverifiable', message: /it has no steps/ } },
  { check: 'step-kind', what: 'an unknown step kind', tamper: withStep(2, { kind: 'mystery' as never }), refusal: { code: 'plan_unverifiable', message: /step 2 is of a kind this SDK does not know \("mystery"\)/ } },
  { check: 'step-target', what: 'a target that is no party id', tamper: withStep(1, { target: 'fee-party' }), refusal: { code: 'plan_unverifiable', message: /step 1's target is not a party id/ } },
  { check: 'step-amount', what: 'a zero amount', tamper: withStep(1, { amount: '0' }), refusal: { code: 'plan_unverifiable', message: /step 1's amount is not a positive Daml Decimal/ } },
  { check: 'step-amount', what: 'an amount that is no decimal', tamper: withStep(0, { amount: '100.00000000001' }), refusal: { code: 'plan_unverifiable', message: /step 0's amount is not a positive Daml Decimal/ } },
  { check: 'step-instrument', what: 'an unknown instrument', tamper: withStep(2, { instrument: 'DOGE' as never }), refusal: { code: 'plan_unverifiable', message: /step 2's instrument is not one this SDK knows/ } },
  { check: 'step-expiry', what: 'a step expiring after the plan', tamper: (plan) => withStep(2, { expiresAt: later(plan.expiry, 1) })(plan), refusal: { code: 'plan_unverifiable', message: /step 2 expires after the plan/ } },
  { check: 'step-expiry', what: 'a step with no expiry', tamper: withStep(0, { expiresAt: 'never' }), refusal: { code: 'plan_unverifiable', message: /step 0 expires after the plan/ } },
  { check: 'one-deposit-first', what: 'the deposit second', tamper: (plan) => ({ ...plan, steps: [plan.steps[1]!, plan.steps[0]!, plan.steps[2]!] }), refusal: { code: 'plan_unverifiable', message: /exactly one deposit, first/ } },
  { check: 'one-deposit-first', what: 'two deposits', tamper: (plan) => ({ ...plan, steps: [plan.steps[0]!, plan.steps[0]!] }), refusal: { code: 'plan_unverifiable', message: /exactly one deposit, first/ } },
  { check: 'deposit-is-the-give', what: 'a deposit bigger than the quote', tamper: withStep(0, { amount: '100.0000000001' }), refusal: { code: 'plan_unverifiable', message: /the deposit is not the quote's give amount/ } },
  { check: 'deposit-is-the-give', what: 'a deposit in another instrument', tamper: withStep(0, { instrument: 'CBTC' }), refusal: { code: 'plan_unverifiable', message: /the deposit is not the quote's give amount in its give instrument/ } },
  { check: 'memo-is-the-floor', what: 'a memo that is not the floor', tamper: withStep(0, { memo: ONE_UNIT }), refusal: { code: 'plan_unverifiable', message: /memo is not the quote's floor/ } },
  {
    check: 'floor-within-net',
    what: 'a floor above net (the memo with it)',
    tamper: (plan) => {
      const floor = new Decimal(plan.quoteRef.net).plus(ONE_UNIT).toFixed();
      return withStep(0, { memo: floor })(withQuote({ minReceive: floor })(plan));
    },
    refusal: { code: 'plan_unverifiable', message: /the floor is above the quote's net/ },
  },
  { check: 'net-not-zero', what: 'a net of zero (the floor and memo with it)', tamper: (plan) => withStep(0, { memo: '0' })(withQuote({ net: '0', minReceive: '0' })(plan)), refusal: { code: 'plan_unverifiable', message: /the quote's net is zero/ } },
  { check: 'fee-legs-collect-fees', what: 'fee legs on a plan that collects none', tamper: (plan) => ({ ...plan, collectsFees: false }), refusal: { code: 'plan_unverifiable', message: /fee legs but does not collect fees/ } },
  { check: 'fee-legs-disclosed', what: 'fee legs with no disclosure', tamper: withQuote({ clientFees: undefined }), refusal: { code: 'plan_unverifiable', message: /fee legs but discloses no fees/ } },
  { check: 'one-leg-per-kind', what: 'the integrator fee twice', tamper: (plan) => ({ ...plan, steps: [...plan.steps, plan.steps[2]!] }), refusal: { code: 'plan_unverifiable', message: /more than one fee-transfer leg/ } },
  { check: 'one-leg-per-kind', what: 'the service fee twice', tamper: (plan) => ({ ...plan, steps: [...plan.steps, plan.steps[1]!] }), refusal: { code: 'plan_unverifiable', message: /more than one fee-escrow-lock leg/ } },
  { check: 'fee-leg-in-want', what: 'a fee leg in the give instrument', tamper: withStep(2, { instrument: 'Amulet' }), refusal: { code: 'plan_unverifiable', message: /the fee-transfer leg is not in the want instrument/ } },
  { check: 'service-fee-disclosed', what: 'an escrowed service fee above the disclosed one', tamper: (plan) => withStep(1, { amount: new Decimal(plan.steps[1]!.amount).plus(ONE_UNIT).toFixed() })(plan), refusal: { code: 'plan_unverifiable', message: /the fee-escrow-lock leg is not the disclosed service fee/ } },
  {
    check: 'integrator-fee-disclosed',
    what: 'the integrator fee to another recipient',
    tamper: withStep(2, { target: `someone-else::1220${'b'.repeat(64)}` }),
    refusal: { code: 'plan_unverifiable', message: /the integrator fee leg is not the disclosed integrator fee to its recipient/ },
  },
  { check: 'integrator-fee-disclosed', what: 'an integrator fee above the disclosed one', tamper: (plan) => withStep(2, { amount: new Decimal(plan.steps[2]!.amount).plus(ONE_UNIT).toFixed() })(plan), refusal: { code: 'plan_unverifiable', message: /the integrator fee leg is not the disclosed integrator fee/ } },
  {
    check: 'integrator-fee-disclosed',
    what: 'an integrator fee none is disclosed for',
    tamper: (plan) => withQuote({ clientFees: { ...plan.quoteRef.clientFees!, integrator: undefined } as never })(plan),
    refusal: { code: 'plan_unverifiable', message: /the integrator fee leg is not the disclosed integrator fee/ },
  },
];

t.test('"the SDK re-checks the plan it is handed": a plan tampered against each of its checks is REFUSED by that check before anything is signed', async (t) => {
  t.strictSame([...new Set(TAMPERED.map((row) => row.check))].sort(), PLAN_CHECKS.map((c) => c.id).sort(), 'a row for every check the SDK makes, and none for a check it does not');
  const w = await world(t, { env: COLLECTING });
  const { issueKey } = await import('../../helpers/keys.js');
  const { key } = await issueKey(w.app.core.keyStore);
  const partner = createClient({ baseUrl: w.baseUrl, apiKey: key });
  await w.fund('CC', '1000');
  await w.fund('USDCx', '5');
  await w.fund('USDCx', '5');
  const plan = await partner.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: w.taker, idempotencyKey: `${w.taker}-tampered`, feeBps: 5, feeRecipient: `wallet-co::1220${'a'.repeat(64)}` });
  t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock', 'fee-transfer']);
  const asked: string[] = [];
  const watched: CantonProvider = {
    request: (args) => (asked.push(args.method), w.provider.request(args)),
    on: (event, listener) => w.provider.on(event, listener),
    removeListener: (event, listener) => w.provider.removeListener(event, listener),
  };
  const before = w.app.sandbox!.ledger.ledgerEnd;
  for (const [n, row] of TAMPERED.entries()) {
    const tampered = row.tamper({ ...plan, planId: `${plan.planId}-${n}` });
    const result = await execute(tampered, { provider: watched, registries: w.registries, storage: memoryStorage() });
    t.match(result, { status: 'REFUSED', error: { name: 'BestexError', ...row.refusal } }, `${row.check}: ${row.what}`);
  }
  t.strictSame(asked.filter((method) => method.startsWith('prepare')), [], 'the wallet was asked to sign nothing');
  t.equal(w.app.sandbox!.ledger.ledgerEnd, before, 'nothing reached the ledger');
  const untouched = await execute(plan, { provider: watched, registries: w.registries, client: partner });
  t.equal(untouched.status, 'COMPLETED', 'the plan as the service made it passes every check');
});

t.test('"two concurrent execute calls -> one submission": the second gets the same promise', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const first = execute(plan, { provider: w.provider, registries: w.registries });
  const second = execute(plan, { provider: w.provider, registries: w.registries });
  t.equal(first, second, 'the same promise');
  const [a, b] = await Promise.all([first, second]);
  t.equal(a.status, 'COMPLETED');
  t.equal(b, a);
  t.equal(w.offers(), 1, 'one deposit offer on the ledger');
  const again = await execute(plan, { provider: w.provider, registries: w.registries });
  t.equal(again.depositUpdateId, a.depositUpdateId, 'executing a finished plan again returns its result');
  t.equal(w.offers(), 1, 'and submits nothing');
});

t.test('"resume after a new process -> the same result and no second submission"', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  await w.control('/sandbox/v1/operator', { paused: true });
  const plan = await w.plan();
  const dir = tempDir(t, 'bestex-sdk-records-');
  const stop = new AbortController();
  // This process submits, then stops waiting once the deposit is on the ledger, as a closed tab would.
  const first = await execute(plan, { provider: w.provider, registries: w.registries, storage: fileStorage(dir), signal: stop.signal, hooks: { onStatus: (s) => s === 'INITIATED' && stop.abort() } });
  t.equal(first.status, 'INITIATED', 'left mid-way, with the deposit on the ledger');
  await w.control('/sandbox/v1/operator', { paused: false });
  const run = await inNewProcess(w, dir, plan, 'resume(plan.planId, { provider, registries, storage })');
  t.equal(run.code, 0, run.stderr);
  const resumed = run.result!;
  t.match(resumed, { status: 'COMPLETED', submittedUpdateId: first.submittedUpdateId, depositUpdateId: /^1220/ });
  t.equal(w.offers(), 1, 'no second submission');
  const again = await resume(plan.planId, { provider: w.provider, registries: w.registries, storage: fileStorage(dir) });
  t.strictSame(again, resumed, 'a finished execution resumes to its stored result');
  await t.rejects(resume('pl_unknown', { provider: w.provider, registries: w.registries, storage: fileStorage(dir) }), { name: 'BestexError', code: 'unknown_plan' });
});

t.test('fees on: "the deposit and the fee legs go as one atomic batch", and "fee escrow is released" once the payout is on the ledger', async (t) => {
  const w = await world(t, { env: COLLECTING });
  await w.fund('CC', '1000');
  await w.fund('USDCx', '5');
  const plan = await w.plan();
  t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'b2c-fee-transfer']);
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, client: w.client, hooks });
  t.match(result, { status: 'COMPLETED', fees: { included: true, released: true, note: null }, outcome: { agrees: true } });
  const ledger = w.app.sandbox!.ledger;
  const submittedTx = ledger.transactions(0, ledger.ledgerEnd).find((tx) => tx.updateId === result.submittedUpdateId)!;
  t.equal(submittedTx.events.filter((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction')).length, 2, 'one transaction with every leg');
  t.strictSame(hooks.steps.filter((s) => s.index === 1).map((s) => s.state), ['pending', 'submitted', 'accepted'], 'the fee leg, accepted');
  const fee = plan.steps[1]!;
  t.equal(spendable(ledger, fee.target, 'USDCx').toFixed(), fee.amount, 'the fee party holds the fee');
  t.equal(balance(w, 'USDCx'), new Decimal(5).minus(fee.amount).plus(result.received!).toFixed());
});

t.test('"the taker cannot cover a fee leg -> the swap degrades to the deposit alone, fee-less, and says so in the hooks and the result"', async (t) => {
  const w = await world(t, { env: COLLECTING });
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const notes: string[] = [];
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, hooks: { ...hooks, onStatus: (s, d) => (hooks.onStatus!(s, d), d.note && notes.push(d.note)) } });
  t.match(result, { status: 'COMPLETED', fees: { included: false, released: null, note: /b2c-fee-transfer leg needs .* USDCx .* fee-less/ } });
  t.match(hooks.steps.find((s) => s.index === 1), { state: 'skipped' });
  t.match(notes[0], /fee-less/, 'the hooks say so');
  t.equal(w.offers(), 1, 'the deposit alone');
});

/** The sandbox wallet, with one method answering as `answer` says. */
function wrap(provider: CantonProvider, methods: Record<string, (params: unknown) => Promise<unknown>>, events = true): CantonProvider {
  return {
    request: (args) => (methods[args.method] ? methods[args.method]!(args.params) : provider.request(args)),
    on: (event, listener) => (events ? provider.on(event, listener) : undefined),
    removeListener: (event, listener) => provider.removeListener(event, listener),
  };
}

t.test('"a provider answering 4001 -> the user-rejected state", nothing submitted', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const declined = Object.assign(new Error('User rejected the request.'), { code: 4001 });
  const provider = wrap(w.provider, { prepareExecuteAndWait: () => Promise.reject(declined) });
  const hooks = recorder();
  const result = await execute(plan, { provider, registries: w.registries, hooks });
  t.match(result, { status: 'USER_REJECTED', error: { code: 'user_rejected' } });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'USER_REJECTED']);
  t.equal(w.offers(), 0);
});

t.test('"a provider that never emits txChanged -> still COMPLETED", even one without prepareExecuteAndWait that answers before the transaction commits', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const missing = Object.assign(new Error('Method not found'), { code: -32601 });
  // prepareExecute answers at once and the transaction commits a while later, with no event at all:
  // only the ledger can tell the SDK it happened.
  const committed: Promise<unknown>[] = [];
  const late = wrap(
    w.provider,
    {
      prepareExecuteAndWait: () => Promise.reject(missing),
      prepareExecute: (params) => {
        committed.push(new Promise((resolve) => setTimeout(() => resolve(w.provider.request({ method: 'prepareExecute', params })), 400)));
        return Promise.resolve(null);
      },
    },
    false,
  );
  const result = await execute(plan, { provider: late, registries: w.registries, client: w.client });
  await Promise.all(committed);
  t.match(result, { status: 'COMPLETED', outcome: { agrees: true } });
  t.equal(w.offers(), 1);
});

t.test('"a hook that throws -> the swap still completes"', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const result = await execute(plan, {
    provider: w.provider,
    registries: w.registries,
    hooks: {
      onStatus: () => {
        throw new Error('the host broke');
      },
      onStep: () => {
        throw new Error('the host broke again');
      },
    },
  });
  t.equal(result.status, 'COMPLETED');
});

t.test('"withdraw(planId) takes back a deposit no pool has answered": WITHDRAWN, the funds back', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  await w.control('/sandbox/v1/operator', { paused: true });
  const plan = await w.plan();
  const stop = new AbortController();
  const first = await execute(plan, { provider: w.provider, registries: w.registries, signal: stop.signal, hooks: { onStatus: (s) => s === 'INITIATED' && stop.abort() } });
  t.equal(first.status, 'INITIATED');
  t.equal(balance(w, 'Amulet'), '900', 'locked in the offer');
  const hooks = recorder();
  const withdrawn = await withdraw(plan.planId, { provider: w.provider, registries: w.registries, hooks });
  t.match(withdrawn, { status: 'WITHDRAWN', depositUpdateId: /^1220/ });
  t.equal(hooks.statuses.at(-1), 'WITHDRAWN');
  t.equal(balance(w, 'Amulet'), '1000', 'back whole');
  await t.rejects(withdraw(plan.planId, { provider: w.provider, registries: w.registries }), { name: 'BestexError', code: 'nothing_to_withdraw' });
});

t.test('"a batch the wallet refuses for any reason but a missing package -> SUBMIT_FAILED with the reason": nothing landed, and the deposit is not sent alone', async (t) => {
  const w = await world(t, { env: COLLECTING });
  await w.fund('CC', '1000');
  await w.fund('USDCx', '5');
  const plan = await w.plan();
  const asked: unknown[] = [];
  const refusing = wrap(w.provider, {
    prepareExecuteAndWait: (params) => (asked.push(params), Promise.reject(Object.assign(new Error('this wallet does not sign CreateAndExerciseCommand'), { code: -32602 }))),
  });
  const hooks = recorder();
  const result = await execute(plan, { provider: refusing, registries: w.registries, hooks });
  t.match(result, { status: 'SUBMIT_FAILED', fees: { included: true }, error: { code: 'submit_failed', message: /does not sign CreateAndExerciseCommand/ } });
  t.equal(asked.length, 1, 'asked once: no second submission of the deposit alone');
  t.equal(w.offers(), 0, 'nothing on the ledger');
  t.equal(balance(w, 'USDCx'), '5', 'no fee taken');
  t.equal(balance(w, 'Amulet'), '1000', 'no deposit made');
});

t.test('the sandbox wallet "emits txChanged": pending, then executed with the update id, or failed when the ledger refuses', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const events: Array<{ status: string; commandId: string; payload?: { updateId: string } }> = [];
  const listener = (event: never) => void events.push(event);
  w.provider.on('txChanged', listener);
  const result = await execute(plan, { provider: w.provider, registries: w.registries });
  t.match(events, [{ status: 'pending', commandId: plan.planId }, { status: 'executed', commandId: plan.planId, payload: { updateId: result.submittedUpdateId! } }]);
  events.length = 0;
  await t.rejects(w.provider.request({ method: 'prepareExecute', params: { commands: [], commandId: 'empty', actAs: [w.taker] } }), { code: -32003 });
  t.match(events, [{ status: 'pending', commandId: 'empty' }, { status: 'failed', commandId: 'empty' }]);
  w.provider.removeListener('txChanged', listener);
  t.strictSame(await w.provider.request({ method: 'listAccounts' }), [await w.provider.request({ method: 'getPrimaryAccount' })]);
  t.match(await w.provider.request({ method: 'getPrimaryAccount' }), { partyId: w.taker, primary: true });
  await t.rejects(w.provider.request({ method: 'disconnect' }), { code: -32601 }, 'a method it does not offer');
});

t.test('localStorageStorage: "an adapter for localStorage" keeps the record resume reads', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  await w.control('/sandbox/v1/operator', { paused: true });
  const plan = await w.plan();
  const items = new Map<string, string>();
  const storage = { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v) } as unknown as Storage;
  const stop = new AbortController();
  const first = await execute(plan, { provider: w.provider, registries: w.registries, storage: localStorageStorage(storage), signal: stop.signal, hooks: { onStatus: (s) => s === 'INITIATED' && stop.abort() } });
  t.equal(first.status, 'INITIATED');
  t.match(JSON.parse(items.get(`bestex:execution:${plan.planId}`)!), { version: 1, planId: plan.planId, status: 'INITIATED' }, 'a versioned record under its key');
  await w.control('/sandbox/v1/operator', { paused: false });
  const resumed = await resume(plan.planId, { provider: w.provider, registries: w.registries, storage: localStorageStorage(storage) });
  t.equal(resumed.status, 'COMPLETED');
  t.equal(w.offers(), 1);
});

t.test('a registry that cannot be reached ends in SUBMIT_FAILED with nothing submitted, and the plan can be executed again', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const failed = await execute(plan, { provider: w.provider, registryUrl: 'http://127.0.0.1:1' });
  t.match(failed, { status: 'SUBMIT_FAILED', error: { name: 'BestexError', message: /registry at http:\/\/127\.0\.0\.1:1.* cannot be reached/ } });
  t.equal(w.offers(), 0, 'nothing submitted');
  const asked: string[] = [];
  const retried = await execute(plan, { provider: w.provider, registries: w.registries, fetch: (input, init) => (asked.push(`${init?.method} ${String(input)} ${JSON.stringify(init?.headers)}`), fetch(input, init)) });
  t.equal(retried.status, 'COMPLETED', 'executed again, through the admin\'s registry');
  t.equal(w.offers(), 1);
  const amulet = w.registries[w.app.sandbox!.manifest.instrumentAdmins.Amulet]!;
  t.ok(asked.length > 0 && asked.every((a) => a.startsWith(`POST ${amulet}/registry/transfer-instruction/v1/`)), '"the SDK asks the registry directly": the Amulet admin\'s registry, at its own URL');
  t.ok(asked.every((a) => !/authorization/i.test(a)), '"with no ledger token"');
});

t.test('"which registry serves an instrument is configuration": without one for the deposit\'s admin the plan is refused before anything is signed', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const amulet = w.app.sandbox!.manifest.instrumentAdmins.Amulet;
  const others = Object.fromEntries(Object.entries(w.registries).filter(([admin]) => admin !== amulet));
  const result = await execute(plan, { provider: w.provider, registries: others });
  t.match(result, { status: 'REFUSED', error: { code: 'registry_unconfigured', message: new RegExp(`instrument admin ${amulet.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) } });
  t.equal(w.offers(), 0, 'nothing submitted');
});

t.test('"fee escrow is not released" on SLIPPAGE_FAILED: the fee legs come back with the deposit, each step reported', async (t) => {
  const w = await world(t, { env: COLLECTING });
  await w.fund('CC', '1000');
  await w.fund('USDCx', '5');
  const plan = await w.plan('200');
  await w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 });
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, hooks });
  t.match(result, { status: 'SLIPPAGE_FAILED', fees: { included: true, released: false } });
  t.strictSame(hooks.steps.filter((s) => s.index === 1).map((s) => s.state), ['pending', 'submitted', 'returned']);
  t.equal(balance(w, 'USDCx'), '5', 'the fee is back');
  t.equal(balance(w, 'Amulet'), '1000', 'and the deposit');
});

t.test('a partner plan with an escrowed service fee and an integrator fee: every leg in one transaction, each reported on its own step', async (t) => {
  const w = await world(t, { env: COLLECTING });
  const { issueKey } = await import('../../helpers/keys.js');
  const { key } = await issueKey(w.app.core.keyStore);
  const partner = createClient({ baseUrl: w.baseUrl, apiKey: key });
  await w.fund('CC', '1000');
  // One USDCx holding pays both fee legs: the batch hands the first leg's change to the second.
  await w.fund('USDCx', '5');
  const recipient = `wallet-co::1220${'a'.repeat(64)}`;
  const plan = await partner.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: w.taker, idempotencyKey: `${w.taker}-partner`, feeBps: 5, feeRecipient: recipient });
  t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock', 'fee-transfer']);
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, client: partner, hooks });
  t.match(result, { status: 'COMPLETED', fees: { included: true, released: true }, outcome: { agrees: true } });
  for (const index of [1, 2]) t.strictSame(hooks.steps.filter((s) => s.index === index).map((s) => s.state), ['pending', 'submitted', 'accepted'], plan.steps[index]!.kind);
  t.equal(spendable(w.app.sandbox!.ledger, recipient, 'USDCx').toFixed(), plan.steps[2]!.amount, 'the integrator holds its fee');
});

t.test('the SDK\'s own duplicate path: a plan already on the ledger (executed from elsewhere) is tracked, "so a plan is submitted at most once"', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const first = await execute(plan, { provider: w.provider, registries: w.registries, storage: memoryStorage() });
  t.equal(first.status, 'COMPLETED');
  const notes: Array<{ status: string; duplicate?: boolean }> = [];
  const again = await execute(plan, { provider: w.provider, registries: w.registries, storage: memoryStorage(), hooks: { onStatus: (status, detail) => void notes.push({ status, ...(detail.duplicate ? { duplicate: true } : {}) }) } });
  t.match(again, { status: 'COMPLETED', depositUpdateId: first.depositUpdateId, submittedUpdateId: first.submittedUpdateId });
  t.match(notes.find((n) => n.status === 'INITIATED'), { duplicate: true }, 'the hooks say nothing new was sent');
  t.equal(w.offers(), 1);
});

t.test('a tampered service fee leg (b2c-fee-transfer for more than the disclosed fee) is refused unsigned', async (t) => {
  const w = await world(t, { env: COLLECTING });
  await w.fund('CC', '1000');
  await w.fund('USDCx', '50');
  const plan = await w.plan();
  const greedy = { ...plan, steps: [plan.steps[0]!, { ...plan.steps[1]!, amount: '40' }] };
  const result = await execute(greedy, { provider: w.provider, registries: w.registries });
  t.match(result, { status: 'REFUSED', error: { code: 'plan_unverifiable', message: /b2c-fee-transfer leg is not the disclosed service fee/ } });
  t.equal(w.offers(), 0);
});

t.test('"a hook that throws never breaks the execution", an async one included (no unhandled rejection)', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  t.teardown(() => void process.off('unhandledRejection', onUnhandled));
  const result = await execute(plan, { provider: w.provider, registries: w.registries, hooks: { onStatus: async () => Promise.reject(new Error('async host failure')) } });
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(result.status, 'COMPLETED');
  t.strictSame(unhandled, []);
});

t.test('a wallet that drops the connection after submitting (4900) is not taken for "nothing submitted": the swap is tracked to COMPLETED', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const flaky = wrap(w.provider, {
    prepareExecuteAndWait: async (params) => {
      await w.provider.request({ method: 'prepareExecuteAndWait', params });
      throw Object.assign(new Error('Disconnected'), { code: 4900 });
    },
  });
  const result = await execute(plan, { provider: flaky, registries: w.registries });
  t.equal(result.status, 'COMPLETED');
  t.equal(w.offers(), 1);
});

t.test('"a reload while the wallet was asked to sign": executing again in a new process resubmits safely under the same commandId and completes', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const dir = tempDir(t, 'bestex-sdk-signing-');
  // The wallet never answers: the page is closed while the user looks at the signing prompt.
  const stuck = wrap(w.provider, { prepareExecuteAndWait: () => new Promise(() => {}) });
  const statuses: ExecutionStatus[] = [];
  const closedPage = execute(plan, { provider: stuck, registries: w.registries, storage: fileStorage(dir), hooks: { onStatus: (s) => void statuses.push(s) } });
  while (!statuses.includes('SUBMITTING')) await new Promise((resolve) => setTimeout(resolve, 20));
  const run = await inNewProcess(w, dir, plan, 'execute(plan, { provider, registries, storage })');
  t.equal(run.code, 0, run.stderr);
  t.match(run.result, { status: 'COMPLETED' });
  t.equal(w.offers(), 1);
  // The first execution still follows the ledger: it ends before the sandbox it reads closes with the test.
  await closedPage;
});

t.test('a signal already aborted stops the execution before anything is signed', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const result = await execute(plan, { provider: w.provider, registries: w.registries, signal: AbortSignal.abort() });
  t.match(result, { status: 'REFUSED', error: { code: 'aborted' } });
  t.equal(w.offers(), 0);
  t.equal((await execute(plan, { provider: w.provider, registries: w.registries })).status, 'COMPLETED', 'and it can be executed after');
});

/** The SDK's own Daml Decimal arithmetic, read from the package as installed. */
const sdkDecimal = (await import(new URL('./decimal.js', import.meta.resolve('@bestex/sdk')).href)) as {
  isDecimal(text: unknown): boolean;
  toUnits(text: string): bigint;
  fromUnits(units: bigint): string;
  mulDivFloor(a: bigint, b: bigint, c: bigint): bigint;
  divide(a: bigint, b: bigint): bigint;
};

t.test('the SDK\'s amounts are Daml Decimals "with at most 10 fractional digits", held as exact integers of 1e-10: every figure agrees with decimal.js', async (t) => {
  const { isDecimal, toUnits, fromUnits, mulDivFloor, divide } = sdkDecimal;
  const largest = `${'9'.repeat(28)}.${'9'.repeat(10)}`;
  for (const text of ['0', '0.5', '7', '10', '100.25', '0.0000000001', '1.0000000000', largest, `1${'0'.repeat(27)}`]) {
    t.ok(isDecimal(text), `${text} is a Daml Decimal`);
    const units = toUnits(text);
    t.equal(units.toString(), new Decimal(text).times(1e10).toFixed(), `${text} in 1e-10 units`);
    t.equal(fromUnits(units), new Decimal(text).toFixed(), `${text} written back canonically`);
  }
  for (const text of ['', '00', '01', '1.', '.5', '-1', '+1', '1e3', ' 1', '1 ', '1.00000000001', `1${'0'.repeat(28)}`, '1,5', '0x1', '1.5.5']) {
    t.notOk(isDecimal(text), `${JSON.stringify(text)} is not a Daml Decimal`);
    t.throws(() => toUnits(text), { message: `not a Daml Decimal: ${JSON.stringify(text)}` });
  }
  for (const value of [1, 1n, null, undefined, ['1'], { toString: () => '1' }]) t.notOk(isDecimal(value), `${String(value)} (${typeof value}) is not Daml Decimal text`);
  for (const [units, text] of [[0n, '0'], [-1n, '-0.0000000001'], [-25_000_000_000n, '-2.5'], [-30_000_000_000n, '-3'], [12_345_000_000_000n, '1234.5']] as const) {
    t.equal(fromUnits(units), text, `${units} units read ${text}`);
  }
  // floor(a × b / c): exact quotients, remainders either side of zero.
  for (const [a, b, c] of [[7n, 3n, 2n], [-7n, 3n, 2n], [-6n, 3n, 2n], [6n, 3n, 2n], [0n, 5n, 3n], [-1n, 1n, 10_000_000_000n], [10n, -3n, 4n]] as const) {
    t.equal(mulDivFloor(a, b, c).toString(), new Decimal(a.toString()).times(b.toString()).div(c.toString()).floor().toFixed(), `floor(${a} × ${b} / ${c})`);
  }
  for (const [a, b] of [['14.9443077829', '100'], ['1', '3'], ['2', '3'], ['100', '0.0000000003'], ['5', '5']] as const) {
    t.equal(fromUnits(divide(toUnits(a), toUnits(b))), new Decimal(a).div(b).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed(), `${a} / ${b}, rounded down`);
  }
});
