// Canton's token-standard service (@canton-network/core-token-standard-service) and transaction
// parser (@canton-network/core-tx-parser) against the sandbox participant and its registries: a
// transfer built from the holdings the service finds, and a CC -> USDCx swap with the
// CC/USDCx pool, read back as a wallet reads its history. The parser only recognises what the
// ledger's transactions, interface views and event lookups say, so each label below rests on the
// sandbox answering as Canton does.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { LedgerClient } from '@canton-network/core-ledger-client';
import { EventFilterBySetup, type v3_4 } from '@canton-network/core-ledger-client-types';
import { TokenStandardService } from '@canton-network/core-token-standard-service';
import { TokenStandardTransactionInterfaces, TransactionParser, type TokenStandardEvent, type Transaction } from '@canton-network/core-tx-parser';
import { AuthTokenProvider } from '@canton-network/core-wallet-auth';
// The provider package's own type declarations do not resolve under NodeNext; wallet-sdk re-exports it.
import { LedgerProvider } from '@canton-network/wallet-sdk';
import { Decimal } from '../../core/decimal.js';
import { HOLDING, TRANSFER_FACTORY, claims, hint, norm, silent } from '../helpers/canton.js';
import { holdToDocuments, observedSandbox } from '../helpers/observed-sandbox.js';

type S = v3_4.components['schemas'];

const REASON = 'splice.lfdecentralizedtrust.org/reason';
const ALWAYS_FILL = '0.0000000001';


const sandbox = await observedSandbox(t);
const { manifest, ledgerToken } = sandbox;
const userId = claims(ledgerToken).sub!;
const ccAdmin = manifest.instrumentAdmins.Amulet;
const usdcxAdmin = manifest.instrumentAdmins.USDCx;
const amuletRegistry = manifest.registries[ccAdmin]!;
const pool = manifest.poolParties['CC/USDCx']!;
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

async function fund(party: string, token: 'CC' | 'USDCx', amount: string): Promise<string> {
  const response = await fetch(new URL('/sandbox/v1/fund', manifest.ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party, token, amount }),
  });
  const body = (await response.json()) as { holdingCid: string };
  if (response.status !== 200) throw new Error(`the faucet refused: ${response.status} ${JSON.stringify(body)}`);
  return body.holdingCid;
}

/** Submits the service's command as `party` would through a wallet: submit-and-wait. */
async function submit(party: string, command: unknown, disclosedContracts: unknown[]) {
  return post<S['SubmitAndWaitResponse']>('/v2/commands/submit-and-wait', {
    commands: [{ ExerciseCommand: command }], commandId: `ts-${randomUUID()}`, userId, actAs: [party], readAs: [], disclosedContracts, synchronizerId, packageIdSelectionPreference: [],
  });
}

/** The transaction as the service reads it: its event format, ledger-effects shape. */
async function transactionById(updateId: string, party: string): Promise<S['JsTransaction']> {
  const { transaction } = await post<S['JsGetTransactionResponse']>('/v2/updates/transaction-by-id', {
    updateId,
    transactionFormat: {
      eventFormat: EventFilterBySetup({ interfaceIds: TokenStandardTransactionInterfaces, isMasterUser: false, partyId: party, includeWildcard: true }),
      transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
    },
  });
  return transaction;
}

const parse = async (updateId: string, party: string): Promise<Transaction> => new TransactionParser(provider, await transactionById(updateId, party), party, false).parseTransaction();
const summary = (summaries: TokenStandardEvent['unlockedHoldingsChangeSummaries'], instrument: string) => summaries.find((s) => s.instrumentId.id === instrument);
const inputsOf = (command: { choiceArgument?: unknown }) => (command.choiceArgument as { transfer: { inputHoldingCids: string[] } }).transfer.inputHoldingCids;
const ofType = (tx: Transaction, type: string) => tx.events.filter((e) => e.label.type === type);

t.test('transfer.createTransfer picks the sender\'s holdings from the ledger; the command and its disclosed contracts commit', async (t) => {
  const payer = await allocate('payer');
  const payee = await allocate('payee');
  const h30 = await fund(payer, 'CC', '30');
  const h50 = await fund(payer, 'CC', '50');
  const listed = await service.listContractsByInterface<{ owner: string; amount: string; instrumentId: { admin: string; id: string }; lock: unknown }>(HOLDING, payer);
  t.strictSame(listed.map((h) => [h.contractId, norm(h.interfaceViewValue.amount), h.interfaceViewValue.owner, h.interfaceViewValue.lock]).sort(),
    [[h30, '30', payer, null], [h50, '50', payer, null]].sort(), 'both holdings, by their Holding views');

  const [exact] = await service.transfer.createTransfer(payer, payee, '30', ccAdmin, 'Amulet', amuletRegistry);
  t.strictSame(inputsOf(exact), [h30], 'a holding of exactly the amount is spent alone');
  await t.rejects(service.transfer.createTransfer(payer, payee, '81', ccAdmin, 'Amulet', amuletRegistry), 'more than the holdings sum to is refused before any command');

  const [command, disclosedContracts] = await service.transfer.createTransfer(payer, payee, '60', ccAdmin, 'Amulet', amuletRegistry, undefined, 'invoice 7');
  t.equal(command.templateId, TRANSFER_FACTORY);
  t.equal(command.choice, 'TransferFactory_Transfer');
  t.strictSame([...inputsOf(command)].sort(), [h30, h50].sort(), 'neither holding covers 60: both are spent');
  t.match(command.choiceArgument, { expectedAdmin: ccAdmin, transfer: { sender: payer, receiver: payee, amount: '60', instrumentId: { admin: ccAdmin, id: 'Amulet' }, meta: { values: { [REASON]: 'invoice 7' } } } });
  t.ok(disclosedContracts.length > 0, 'the registry discloses the factory');
  for (const disclosed of disclosedContracts) {
    t.ok(Buffer.from(disclosed.createdEventBlob ?? '', 'base64').length > 0, `${disclosed.contractId} comes with its created-event blob`);
    t.equal(disclosed.synchronizerId, synchronizerId);
  }
  const committed = await submit(payer, command, disclosedContracts);
  t.ok(committed.updateId, 'the sandbox accepts the command');
  const after = await service.listContractsByInterface<{ amount: string; lock: unknown }>(HOLDING, payer);
  t.strictSame(after.map((h) => [norm(h.interfaceViewValue.amount), h.interfaceViewValue.lock !== null]).sort(), [['20', false], ['60', true]], 'change of 20, and the 60 locked for the payee');
  const parsed = await service.getTransactionById(committed.updateId, payer);
  t.match(parsed.events.map((e) => e.label), [{ type: 'MergeSplit', reason: 'invoice 7' }], 'for the payer, an offer is a lock of its own holdings');
});

t.test('a CC -> USDCx swap, parsed by TransactionParser for the taker and for the pool, and in listHoldingTransactions', { timeout: 60_000 }, async (t) => {
  const taker = await allocate('taker');
  await fund(taker, 'CC', '100');
  const [command, disclosedContracts] = await service.transfer.createTransfer(taker, pool, '10', ccAdmin, 'Amulet', amuletRegistry, undefined, ALWAYS_FILL);
  const deposit = await submit(taker, command, disclosedContracts);

  // The pool's operator settles after the deposit commits; its transaction gives the taker USDCx.
  let received: string | undefined;
  for (let attempt = 0; attempt < 100 && received === undefined; attempt++) {
    const usdcx = (await service.listContractsByInterface<{ amount: string; instrumentId: { id: string } }>(HOLDING, taker)).filter((h) => h.interfaceViewValue.instrumentId.id === 'USDCx');
    if (usdcx.length > 0) received = norm(usdcx[0]!.interfaceViewValue.amount);
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(received !== undefined && new Decimal(received).gt(0), `the taker received USDCx (${received})`);
  if (received === undefined) return;

  const history = await service.listHoldingTransactions(taker);
  t.same(history.transactions.map((tx) => tx.offset), [...history.transactions.map((tx) => tx.offset)].sort((a, b) => a - b), 'in offset order');
  const depositEntry = history.transactions.find((tx) => tx.updateId === deposit.updateId);
  t.ok(depositEntry, 'the deposit is in the taker\'s history');
  const settlementEntry = history.transactions.find((tx) => tx.offset > deposit.completionOffset && tx.events.some((e) => e.label.type === 'TransferIn'));
  t.ok(settlementEntry, 'and so is the settlement');
  if (!depositEntry || !settlementEntry) return;
  t.ok(history.nextOffset >= settlementEntry.offset, 'the next offset is past the settlement');

  const takerDeposit = await parse(deposit.updateId, taker);
  t.strictSame(takerDeposit.events.map((e) => e.label.type), ['MergeSplit'], 'for the taker a pending deposit locks its own CC');
  const lock = takerDeposit.events[0]!;
  t.equal(norm(summary(lock.lockedHoldingsChangeSummaries, 'Amulet')?.amountChange), '10', '10 CC locked');
  t.equal(norm(summary(lock.unlockedHoldingsChangeSummaries, 'Amulet')?.amountChange), '-10', 'from the unlocked CC');
  t.strictSame(summary(lock.lockedHoldingsChangeSummaries, 'Amulet')?.instrumentId, { admin: ccAdmin, id: 'Amulet' });
  t.equal(lock.transferInstruction?.status.current?.tag, 'Pending');
  t.ok(lock.transferInstruction?.multiStepCorrelationId, 'the instruction id correlates the steps');
  t.equal((lock.label as { reason: string | null }).reason, ALWAYS_FILL, 'the memo is the reason');
  t.strictSame(depositEntry.events.map((e) => e.label.type), ['MergeSplit'], 'the service\'s listing says the same');

  const poolDeposit = await parse(deposit.updateId, pool);
  t.strictSame(poolDeposit.events.map((e) => e.label.type), [], 'nothing moved for the pool until it accepts');

  const takerSettlement = await parse(settlementEntry.updateId, taker);
  const [out] = ofType(takerSettlement, 'TransferOut');
  const [into] = ofType(takerSettlement, 'TransferIn');
  t.equal(takerSettlement.events.length, 2, 'one transaction: the acceptance and the payout');
  t.match(out?.label, { type: 'TransferOut', receiverAmounts: [{ receiver: pool }], tokenStandardChoice: { name: 'TransferInstruction_Accept' } }, 'the taker\'s CC went to the pool');
  t.equal(norm((out?.label as { receiverAmounts: Array<{ amount: string }> }).receiverAmounts[0]?.amount), '10');
  t.equal(norm(summary(out!.lockedHoldingsChangeSummaries, 'Amulet')?.amountChange), '-10', 'out of the lock');
  t.equal(out?.transferInstruction?.status.current?.tag, 'Completed');
  t.equal(out?.transferInstruction?.multiStepCorrelationId ?? lock.transferInstruction?.multiStepCorrelationId, lock.transferInstruction?.multiStepCorrelationId);
  t.match(into?.label, { type: 'TransferIn', sender: pool, tokenStandardChoice: { name: 'TransferFactory_Transfer' } }, 'USDCx came from the pool');
  const inflow = summary(into!.unlockedHoldingsChangeSummaries, 'USDCx');
  t.equal(norm(inflow?.amountChange), received, 'the amount the taker now holds');
  t.strictSame(inflow?.instrumentId, { admin: usdcxAdmin, id: 'USDCx' });
  t.strictSame(settlementEntry.events.map((e) => e.label.type).sort(), ['TransferIn', 'TransferOut'], 'the service\'s listing says the same');

  const poolSettlement = await parse(settlementEntry.updateId, pool);
  const [poolIn] = ofType(poolSettlement, 'TransferIn');
  const [poolOut] = ofType(poolSettlement, 'TransferOut');
  t.equal(poolSettlement.events.length, 2, 'the same two steps, seen by the pool');
  t.match(poolIn?.label, { type: 'TransferIn', sender: taker }, 'the pool received the taker\'s CC');
  t.equal(norm(summary(poolIn!.unlockedHoldingsChangeSummaries, 'Amulet')?.amountChange), '10');
  t.match(poolOut?.label, { type: 'TransferOut', receiverAmounts: [{ receiver: taker }] }, 'and paid the taker');
  t.equal(norm((poolOut?.label as { receiverAmounts: Array<{ amount: string }> }).receiverAmounts[0]?.amount), received);
  t.equal(norm(summary(poolOut!.unlockedHoldingsChangeSummaries, 'USDCx')?.amountChange), norm(new Decimal(received).neg().toString()), 'out of the pool\'s USDCx');

  const poolHistory = await service.listHoldingTransactions(pool, deposit.completionOffset - 1);
  const poolEntry = poolHistory.transactions.find((tx) => tx.updateId === settlementEntry.updateId);
  t.strictSame(poolEntry?.events.map((e) => e.label.type).sort(), ['TransferIn', 'TransferOut'], 'the pool\'s listing says the same');
});

t.test('"every sandbox ledger and registry answer validated against the pinned OpenAPI documents": each one these packages were given', async (t) => {
  t.ok(sandbox.exchanges.length > 0, 'the packages reached the sandbox through the recording proxies');
  holdToDocuments(t, sandbox.exchanges);
});
