// The SDK's execute() with Canton's official dApp provider pairs, held as a partner's dApp holds
// them: the extension pair (DappSyncProvider over WindowTransport) and the remote pair
// (DappAsyncProvider over HttpTransport, events over SSE), each in front of a wallet that signs
// with the sandbox participant and accepts only what the official dApp API types define
// (test/helpers/dapp-wallets.ts). For each pair: the same swap, CC -> USDCx on tradecraft, to its
// end; a user who declines; a wallet that cannot submit at all; an answer lost after the ledger
// committed; version 2 plans (tradecraft's and Nightly's) executed with no registry option; and
// OneSwap's plan, whose challenge the wallet signs (signMessage: the extension answers the
// signature, the gateway its sign-message page and then a messageSignature event) before the
// service completes it, executed to COMPLETED, or USER_REJECTED when the user declines to sign.
import t from 'tap';
import { createClient, createClientV2, execute, isPlanV2, isSigningPlan, type AppPlan, type ExecutionResult, type ExecutionStatus, type PlanV1, type PlanV2 } from '@bestex/sdk';

/** The single-venue plans these wallets swap. */
type Plan = PlanV1 | PlanV2;
import { Decimal } from '../../core/decimal.js';
import { listen, testApp } from '../helpers/app.js';
import { extensionWallet, remoteGateway, type DappWallet, type WalletKnobs } from '../helpers/dapp-wallets.js';
import { spendable } from '../helpers/ledger.js';

const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200' } });
t.teardown(app.close);
const sandbox = app.sandbox!;
const baseUrl = await listen(app.server);
const client = createClient({ baseUrl });
const clientV2 = createClientV2({ baseUrl });

// The official providers, typed as the packages type them, must be what execute() takes: a type
// error here is one every partner's dApp would meet.
type Wallet = DappWallet<Parameters<typeof execute>[1]['provider']>;

const PAIRS: ReadonlyArray<readonly [string, (party: string, knobs: WalletKnobs) => Promise<Wallet>]> = [
  ['extension pair (DappSyncProvider over WindowTransport)', async (party, knobs) => extensionWallet(sandbox, party, knobs)],
  ['remote pair (DappAsyncProvider over HttpTransport and SSE)', (party, knobs) => remoteGateway(sandbox, party, knobs)],
];

let takers = 0;

/** A new taker holding 1000 CC, funded by the sandbox's faucet. */
async function fundedTaker(): Promise<string> {
  const party = `dapp-taker-${++takers}::1220${'7'.repeat(64)}`;
  const response = await fetch(`${sandbox.manifest.ledger}/sandbox/v1/fund`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party, token: 'CC', amount: '1000' }),
  });
  if (!response.ok) throw new Error(`the faucet refused ${party}: HTTP ${response.status} ${await response.text()}`);
  return party;
}

/** A keyless plan: 100 CC -> USDCx on tradecraft. */
const planFor = async (party: string) => (await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-swap` })) as AppPlan;

/** What the taker itself submitted to the ledger. */
const submittedBy = (party: string) => sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).filter((tx) => tx.actAs.includes(party));

/**
 * An execution that does not end by itself (it waits for an answer that never comes, or tracks a
 * submission that never happened) is stopped here, so that its test fails on the status it reached
 * rather than on the runner's timeout. Nothing is asserted about time: an execution that ends on
 * its own ends well before this.
 */
const BOUND_MS = 12_000;

/** The wallet's answers, one line: a run of the same answer once, with its count. */
function answered(wallet: Wallet): string {
  const runs: Array<{ text: string; count: number }> = [];
  for (const { method, error } of wallet.received) {
    const text = `${method} ${error === null ? 'ok' : JSON.stringify(error)}`;
    if (runs.at(-1)?.text === text) runs.at(-1)!.count++;
    else runs.push({ text, count: 1 });
  }
  return runs.map(({ text, count }) => (count > 1 ? `${text} x${count}` : text)).join('; ');
}

/** A v2 plan for 100 CC -> USDCx on `venueId`: it names its registries, so none is configured. */
const planV2For = (venueId: 'tradecraft' | 'nightly' | 'oneswap') => (party: string) => clientV2.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId, takerParty: party, idempotencyKey: `${party}-swap-v2` });

async function swap(
  t: { teardown(fn: () => Promise<void>): void; comment(...message: unknown[]): void },
  pair: (party: string, knobs: WalletKnobs) => Promise<Wallet>,
  knobs: WalletKnobs = {},
  planOf: (party: string) => Promise<Plan> = planFor,
) {
  const party = await fundedTaker();
  const plan = await planOf(party);
  const wallet = await pair(party, knobs);
  t.teardown(wallet.close);
  const events: Array<{ status?: string; commandId?: string }> = [];
  wallet.provider.on('txChanged', (event: { status?: string; commandId?: string }) => void events.push(event));
  const statuses: ExecutionStatus[] = [];
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), BOUND_MS);
  const unanswered = new Promise<'stuck awaiting the wallet'>((resolve) => stop.signal.addEventListener('abort', () => setTimeout(() => resolve('stuck awaiting the wallet'), 2_000).unref(), { once: true }));
  let result: ExecutionResult | 'stuck awaiting the wallet';
  try {
    // A v2 plan names its registries: none is configured for it.
    const registries = isPlanV2(plan) ? {} : { registries: sandbox.manifest.registries };
    // A plan asking for a signed message is completed by the service: the v2 client is given for it.
    const client = isSigningPlan(plan) ? { client: clientV2 } : {};
    const hooks = { onStatus: (status: ExecutionStatus) => void statuses.push(status) };
    result = await Promise.race([execute(plan, { provider: wallet.provider, ...registries, ...client, hooks, signal: stop.signal }), unanswered]);
  } finally {
    clearTimeout(timer);
  }
  // What the wallet answered, for whoever reads a failure: the SDK keeps only its own reading.
  t.comment(`the wallet answered: ${answered(wallet)}`);
  return { party, plan, wallet, events, result, statuses };
}

for (const [name, pair] of PAIRS) {
  t.test(`${name}: the swap reaches COMPLETED, and the dApp hears the wallet's txChanged events`, async (t) => {
    const { party, plan, events, result } = await swap(t, pair);
    t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220[0-9a-f]{64}$/, error: null });
    t.ok(new Decimal((result as ExecutionResult).received ?? '0').gte(plan.quoteRef.minReceive), 'at least the floor');
    t.equal(spendable(sandbox.ledger, party, 'Amulet').toFixed(), '900', 'the deposit left the taker');
    t.equal(spendable(sandbox.ledger, party, 'USDCx').toFixed(), (result as ExecutionResult).received, 'what was received is what the taker holds');
    const mine = events.filter((e) => e.commandId === plan.planId);
    t.match(mine, [{ status: 'pending' }, { status: 'executed', payload: { updateId: /^1220/ } }], 'pending, then executed, under the plan\'s commandId');
    t.equal(submittedBy(party).length, 1, 'one submission');
  });

  t.test(`${name}: the user declines -> USER_REJECTED, nothing of the taker's on the ledger`, async (t) => {
    const { party, result } = await swap(t, pair, { decline: true });
    t.match(result, { status: 'USER_REJECTED', error: { name: 'BestexError', code: 'user_rejected' } });
    t.strictSame(submittedBy(party), [], 'the taker submitted nothing');
    t.equal(spendable(sandbox.ledger, party, 'Amulet').toFixed(), '1000', 'its holdings untouched');
  });

  t.test(`${name}: a wallet without prepareExecute -> SUBMIT_FAILED at once, naming prepareExecute`, async (t) => {
    const { party, result } = await swap(t, pair, { withoutSubmit: true });
    // Ending with the wallet's refusal, not a wait for a submission that never happened.
    t.match(result, { status: /^(SUBMIT_FAILED|REFUSED)$/, error: { name: 'BestexError', message: /prepareExecute\b/ } });
    t.strictSame(submittedBy(party), [], 'the taker submitted nothing');
  });

  t.test(`${name}: the answer is lost after the ledger committed -> tracked to its real end, COMPLETED`, async (t) => {
    const { party, plan, result, wallet } = await swap(t, pair, { dropAfterSubmit: true });
    t.ok(wallet.received.some((r) => r.error === 'dropped'), 'the wallet submitted, then gave no answer');
    t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220[0-9a-f]{64}$/, error: null });
    t.strictSame(
      submittedBy(party).map((tx) => tx.commandId),
      [plan.planId],
      'one submission, under the plan\'s commandId: nothing was sent again',
    );
  });

  for (const venue of ['tradecraft', 'nightly'] as const) {
    t.test(`${name}: a v2 ${venue} plan, with no registry option, reaches COMPLETED`, async (t) => {
      const { party, plan, result } = await swap(t, pair, {}, planV2For(venue));
      t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220[0-9a-f]{64}$/, error: null });
      t.ok(new Decimal((result as ExecutionResult).received ?? '0').gte(plan.quoteRef.minReceive), 'at least the floor');
      t.equal(spendable(sandbox.ledger, party, 'USDCx').toFixed(), (result as ExecutionResult).received, 'what was received is what the taker holds');
      t.equal(submittedBy(party).length, 1, 'one submission');
    });
  }

  t.test(`${name}: a OneSwap plan: the wallet signs OneSwap's challenge, the service completes the plan, the deposit funds the intent: COMPLETED, the service's reading agreeing`, async (t) => {
    const { party, plan, result, wallet, statuses } = await swap(t, pair, {}, planV2For('oneswap'));
    t.ok(isSigningPlan(plan), 'the plan asks for a signed message');
    t.strictSame(statuses, ['SIGNING', 'SUBMITTING', 'INITIATED', 'COMPLETED']);
    t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220[0-9a-f]{64}$/, error: null, intent: { venueId: 'oneswap' }, outcome: { status: 'completed', basis: 'venue', agrees: true } });
    t.ok(new Decimal((result as ExecutionResult).received ?? '0').gte(plan.quoteRef.minReceive), 'at least the floor');
    t.equal(wallet.received.filter((r) => r.method === 'signMessage' && r.error === null).length, 1, 'signed once');
    t.equal(submittedBy(party).length, 1, 'one submission');
  });

  t.test(`${name}: the user declines to sign OneSwap's challenge -> USER_REJECTED, nothing submitted`, async (t) => {
    const { party, result, statuses } = await swap(t, pair, { declineMessage: true }, planV2For('oneswap'));
    t.match(result, { status: 'USER_REJECTED', error: { code: 'user_rejected' } });
    t.strictSame(statuses, ['SIGNING', 'USER_REJECTED']);
    t.strictSame(submittedBy(party), [], 'the taker submitted nothing');
    t.equal(spendable(sandbox.ledger, party, 'Amulet').toFixed(), '1000');
  });
}
