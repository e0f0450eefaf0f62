// '@bestex/sdk/wallet-sdk' with version 2 plans, as a partner's backend uses it: Canton's wallet-sdk
// on the sandbox participant holds the taker (a participant-hosted party, or an external one with
// its own key), createClientV2 plans, and `execute` runs the plan through walletSdkProvider to its
// end with no registry configuration: the plan names each instrument's registry. Tradecraft's
// memo-floor and Nightly's swap-address-memo; and OneSwap's intent plan, whose challenge an
// external party signs with its own key, while a participant-hosted party, which has none, is
// refused before anything is signed. Nothing is mocked.
import t from 'tap';
import { CustomLogAdapter, SDK } from '@canton-network/wallet-sdk';
import { createClientV2, execute, type ExecutionStatus, type V2 } from '@bestex/sdk';
import { walletSdkProvider } from '@bestex/sdk/wallet-sdk';
import { Decimal } from '../../core/decimal.js';
import { newPartnerKey } from '../helpers/keys.js';
import { listen, testApp } from '../helpers/app.js';
import { externalParties, hint } from '../helpers/canton.js';
import { spendable } from '../helpers/ledger.js';

const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200' } });
t.teardown(app.close);
const baseUrl = await listen(app.server);
const client = createClientV2({ baseUrl });
// A partner's backend: its key makes the plan (POST /api/v2/execute/plan) and completes it.
const partnerKey = newPartnerKey('wallet-sdk partner');
await app.core.keyStore.add(partnerKey.record);
const partner = createClientV2({ baseUrl, apiKey: partnerKey.key });
const sandbox = app.sandbox!;
const { manifest, ledgerToken } = sandbox;
const sdk = await SDK.create({ auth: { method: 'static', token: ledgerToken }, ledgerClientUrl: manifest.ledger, logAdapter: new CustomLogAdapter(() => {}) });

async function control(resource: string, body: unknown): Promise<void> {
  const response = await fetch(new URL(resource, manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`the sandbox refused ${resource}: ${response.status} ${await response.text()}`);
}

let plans = 0;
const planFor = (party: string, venueId: 'tradecraft' | 'nightly' | 'oneswap', amount = '100') =>
  client.plan({ from: 'CC', to: 'USDCx', amount, venueId, takerParty: party, idempotencyKey: `wallet-sdk-v2-${process.pid}-${++plans}` });

const statusesOf = () => {
  const statuses: ExecutionStatus[] = [];
  return { statuses, hooks: { onStatus: (status: ExecutionStatus) => void statuses.push(status) } };
};

const balance = (party: string, instrument: string) => spendable(sandbox.ledger, party, instrument).toFixed();

/** The tests' external parties, onboarded through wallet-sdk together, each with a key of its own. */
const externalParty = externalParties(sdk, ['wsdk-v2-tradecraft-ext', 'wsdk-v2-nightly-ext', 'wsdk-v2-oneswap-ext', 'wsdk-v2-split-ext']);

for (const venue of ['tradecraft', 'nightly'] as const) {
  t.test(`${venue}: an internal party's v2 plan through walletSdkProvider to COMPLETED, with no registries option`, { timeout: 90_000 }, async (t) => {
    const party = await sdk.party.internal.allocate({ partyHint: hint(`wsdk-v2-${venue}`) });
    await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000' });
    const plan = await planFor(party, venue);
    const { statuses, hooks } = statusesOf();
    const result = await execute(plan, { provider: walletSdkProvider({ sdk, party }), client, hooks });
    t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220/, error: null });
    t.strictSame(statuses, ['SUBMITTING', 'INITIATED', 'COMPLETED']);
    t.ok(new Decimal(result.received!).gte((plan.steps[0] as V2.PlanStep).minOut!), 'at least the deposit\'s minOut');
    t.ok(new Decimal(result.received!).gte(plan.quoteRef.minReceive), 'and so the floor');
    t.equal(balance(party, 'USDCx'), result.received, 'what was received is what the party holds');
    t.equal(balance(party, 'Amulet'), '900');
    // tradecraft's outcome is the service's to read too; Nightly's only the taker's (docs/api-v2.md).
    if (venue === 'tradecraft') t.match(result.outcome, { status: 'completed', agrees: true });
    else {
      t.equal(result.outcome, null);
      // What Canton's wallet SDK saw, execute() reports: the plan's status reads the taker's view of the leg.
      // The follower takes the report at its next read: read until the plan ends, never a fixed wait.
      let status = await client.getPlanStatus(plan as V2.AppPlan);
      for (let i = 0; i < 400 && !status.terminal; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = await client.getPlanStatus(plan as V2.AppPlan);
      }
      t.match(status, { state: 'completed', received: result.received, legs: [{ basis: 'taker', state: 'completed', received: result.received }] });
    }
  });

  t.test(`${venue}: an internal party's v2 plan, the pool moved past its minOut -> SLIPPAGE_FAILED, the deposit back`, { timeout: 90_000 }, async (t) => {
    const party = await sdk.party.internal.allocate({ partyHint: hint(`wsdk-v2-${venue}-moved`) });
    await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000' });
    const plan = await planFor(party, venue, '200');
    await control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300, venue });
    const result = await execute(plan, { provider: walletSdkProvider({ sdk, party }), client });
    t.match(result, { status: 'SLIPPAGE_FAILED', depositUpdateId: /^1220/, received: null });
    t.equal(balance(party, 'Amulet'), '1000', 'the funds are back');
  });

  t.test(`${venue}: an external party's v2 plan, prepared, signed by its own key and executed to COMPLETED, with no registries option`, { timeout: 120_000 }, async (t) => {
    const { partyId: party, keys } = await externalParty(`wsdk-v2-${venue}-ext`);
    await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000' });
    const plan = await planFor(party, venue);
    const result = await execute(plan, { provider: walletSdkProvider({ sdk, party, signer: { privateKey: keys.privateKey } }), client });
    t.match(result, { status: 'COMPLETED', party, error: null });
    t.equal(sandbox.ledger.transactionById(result.submittedUpdateId!)?.commandId, plan.planId, 'submitted under commandId = planId');
    t.equal(balance(party, 'Amulet'), '900');
    t.equal(balance(party, 'USDCx'), result.received);
  });
}

t.test('OneSwap at 1,000 CC, as a partner\'s backend: an external party\'s keyed plan, OneSwap\'s challenge signed with the party\'s own key (which the sandbox\'s OneSwap holds it to), completed by the service with the same key, the deposit prepared, signed and executed to COMPLETED; the service\'s reading agreeing', { timeout: 120_000 }, async (t) => {
  const { partyId: party, keys } = await externalParty('wsdk-v2-oneswap-ext');
  await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000' });
  const plan = await partner.plan({ from: 'CC', to: 'USDCx', amount: '1000', venueId: 'oneswap', takerParty: party, idempotencyKey: `wallet-sdk-v2-${process.pid}-partner` });
  t.match(plan, { settlement: 'intent-deposit-reference', steps: [{ kind: 'sign-message', venueId: 'oneswap' }] });
  const { statuses, hooks } = statusesOf();
  const result = await execute(plan, { provider: walletSdkProvider({ sdk, party, signer: { privateKey: keys.privateKey } }), client: partner, hooks });
  t.strictSame(statuses, ['SIGNING', 'SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.match(result, { status: 'COMPLETED', party, error: null, intent: { venueId: 'oneswap' }, outcome: { status: 'completed', basis: 'venue', agrees: true } });
  t.ok(new Decimal(result.received!).gte(plan.quoteRef.minReceive), 'at least the floor');
  t.equal(sandbox.ledger.transactionById(result.submittedUpdateId!)?.commandId, plan.planId, 'submitted under commandId = planId');
  t.equal(balance(party, 'Amulet'), '0');
  t.equal(balance(party, 'USDCx'), result.received);
});

t.test('a split at 1,000,000 CC as a partner\'s backend: an external party signs OneSwap\'s challenge and the one batch of every leg\'s deposit with its own key, through Canton\'s wallet SDK, to COMPLETED', { timeout: 120_000 }, async (t) => {
  const { partyId: party, keys } = await externalParty('wsdk-v2-split-ext');
  await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000000' });
  const quote = await partner.quote({ from: 'CC', to: 'USDCx', amount: '1000000' });
  t.ok(quote.split, 'the quote splits');
  const legs = quote.split!.legs.map(({ venueId, amount }) => ({ venueId, amount }));
  const plan = await partner.plan({ from: 'CC', to: 'USDCx', amount: '1000000', legs, takerParty: party, idempotencyKey: `wallet-sdk-v2-${process.pid}-split` });
  const { statuses, hooks } = statusesOf();
  const result = await execute(plan, { provider: walletSdkProvider({ sdk, party, signer: { privateKey: keys.privateKey } }), client: partner, hooks });
  t.strictSame(statuses, ['SIGNING', 'SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.match(result, { status: 'COMPLETED', party, error: null });
  t.equal(result.legs?.length, legs.length, 'every leg settled');
  for (const leg of result.legs!) t.ok(new Decimal(leg.received!).gte(leg.minReceive), `${leg.venueId}: at least its floor`);
  const submitted = sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).filter((tx) => tx.commandId === plan.planId);
  t.equal(submitted.length, 1, 'one submission under commandId = planId, every deposit in it');
  t.equal(balance(party, 'Amulet'), '0');
  t.equal(balance(party, 'USDCx'), result.received);
});

t.test('OneSwap: "a participant-hosted party cannot sign": REFUSED signing_unavailable, in words, with no signMessage asked and nothing submitted', { timeout: 90_000 }, async (t) => {
  const party = await sdk.party.internal.allocate({ partyHint: hint('wsdk-v2-oneswap-int') });
  await control('/sandbox/v1/fund', { party, token: 'CC', amount: '1000' });
  const plan = await planFor(party, 'oneswap');
  const inner = walletSdkProvider({ sdk, party });
  const asked: string[] = [];
  const provider: typeof inner = { ...inner, request: (args) => (asked.push(args.method), inner.request(args)) };
  const before = sandbox.ledger.ledgerEnd;
  const result = await execute(plan, { provider, client });
  t.match(result, { status: 'REFUSED', error: { code: 'signing_unavailable', message: /has no key of its own \(no publicKey; signingProviderId "participant"\): a party its participant hosts and signs for cannot sign a message/ } });
  t.strictSame(asked.filter((m) => m === 'signMessage' || m.startsWith('prepare')), [], 'no signMessage, no submission');
  t.equal(sandbox.ledger.ledgerEnd, before, 'nothing reached the ledger');
  t.equal(balance(party, 'Amulet'), '1000');
});
