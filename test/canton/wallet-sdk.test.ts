// Canton's wallet SDK (@canton-network/wallet-sdk 1.4) against the sandbox participant and its
// token registries, as an integrator would use it: internal parties making and accepting a
// token-standard transfer, and an external party onboarded with its own key that prepares, signs
// and executes one. No request is hand-made: what the SDK sends is what the sandbox must serve.
import t from 'tap';
import { CustomLogAdapter, SDK } from '@canton-network/wallet-sdk';
import { hashPreparedTransaction } from '@canton-network/core-tx-visualizer';
import { Decimal } from '../../core/decimal.js';
import { hint, norm, refusal } from '../helpers/canton.js';
import { holdToDocuments, observedSandbox } from '../helpers/observed-sandbox.js';



const sandbox = await observedSandbox(t);
const { manifest, ledgerToken } = sandbox;
const amuletRegistry = new URL(manifest.registries[manifest.instrumentAdmins.Amulet]!);

async function fund(party: string, amount: string): Promise<{ holdingCid: string; offset: number }> {
  const response = await fetch(new URL('/sandbox/v1/fund', manifest.ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party, token: 'CC', amount }),
  });
  const body = (await response.json()) as { holdingCid: string; offset: number };
  if (response.status !== 200) throw new Error(`the faucet refused: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

const auth = { method: 'static', token: ledgerToken } as const;
const sdk = await SDK.create({
  auth,
  ledgerClientUrl: manifest.ledger,
  logAdapter: new CustomLogAdapter(() => {}),
  token: { auth, registries: Object.values(manifest.registries) },
});

/** A party's holdings as the SDK lists them, locked ones included: [amount, locked?] sorted. */
async function holdings(partyId: string) {
  const utxos = await sdk.token.utxos.list({ partyId, includeLocked: true });
  return utxos.map((u) => ({ contractId: u.contractId, owner: u.interfaceViewValue.owner, instrument: u.interfaceViewValue.instrumentId, amount: norm(u.interfaceViewValue.amount), locked: u.interfaceViewValue.lock !== null }))
    .sort((a, b) => new Decimal(a.amount).comparedTo(b.amount));
}

t.test('internal parties: a two-step token-standard transfer the SDK builds (picking the holdings), submits and the receiver accepts', { timeout: 60_000 }, async (t) => {
  const alice = await sdk.party.internal.allocate({ partyHint: hint('alice') });
  const bob = await sdk.party.internal.allocate({ partyHint: hint('bob') });
  const parties = await sdk.party.list();
  t.ok(parties.includes(alice) && parties.includes(bob), 'the user sees both parties');
  const { holdingCid } = await fund(alice, '100');

  const [command, disclosedContracts] = await sdk.token.transfer.create({ sender: alice, recipient: bob, amount: '40', instrumentId: 'Amulet', registryUrl: amuletRegistry, memo: 'rent' });
  const exercise = command.ExerciseCommand;
  t.equal(exercise.choice, 'TransferFactory_Transfer');
  t.match(exercise.choiceArgument, { expectedAdmin: manifest.instrumentAdmins.Amulet, transfer: { sender: alice, receiver: bob, amount: '40', inputHoldingCids: [holdingCid] } },
    'the SDK found alice\'s holding through the ACS and the registry\'s admin through its metadata');
  t.ok(disclosedContracts.length > 0 && disclosedContracts.every((d) => (d.createdEventBlob ?? '').length > 0), 'the registry discloses contracts with their blobs');

  const submitted = await sdk.ledger.internal.submit({ commands: [command], disclosedContracts, actAs: [alice] });
  t.ok(submitted.updateId, 'committed');
  t.equal(await sdk.ledger.ledgerEnd(), submitted.completionOffset, 'the ledger end is the transfer');

  t.match(await holdings(alice), [{ amount: '40', locked: true, owner: alice }, { amount: '60', locked: false, owner: alice }], 'alice\'s 40 is locked for bob, 60 is change');
  t.strictSame((await sdk.token.utxos.list({ partyId: alice })).map((u) => norm(u.interfaceViewValue.amount)), ['60'], 'unlocked only, by default');
  t.strictSame(await holdings(bob), [], 'bob holds nothing before accepting');
  const pending = await sdk.token.transfer.pending(bob);
  t.equal(pending.length, 1, 'bob has one pending transfer');
  const instruction = pending[0]!;
  t.match(instruction.interfaceViewValue, { transfer: { sender: alice, receiver: bob, instrumentId: { admin: manifest.instrumentAdmins.Amulet, id: 'Amulet' } }, status: { tag: 'TransferPendingReceiverAcceptance' } });
  t.equal(norm(instruction.interfaceViewValue.transfer.amount), '40');
  t.equal(instruction.interfaceViewValue.transfer.meta.values['splice.lfdecentralizedtrust.org/reason'], 'rent', 'the memo rides the transfer');

  const [accept, acceptDisclosed] = await sdk.token.transfer.accept({ transferInstructionCid: instruction.contractId, registryUrl: amuletRegistry });
  t.match(accept, { ExerciseCommand: { contractId: instruction.contractId, choice: 'TransferInstruction_Accept' } });
  const accepted = await sdk.ledger.internal.submit({ commands: [accept], disclosedContracts: acceptDisclosed, actAs: [bob] });
  t.ok(accepted.completionOffset > submitted.completionOffset, 'the acceptance committed');
  t.match(await holdings(bob), [{ amount: '40', locked: false, owner: bob, instrument: { admin: manifest.instrumentAdmins.Amulet, id: 'Amulet' } }], 'bob holds the 40');
  t.match(await holdings(alice), [{ amount: '60', locked: false }], 'alice keeps the change; the lock is gone');
  t.strictSame(await sdk.token.transfer.pending(bob), [], 'nothing pending');
});

t.test('external party: onboarded with its own key; a transfer prepared, hashed as both hashers hash it, signed and executed; another key\'s signature is refused', { timeout: 60_000 }, async (t) => {
  const keys = sdk.keys.generate();
  const partyHint = hint('ext');
  // execute() polls for the party with a 2 s pause after each check.
  const party = await sdk.party.external.create(keys.publicKey, { partyHint }).sign(keys.privateKey).execute();
  const fingerprint = await sdk.keys.fingerprint(keys.publicKey);
  t.equal(party.partyId, `${partyHint}::${fingerprint}`, 'the party\'s namespace is its key\'s fingerprint');
  t.equal(party.publicKeyFingerprint, fingerprint);
  t.equal(party.multiHash, await sdk.utils.hash.topologyTransaction(party.topologyTransactions), 'the signed multi-hash is Canton\'s over the topology transactions');
  t.ok((await sdk.party.list()).includes(party.partyId), 'the party is hosted here and the user may act for it');
  const ext = party.partyId;
  const bob = await sdk.party.internal.allocate({ partyHint: hint('bob') });
  const { holdingCid } = await fund(ext, '100');

  const [command, disclosedContracts] = await sdk.token.transfer.create({ sender: ext, recipient: bob, amount: '25', instrumentId: 'Amulet', registryUrl: amuletRegistry });
  const prepared = sdk.ledger.prepare({ partyId: ext, commands: command, disclosedContracts });
  const { response } = await prepared.toJSON();
  t.equal(response.hashingSchemeVersion, 'HASHING_SCHEME_VERSION_V2');
  t.equal((await sdk.utils.hash.preparedTransaction(response.preparedTransaction)).toBase64(), response.preparedTransactionHash, 'wallet-sdk\'s hasher agrees with the participant');
  t.equal(await hashPreparedTransaction(response.preparedTransaction, 'base64'), response.preparedTransactionHash, 'core-tx-visualizer\'s hasher agrees too');
  const decoded = await prepared.decode();
  t.strictSame(decoded.metadata?.submitterInfo?.actAs, [ext], 'prepared for the external party');
  const exercises = (decoded.transaction?.nodes ?? []).flatMap((node) => {
    const v1 = node.versionedNode.oneofKind === 'v1' ? node.versionedNode.v1 : null;
    return v1?.nodeType.oneofKind === 'exercise' ? [v1.nodeType.exercise] : [];
  });
  t.ok(exercises.some((e) => e.choiceId === 'TransferFactory_Transfer' && e.actingParties.includes(ext)), 'the transaction is the transfer the party asked for');
  t.ok((decoded.metadata?.inputContracts ?? []).some((c) => c.contract.oneofKind === 'v1' && c.contract.v1.contractId === holdingCid), 'it spends the funded holding');

  const end = await sdk.ledger.ledgerEnd();
  const before = await holdings(ext);
  const impostor = sdk.keys.generate();
  const refused = await refusal(prepared.sign(impostor.privateKey).execute({ partyId: ext }));
  t.equal(refused.code, 'FAILED_TO_EXECUTE_TRANSACTION', 'Canton\'s code for a transaction without a valid signature of its submitter');
  t.match(refused.cause, /Received 0 valid signatures/);
  t.equal(await sdk.ledger.ledgerEnd(), end, 'nothing committed');
  t.strictSame(await holdings(ext), before, 'the holding is unspent');
  t.match(before, [{ contractId: holdingCid, amount: '100', locked: false }]);

  const executed = await prepared.sign(keys.privateKey).execute({ partyId: ext });
  t.ok(executed.updateId, 'committed');
  t.ok(executed.completionOffset > end);
  t.match(await holdings(ext), [{ amount: '25', locked: true }, { amount: '75', locked: false }], 'the 25 is locked for bob, 75 is change');
  const pending = await sdk.token.transfer.pending(bob);
  t.equal(pending.length, 1);
  t.match(pending[0]?.interfaceViewValue, { transfer: { sender: ext, receiver: bob } });
  const again = await refusal(prepared.sign(keys.privateKey).execute({ partyId: ext }));
  t.ok(typeof again.code === 'string', `the same transaction again is refused (${String(again.code)}): its input is spent`);
  t.equal(await sdk.ledger.ledgerEnd(), executed.completionOffset, 'and nothing more committed');
});

t.test('"every sandbox ledger and registry answer validated against the pinned OpenAPI documents": each one these packages were given', async (t) => {
  t.ok(sandbox.exchanges.length > 0, 'the packages reached the sandbox through the recording proxies');
  holdToDocuments(t, sandbox.exchanges);
});
