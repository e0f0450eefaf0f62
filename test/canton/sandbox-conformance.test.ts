// The sandbox participant and registries against the official contracts: every answer of a tour of
// every endpoint the sandbox serves (successes and refusals) validated against the pinned JSON
// Ledger API 3.4 document and the token standard's registry documents (sandbox/*/openapi/).
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import t from 'tap';
import { holdToDocuments, observedSandbox } from '../helpers/observed-sandbox.js';

const HOLDING = '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding';
const INSTRUCTION = '#splice-api-token-transfer-instruction-v1:Splice.Api.Token.TransferInstructionV1:TransferInstruction';
const FACTORY = '#splice-api-token-transfer-instruction-v1:Splice.Api.Token.TransferInstructionV1:TransferFactory';
const BATCHING_UTILITY = '#splice-util-token-standard-wallet:Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility';

t.test('"every sandbox ledger and registry answer validated against the pinned OpenAPI documents"', async (t) => {
  const sandbox = await observedSandbox(t);
  const { ledger: base, registries, instrumentAdmins, poolParties } = sandbox.manifest;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    // Canton's clients send no Content-Type: neither does the tour.
    const response = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${sandbox.ledgerToken}` }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (response.headers.get('content-type') ?? '').startsWith('application/json') ? await response.json() : await response.text() };
  };
  const registry = async (admin: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${registries[admin]}${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };

  const { body: synchronizers } = await call('GET', '/v2/state/connected-synchronizers');
  const synchronizerId = synchronizers.connectedSynchronizers[0].synchronizerId as string;
  const { body: version } = await call('GET', '/v2/version');
  t.match(version, { version: /^3\.4\./, features: { userManagement: { supported: true }, experimental: { staticTime: { supported: false } } } }, '"/v2/version\'s feature flags telling the truth": user management is served (the tour uses it), static time is not');
  const { body: me } = await call('GET', '/v2/authenticated-user');
  await call('GET', '/v2/parties/participant-id');
  const { body: allocated } = await call('POST', '/v2/parties', { partyIdHint: 'alice', identityProviderId: '', synchronizerId, userId: me.user.id });
  const alice = allocated.partyDetails.party as string;
  const { body: bobAllocated } = await call('POST', '/v2/parties', { partyIdHint: 'bob', identityProviderId: '', synchronizerId });
  const bob = bobAllocated.partyDetails.party as string;
  await call('POST', '/v2/parties', { partyIdHint: 'alice', identityProviderId: '', synchronizerId });
  await call('GET', '/v2/parties');
  await call('GET', `/v2/parties/${encodeURIComponent(alice)}`);
  await call('GET', `/v2/parties/${encodeURIComponent(`nobody::1220${'0'.repeat(64)}`)}`);
  await call('POST', '/v2/users', { user: { id: 'wallet-user', primaryParty: alice, isDeactivated: false, identityProviderId: '' }, rights: [] });
  await call('POST', '/v2/users', { user: { id: 'wallet-user', primaryParty: alice, isDeactivated: false, identityProviderId: '' }, rights: [] });
  await call('GET', '/v2/users');
  await call('GET', '/v2/users/wallet-user');
  await call('GET', '/v2/users/no-such-user');
  await call('POST', '/v2/users/wallet-user/rights', { userId: 'wallet-user', identityProviderId: '', rights: [{ kind: { CanActAs: { value: { party: alice } } } }] });
  await call('GET', '/v2/users/wallet-user/rights');
  await call('PATCH', '/v2/users/wallet-user/rights', { userId: 'wallet-user', identityProviderId: '', rights: [{ kind: { CanActAs: { value: { party: alice } } } }] });

  const funded = (await call('POST', '/sandbox/v1/fund', { party: alice, token: 'CC', amount: '100' })).body;
  const { body: end } = await call('GET', '/v2/state/ledger-end');
  await call('GET', '/v2/state/latest-pruned-offsets');
  const amulet = instrumentAdmins.Amulet;
  await registry(amulet, 'GET', '/registry/metadata/v1/info');
  await registry(amulet, 'GET', '/registry/metadata/v1/instruments');
  await registry(amulet, 'GET', '/registry/metadata/v1/instruments/Amulet');
  await registry(amulet, 'GET', '/registry/metadata/v1/instruments/Nothing');
  const transfer = (sender: string, receiver: string, amount: string, inputs: string[], memo = '') => ({
    expectedAdmin: amulet,
    transfer: {
      sender, receiver, amount, instrumentId: { admin: amulet, id: 'Amulet' }, requestedAt: new Date(Date.now() - 60_000).toISOString(),
      executeBefore: new Date(Date.now() + 3_600_000).toISOString(), inputHoldingCids: inputs, meta: { values: { 'splice.lfdecentralizedtrust.org/reason': memo } },
    },
    extraArgs: { context: { values: {} }, meta: { values: {} } },
  });
  const { body: factory } = await registry(amulet, 'POST', '/registry/transfer-instruction/v1/transfer-factory', { choiceArguments: transfer(alice, bob, '30', [funded.holdingCid]), excludeDebugFields: true });
  await registry(amulet, 'POST', '/registry/transfer-instruction/v1/transfer-factory', { choiceArguments: { expectedAdmin: 'someone-else' } });
  t.equal(factory.choiceContext.disclosedContracts.length, 1, 'the factory is disclosed');
  t.not(factory.choiceContext.disclosedContracts[0].createdEventBlob, '', 'with its blob');
  const command = (choiceArgument: unknown) => [{ ExerciseCommand: { templateId: FACTORY, contractId: factory.factoryId, choice: 'TransferFactory_Transfer', choiceArgument } }];
  const undisclosed = await call('POST', '/v2/commands/submit-and-wait', { commands: command(transfer(alice, bob, '30', [funded.holdingCid])), commandId: 'undisclosed', actAs: [alice], disclosedContracts: [] });
  t.match(undisclosed, { status: 404, body: { code: 'CONTRACT_NOT_FOUND' } }, 'the factory is not visible to the taker: without its disclosure it is not found');
  const submitted = await call('POST', '/v2/commands/submit-and-wait', { commands: command(transfer(alice, bob, '30', [funded.holdingCid])), commandId: 'transfer-1', userId: me.user.id, actAs: [alice], disclosedContracts: factory.choiceContext.disclosedContracts });
  t.equal(submitted.status, 200, 'submitted with the disclosure');
  await call('POST', '/v2/commands/submit-and-wait', { commands: command(transfer(alice, bob, '30', [funded.holdingCid])), commandId: 'transfer-1', userId: me.user.id, actAs: [alice], disclosedContracts: factory.choiceContext.disclosedContracts });
  await call('POST', '/v2/commands/completions?limit=10', { userId: me.user.id, parties: [alice], beginExclusive: end.offset });

  const eventFormat = (party: string, cumulative: unknown[]) => ({ filtersByParty: { [party]: { cumulative } }, verbose: false });
  const wildcard = [{ identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob: true } } } }];
  const interfaces = [HOLDING, INSTRUCTION].map((interfaceId) => ({ identifierFilter: { InterfaceFilter: { value: { interfaceId, includeInterfaceView: true, includeCreatedEventBlob: true } } } }));
  const { body: acs } = await call('POST', '/v2/state/active-contracts', { activeAtOffset: end.offset, eventFormat: eventFormat(alice, wildcard) });
  t.ok(acs.length > 0);
  await call('POST', '/v2/state/active-contracts', { activeAtOffset: end.offset, filter: { filtersByParty: { [bob]: { cumulative: interfaces } } }, verbose: false });
  await call('POST', '/v2/state/active-contracts', { activeAtOffset: end.offset, eventFormat: eventFormat(alice, [{ identifierFilter: { TemplateFilter: { value: { templateId: '#sandbox-token:Sandbox.Token:Holding', includeCreatedEventBlob: false } } } }]) });
  await call('POST', '/v2/state/active-contracts', { activeAtOffset: 10_000, eventFormat: eventFormat(alice, wildcard) });
  await call('POST', '/v2/state/active-contracts', { activeAtOffset: end.offset, eventFormat: eventFormat(alice, [{ identifierFilter: { TemplateFilter: { value: { templateId: '#splice-amulet:Splice.Amulet:Amulet' } } } }]) });
  for (const shape of ['TRANSACTION_SHAPE_LEDGER_EFFECTS', 'TRANSACTION_SHAPE_ACS_DELTA']) {
    await call('POST', '/v2/updates?limit=50', { beginExclusive: 0, updateFormat: { includeTransactions: { eventFormat: eventFormat(alice, interfaces), transactionShape: shape } } });
  }
  await call('POST', '/v2/updates/flats', { beginExclusive: 0, filter: { filtersByParty: { [alice]: { cumulative: wildcard } } }, verbose: false });
  const { body: trees } = await call('POST', '/v2/updates/trees', { beginExclusive: 0, filter: { filtersByParty: { [alice]: { cumulative: wildcard } } }, verbose: false });
  t.ok(trees.some((item: any) => Object.values(item.update.TransactionTree.value.eventsById).some((e: any) => e.ExercisedTreeEvent?.value.lastDescendantNodeId > e.ExercisedTreeEvent?.value.nodeId)), 'a tree whose exercise has descendants');
  await call('POST', '/v2/updates', { beginExclusive: 0, endInclusive: 10_000, updateFormat: { includeTransactions: { eventFormat: eventFormat(alice, interfaces), transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' } } });
  await call('POST', '/v2/updates/transaction-by-id', { updateId: submitted.body.updateId, transactionFormat: { eventFormat: eventFormat(alice, wildcard), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } });
  await call('POST', '/v2/updates/transaction-by-id', { updateId: `1220${'0'.repeat(64)}`, transactionFormat: { eventFormat: eventFormat(alice, wildcard), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } });
  await call('POST', '/v2/events/events-by-contract-id', { contractId: funded.holdingCid, eventFormat: eventFormat(alice, interfaces) });
  await call('POST', '/v2/events/events-by-contract-id', { contractId: `00${'0'.repeat(64)}`, eventFormat: eventFormat(alice, interfaces) });
  await call('POST', '/v2/commands/submit-and-wait-for-transaction', { commands: { commands: [], commandId: 'empty', actAs: [alice] } });

  // An external party, onboarded and submitting through the interactive submission service.
  const keys = generateKeyPairSync('ed25519');
  const raw = keys.publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  const { body: topology } = await call('POST', '/v2/parties/external/generate-topology', {
    synchronizer: synchronizerId, partyHint: 'carol', publicKey: { format: 'CRYPTO_KEY_FORMAT_RAW', keyData: raw.toString('base64'), keySpec: 'SIGNING_KEY_SPEC_EC_CURVE25519' },
    localParticipantObservationOnly: false, confirmationThreshold: 1, otherConfirmingParticipantUids: [], observingParticipantUids: [],
  });
  t.equal(topology.publicKeyFingerprint, `1220${createHash('sha256').update(Buffer.concat([Buffer.from([0, 0, 0, 12]), raw])).digest('hex')}`, 'the fingerprint as Canton computes it');
  const onboarding = { synchronizer: synchronizerId, identityProviderId: '', onboardingTransactions: topology.topologyTransactions.map((transaction: string) => ({ transaction })) };
  const signature = (bytes: Buffer) => ({ format: 'SIGNATURE_FORMAT_CONCAT', signature: sign(null, bytes, keys.privateKey).toString('base64'), signedBy: topology.publicKeyFingerprint, signingAlgorithmSpec: 'SIGNING_ALGORITHM_SPEC_ED25519' });
  const wrongKey = generateKeyPairSync('ed25519').privateKey;
  await call('POST', '/v2/parties/external/allocate', { ...onboarding, multiHashSignatures: [{ ...signature(Buffer.from(topology.multiHash, 'base64')), signature: sign(null, Buffer.from(topology.multiHash, 'base64'), wrongKey).toString('base64') }] });
  const { body: carolAllocated } = await call('POST', '/v2/parties/external/allocate', { ...onboarding, multiHashSignatures: [signature(Buffer.from(topology.multiHash, 'base64'))] });
  const carol = carolAllocated.partyId as string;
  const carolCoin = (await call('POST', '/sandbox/v1/fund', { party: carol, token: 'CC', amount: '10' })).body;
  const carolCommand = { commands: command(transfer(carol, poolParties['CC/USDCx']!, '10', [carolCoin.holdingCid], '0.0000000001')), commandId: 'carol-swap', userId: me.user.id, actAs: [carol], disclosedContracts: factory.choiceContext.disclosedContracts, synchronizerId };
  await call('POST', '/v2/commands/submit-and-wait', carolCommand);
  const { body: prepared } = await call('POST', '/v2/interactive-submission/prepare', { ...carolCommand, packageIdSelectionPreference: [], verboseHashing: false });
  const execution = (signed: Buffer) => ({
    userId: me.user.id, preparedTransaction: prepared.preparedTransaction, hashingSchemeVersion: 'HASHING_SCHEME_VERSION_V2', submissionId: 'carol-submission', deduplicationPeriod: { Empty: {} },
    partySignatures: { signatures: [{ party: carol, signatures: [{ ...signature(Buffer.alloc(0)), signature: signed.toString('base64') }] }] },
  });
  const hash = Buffer.from(prepared.preparedTransactionHash, 'base64');
  const refused = await call('POST', '/v2/interactive-submission/executeAndWait', execution(sign(null, hash, wrongKey)));
  t.equal(refused.status, 400, 'a signature by another key is refused');
  const executed = await call('POST', '/v2/interactive-submission/executeAndWait', execution(sign(null, hash, keys.privateKey)));
  t.equal(executed.status, 200, 'signed by the party\'s key: executed');
  t.match(await call('POST', '/v2/interactive-submission/executeAndWait', execution(sign(null, hash, keys.privateKey))), { status: 409, body: { code: 'DUPLICATE_COMMAND' } }, 'executed again: refused as the duplicate of the committed command');
  const again = await call('POST', '/v2/interactive-submission/prepare', { ...carolCommand, commandId: 'carol-again' });
  await call('POST', '/v2/interactive-submission/execute', { ...execution(sign(null, Buffer.from(again.body.preparedTransactionHash ?? '', 'base64'), keys.privateKey)), preparedTransaction: again.body.preparedTransaction });
  // Splice's batching utility: detected, listed, refused when malformed, run when well formed.
  await call('GET', '/v2/packages');
  await call('GET', `/v2/interactive-submission/preferred-package-version?package-name=splice-util-token-standard-wallet&parties=${encodeURIComponent(alice)}`);
  await call('GET', '/v2/interactive-submission/preferred-package-version?package-name=splice-amulet');
  t.equal((await call('GET', '/v2/interactive-submission/preferred-package-version?package-name=splice-api-token-holding-v1')).status, 200, 'preferred-package-version answers any package the participant has');
  t.equal((await call('GET', '/v2/interactive-submission/preferred-package-version')).status, 400, 'and refuses a request without package-name');
  const batchCoin = (await call('POST', '/sandbox/v1/fund', { party: alice, token: 'CC', amount: '5' })).body;
  const batch = (archiveAfterExecution: unknown) => [{
    CreateAndExerciseCommand: {
      templateId: BATCHING_UTILITY, createArguments: { user: alice }, choice: 'BatchingUtility_ExecuteBatch',
      choiceArgument: {
        inputHoldingMap: { byAdminAndAccount: [[{ admin: amulet, account: { provider: null, id: null, owner: alice } }, { Amulet: [batchCoin.holdingCid] }]] },
        actions: [{ tag: 'TSA_TransferFactory_TransferV1', value: { cid: factory.factoryId, arg: transfer(alice, bob, '1', []) } }],
        archiveAfterExecution,
      },
    },
  }];
  const batchSubmission = (commandId: string, archiveAfterExecution: unknown) => ({ commands: batch(archiveAfterExecution), commandId, actAs: [alice], disclosedContracts: factory.choiceContext.disclosedContracts });
  t.match(await call('POST', '/v2/commands/submit-and-wait', batchSubmission('batch-malformed', 'yes')), { status: 400, body: { code: 'COMMAND_PREPROCESSING_FAILED' } }, 'a batch whose arguments do not type-check');
  const batched = await call('POST', '/v2/commands/submit-and-wait-for-transaction', { commands: batchSubmission('batch', true), transactionFormat: { eventFormat: eventFormat(alice, wildcard), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } });
  t.equal(batched.status, 200, 'a batch of one transfer');
  await call('POST', '/v2/events/events-by-contract-id', { contractId: batched.body.transaction.events[0].CreatedEvent.contractId, eventFormat: eventFormat(alice, wildcard) });
  await call('GET', '/v2/no-such-thing');
  t.match(await call('POST', '/registry/transfer-instruction/v1/transfer-factory', { choiceArguments: transfer(alice, bob, '1', []) }), { status: 404, body: { code: 'NOT_FOUND' } }, 'a participant serves no registry: the registries are at their own URLs');
  await call('POST', '/v2/updates', { beginExclusive: 0 });

  holdToDocuments(t, sandbox.exchanges);
  const statuses = new Set(sandbox.exchanges.map((e) => e.status));
  t.ok(statuses.has(200) && statuses.has(400) && statuses.has(404) && statuses.has(409), 'successes and refusals both checked');
});
