// The SDK executing split plans as a partner uses the package: the v2 quote's split -> 
// createClientV2().plan({legs}) -> execute through the sandbox wallet ('@bestex/sdk/sandbox'), the
// service and the sandbox as they run. At 1,000,000 CC the sandbox's split is OneSwap + tradecraft:
// the wallet signs OneSwap's challenge, the service completes the split, and every leg's deposit
// and fee legs go in ONE batch; each leg then settles on its own. Each test quotes the rule it checks.
import t from 'tap';
import { createClientV2, execute, isSigningPlan, isSplitPlan, memoryStorage, resume, withdraw, type CantonProvider, type ExecutionHooks, type ExecutionStatus, type LegUpdate, type StatusDetail, type StepUpdate, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Decimal } from '../../../core/decimal.js';
import { COLLECTING, FEE_PARTIES, listen, testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { spendable } from '../../helpers/ledger.js';

const AMOUNT = '1000000';
let takers = 0;

interface World {
  readonly app: TestApp;
  readonly client: ReturnType<typeof createClientV2>;
  /** A new taker, funded with the split's CC and the USDCx its fee legs need. */
  taker(): Promise<{ party: string; provider: CantonProvider }>;
  /** The quote's split at 1,000,000 CC, planned for `party`. */
  plan(party: string): Promise<V2.SplitPlan>;
  control(path: string, body: unknown): Promise<void>;
  balance(party: string, instrument: string): string;
}

/** One app (its own sandbox) for the tests of a file: each test has a taker of its own. */
async function world(options: TestAppOptions = {}): Promise<World> {
  // OneSwap's intents read often, so the service's reading follows the swap closely.
  const app = await testApp({ ...options, env: { ...COLLECTING, QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200' } });
  t.teardown(app.close);
  const client = createClientV2({ baseUrl: await listen(app.server) });
  const sandbox = app.sandbox!;
  const control = async (resource: string, body: unknown) => {
    const response = await fetch(new URL(resource, sandbox.manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (response.status !== 200) throw new Error(`${resource}: ${response.status} ${await response.text()}`);
  };
  return {
    app,
    client,
    control,
    taker: async () => {
      const party = `sdk-split-${++takers}::1220${'6'.repeat(64)}`;
      await control('/sandbox/v1/fund', { party, token: 'CC', amount: AMOUNT });
      await control('/sandbox/v1/fund', { party, token: 'USDCx', amount: '1000' });
      return { party, provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }) };
    },
    plan: async (party) => {
      const quote = await client.quote({ from: 'CC', to: 'USDCx', amount: AMOUNT });
      const legs = quote.split!.legs.map(({ venueId, amount }) => ({ venueId, amount }));
      return client.plan({ from: 'CC', to: 'USDCx', amount: AMOUNT, legs, takerParty: party, idempotencyKey: `${party}-split` });
    },
    balance: (party, instrument) => spendable(sandbox.ledger, party, instrument).toFixed(),
  };
}

/** The provider, with every method it is asked recorded, an action before a submission when given, and the package query answered as given. */
function watching(provider: CantonProvider, options: { beforeSubmit?: () => Promise<void>; packageQuery?: 'refused' } = {}): CantonProvider & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    request: async (args) => {
      asked.push(args.method);
      const resource = (args.params as { resource?: string } | undefined)?.resource;
      if (options.packageQuery === 'refused' && resource === '/v2/interactive-submission/preferred-package-version') throw Object.assign(new Error('this wallet does not forward that query'), { code: -32603 });
      if (options.beforeSubmit && args.method.startsWith('prepareExecute')) await options.beforeSubmit();
      return provider.request(args);
    },
    on: (event, listener) => provider.on(event, listener),
    removeListener: (event, listener) => provider.removeListener(event, listener),
  };
}

/** Hooks that record what they are told. */
function recorder() {
  const statuses: Array<[ExecutionStatus, StatusDetail]> = [];
  const steps: StepUpdate[] = [];
  const legs: LegUpdate[] = [];
  let signatures = 0;
  const hooks: ExecutionHooks = {
    onStatus: (status, detail) => void statuses.push([status, detail]),
    onStep: (update) => void steps.push(update),
    onLeg: (update) => void legs.push(update),
    onSignature: () => void signatures++,
  };
  return { statuses, steps, legs, hooks, signatures: () => signatures };
}

const floorDiv = (a: string, b: string) => new Decimal(a).div(b).toDecimalPlaces(10, Decimal.ROUND_DOWN).toFixed();
const slippage = (net: string, received: string) => new Decimal(net).minus(received).times(10_000).div(net).toDecimalPlaces(0, Decimal.ROUND_CEIL).toNumber() || 0;
const sum = (values: readonly string[]) => values.reduce((total, v) => total.plus(v), new Decimal(0));

const w = await world();

t.test('"a split executes in ONE submission, each leg paid at or above its floor": 1,000,000 CC over OneSwap and tradecraft to COMPLETED, the figures of every leg recomputing', async (t) => {
  const { party, provider } = await w.taker();
  const made = await w.plan(party);
  t.ok(isSplitPlan(made) && isSigningPlan(made), 'the split with a OneSwap leg is made as its message to sign');
  t.strictSame(made.split.legs.map((l) => l.venueId), ['oneswap', 'tradecraft']);
  const wallet = watching(provider);
  const { statuses, steps, legs, hooks, signatures } = recorder();
  const result = await execute(made, { provider: wallet, client: w.client, hooks });
  t.strictSame(statuses.map(([s]) => s), ['SIGNING', 'SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.equal(signatures(), 1, 'the wallet signed OneSwap\'s message once');
  t.strictSame(wallet.asked.filter((m) => m.startsWith('prepareExecute')), ['prepareExecuteAndWait'], 'one submission');
  const ledger = w.app.sandbox!.ledger;
  const submitted = ledger.transactions(0, ledger.ledgerEnd).filter((tx) => tx.commandId === made.planId);
  t.equal(submitted.length, 1, 'one transaction under commandId = planId');
  t.equal(submitted[0]!.updateId, result.submittedUpdateId, 'the one that offered every deposit');
  const reasons = submitted[0]!.events.flatMap((e) => (e.kind === 'created' && 'createArgument' in e && (e.createArgument as { transfer?: unknown }).transfer ? [(e.createArgument as { transfer: { meta: { values: Record<string, string> } } }).transfer.meta.values['splice.lfdecentralizedtrust.org/reason']] : []));
  t.strictSame(
    reasons.filter((r) => r?.startsWith(made.planId)).sort(),
    [`${made.planId} leg 0 b2c-fee-transfer`, `${made.planId} leg 1 b2c-fee-transfer`],
    "each fee offer's reason names the leg whose deposit it goes with",
  );

  const { split } = made;
  t.match(result, { status: 'COMPLETED', error: null, depositUpdateId: null, outcome: null, fees: { included: true, released: true }, intent: { venueId: 'oneswap' } });
  t.equal(result.legs?.length, 2);
  const completed = steps.filter((u) => u.step.kind !== 'sign-message');
  for (const leg of result.legs!) {
    const planned = split.legs[leg.index]!;
    const deposit = completed.find((u) => u.step.kind === 'venue-deposit' && (u.step as V2.PlanStep).leg === leg.index)!.step as V2.PlanStep;
    t.match(leg, { venueId: planned.venueId, amount: planned.amount, minReceive: planned.minReceive, status: 'COMPLETED', depositUpdateId: /^1220[0-9a-f]{64}$/, fees: { released: true }, outcome: { agrees: true } }, `${leg.venueId}: paid, its fees released, the service agreeing`);
    t.ok(new Decimal(leg.received!).gte(planned.minReceive), `${leg.venueId}: at least its floor`);
    t.ok(new Decimal(leg.received!).gte(deposit.minOut!), `${leg.venueId}: at least its deposit's minOut`);
    t.strictSame(
      leg.realised,
      { price: floorDiv(leg.received!, planned.amount), slippageBps: slippage(planned.net, leg.received!), aboveFloor: new Decimal(leg.received!).minus(planned.minReceive).toFixed() },
      `${leg.venueId}: its realised figures against its own net and floor`,
    );
  }
  t.equal(result.received, sum(result.legs!.map((l) => l.received!)).toFixed(), 'received: the legs\' sum');
  t.strictSame(result.realised, { price: floorDiv(result.received!, split.amount), slippageBps: slippage(split.net, result.received!), aboveFloor: new Decimal(result.received!).minus(split.minReceive).toFixed() }, 'realised on the whole, every leg paid');
  t.strictSame(
    legs.map((l) => [l.index, l.venueId, l.status, l.received]).sort(),
    result.legs!.map((l) => [l.index, l.venueId, 'COMPLETED', l.received]),
    'onLeg: once per leg, as it settled',
  );
  t.strictSame(
    completed.filter((u) => u.state === 'accepted').map((u) => u.index).sort(),
    [0, 1, 2, 3],
    'every deposit and fee leg accepted, each reported on its step',
  );
  const fees = sum(split.legs.map((l) => l.clientFees.service.amount));
  t.equal(w.balance(party, 'USDCx'), new Decimal(1000).minus(fees).plus(result.received!).toFixed(), 'the taker holds what it was paid, less each leg\'s fee');
  t.equal(w.balance(party, 'Amulet'), '0');
});

t.test('"a leg whose pool moved past its floor is returned, the other paid": PARTIALLY_COMPLETED, the returned leg\'s fees returned with it, not collected', async (t) => {
  const { party, provider } = await w.taker();
  const made = await w.plan(party);
  const feesBefore = w.balance(FEE_PARTIES.B2C_FEE_PARTY, 'USDCx');
  // After planning and signing, before the batch: tradecraft's pool falls 3 %, past its leg's floor.
  const wallet = watching(provider, { beforeSubmit: () => w.control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 }) });
  const { statuses, legs, hooks } = recorder();
  const result = await execute(made, { provider: wallet, client: w.client, hooks });
  t.strictSame(statuses.map(([s]) => s), ['SIGNING', 'SUBMITTING', 'INITIATED', 'PARTIALLY_COMPLETED']);
  const [oneswap, tradecraft] = result.legs!;
  t.match(oneswap, { venueId: 'oneswap', status: 'COMPLETED', fees: { released: true }, outcome: { agrees: true } });
  t.match(tradecraft, { venueId: 'tradecraft', status: 'SLIPPAGE_FAILED', received: null, realised: null, depositUpdateId: /^1220/, fees: { released: false }, outcome: { status: 'slippage_failed', agrees: true } });
  t.ok(new Decimal(oneswap!.received!).gte(made.split.legs[0]!.minReceive), 'the paid leg at least its floor');
  t.match(result, { status: 'PARTIALLY_COMPLETED', received: oneswap!.received, realised: null, error: null, fees: { included: true, released: false } });
  const [, detail] = statuses.at(-1)!;
  t.equal(detail.received, oneswap!.received, 'the status says what was received');
  t.match(detail.note, /leg 0 \(oneswap, \S+\) paid \S+ USDCx; leg 1 \(tradecraft, \S+\) returned: its venue could not pay its floor/, 'the note names each leg\'s fate');
  t.strictSame(legs.map((l) => [l.venueId, l.status]).sort(), [['oneswap', 'COMPLETED'], ['tradecraft', 'SLIPPAGE_FAILED']]);
  t.equal(w.balance(party, 'Amulet'), made.split.legs[1]!.amount, 'the returned leg\'s CC back');
  const oneswapFee = made.split.legs[0]!.clientFees.service.amount;
  t.equal(w.balance(party, 'USDCx'), new Decimal(1000).minus(oneswapFee).plus(oneswap!.received!).toFixed(), 'only the paid leg\'s fee left the taker');
  t.equal(w.balance(FEE_PARTIES.B2C_FEE_PARTY, 'USDCx'), new Decimal(feesBefore).plus(oneswapFee).toFixed(), 'the service collected the paid leg\'s fee alone');
});

t.test('"resume and withdraw(planId) work for a split": every still-open deposit taken back in one submission (WITHDRAWN); a split left at INITIATED resumed to COMPLETED with no second signature or submission', async (t) => {
  await w.control('/sandbox/v1/operator', { paused: true });
  const ledger = w.app.sandbox!.ledger;
  const held = await w.taker();
  const storage = memoryStorage();
  const made = await w.plan(held.party);
  const stop = new AbortController();
  const left = await execute(made, { provider: held.provider, client: w.client, storage, signal: stop.signal, hooks: { onStatus: (s) => s === 'INITIATED' && stop.abort() } });
  t.match(left, { status: 'INITIATED', legs: [{ status: null }, { status: null }] }, 'both deposits on the ledger, unanswered');
  const withdrawn = await withdraw(made.planId, { provider: held.provider, client: w.client, storage });
  t.match(withdrawn, { status: 'WITHDRAWN', legs: [{ status: 'WITHDRAWN', depositUpdateId: /^1220/ }, { status: 'WITHDRAWN' }] });
  t.equal(withdrawn.legs![0]!.depositUpdateId, withdrawn.legs![1]!.depositUpdateId, 'both withdrawn in one transaction');
  t.equal(ledger.transactions(0, ledger.ledgerEnd).filter((tx) => tx.commandId === `${made.planId}-withdraw`).length, 1, 'one withdraw submission');
  t.equal(w.balance(held.party, 'Amulet'), AMOUNT, 'every deposit back');

  const paused = await w.taker();
  const wallet = watching(paused.provider);
  const second = await w.plan(paused.party);
  const pause = new AbortController();
  t.equal((await execute(second, { provider: wallet, client: w.client, storage, signal: pause.signal, hooks: { onStatus: (s) => s === 'INITIATED' && pause.abort() } })).status, 'INITIATED');
  await w.control('/sandbox/v1/operator', { paused: false });
  const resumed = await resume(second.planId, { provider: wallet, client: w.client, storage });
  t.match(resumed, { status: 'COMPLETED', legs: [{ status: 'COMPLETED' }, { status: 'COMPLETED' }], fees: { released: true } });
  t.equal(wallet.asked.filter((m) => m === 'signMessage').length, 1, 'one signature');
  t.equal(wallet.asked.filter((m) => m.startsWith('prepareExecute')).length, 1, 'one submission');
});

t.test('"every venue a wallet executes takes its leg": a three-venue split at 300,000 CC (Nightly, OneSwap, tradecraft) to COMPLETED in one submission, Nightly\'s leg paid at least its own terms\' minimum, each leg\'s fee released', async (t) => {
  const amount = '300000';
  // A sandbox of its own: the other tests' swaps moved this one's pools.
  const w = await world();
  const { party, provider } = await w.taker();
  const quote = await w.client.quote({ from: 'CC', to: 'USDCx', amount });
  t.strictSame(quote.split!.legs.map((l) => l.venueId), ['nightly', 'oneswap', 'tradecraft']);
  const made = await w.client.plan({ from: 'CC', to: 'USDCx', amount, legs: quote.split!.legs.map(({ venueId, amount: given }) => ({ venueId, amount: given })), takerParty: party, idempotencyKey: `${party}-three` });
  const wallet = watching(provider);
  const result = await execute(made, { provider: wallet, client: w.client, storage: memoryStorage() });
  t.match(result, { status: 'COMPLETED', error: null, fees: { released: true } });
  t.strictSame(wallet.asked.filter((m) => m.startsWith('prepareExecute')), ['prepareExecuteAndWait'], 'one submission');
  // A retry of the signature call answers the completed plan, whatever it carries: its deposits' minOut.
  const complete = (await w.client.signPlan({ planId: made.planId, signature: 'unused', publicKey: 'unused' })) as V2.SplitPlan;
  for (const leg of result.legs!) {
    const deposit = complete.steps.find((s) => s.kind === 'venue-deposit' && (s as V2.PlanStep).leg === leg.index) as V2.PlanStep;
    t.match(leg, { status: 'COMPLETED', fees: { released: true } }, `${leg.venueId}: paid, its fee released`);
    t.ok(new Decimal(leg.received!).gte(deposit.minOut!), `${leg.venueId}: at least its deposit's minOut (${deposit.settlement})`);
  }
  t.equal(result.received, sum(result.legs!.map((l) => l.received!)).toFixed());
  t.ok(new Decimal(result.received!).gte(complete.split.minReceive), 'at least the split\'s floor');
});

t.test('"a venue that keeps its leg says who must act": OneSwap keeps its deposit and pays nothing while tradecraft pays -> VENUE_FAILED, the paid leg still reported paid', async (t) => {
  // A sandbox of its own: the other tests' swaps moved this one's pools.
  const w = await world();
  const { party, provider } = await w.taker();
  const made = await w.plan(party);
  await w.control('/sandbox/v1/oneswap/next-outcome', { status: 'failed' });
  const { legs, hooks } = recorder();
  const result = await execute(made, { provider, client: w.client, hooks, storage: memoryStorage() });
  t.match(result, { status: 'VENUE_FAILED', error: { code: 'venue_failed', message: /oneswap took the deposit and neither paid out nor refunded it .*oneswap itself must act/ } });
  const oneswap = result.legs!.find((l) => l.venueId === 'oneswap')!;
  const tradecraft = result.legs!.find((l) => l.venueId === 'tradecraft')!;
  t.match(oneswap, { status: 'VENUE_FAILED', received: null, outcome: { status: 'venue_failed', agrees: true } }, "OneSwap's leg: kept, the service reading the same");
  t.match(tradecraft, { status: 'COMPLETED', fees: { released: true } }, "tradecraft's leg: paid");
  t.ok(new Decimal(tradecraft.received!).gte(tradecraft.minReceive), 'at least its floor');
  t.equal(result.received, tradecraft.received, 'received: the paid leg alone');
  t.strictSame(legs.map((l) => [l.venueId, l.status]).sort(), [['oneswap', 'VENUE_FAILED'], ['tradecraft', 'COMPLETED']], 'onLeg: each leg once');
  t.equal(w.balance(party, 'Amulet'), '0', 'both deposits left the wallet: one paid for, one held by its venue');
});

t.test('"a split needs batching": a wallet whose participant lacks the package is REFUSED batching_unavailable with nothing signed; one that cannot be asked has its batch refused whole and no deposit sent alone', async (t) => {
  const bare = await world({ sandbox: { batchingUtility: false } });
  const ledger = bare.app.sandbox!.ledger;
  const { party, provider } = await bare.taker();
  const made = await bare.plan(party);
  const before = ledger.ledgerEnd;
  const wallet = watching(provider);
  const { statuses, hooks, signatures } = recorder();
  const refused = await execute(made, { provider: wallet, client: bare.client, hooks, storage: memoryStorage() });
  t.match(refused, {
    status: 'REFUSED',
    error: { name: 'BestexError', code: 'batching_unavailable', message: /lacks the batching package splice-util-token-standard-wallet \(CIP-0112\), which a split plan needs.*nothing was signed or submitted/, action: /plan the best single venue/ },
  });
  t.strictSame(statuses.map(([s]) => s), ['REFUSED']);
  t.equal(signatures(), 0, 'no message shown for signing');
  t.strictSame(wallet.asked.filter((m) => m === 'signMessage' || m.startsWith('prepareExecute')), [], 'the wallet was asked to sign nothing');
  t.equal(ledger.ledgerEnd, before, 'nothing reached the ledger');

  // A wallet that will not forward the package query: the split is signed and submitted, the
  // participant refuses the batch whole, and the execution ends there.
  const blind = watching(provider, { packageQuery: 'refused' });
  const submittedOnce = await execute(made, { provider: blind, client: bare.client, storage: memoryStorage() });
  t.match(submittedOnce, { status: 'REFUSED', error: { code: 'batching_unavailable', message: /the ledger refused the batch whole \(PACKAGE_NAMES_NOT_FOUND\).*no deposit is sent alone/ } });
  t.strictSame(blind.asked.filter((m) => m.startsWith('prepareExecute')), ['prepareExecuteAndWait'], 'one submission, refused, and no other');
  t.equal(ledger.transactions(before, ledger.ledgerEnd).filter((tx) => tx.commandId === made.planId).length, 0, 'nothing of the plan landed');
  t.equal(bare.balance(party, 'Amulet'), AMOUNT, 'the CC all there');
});
