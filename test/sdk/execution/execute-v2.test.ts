// The SDK's execution client with version 2 plans, used as a partner uses the package: quote ->
// createClientV2().plan -> execute through the sandbox wallet ('@bestex/sdk/sandbox') with no
// registry configuration (the plan names each instrument's registry) -> tracked on the taker's own
// ledger view, cross-checked with GET /api/v2/outcome. The settlements this SDK executes:
// tradecraft's memo-floor, Nightly's swap-address-memo, and OneSwap's intent-deposit-reference
// (the wallet signs OneSwap's challenge, the service completes the plan, the deposit funds the
// intent, the outcome is the intent's). Each test quotes the rule it checks.
import t from 'tap';
import {
  createClientV2,
  execute,
  isSigningPlan,
  memoryStorage,
  resume,
  withdraw,
  type BestexClientV2,
  type CantonProvider,
  type DepositPlanV2,
  type ExecutionHooks,
  type ExecutionStatus,
  type SignatureRequest,
  type SigningPlanV2,
  type StepUpdate,
  type V2,
} from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Decimal } from '../../../core/decimal.js';
import { COLLECTING, listen, testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { spendable } from '../../helpers/ledger.js';

let takers = 0;
const newTaker = () => `sdk-exec-v2-${++takers}::1220${'5'.repeat(64)}`;

type Plan = DepositPlanV2;

/** A plan on a venue that needs no signed message: its steps are transfers from the start. */
function deposits(plan: V2.AppPlan | V2.ExecutionPlan): Plan {
  if (isSigningPlan(plan)) throw new Error(`${plan.planId} asks for a signed message first`);
  return plan as Plan;
}
type Venue = 'tradecraft' | 'nightly';

interface World {
  readonly app: TestApp;
  readonly baseUrl: string;
  readonly taker: string;
  readonly provider: CantonProvider;
  /** The sandbox's token registries, by instrument admin, as its manifest names them. */
  readonly registries: Readonly<Record<string, string>>;
  readonly client: ReturnType<typeof createClientV2>;
  plan(venue?: Venue, amount?: string): Promise<Plan>;
  /** A plan on OneSwap: its one step asks the wallet to sign OneSwap's challenge. */
  signingPlan(amount?: string): Promise<SigningPlanV2>;
  fund(token: 'CC' | 'USDCx', amount: string): Promise<void>;
  control(path: string, body: unknown): Promise<void>;
}

async function world(t: { teardown(fn: () => Promise<void>): void }, options: TestAppOptions = {}): Promise<World> {
  // OneSwap's intents read often, so the service's reading follows the swap closely.
  const app = await testApp({ ...options, env: { QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200', ...options.env } });
  t.teardown(app.close);
  const baseUrl = await listen(app.server);
  const taker = newTaker();
  const sandbox = app.sandbox!;
  const provider = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party: taker });
  const client = createClientV2({ baseUrl });
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
    plan: async (venueId = 'tradecraft', amount = '100') => deposits(await client.plan({ from: 'CC', to: 'USDCx', amount, venueId, takerParty: taker, idempotencyKey: `${taker}-${++keys}` })),
    signingPlan: async (amount = '1000') => {
      const plan = await client.plan({ from: 'CC', to: 'USDCx', amount, venueId: 'oneswap', takerParty: taker, idempotencyKey: `${taker}-${++keys}` });
      if (!isSigningPlan(plan)) throw new Error(`${plan.planId} asks for no signed message`);
      return plan;
    },
    fund: (token, amount) => control('/sandbox/v1/fund', { party: taker, token, amount }),
    control,
  };
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

/** The service's reading of a plan's deposit, through the v2 client. */
const serviceOutcome = (w: World, plan: Plan) =>
  w.client.outcome({ party: w.taker, since: new Date(Date.parse(plan.expiry) - 90_000).toISOString(), deadline: plan.expiry, escrow: plan.steps[0]!.target, amount: plan.steps[0]!.amount, want: 'USDCx' });

t.test('tradecraft (memo-floor), "a wallet needs no registry configuration": a v2 plan executed with no registries option to COMPLETED; the update id equals GET /api/v2/outcome\'s', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan('tradecraft');
  t.match(plan, { settlement: 'memo-floor', steps: [{ kind: 'venue-deposit', settlement: 'memo-floor', memo: plan.quoteRef.minReceive, minOut: plan.quoteRef.minReceive }] });
  t.notOk('mode' in plan, 'a version 2 plan, by its shape');
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, client: w.client, hooks });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.strictSame(hooks.steps.map((s) => [s.index, s.state]), [[0, 'pending'], [0, 'submitted'], [0, 'accepted']]);
  t.strictSame(hooks.steps[0]!.step, plan.steps[0], 'the hooks are given the step as the v2 plan says it');
  t.match(result, { status: 'COMPLETED', party: w.taker, depositUpdateId: /^1220[0-9a-f]{64}$/, error: null, outcome: { status: 'completed', agrees: true } });
  const service = await serviceOutcome(w, plan);
  t.strictSame(service, { status: 'completed', depositUpdateId: result.depositUpdateId }, 'the SDK and the service read the same update');
  t.ok(new Decimal(result.received!).gte(plan.quoteRef.minReceive), 'at least the floor');
  t.equal(result.received, balance(w, 'USDCx'), 'what was received is what the taker holds');
  const net = new Decimal(plan.quoteRef.net);
  t.strictSame(result.realised, {
    price: new Decimal(result.received!).div(plan.quoteRef.amount).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed(),
    slippageBps: net.minus(result.received!).times(10_000).div(net).toDecimalPlaces(0, Decimal.ROUND_CEIL).toNumber() || 0,
    aboveFloor: new Decimal(result.received!).minus(plan.quoteRef.minReceive).toFixed(),
  });
  t.equal(balance(w, 'Amulet'), '900');
});

t.test('tradecraft (memo-floor): "price worse than the floor -> SLIPPAGE_FAILED", the deposit back, with no registries option', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan('tradecraft', '200');
  await w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 });
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, client: w.client, hooks });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'INITIATED', 'SLIPPAGE_FAILED']);
  t.match(result, { status: 'SLIPPAGE_FAILED', depositUpdateId: /^1220/, received: null, realised: null, outcome: { status: 'slippage_failed', agrees: true } });
  t.equal(hooks.steps.at(-1)?.state, 'returned');
  t.equal(balance(w, 'Amulet'), '1000', 'the funds are back');
});

t.test('Nightly (swap-address-memo): a v2 plan executed with no registries option to COMPLETED: the desk at the swap address pays at least minOut; the service\'s not_found is no disagreement', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan('nightly');
  const [deposit] = plan.steps;
  t.match(plan, { settlement: 'swap-address-memo', steps: [{ kind: 'venue-deposit', settlement: 'swap-address-memo', memo: /\S/ }] });
  t.ok(new Decimal(deposit!.minOut!).gte(plan.quoteRef.minReceive), 'the venue\'s guarantee is at least the service\'s floor');
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, client: w.client, hooks });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.match(result, { status: 'COMPLETED', depositUpdateId: /^1220[0-9a-f]{64}$/, error: null });
  t.ok(new Decimal(result.received!).gte(deposit!.minOut!), 'at least the venue\'s minOut');
  t.equal(result.received, balance(w, 'USDCx'), 'what was received is what the taker holds');
  t.equal(balance(w, 'Amulet'), '900');
  const answer = w.app.sandbox!.ledger.transactionById(result.depositUpdateId!)!;
  t.ok(
    answer.events.some((e) => e.kind === 'exercised' && e.choice === 'TransferFactory_Transfer' && e.actingParties.includes(deposit!.target)),
    'the payout is made by the swap address, in the transaction that accepted the deposit',
  );
  // The service reads as the pool parties it is configured with; Nightly's swap address is none.
  t.strictSame(await serviceOutcome(w, plan), { status: 'not_found', depositUpdateId: null }, 'GET /api/v2/outcome does not see a Nightly deposit');
  t.equal(result.outcome, null, 'so the cross-check has no reading to compare, and reports no disagreement');
  t.notOk(hooks.statuses.length > 3, 'one terminal status');
});

t.test('Nightly (swap-address-memo): the pool moved past minOut -> SLIPPAGE_FAILED, the deposit back', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan('nightly', '200');
  await w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300, venue: 'nightly' });
  const hooks = recorder();
  const result = await execute(plan, { provider: w.provider, client: w.client, hooks });
  t.strictSame(hooks.statuses, ['SUBMITTING', 'INITIATED', 'SLIPPAGE_FAILED']);
  t.match(result, { status: 'SLIPPAGE_FAILED', depositUpdateId: /^1220/, received: null, outcome: null });
  t.equal(hooks.steps.at(-1)?.state, 'returned');
  t.equal(balance(w, 'Amulet'), '1000', 'the funds are back');
});

t.test('"resume" and "withdraw(planId)" of a v2 plan need no registries option either: the withdraw\'s choice context comes from the plan\'s registry', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  await w.control('/sandbox/v1/operator', { paused: true });
  const storage = memoryStorage();
  const plan = await w.plan('tradecraft');
  const stop = new AbortController();
  const first = await execute(plan, { provider: w.provider, storage, signal: stop.signal, hooks: { onStatus: (s) => s === 'INITIATED' && stop.abort() } });
  t.equal(first.status, 'INITIATED');
  const withdrawn = await withdraw(plan.planId, { provider: w.provider, storage });
  t.match(withdrawn, { status: 'WITHDRAWN', depositUpdateId: /^1220/ });
  t.equal(balance(w, 'Amulet'), '1000', 'back whole');

  const second = await w.plan('tradecraft');
  const pause = new AbortController();
  t.equal((await execute(second, { provider: w.provider, storage, signal: pause.signal, hooks: { onStatus: (s) => s === 'INITIATED' && pause.abort() } })).status, 'INITIATED');
  await w.control('/sandbox/v1/operator', { paused: false });
  t.match(await resume(second.planId, { provider: w.provider, storage }), { status: 'COMPLETED', error: null });
});

t.test('"an explicit option wins" over the plan\'s registries: registries by admin, or one registryUrl, each asked instead of the plan\'s', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const amulet = w.app.sandbox!.manifest.instrumentAdmins.Amulet;
  const nowhere = 'http://127.0.0.1:9/nowhere';
  const misdirected = (plan: Plan): Plan => ({ ...plan, registries: plan.registries.map((r) => ({ ...r, registryUrl: nowhere })) });
  const asked: string[] = [];
  const fetched: typeof fetch = (input, init) => (asked.push(String(input)), fetch(input, init));

  const byAdmin = await execute(misdirected(await w.plan()), { provider: w.provider, registries: w.registries, fetch: fetched });
  t.match(byAdmin, { status: 'COMPLETED', error: null }, 'registries: the caller\'s registry was asked');
  t.ok(asked.length > 0 && asked.every((url) => url.startsWith(w.registries[amulet]!)), 'only the option\'s registry');

  asked.length = 0;
  const byOne = await execute(misdirected(await w.plan()), { provider: w.provider, registryUrl: w.registries[amulet], fetch: fetched });
  t.match(byOne, { status: 'COMPLETED', error: null }, 'registryUrl: the same');
  t.ok(asked.length > 0 && asked.every((url) => url.startsWith(w.registries[amulet]!)));

  // Without an option the plan's own (here unreachable) registry is what is asked.
  asked.length = 0;
  const planned = await execute(misdirected(await w.plan()), { provider: w.provider, fetch: fetched });
  t.match(planned, { status: 'SUBMIT_FAILED', error: { code: 'submit_failed', message: /127\.0\.0\.1:9\/nowhere/ } });
  t.ok(asked.every((url) => url.startsWith(nowhere)));
});

t.test('"registryUrl null where the deployment does not name one": without an option the plan is REFUSED registry_unconfigured before anything is signed; with one it executes', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const unnamed: Plan = { ...plan, registries: plan.registries.map((r) => ({ ...r, registryUrl: null })) };
  const before = w.app.sandbox!.ledger.ledgerEnd;
  const refused = await execute(unnamed, { provider: w.provider });
  t.match(refused, { status: 'REFUSED', error: { name: 'BestexError', code: 'registry_unconfigured', message: /no token registry is configured for the instrument admin/ } });
  t.equal(w.app.sandbox!.ledger.ledgerEnd, before, 'nothing reached the ledger');
  t.match(await execute(unnamed, { provider: w.provider, registries: w.registries }), { status: 'COMPLETED' });
});

t.test('"the instrument admin from the plan step, matched against the holdings the wallet spends": a plan naming another admin for the taker\'s CC is refused unsigned', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.plan();
  const other = `other-dso::1220${'9'.repeat(64)}`;
  const foreign: Plan = {
    ...plan,
    steps: plan.steps.map((s) => ({ ...s, instrument: { ...s.instrument, admin: other } })),
    registries: plan.registries.map((r) => ({ ...r, admin: other })),
  };
  const before = w.app.sandbox!.ledger.ledgerEnd;
  const result = await execute(foreign, { provider: w.provider, registries: w.registries });
  t.match(result, { status: 'REFUSED', error: { code: 'plan_unverifiable', message: /the plan's Amulet is the admin other-dso::1220\S+'s, and the party's Amulet holdings are another admin's \(DSO::/ } });
  t.equal(w.app.sandbox!.ledger.ledgerEnd, before, 'nothing reached the ledger');
});

/** The provider, with every method it is asked recorded, and an action before a submission when given. */
function watching(provider: CantonProvider, beforeSubmit?: () => Promise<void>): CantonProvider & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    request: async (args) => {
      asked.push(args.method);
      if (beforeSubmit && args.method.startsWith('prepareExecute')) await beforeSubmit();
      return provider.request(args);
    },
    on: (event, listener) => provider.on(event, listener),
    removeListener: (event, listener) => provider.removeListener(event, listener),
  };
}

/** Hooks that record statuses with their notes, steps and signature requests. */
function signingRecorder() {
  const statuses: Array<[ExecutionStatus, string | undefined]> = [];
  const steps: StepUpdate[] = [];
  const signatures: SignatureRequest[] = [];
  const hooks: ExecutionHooks = {
    onStatus: (status, detail) => void statuses.push([status, detail.note]),
    onStep: (update) => void steps.push(update),
    onSignature: (request) => void signatures.push(request),
  };
  return { statuses, steps, signatures, hooks };
}

t.test('OneSwap (intent-deposit-reference) at 1,000 CC, "the wallet signs OneSwap\'s challenge, the service creates the intent": SIGNING with the purpose, the sandbox wallet signs once, signPlan completes the plan, the deposit funds the intent, COMPLETED at least the floor, the service\'s reading (the intent\'s status) agreeing', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.signingPlan('1000');
  const [step] = plan.steps;
  t.match(plan, { settlement: 'intent-deposit-reference', steps: [{ kind: 'sign-message', venueId: 'oneswap', message: /OneSwap wallet authentication\nParty: sdk-exec-v2-/, purpose: /\S/ }] });
  const wallet = watching(w.provider);
  const { statuses, steps, signatures, hooks } = signingRecorder();
  const result = await execute(plan, { provider: wallet, client: w.client, hooks });
  t.strictSame(statuses.map(([s]) => s), ['SIGNING', 'SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.equal(statuses[0]![1], step!.purpose, 'SIGNING says why the wallet signs, as the plan says it');
  t.strictSame(signatures, [{ planId: plan.planId, venueId: 'oneswap', message: step!.message, purpose: step!.purpose }], 'onSignature: what is signed and why, once');
  t.strictSame(steps.slice(0, 2).map((u) => [u.index, u.step.kind, u.state]), [[0, 'sign-message', 'pending'], [0, 'sign-message', 'signed']], 'the signing step reported, then the completed plan\'s');
  t.equal(wallet.asked.filter((m) => m === 'signMessage').length, 1, 'the wallet signed once');
  t.match(result, { status: 'COMPLETED', party: w.taker, depositUpdateId: /^1220[0-9a-f]{64}$/, error: null, intent: { venueId: 'oneswap', intentId: /\S/ } });
  t.ok(new Decimal(result.received!).gte(plan.quoteRef.minReceive), 'at least the floor');
  t.equal(result.received, balance(w, 'USDCx'), 'what was received is what the taker holds');
  t.match(result.outcome, { status: 'completed', basis: 'venue', venueStatus: 'completed', agrees: true }, 'the service reads the intent\'s status, and agrees');
  const deposit = w.app.sandbox!.ledger.transactionById(result.submittedUpdateId!)!;
  t.equal(deposit.commandId, plan.planId, 'submitted under commandId = planId');
  t.equal(balance(w, 'Amulet'), '0');
});

t.test('OneSwap: "the pool moved past the floor" between the signature and the deposit -> the intent slippage_failed, SLIPPAGE_FAILED, the deposit refunded; the service reads the same', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.signingPlan('1000');
  const wallet = watching(w.provider, () => w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300, venue: 'oneswap' }));
  const { statuses, hooks } = signingRecorder();
  const result = await execute(plan, { provider: wallet, client: w.client, hooks });
  t.strictSame(statuses.map(([s]) => s), ['SIGNING', 'SUBMITTING', 'INITIATED', 'SLIPPAGE_FAILED']);
  t.match(result, { status: 'SLIPPAGE_FAILED', depositUpdateId: /^1220/, received: null, outcome: { status: 'slippage_failed', basis: 'venue', venueStatus: 'slippage_failed', agrees: true } });
  t.equal(balance(w, 'Amulet'), '1000', 'the funds are back');
});

t.test('OneSwap: "a failed intent is reported in words saying OneSwap itself must act": the venue keeps the deposit and pays nothing -> VENUE_FAILED', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.signingPlan('100');
  await w.control('/sandbox/v1/oneswap/next-outcome', { status: 'failed' });
  const { statuses, hooks } = signingRecorder();
  const result = await execute(plan, { provider: w.provider, client: w.client, hooks });
  t.equal(statuses.at(-1)![0], 'VENUE_FAILED');
  t.match(result, {
    status: 'VENUE_FAILED',
    received: null,
    error: { code: 'venue_failed', message: /^oneswap took the deposit and neither paid out nor refunded it \(its intent \S+ is failed\): oneswap itself must act/ },
    outcome: { status: 'venue_failed', venueStatus: 'failed', agrees: true },
  });
  t.equal(balance(w, 'Amulet'), '900', 'the deposit is with the venue');
});

t.test('OneSwap: "resume never asks the wallet to sign twice": the service unreachable after the signature leaves the execution SIGNING with the signature kept; resume completes it with signPlan and no second signature', async (t) => {
  const w = await world(t);
  await w.fund('CC', '1000');
  const plan = await w.signingPlan('100');
  const storage = memoryStorage();
  const wallet = watching(w.provider);
  const unreachable = createClientV2({ baseUrl: 'http://127.0.0.1:9' });
  const down: BestexClientV2 = { ...w.client, signPlan: (request) => unreachable.signPlan(request) };
  const first = await execute(plan, { provider: wallet, client: down, storage });
  t.match(first, { status: 'SIGNING', error: { code: 'network_error' } }, 'not an end: the signed plan can still be completed');
  t.equal(w.app.sandbox!.ledger.transactions(0, w.app.sandbox!.ledger.ledgerEnd).filter((tx) => tx.actAs.includes(w.taker)).length, 0, 'nothing submitted');
  const resumed = await resume(plan.planId, { provider: wallet, client: w.client, storage });
  t.match(resumed, { status: 'COMPLETED', error: null, outcome: { agrees: true } });
  t.equal(wallet.asked.filter((m) => m === 'signMessage').length, 1, 'one signature, asked for once');
  const again = await execute(plan, { provider: wallet, client: w.client, storage });
  t.strictSame(again, resumed, 'executing it again answers the stored result');
  t.equal(wallet.asked.filter((m) => m === 'signMessage').length, 1);
});

/** The SDK's own list of the checks it makes before signing a v2 plan, read from the package as installed. */
const { PLAN_CHECKS_V2 } = (await import(new URL('./plan.js', import.meta.resolve('@bestex/sdk')).href)) as { PLAN_CHECKS_V2: ReadonlyArray<{ readonly id: string }> };

type Tamper = (plan: Plan) => Plan;
type Step = V2.PlanStep;
const withStep = (index: number, change: Partial<Step> | ((step: Step) => Partial<Step>)): Tamper => (plan) => ({
  ...plan,
  steps: plan.steps.map((step, i) => (i === index ? { ...step, ...(typeof change === 'function' ? change(step) : change) } : step)),
});
const withQuote = (change: Partial<Plan['quoteRef']>): Tamper => (plan) => ({ ...plan, quoteRef: { ...plan.quoteRef, ...change } });
const later = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString();
/** The plan as a swap-address-memo venue would settle it, with the deposit's memo and minOut as given. */
const swapAddress = (memo: string | null, minOut: (plan: Plan) => string | null): Tamper => (plan) =>
  withStep(0, { settlement: 'swap-address-memo', memo, minOut: minOut(plan) })({ ...plan, settlement: 'swap-address-memo' });
const ANOTHER_PARTY = `someone-else::1220${'b'.repeat(64)}`;
/** The plan as a OneSwap intent's deposit would settle it, with the deposit's memo and minOut as given. */
const intentDeposit = (memo: string | null, minOut: (plan: Plan) => string | null): Tamper => (plan) =>
  withStep(0, { settlement: 'intent-deposit-reference', memo, minOut: minOut(plan) })({ ...plan, settlement: 'intent-deposit-reference' });
/** The plan as made on OneSwap, before its signature: one sign-message step, changed as given. */
const signing = (change: Partial<V2.SignMessageStep> = {}, settlement: V2.Settlement = 'intent-deposit-reference', extra: readonly V2.PlanStep[] = []): Tamper => (plan) =>
  ({
    ...plan,
    settlement,
    steps: [{ kind: 'sign-message', venueId: 'oneswap', message: 'OneSwap wallet authentication\nNonce: 00', purpose: 'to prove the party is yours', expiresAt: plan.expiry, ...change }, ...extra],
  }) as never;

/**
 * One v2 plan tampered one way per check the SDK makes, each refused by that check; a check may
 * have more than one row. The base plan is a partner's: a deposit, an escrowed service fee and an
 * integrator fee, with the registries of CC and USDCx.
 */
const TAMPERED: ReadonlyArray<{ check: string; what: string; tamper: Tamper; refusal: { code: string; message: RegExp } }> = [
  { check: 'plan-id', what: 'no planId', tamper: (plan) => ({ ...plan, planId: '' }), refusal: { code: 'plan_unverifiable', message: /it has no planId/ } },
  {
    check: 'settlement',
    what: 'a settlement this SDK does not execute',
    tamper: (plan) => withStep(0, { settlement: 'account-intent' })({ ...plan, settlement: 'account-intent' }),
    refusal: { code: 'plan_unverifiable', message: /settlement "account-intent" is not one this SDK executes \(memo-floor, swap-address-memo, intent-deposit-reference\)/ },
  },
  { check: 'settlement', what: 'no settlement', tamper: (plan) => ({ ...plan, settlement: null as never }), refusal: { code: 'plan_unverifiable', message: /settlement null is not one this SDK executes/ } },
  { check: 'expiry-date-time', what: 'an expiry that is no date-time', tamper: (plan) => ({ ...plan, expiry: 'soon' }), refusal: { code: 'plan_unverifiable', message: /its expiry is not a date-time/ } },
  { check: 'not-expired', what: 'an expired plan', tamper: (plan) => ({ ...plan, expiry: later(new Date().toISOString(), -5_000) }), refusal: { code: 'plan_expired', message: /expired at \S+, [1-9][0-9]? s ago/ } },
  { check: 'quote-ref', what: 'no quoteRef', tamper: (plan) => ({ ...plan, quoteRef: undefined as never }), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'quote-ref', what: 'a floor that is no decimal', tamper: withQuote({ minReceive: '-1' }), refusal: { code: 'plan_unverifiable', message: /quoteRef does not say/ } },
  { check: 'has-steps', what: 'no steps', tamper: (plan) => ({ ...plan, steps: [] }), refusal: { code: 'plan_unverifiable', message: /it has no steps/ } },
  { check: 'sign-message', what: 'a sign-message step beside a deposit', tamper: (plan) => signing({}, 'intent-deposit-reference', [plan.steps[0]!])(plan), refusal: { code: 'plan_unverifiable', message: /its sign-message step is not its only step/ } },
  { check: 'sign-message', what: 'a signed message on a settlement that asks for none', tamper: signing({}, 'memo-floor'), refusal: { code: 'plan_unverifiable', message: /it asks for a signed message, which settlement "memo-floor" does not/ } },
  { check: 'sign-message', what: 'no message to sign', tamper: signing({ message: '' }), refusal: { code: 'plan_unverifiable', message: /its sign-message step does not say the venue, the message and why it is signed/ } },
  { check: 'sign-message', what: 'no purpose', tamper: signing({ purpose: ' ' }), refusal: { code: 'plan_unverifiable', message: /does not say the venue, the message and why/ } },
  { check: 'sign-message', what: 'a step expiring after the plan', tamper: (plan) => signing({ expiresAt: later(plan.expiry, 1) })(plan), refusal: { code: 'plan_unverifiable', message: /its sign-message step expires after the plan/ } },
  { check: 'step-kind', what: 'an unknown step kind', tamper: withStep(2, { kind: 'mystery' as never }), refusal: { code: 'plan_unverifiable', message: /step 2 is of a kind this SDK does not know \("mystery"\)/ } },
  { check: 'step-target', what: 'a target that is no party id', tamper: withStep(0, { target: 'nightly-swap' }), refusal: { code: 'plan_unverifiable', message: /step 0's target is not a party id/ } },
  { check: 'step-amount', what: 'a zero amount', tamper: withStep(1, { amount: '0' }), refusal: { code: 'plan_unverifiable', message: /step 1's amount is not a positive Daml Decimal/ } },
  { check: 'step-instrument', what: 'an instrument named by id alone, as v1 does', tamper: withStep(0, { instrument: 'Amulet' as never }), refusal: { code: 'plan_unverifiable', message: /step 0's instrument is not one this SDK knows, with its admin party/ } },
  { check: 'step-instrument', what: 'an unknown instrument', tamper: withStep(2, (s) => ({ instrument: { ...s.instrument, id: 'DOGE' as never } })), refusal: { code: 'plan_unverifiable', message: /step 2's instrument is not one this SDK knows/ } },
  { check: 'step-instrument', what: 'an admin that is no party id', tamper: withStep(1, (s) => ({ instrument: { ...s.instrument, admin: 'usdc-admin' } })), refusal: { code: 'plan_unverifiable', message: /step 1's instrument is not one this SDK knows/ } },
  { check: 'step-settlement', what: 'a deposit settling otherwise than the plan says', tamper: withStep(0, { settlement: 'swap-address-memo' }), refusal: { code: 'plan_unverifiable', message: /step 0's settlement is "swap-address-memo", not "memo-floor"/ } },
  { check: 'step-settlement', what: 'a fee leg with a settlement', tamper: withStep(2, { settlement: 'memo-floor' }), refusal: { code: 'plan_unverifiable', message: /step 2's settlement is "memo-floor", not null/ } },
  { check: 'step-expiry', what: 'a step expiring after the plan', tamper: (plan) => withStep(2, { expiresAt: later(plan.expiry, 1) })(plan), refusal: { code: 'plan_unverifiable', message: /step 2 expires after the plan/ } },
  { check: 'one-deposit-first', what: 'the deposit second', tamper: (plan) => ({ ...plan, steps: [plan.steps[1]!, plan.steps[0]!, plan.steps[2]!] }), refusal: { code: 'plan_unverifiable', message: /exactly one deposit, first/ } },
  { check: 'deposit-is-the-give', what: 'a deposit bigger than the quote', tamper: withStep(0, { amount: '100.0000000001' }), refusal: { code: 'plan_unverifiable', message: /the deposit is not the quote's give amount/ } },
  { check: 'deposit-is-the-give', what: 'a deposit in another instrument', tamper: withStep(0, (s) => ({ instrument: { ...s.instrument, id: 'CBTC' } })), refusal: { code: 'plan_unverifiable', message: /the deposit is not the quote's give amount in its give instrument/ } },
  { check: 'memo-floor', what: 'a memo that is not the floor', tamper: withStep(0, { memo: ONE_UNIT }), refusal: { code: 'plan_unverifiable', message: /the deposit's memo and minOut are not the quote's floor/ } },
  { check: 'memo-floor', what: 'a minOut that is not the floor', tamper: withStep(0, { minOut: ONE_UNIT }), refusal: { code: 'plan_unverifiable', message: /the deposit's memo and minOut are not the quote's floor/ } },
  { check: 'swap-address-memo', what: 'a swap-address deposit without the venue\'s memo', tamper: swapAddress('', (plan) => plan.quoteRef.minReceive), refusal: { code: 'plan_unverifiable', message: /the deposit carries no venue memo/ } },
  { check: 'swap-address-memo', what: 'a swap-address deposit with no memo at all', tamper: swapAddress(null, (plan) => plan.quoteRef.minReceive), refusal: { code: 'plan_unverifiable', message: /the deposit carries no venue memo/ } },
  {
    check: 'swap-address-memo',
    what: 'a venue guarantee below the service\'s floor',
    tamper: swapAddress('nswap-0123456789abcdef', (plan) => new Decimal(plan.quoteRef.minReceive).minus(ONE_UNIT).toFixed()),
    refusal: { code: 'plan_unverifiable', message: /the deposit's minOut is below the quote's floor/ },
  },
  { check: 'intent-deposit-reference', what: 'an intent deposit without its depositReference', tamper: intentDeposit('', (plan) => plan.quoteRef.minReceive), refusal: { code: 'plan_unverifiable', message: /the deposit carries no venue memo/ } },
  {
    check: 'intent-deposit-reference',
    what: 'an intent\'s minOutput below the service\'s floor',
    tamper: intentDeposit('osr-0123456789abcdef0123', (plan) => new Decimal(plan.quoteRef.minReceive).minus(ONE_UNIT).toFixed()),
    refusal: { code: 'plan_unverifiable', message: /the deposit's minOut is below the quote's floor/ },
  },
  { check: 'swap-address-memo', what: 'no venue guarantee', tamper: swapAddress('nswap-0123456789abcdef', () => null), refusal: { code: 'plan_unverifiable', message: /the deposit's minOut is below the quote's floor/ } },
  {
    check: 'floor-within-net',
    what: 'a floor above net (the memo and minOut with it)',
    tamper: (plan) => {
      const floor = new Decimal(plan.quoteRef.net).plus(ONE_UNIT).toFixed();
      return withStep(0, { memo: floor, minOut: floor })(withQuote({ minReceive: floor })(plan));
    },
    refusal: { code: 'plan_unverifiable', message: /the floor is above the quote's net/ },
  },
  { check: 'net-not-zero', what: 'a net of zero (the floor, memo and minOut with it)', tamper: (plan) => withStep(0, { memo: '0', minOut: '0' })(withQuote({ net: '0', minReceive: '0' })(plan)), refusal: { code: 'plan_unverifiable', message: /the quote's net is zero/ } },
  { check: 'fee-legs-collect-fees', what: 'fee legs on a plan that collects none', tamper: (plan) => ({ ...plan, collectsFees: false }), refusal: { code: 'plan_unverifiable', message: /fee legs but does not collect fees/ } },
  { check: 'fee-legs-disclosed', what: 'fee legs with no disclosure', tamper: withQuote({ clientFees: undefined as never }), refusal: { code: 'plan_unverifiable', message: /fee legs but discloses no fees/ } },
  { check: 'one-leg-per-kind', what: 'the integrator fee twice', tamper: (plan) => ({ ...plan, steps: [...plan.steps, plan.steps[2]!] }), refusal: { code: 'plan_unverifiable', message: /more than one fee-transfer leg/ } },
  {
    check: 'one-admin-per-instrument',
    what: 'one fee leg\'s USDCx under another admin',
    tamper: withStep(2, (s) => ({ instrument: { ...s.instrument, admin: ANOTHER_PARTY } })),
    refusal: { code: 'plan_unverifiable', message: /it names USDCx under two admins/ },
  },
  { check: 'registries-cover', what: 'no registries', tamper: (plan) => ({ ...plan, registries: [] }), refusal: { code: 'plan_unverifiable', message: /its registries name none for Amulet under its admin/ } },
  {
    check: 'registries-cover',
    what: 'no registry for the fee legs\' instrument',
    tamper: (plan) => ({ ...plan, registries: plan.registries.filter((r) => r.instrument !== 'USDCx') }),
    refusal: { code: 'plan_unverifiable', message: /its registries name none for USDCx under its admin/ },
  },
  {
    check: 'registries-cover',
    what: 'a registry under another admin than the step\'s',
    tamper: (plan) => ({ ...plan, registries: plan.registries.map((r) => (r.instrument === 'Amulet' ? { ...r, admin: ANOTHER_PARTY } : r)) }),
    refusal: { code: 'plan_unverifiable', message: /its registries name none for Amulet under its admin/ },
  },
  {
    check: 'registries-cover',
    what: 'a registry URL that is no http(s) URL',
    tamper: (plan) => ({ ...plan, registries: plan.registries.map((r) => ({ ...r, registryUrl: 'file:///etc/registry' })) }),
    refusal: { code: 'plan_unverifiable', message: /its registries name none for Amulet/ },
  },
  { check: 'fee-leg-in-want', what: 'a fee leg in the give instrument', tamper: (plan) => withStep(2, { instrument: plan.steps[0]!.instrument })(plan), refusal: { code: 'plan_unverifiable', message: /the fee-transfer leg is not in the want instrument/ } },
  { check: 'fee-leg-bare', what: 'a fee leg with a memo', tamper: withStep(1, { memo: 'pay me' }), refusal: { code: 'plan_unverifiable', message: /the fee-escrow-lock leg carries a memo or a minOut/ } },
  { check: 'fee-leg-bare', what: 'a fee leg with a minOut', tamper: withStep(2, { minOut: '1' }), refusal: { code: 'plan_unverifiable', message: /the fee-transfer leg carries a memo or a minOut/ } },
  {
    check: 'service-fee-disclosed',
    what: 'an escrowed service fee above the disclosed one',
    tamper: (plan) => withStep(1, { amount: new Decimal(plan.steps[1]!.amount).plus(ONE_UNIT).toFixed() })(plan),
    refusal: { code: 'plan_unverifiable', message: /the fee-escrow-lock leg is not the disclosed service fee/ },
  },
  { check: 'integrator-fee-disclosed', what: 'the integrator fee to another recipient', tamper: withStep(2, { target: ANOTHER_PARTY }), refusal: { code: 'plan_unverifiable', message: /the integrator fee leg is not the disclosed integrator fee to its recipient/ } },
];

t.test('"the SDK re-checks the v2 plan it is handed": a plan tampered against each of its checks is REFUSED by that check before anything is signed', async (t) => {
  t.strictSame([...new Set(TAMPERED.map((row) => row.check))].sort(), PLAN_CHECKS_V2.map((c) => c.id).sort(), 'a row for every check the SDK makes of a v2 plan, and none for a check it does not');
  const w = await world(t, { env: COLLECTING });
  const { issueKey } = await import('../../helpers/keys.js');
  const { key } = await issueKey(w.app.core.keyStore);
  const partner = createClientV2({ baseUrl: w.baseUrl, apiKey: key });
  await w.fund('CC', '1000');
  await w.fund('USDCx', '5');
  const plan = deposits(await partner.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: w.taker, idempotencyKey: `${w.taker}-tampered`, feeBps: 5, feeRecipient: `wallet-co::1220${'a'.repeat(64)}` }));
  t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock', 'fee-transfer']);
  t.strictSame(plan.registries.map((r) => r.instrument).sort(), ['Amulet', 'USDCx']);
  const asked: string[] = [];
  const watched: CantonProvider = {
    request: (args) => (asked.push(args.method), w.provider.request(args)),
    on: (event, listener) => w.provider.on(event, listener),
    removeListener: (event, listener) => w.provider.removeListener(event, listener),
  };
  const before = w.app.sandbox!.ledger.ledgerEnd;
  for (const [n, row] of TAMPERED.entries()) {
    const tampered = row.tamper({ ...plan, planId: `${plan.planId}-${n}` });
    const result = await execute(tampered, { provider: watched, storage: memoryStorage() });
    t.match(result, { status: 'REFUSED', error: { name: 'BestexError', ...row.refusal } }, `${row.check}: ${row.what}`);
  }
  t.strictSame(asked.filter((method) => method.startsWith('prepare')), [], 'the wallet was asked to sign nothing');
  t.equal(w.app.sandbox!.ledger.ledgerEnd, before, 'nothing reached the ledger');
  const untouched = await execute(plan, { provider: watched, client: partner });
  t.match(untouched, { status: 'COMPLETED', fees: { included: true, released: true }, outcome: { agrees: true } }, 'the plan as the service made it passes every check, its fee legs batched, with no registries option');
});
