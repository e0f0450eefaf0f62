// Nightly settles on the sandbox ledger as its docs describe (sandbox/ledger/nightly-desk.ts): a
// quote from the sandbox's Nightly wire over HTTP with the taker as recipient, then the taker's
// wallet's token-standard transfer of fromAmount to swapAddress carrying the quote's memo, built
// by Canton's own TokenStandardService from the registry's transfer factory and submitted through
// the participant's JSON Ledger API. The desk pays the recipient at least minOutAmount and the
// pool moves; a memo used before, unknown or expired, or a pool moved below minOutAmount before
// settlement, returns the deposit and pays nothing.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { LedgerClient } from '@canton-network/core-ledger-client';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { TokenStandardService } from '@canton-network/core-token-standard-service';
import { AuthTokenProvider } from '@canton-network/core-wallet-auth';
import { LedgerProvider } from '@canton-network/wallet-sdk';
import { Decimal } from '../../../core/decimal.js';
import { NIGHTLY_MEMO_TTL_MS } from '../../../sandbox/venues/nightly.js';
import { HOLDING, claims, hint, silent } from '../../helpers/canton.js';
import { testSandbox } from '../../helpers/sandbox.js';

type S = v3_4.components['schemas'];

// The ledger's clock, which a test moves past a memo's validity.
let skewMs = 0;
const sandbox = await testSandbox({ now: () => new Date(Date.now() + skewMs) });
t.teardown(() => sandbox.close());
const { manifest, ledgerToken } = sandbox;
const userId = claims(ledgerToken).sub!;
const ccAdmin = manifest.instrumentAdmins.Amulet;
const amuletRegistry = manifest.registries[ccAdmin]!;
const nightly = manifest.venues.nightly!;
const tokenProvider = AuthTokenProvider.fromToken(ledgerToken, silent);
const provider = new LedgerProvider({ baseUrl: manifest.ledger, accessTokenProvider: tokenProvider });
const service = new TokenStandardService(provider, silent, tokenProvider, false);
const client = new LedgerClient({ baseUrl: new URL(manifest.ledger), logger: pino({ level: 'silent' }), accessTokenProvider: tokenProvider });
const post = <T>(path: string, body: unknown) => client.post(path as never, body as never) as Promise<T>;
const synchronizerId = await client.getSynchronizerId();

async function allocate(name: string): Promise<string> {
  const { partyDetails } = await post<S['AllocatePartyResponse']>('/v2/parties', { partyIdHint: hint(name), identityProviderId: '', synchronizerId, userId });
  return partyDetails!.party;
}

async function control(path: string, body: unknown): Promise<void> {
  const response = await fetch(new URL(path, manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`${path} refused: ${response.status} ${await response.text()}`);
}

interface NightlyQuote {
  readonly fromAmount: string;
  readonly toAmount: string;
  readonly minOutAmount: string;
  readonly memo: string;
  readonly swapAddress: string;
  readonly magicAddress?: string;
}

async function quote(recipient: string, amount: string, slippageTolerance?: string): Promise<NightlyQuote> {
  const response = await fetch(`${nightly}/nswap/quote`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ fromToken: 'Amulet', toToken: 'USDCx', amount, recipient, ...(slippageTolerance === undefined ? {} : { slippageTolerance }) }),
  });
  const body = (await response.json()) as NightlyQuote;
  if (response.status !== 200) throw new Error(`the quote was refused: ${JSON.stringify(body)}`);
  return body;
}

/** The taker's wallet: a token-standard transfer of `amount` CC to `receiver` with `memo` as its reason, submitted and committed. */
async function transfer(sender: string, receiver: string, amount: string, memo: string): Promise<void> {
  const [command, disclosedContracts] = await service.transfer.createTransfer(sender, receiver, amount, ccAdmin, 'Amulet', amuletRegistry, undefined, memo);
  await post<S['SubmitAndWaitResponse']>('/v2/commands/submit-and-wait', {
    commands: [{ ExerciseCommand: command }], commandId: `nightly-${randomUUID()}`, userId, actAs: [sender], readAs: [], disclosedContracts, synchronizerId, packageIdSelectionPreference: [],
  });
}

interface Balance {
  readonly Amulet: Decimal;
  readonly USDCx: Decimal;
  readonly locked: Decimal;
}

async function balance(party: string): Promise<Balance> {
  const holdings = await service.listContractsByInterface<{ amount: string; instrumentId: { id: string }; lock: unknown }>(HOLDING, party);
  const sum = (keep: (h: (typeof holdings)[number]['interfaceViewValue']) => boolean) =>
    holdings.filter((h) => keep(h.interfaceViewValue)).reduce((total, h) => total.plus(h.interfaceViewValue.amount), new Decimal(0));
  return { Amulet: sum((h) => h.instrumentId.id === 'Amulet' && h.lock === null), USDCx: sum((h) => h.instrumentId.id === 'USDCx' && h.lock === null), locked: sum((h) => h.lock !== null) };
}

/** The balance once the desk has answered every offer of `party` (nothing locked any more). */
async function settled(party: string): Promise<Balance> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const now = await balance(party);
    if (now.locked.isZero()) return now;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the Nightly desk did not answer ${party}'s offer`);
}

/** A funded taker. */
async function taker(name: string, cc = '1000'): Promise<string> {
  const party = await allocate(name);
  await control('/sandbox/v1/fund', { party, token: 'CC', amount: cc });
  return party;
}

t.test('"a transfer to swapAddress with the quote\'s memo pays the recipient at least minOutAmount", and the pool moves', async (t) => {
  const alice = await taker('alice');
  const given = await quote(alice, '100');
  t.equal(given.magicAddress, undefined, 'the sandbox returns no magicAddress: settlement goes to swapAddress with the memo');
  await transfer(alice, given.swapAddress, '100', given.memo);
  const after = await settled(alice);
  t.equal(after.Amulet.toFixed(), '900', 'the 100 CC went to Nightly');
  t.ok(after.USDCx.gte(given.minOutAmount), `paid ${after.USDCx.toFixed()} USDCx, at least minOutAmount ${given.minOutAmount}`);
  t.equal(after.USDCx.toFixed(), new Decimal(given.toAmount).toFixed(), 'nothing moved the pool between quote and settlement: paid toAmount exactly');
  const next = await quote(alice, '100');
  t.ok(new Decimal(next.toAmount).lt(given.toAmount), `the swap moved the pool: 100 CC now quotes ${next.toAmount}, was ${given.toAmount}`);
  // The seeded pool, 16,000,000 CC / 2,396,000 USDCx, took the 100 CC and paid out what Alice got.
  const [rIn, rOut] = [new Decimal('16000100'), new Decimal('2396000').minus(after.USDCx)];
  const effIn = new Decimal('99.8');
  t.equal(next.toAmount, rOut.times(effIn).div(rIn.plus(effIn)).toDecimalPlaces(10, Decimal.ROUND_FLOOR).toFixed(), 'the next quote is priced at reserves in + 100 CC, out - the payout');
});

t.test('"the recipient is paid, not the sender": a quote for another party pays that party', async (t) => {
  const [payer, payee] = [await taker('payer'), await allocate('payee')];
  const given = await quote(payee, '50');
  await transfer(payer, given.swapAddress, '50', given.memo);
  const payerAfter = await settled(payer);
  t.equal(payerAfter.Amulet.toFixed(), '950');
  t.equal(payerAfter.USDCx.toFixed(), '0', 'the sender gets nothing');
  t.equal((await balance(payee)).USDCx.toFixed(), new Decimal(given.toAmount).toFixed(), 'the quote\'s recipient is paid');
});

t.test('"a memo settles once": a second transfer carrying the same memo is returned and paid nothing', async (t) => {
  const bob = await taker('bob');
  const given = await quote(bob, '100');
  await transfer(bob, given.swapAddress, '100', given.memo);
  const first = await settled(bob);
  t.ok(first.USDCx.gte(given.minOutAmount), 'the first use is paid');
  await transfer(bob, given.swapAddress, '100', given.memo);
  const second = await settled(bob);
  t.equal(second.Amulet.toFixed(), first.Amulet.toFixed(), 'the second deposit came back whole');
  t.equal(second.USDCx.toFixed(), first.USDCx.toFixed(), 'and nothing more was paid');
});

t.test('"a pool moved below minOutAmount before settlement returns the deposit, nothing paid"', async (t) => {
  const carol = await taker('carol');
  const given = await quote(carol, '200', '0.01');
  await control('/sandbox/v1/move', { venue: 'nightly', pair: 'CC/USDCx', bps: -300 });
  const moved = await quote(carol, '200');
  t.ok(new Decimal(moved.toAmount).lt(given.minOutAmount), `the pool now pays ${moved.toAmount}, below the quote's minOutAmount ${given.minOutAmount}`);
  await transfer(carol, given.swapAddress, '200', given.memo);
  const after = await settled(carol);
  t.equal(after.Amulet.toFixed(), '1000', 'the 200 CC came back');
  t.equal(after.USDCx.toFixed(), '0', 'nothing was paid');
  t.equal((await quote(carol, '200')).toAmount, moved.toAmount, 'and the pool did not move');
});

t.test('"a memo Nightly never gave, or the quote\'s amount not matched, is returned"', async (t) => {
  const dave = await taker('dave');
  const given = await quote(dave, '100');
  await transfer(dave, given.swapAddress, '100', 'nswap-0000000000000000');
  t.equal((await settled(dave)).Amulet.toFixed(), '1000', 'an unknown memo: the deposit came back');
  await transfer(dave, given.swapAddress, '101', given.memo);
  const after = await settled(dave);
  t.equal(after.Amulet.toFixed(), '1000', 'not the quote\'s fromAmount (more, which would pay above minOutAmount): the deposit came back');
  t.equal(after.USDCx.toFixed(), '0', 'nothing paid either time');
});

t.test('"a memo is valid for NIGHTLY_MEMO_TTL_MS after its quote": later, the deposit is returned', async (t) => {
  const erin = await taker('erin');
  const given = await quote(erin, '100');
  skewMs += NIGHTLY_MEMO_TTL_MS;
  t.teardown(() => {
    skewMs -= NIGHTLY_MEMO_TTL_MS;
  });
  await transfer(erin, given.swapAddress, '100', given.memo);
  const after = await settled(erin);
  t.equal(after.Amulet.toFixed(), '1000', 'the deposit came back');
  t.equal(after.USDCx.toFixed(), '0', 'nothing paid');
});
