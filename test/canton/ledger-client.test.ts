// Canton's own JSON Ledger API client (@canton-network/core-ledger-client) and ACS reader
// (@canton-network/core-acs-reader) against the sandbox participant: every endpoint the sandbox
// serves as a Canton 3.4 participant, read the way those packages read it. Nothing is mocked: a
// sandbox answer the packages misread fails here, which is what an integrator would hit first.
import { createHash, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { LedgerClient, awaitCompletion } from '@canton-network/core-ledger-client';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
// The provider package's own type declarations do not resolve under NodeNext; wallet-sdk re-exports it.
import { LedgerProvider } from '@canton-network/wallet-sdk';
import { ACSReader } from '@canton-network/core-acs-reader';
import { AuthTokenProvider } from '@canton-network/core-wallet-auth';
import { computeMultiHashForTopology, computeSha256CantonHash, hashPreparedTransaction } from '@canton-network/core-tx-visualizer';
import { HOLDING, TRANSFER_FACTORY, TRANSFER_INSTRUCTION, claims, hint, norm, refusal, silent } from '../helpers/canton.js';
import { holdToDocuments, observedSandbox } from '../helpers/observed-sandbox.js';

type S = v3_4.components['schemas'];
type ActiveContract = S['JsGetActiveContractsResponse'];
type Update = S['JsGetUpdatesResponse'];

const TOKEN_HOLDING = '#sandbox-token:Sandbox.Token:Holding';
const TOKEN_INSTRUCTION = '#sandbox-token:Sandbox.Token:TransferInstruction';




async function postJson<T>(url: string, body: unknown, token?: string): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as T;
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

const wildcard = (party: string, includeCreatedEventBlob = false) => ({
  filtersByParty: { [party]: { cumulative: [{ identifierFilter: { WildcardFilter: { value: { includeCreatedEventBlob } } } }] } },
  verbose: true,
});
const byTemplate = (party: string, templateId: string) => ({
  filtersByParty: { [party]: { cumulative: [{ identifierFilter: { TemplateFilter: { value: { templateId, includeCreatedEventBlob: false } } } }] } },
  verbose: true,
});
const byInterface = (party: string, interfaceId: string, includeCreatedEventBlob: boolean) => ({
  filtersByParty: { [party]: { cumulative: [{ identifierFilter: { InterfaceFilter: { value: { interfaceId, includeInterfaceView: true, includeCreatedEventBlob } } } }] } },
  verbose: true,
});

const createdEvents = (entries: ActiveContract[]) =>
  entries.flatMap((entry) => (entry.contractEntry && 'JsActiveContract' in entry.contractEntry ? [entry.contractEntry.JsActiveContract.createdEvent] : []));
const transactions = (updates: Update[]) => updates.flatMap((u) => (u.update && 'Transaction' in u.update ? [u.update.Transaction.value] : []));
const eventKinds = (tx: S['JsTransaction']) => tx.events.map((e) => Object.keys(e)[0]);
const exercised = (tx: S['JsTransaction']) => tx.events.flatMap((e) => ('ExercisedEvent' in e ? [e.ExercisedEvent] : []));
const created = (tx: S['JsTransaction']) => tx.events.flatMap((e) => ('CreatedEvent' in e ? [e.CreatedEvent] : []));

const sandbox = await observedSandbox(t);
const { manifest, ledgerToken } = sandbox;
const userId = claims(ledgerToken).sub!;
const ccAdmin = manifest.instrumentAdmins.Amulet;
const amuletRegistry = manifest.registries[ccAdmin]!.replace(/\/$/, '');
const client = new LedgerClient({ baseUrl: new URL(manifest.ledger), logger: pino({ level: 'silent' }), accessTokenProvider: AuthTokenProvider.fromToken(ledgerToken, silent) });
// The client's typed paths and bodies are the OpenAPI document's; the tests send what the
// packages send, some of it (the legacy `filter`) outside that document.
const post = <T>(path: string, body: unknown, query?: Record<string, string>) => client.post(path as never, body as never, (query ? { query } : undefined) as never) as Promise<T>;
const get = <T>(path: string, params?: { path?: Record<string, string>; query?: Record<string, string> }) => client.get(path as never, params as never) as Promise<T>;
const ledgerEnd = async () => (await get<S['GetLedgerEndResponse']>('/v2/state/ledger-end')).offset ?? 0;

/** `id`'s completion (a command or submission id) after `begin`, polled a bounded number of times. */
async function completionFor(party: string, begin: number, id: string) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const answers = await post<S['CompletionStreamResponse'][]>('/v2/commands/completions', { userId, parties: [party], beginExclusive: begin }, { limit: '100', stream_idle_timeout_ms: '200' });
    const found = answers.flatMap((c) => (c.completionResponse && 'Completion' in c.completionResponse ? [c.completionResponse.Completion.value] : []))
      .find((c) => c.commandId === id || c.submissionId === id);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

async function fund(party: string, token: 'CC' | 'USDCx' | 'CBTC', amount: string) {
  return postJson<{ holdingCid: string; updateId: string; offset: number }>(new URL('/sandbox/v1/fund', manifest.ledger).href, { party, token, amount }, ledgerToken);
}

/** The TransferFactory_Transfer command and its disclosed contracts, from the CC registry. */
async function transferCommand(sender: string, receiver: string, amount: string, inputHoldingCids: string[]) {
  const now = Date.now();
  const choiceArguments = {
    expectedAdmin: ccAdmin,
    transfer: {
      sender, receiver, amount, instrumentId: { admin: ccAdmin, id: 'Amulet' }, requestedAt: new Date(now - 60_000).toISOString(),
      executeBefore: new Date(now + 3_600_000).toISOString(), inputHoldingCids, meta: { values: {} },
    },
    extraArgs: { context: { values: {} }, meta: { values: {} } },
  };
  const factory = await postJson<{ factoryId: string; choiceContext: { choiceContextData: { values?: object }; disclosedContracts: S['DisclosedContract'][] } }>(
    `${amuletRegistry}/registry/transfer-instruction/v1/transfer-factory`,
    { choiceArguments, excludeDebugFields: true },
  );
  return {
    command: {
      ExerciseCommand: {
        templateId: TRANSFER_FACTORY, contractId: factory.factoryId, choice: 'TransferFactory_Transfer',
        choiceArgument: { ...choiceArguments, extraArgs: { context: { values: {}, ...factory.choiceContext.choiceContextData }, meta: { values: {} } } },
      },
    },
    disclosedContracts: factory.choiceContext.disclosedContracts,
  };
}

// What the scenario leaves for the reads below: alice funded (h1 at `funded`), a transfer of 40 of
// it to bob (at `sent`) leaving alice a locked holding, change and a TransferInstruction, and
// bob's acceptance (at `accepted`) giving bob a holding.
const s = {} as {
  synchronizerId: string; fingerprint: string; alice: string; bob: string;
  h1: string; funded: number; sentUpdateId: string; sent: number; commandId: string;
  instruction: string; locked: string; change: string; accepted: number; acceptedUpdateId: string; bobHolding: string;
};

t.test('GET /v2/version: a 3.4 participant, which the client then speaks', async (t) => {
  t.equal(client.getCurrentClientVersion(), '3.5', 'the client assumes 3.5 until it asked');
  const version = await get<S['GetLedgerApiVersionResponse']>('/v2/version');
  t.match(version.version, /^3\.4\./);
  t.equal(client.getCurrentClientVersion(), '3.4', 'the participant\'s version picked the 3.4 client');
});

t.test('GET /v2/authenticated-user is the token\'s subject, with the rights the sandbox grants it', async (t) => {
  const { user } = await get<S['GetUserResponse']>('/v2/authenticated-user', { query: {} });
  t.equal(user?.id, userId, 'the user is the JWT sub');
  const { rights } = await get<S['ListUserRightsResponse']>('/v2/users/{user-id}/rights', { path: { 'user-id': userId } });
  const kinds = (rights ?? []).map((r) => Object.keys(r.kind ?? {})[0]);
  for (const kind of ['ParticipantAdmin', 'CanReadAsAnyParty', 'CanExecuteAsAnyParty']) t.ok(kinds.includes(kind), `has ${kind}`);
});

t.test('GET /v2/state/connected-synchronizers names at least one, with submission permission', async (t) => {
  const { connectedSynchronizers } = await get<S['GetConnectedSynchronizersResponse']>('/v2/state/connected-synchronizers');
  t.ok((connectedSynchronizers ?? []).length >= 1);
  const [first] = connectedSynchronizers ?? [];
  t.ok(first?.synchronizerId, 'a synchronizer id');
  t.equal(first?.permission, 'PARTICIPANT_PERMISSION_SUBMISSION');
  s.synchronizerId = await client.getSynchronizerId();
  t.equal(s.synchronizerId, first?.synchronizerId, 'the helper reads the first one');
});

t.test('parties: allocated as <hint>::<participant namespace>, the user gets CanActAs; get, list, exists; an unknown party is an empty list', async (t) => {
  const { participantId } = await get<S['GetParticipantIdResponse']>('/v2/parties/participant-id');
  s.fingerprint = participantId.split('::').at(-1)!;
  t.match(s.fingerprint, /^1220[0-9a-f]{64}$/, 'the participant\'s namespace is a fingerprint');
  const allocate = async (name: string) => {
    const partyIdHint = hint(name);
    const { partyDetails } = await post<S['AllocatePartyResponse']>('/v2/parties', { partyIdHint, identityProviderId: '', synchronizerId: s.synchronizerId, userId });
    t.equal(partyDetails?.party, `${partyIdHint}::${s.fingerprint}`);
    t.equal(partyDetails?.isLocal, true);
    return partyDetails!.party;
  };
  s.alice = await allocate('alice');
  s.bob = await allocate('bob');
  t.equal(await client.checkIfPartyExists(s.alice), true);
  const one = await get<S['GetPartiesResponse']>('/v2/parties/{party}', { path: { party: s.alice } });
  t.strictSame(one.partyDetails.map((p) => p.party), [s.alice]);
  const unknown = `nobody-${randomUUID().slice(0, 8)}::${s.fingerprint}`;
  const none = await get<S['GetPartiesResponse']>('/v2/parties/{party}', { path: { party: unknown } });
  t.strictSame(none.partyDetails, [], 'Canton answers an unknown party with an empty list, not 404');
  t.equal(await client.checkIfPartyExists(unknown), false);
  const all = await get<S['ListKnownPartiesResponse']>('/v2/parties', { query: {} });
  const listed = all.partyDetails.map((p) => p.party);
  t.ok(listed.includes(s.alice) && listed.includes(s.bob), 'both listed');
  const { rights } = await get<S['ListUserRightsResponse']>('/v2/users/{user-id}/rights', { path: { 'user-id': userId } });
  const actAs = (rights ?? []).flatMap((r) => (r.kind && 'CanActAs' in r.kind ? [r.kind.CanActAs.value.party] : []));
  t.ok(actAs.includes(s.alice), 'allocating with userId grants that user CanActAs, as Canton 3.4 does');
});

t.test('users: create, get, list; a grant answers only the rights it newly granted', async (t) => {
  const id = hint('reader');
  const user = await client.createUser(id, s.alice);
  t.equal(user.id, id);
  t.equal(user.primaryParty, s.alice);
  const got = await get<S['GetUserResponse']>('/v2/users/{user-id}', { path: { 'user-id': id } });
  t.equal(got.user?.id, id);
  const listed = await get<S['ListUsersResponse']>('/v2/users', { query: {} });
  t.ok((listed.users ?? []).some((u) => u.id === id), 'listed');
  const first = await client.grantRights(id, { readAs: [s.bob] });
  t.strictSame(first.newlyGrantedRights, [{ kind: { CanReadAs: { value: { party: s.bob } } } }]);
  const again = await client.grantRights(id, { readAs: [s.bob] });
  t.strictSame(again.newlyGrantedRights, [], 'a right the user has is not newly granted');
  const { rights } = await get<S['ListUserRightsResponse']>('/v2/users/{user-id}/rights', { path: { 'user-id': id } });
  const kinds = (rights ?? []).map((r) => JSON.stringify(r.kind));
  t.ok(kinds.includes(JSON.stringify({ ParticipantAdmin: { value: {} } })), 'createUser\'s ParticipantAdmin');
  t.ok(kinds.includes(JSON.stringify({ CanReadAs: { value: { party: s.bob } } })), 'the granted CanReadAs');
  const missing = await refusal(get('/v2/users/{user-id}', { path: { 'user-id': hint('nobody') } }));
  t.equal(missing.code, 'USER_NOT_FOUND');
});

t.test('submit-and-wait: a transfer commits, and its completion is in /v2/commands/completions', async (t) => {
  const funded = await fund(s.alice, 'CC', '100');
  s.h1 = funded.holdingCid;
  s.funded = await ledgerEnd();
  t.ok(s.funded >= funded.offset);
  const { command, disclosedContracts } = await transferCommand(s.alice, s.bob, '40', [s.h1]);
  t.ok(disclosedContracts.length > 0 && disclosedContracts.every((d) => (d.createdEventBlob ?? '').length > 0), 'the registry discloses contracts with their blobs');
  s.commandId = `transfer-${randomUUID()}`;
  const answer = await post<S['SubmitAndWaitResponse']>('/v2/commands/submit-and-wait', {
    commands: [command], commandId: s.commandId, userId, actAs: [s.alice], readAs: [], disclosedContracts, synchronizerId: s.synchronizerId, packageIdSelectionPreference: [],
  });
  t.ok(answer.updateId, 'an update id');
  t.ok(answer.completionOffset > s.funded, 'completed after the funding');
  s.sentUpdateId = answer.updateId;
  s.sent = answer.completionOffset;
  t.equal(await ledgerEnd(), s.sent, 'the ledger end is the transfer');

  const completion = await completionFor(s.alice, s.funded, s.commandId);
  t.ok(completion, 'the command\'s completion is listed');
  t.equal(completion?.updateId, s.sentUpdateId);
  t.equal(completion?.offset, s.sent);
  t.equal(completion?.status?.code ?? 0, 0, 'succeeded');
  t.strictSame(completion?.actAs, [s.alice]);
  t.equal(completion?.userId, userId);
  if (!completion) return;
  // The package's own poller, now that the completion is known to be there (it re-asks without pause).
  const awaited = await awaitCompletion(client, s.funded, s.alice, userId, s.commandId);
  t.equal(awaited.updateId, s.sentUpdateId);
  const others = await post<S['CompletionStreamResponse'][]>(
    '/v2/commands/completions', { userId, parties: [s.bob], beginExclusive: s.funded }, { limit: '100', stream_idle_timeout_ms: '1000' },
  );
  t.notOk(others.some((c) => c.completionResponse && 'Completion' in c.completionResponse && c.completionResponse.Completion.value.commandId === s.commandId),
    'a completion goes to the submitting parties only');
});

t.test('active contracts, Interface filter: Holding views and created-event blobs', async (t) => {
  const end = await ledgerEnd();
  const holdings = createdEvents(await post<ActiveContract[]>('/v2/state/active-contracts', { eventFormat: byInterface(s.alice, HOLDING, true), activeAtOffset: end }));
  t.equal(holdings.length, 2, 'alice holds the locked 40 and the change of 60');
  for (const event of holdings) {
    const [view] = event.interfaceViews ?? [];
    t.match(view?.interfaceId, /:Splice\.Api\.Token\.HoldingV1:Holding$/);
    t.equal(view?.viewStatus.code, 0);
    const value = view?.viewValue as { owner: string; instrumentId: { admin: string; id: string }; amount: string; lock: unknown };
    t.equal(value.owner, s.alice);
    t.strictSame(value.instrumentId, { admin: ccAdmin, id: 'Amulet' });
    t.ok(Buffer.from(event.createdEventBlob ?? '', 'base64').length > 0, 'a created-event blob, asked for');
    if (value.lock === null) s.change = event.contractId;
    else s.locked = event.contractId;
  }
  const amounts = holdings.map((e) => norm((e.interfaceViews?.[0]?.viewValue as { amount: string }).amount)).sort();
  t.strictSame(amounts, ['40', '60']);
  t.ok(s.change && s.locked, 'one locked, one not');
  const pending = createdEvents(await post<ActiveContract[]>('/v2/state/active-contracts', { eventFormat: byInterface(s.bob, TRANSFER_INSTRUCTION, false), activeAtOffset: end }));
  t.equal(pending.length, 1, 'bob sees the pending TransferInstruction');
  const instruction = pending[0]!;
  s.instruction = instruction.contractId;
  t.match(instruction.interfaceViews?.[0]?.interfaceId, /:Splice\.Api\.Token\.TransferInstructionV1:TransferInstruction$/);
  t.match(instruction.interfaceViews?.[0]?.viewValue, { transfer: { sender: s.alice, receiver: s.bob }, status: { tag: 'TransferPendingReceiverAcceptance' } });
  t.notOk(instruction.createdEventBlob, 'no blob unless asked for');
});

t.test('submit-and-wait-for-transaction: bob accepts through the registry\'s choice context; the answer is the transaction', async (t) => {
  const context = await postJson<{ choiceContextData: { values?: object }; disclosedContracts: S['DisclosedContract'][] }>(
    `${amuletRegistry}/registry/transfer-instruction/v1/${encodeURIComponent(s.instruction)}/choice-contexts/accept`, { excludeDebugFields: true },
  );
  const answer = await post<S['JsSubmitAndWaitForTransactionResponse']>('/v2/commands/submit-and-wait-for-transaction', {
    commands: {
      commands: [{ ExerciseCommand: { templateId: TRANSFER_INSTRUCTION, contractId: s.instruction, choice: 'TransferInstruction_Accept', choiceArgument: { extraArgs: { context: { values: {}, ...context.choiceContextData }, meta: { values: {} } } } } }],
      commandId: `accept-${randomUUID()}`, userId, actAs: [s.bob], readAs: [], disclosedContracts: context.disclosedContracts, synchronizerId: s.synchronizerId,
    },
    transactionFormat: { eventFormat: wildcard(s.bob), transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' },
  });
  const tx = answer.transaction;
  s.accepted = tx.offset;
  s.acceptedUpdateId = tx.updateId;
  t.ok(tx.offset > s.sent);
  const archived = tx.events.flatMap((e) => ('ArchivedEvent' in e ? [e.ArchivedEvent.contractId] : []));
  t.ok(archived.includes(s.instruction), 'the instruction is gone');
  const mine = created(tx).filter((e) => (e.createArgument as { owner?: string } | undefined)?.owner === s.bob);
  t.equal(mine.length, 1, 'bob\'s new holding');
  s.bobHolding = mine[0]!.contractId;
  t.notOk(eventKinds(tx).includes('ExercisedEvent'), 'an ACS delta has no exercises');
});

t.test('active contracts, Wildcard: the snapshot at an earlier offset, not today\'s', async (t) => {
  const at = async (party: string, offset: number) =>
    createdEvents(await post<ActiveContract[]>('/v2/state/active-contracts', { eventFormat: wildcard(party), activeAtOffset: offset })).map((e) => e.contractId);
  const before = await at(s.alice, s.funded);
  t.ok(before.includes(s.h1), 'the holding spent later is still there at the funding');
  t.notOk(before.includes(s.change), 'the change created later is not');
  const between = await at(s.alice, s.sent);
  t.notOk(between.includes(s.h1), 'spent by the transfer');
  t.ok(between.includes(s.locked) && between.includes(s.change) && between.includes(s.instruction), 'the transfer\'s creates');
  const now = await at(s.alice, await ledgerEnd());
  t.ok(now.includes(s.change), 'the change remains');
  t.notOk(now.includes(s.locked) || now.includes(s.instruction), 'acceptance spent the lock and the instruction');
  t.notOk((await at(s.bob, s.sent)).includes(s.bobHolding), 'bob\'s holding is not there before the acceptance');
  t.ok((await at(s.bob, s.accepted)).includes(s.bobHolding), 'and is after it');
});

t.test('active contracts, Template filter: only that template', async (t) => {
  const at = async (templateId: string, offset: number) =>
    createdEvents(await post<ActiveContract[]>('/v2/state/active-contracts', { eventFormat: byTemplate(s.alice, templateId), activeAtOffset: offset }));
  const holdings = await at(TOKEN_HOLDING, s.sent);
  t.strictSame(holdings.map((e) => e.contractId).sort(), [s.locked, s.change].sort());
  for (const e of holdings) {
    t.match(e.templateId, /:Sandbox\.Token:Holding$/);
    t.equal(e.packageName, 'sandbox-token');
    t.notOk(e.interfaceViews?.length, 'no interface views for a template filter');
  }
  const instructions = await at(TOKEN_INSTRUCTION, s.sent);
  t.strictSame(instructions.map((e) => e.contractId), [s.instruction]);
  const unknown = await refusal(post('/v2/state/active-contracts', { eventFormat: byTemplate(s.alice, '#no-such-package:No.Such:Template'), activeAtOffset: s.sent }));
  t.equal(unknown.code, 'PACKAGE_NAMES_NOT_FOUND', 'an unknown package name is refused, as Canton refuses it');
});

t.test('ACSReader.raw.read: the legacy filter with interface ids, at the ledger end and at an offset', async (t) => {
  const reader = new ACSReader(new LedgerProvider({ baseUrl: manifest.ledger, accessTokenProvider: AuthTokenProvider.fromToken(ledgerToken, silent) }));
  const now = createdEvents(await reader.raw.read({ interfaceIds: [HOLDING], parties: [s.alice], filterByParty: true }));
  t.strictSame(now.map((e) => e.contractId), [s.change]);
  t.equal(norm((now[0]?.interfaceViews?.[0]?.viewValue as { amount: string }).amount), '60');
  const then = createdEvents(await reader.raw.read({ offset: s.funded, interfaceIds: [HOLDING], parties: [s.alice], filterByParty: true }));
  t.strictSame(then.map((e) => e.contractId), [s.h1], 'the legacy filter honours activeAtOffset too');
  t.ok(then.every((e) => (e.createdEventBlob ?? '').length > 0), 'the reader asks for blobs');
  const instructions = createdEvents(await reader.raw.read({ offset: s.sent, interfaceIds: [TRANSFER_INSTRUCTION], parties: [s.bob], filterByParty: true }));
  t.strictSame(instructions.map((e) => e.contractId), [s.instruction]);
});

t.test('POST /v2/updates: updateFormat and the legacy filter; LEDGER_EFFECTS carries the exercises, ACS_DELTA only creates and archives', async (t) => {
  const range = { beginExclusive: s.funded, endInclusive: s.accepted };
  const effects = transactions(await post<Update[]>('/v2/updates', { ...range, updateFormat: { includeTransactions: { eventFormat: wildcard(s.alice), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } } }));
  t.ok(effects.every((tx) => tx.offset > s.funded && tx.offset <= s.accepted), 'within the range');
  t.same(effects.map((tx) => tx.offset), [...effects.map((tx) => tx.offset)].sort((a, b) => a - b), 'in offset order');
  const sent = effects.find((tx) => tx.updateId === s.sentUpdateId);
  t.ok(sent, 'the transfer is there');
  const root = exercised(sent!)[0];
  t.match(root, { choice: 'TransferFactory_Transfer', consuming: false, actingParties: [s.alice] });
  t.ok(exercised(sent!).some((e) => e.choice === 'Archive' && e.consuming && e.contractId === s.h1), 'the spent holding\'s consuming Archive');
  t.equal(sent!.commandId, s.commandId, 'the submitter sees its command id');
  const delta = transactions(await post<Update[]>('/v2/updates', { ...range, updateFormat: { includeTransactions: { eventFormat: wildcard(s.alice), transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' } } }));
  const sentDelta = delta.find((tx) => tx.updateId === s.sentUpdateId)!;
  t.ok(sentDelta, 'the transfer is there');
  t.notOk(eventKinds(sentDelta).includes('ExercisedEvent'), 'no exercises in an ACS delta');
  t.ok(sentDelta.events.some((e) => 'ArchivedEvent' in e && e.ArchivedEvent.contractId === s.h1), 'the spend is an ArchivedEvent');
  const legacy = transactions(await post<Update[]>('/v2/updates', { ...range, filter: { filtersByParty: { [s.alice]: { cumulative: [] } } }, verbose: true }));
  t.strictSame(legacy.map((tx) => tx.updateId), delta.map((tx) => tx.updateId), 'the legacy filter reads the same transactions');
  const legacySent = legacy.find((tx) => tx.updateId === s.sentUpdateId)!;
  t.strictSame(eventKinds(legacySent), eventKinds(sentDelta), 'as ACS deltas');
  const limited = await post<Update[]>('/v2/updates', { ...range, updateFormat: { includeTransactions: { eventFormat: wildcard(s.alice), transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' } } }, { limit: '1' });
  t.equal(limited.length, 1, '?limit= is honoured');
});

t.test('POST /v2/updates/flats reads what /v2/updates reads', async (t) => {
  const body = { beginExclusive: s.funded, endInclusive: s.accepted, updateFormat: { includeTransactions: { eventFormat: wildcard(s.alice), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } }, verbose: false };
  const flats = transactions(await post<Update[]>('/v2/updates/flats', body));
  const updates = transactions(await post<Update[]>('/v2/updates', body));
  t.strictSame(flats.map((tx) => [tx.updateId, eventKinds(tx)]), updates.map((tx) => [tx.updateId, eventKinds(tx)]));
  t.ok(flats.some((tx) => tx.updateId === s.sentUpdateId));
});

t.test('POST /v2/updates/trees: eventsById keyed by node id, an exercise\'s lastDescendantNodeId spans its subtree', async (t) => {
  const trees = await post<S['JsGetUpdateTreesResponse'][]>('/v2/updates/trees', {
    beginExclusive: s.funded, endInclusive: s.sent, filter: { filtersByParty: { [s.alice]: { cumulative: [] } } }, verbose: true,
  });
  const tree = trees.flatMap((u) => (u.update && 'TransactionTree' in u.update ? [u.update.TransactionTree.value] : [])).find((tx) => tx.updateId === s.sentUpdateId);
  t.ok(tree, 'the transfer is a tree');
  const nodes = Object.entries(tree!.eventsById).map(([key, event]) => {
    const inner = 'CreatedTreeEvent' in event ? event.CreatedTreeEvent.value : event.ExercisedTreeEvent.value;
    t.equal(String(inner.nodeId), key, 'keyed by its node id');
    return { nodeId: inner.nodeId, exercise: 'ExercisedTreeEvent' in event ? event.ExercisedTreeEvent.value : null, create: 'CreatedTreeEvent' in event ? event.CreatedTreeEvent.value : null };
  }).sort((a, b) => a.nodeId - b.nodeId);
  const [root, ...rest] = nodes;
  t.equal(root?.exercise?.choice, 'TransferFactory_Transfer', 'the root is the factory exercise');
  t.equal(root?.exercise?.lastDescendantNodeId, nodes.at(-1)!.nodeId, 'the root spans every other node');
  t.ok(rest.every((n) => n.nodeId > root!.nodeId), 'descendants follow the root');
  const archives = rest.filter((n) => n.exercise?.choice === 'Archive');
  t.ok(archives.some((n) => n.exercise?.contractId === s.h1), 'the spend is an Archive node');
  t.ok(archives.every((n) => n.exercise!.lastDescendantNodeId === n.nodeId && n.exercise!.consuming), 'an Archive is a consuming leaf');
  t.strictSame(rest.filter((n) => n.create).map((n) => n.create!.contractId).sort(), [s.locked, s.change, s.instruction].sort(), 'the three creates');
});

t.test('POST /v2/updates/transaction-by-id: the transaction in the asked shape', async (t) => {
  const { transaction } = await post<S['JsGetTransactionResponse']>('/v2/updates/transaction-by-id', {
    updateId: s.sentUpdateId, transactionFormat: { eventFormat: wildcard(s.alice), transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' },
  });
  t.equal(transaction.updateId, s.sentUpdateId);
  t.equal(transaction.offset, s.sent);
  t.ok(transaction.synchronizerId === s.synchronizerId, 'on the synchronizer');
  const nodeIds = transaction.events.map((e) => Object.values(e)[0].nodeId as number);
  t.strictSame(nodeIds, [...nodeIds].sort((a, b) => a - b), 'events in node order');
  t.equal(exercised(transaction)[0]?.choice, 'TransferFactory_Transfer');
  const lastDescendant = exercised(transaction)[0]?.lastDescendantNodeId;
  t.equal(lastDescendant, nodeIds.at(-1), 'the root exercise spans the rest');
  const unknown = await refusal(post('/v2/updates/transaction-by-id', {
    updateId: `1220${'0'.repeat(64)}`, transactionFormat: { eventFormat: wildcard(s.alice), transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' },
  }));
  t.ok(typeof unknown.code === 'string' && /NOT_FOUND/.test(unknown.code), `an unknown update is not found (${String(unknown.code)})`);
});

t.test('POST /v2/events/events-by-contract-id: created and archived for a spent holding; CONTRACT_EVENTS_NOT_FOUND for an unknown or invisible one', async (t) => {
  const events = await post<S['JsGetEventsByContractIdResponse']>('/v2/events/events-by-contract-id', { contractId: s.h1, eventFormat: byInterface(s.alice, HOLDING, true) });
  t.equal(events.created?.createdEvent.contractId, s.h1);
  t.ok((events.created?.createdEvent.offset ?? Infinity) <= s.funded, 'created by the funding');
  t.match(events.created?.createdEvent.interfaceViews?.[0]?.viewValue, { owner: s.alice });
  t.equal(events.archived?.archivedEvent.contractId, s.h1);
  t.equal(events.archived?.archivedEvent.offset, s.sent, 'archived by the transfer');
  t.ok((events.archived?.archivedEvent.implementedInterfaces ?? []).some((id) => /:Splice\.Api\.Token\.HoldingV1:Holding$/.test(id)), 'the archive names the Holding interface');
  const active = await post<S['JsGetEventsByContractIdResponse']>('/v2/events/events-by-contract-id', { contractId: s.change, eventFormat: wildcard(s.alice) });
  t.equal(active.created?.createdEvent.contractId, s.change);
  t.notOk(active.archived, 'an active contract has no archive');
  const unknown = await refusal(post('/v2/events/events-by-contract-id', { contractId: `00${'ab'.repeat(32)}`, eventFormat: wildcard(s.alice) }));
  t.equal(unknown.code, 'CONTRACT_EVENTS_NOT_FOUND');
  const invisible = await refusal(post('/v2/events/events-by-contract-id', { contractId: s.h1, eventFormat: wildcard(s.bob) }));
  t.equal(invisible.code, 'CONTRACT_EVENTS_NOT_FOUND', 'bob is no stakeholder of alice\'s holding');
});

t.test('GET /v2/state/latest-pruned-offsets: nothing pruned', async (t) => {
  const pruned = await get<S['GetLatestPrunedOffsetsResponse']>('/v2/state/latest-pruned-offsets');
  t.equal(pruned.participantPrunedUpToInclusive, 0);
  t.equal(pruned.allDivulgedContractsPrunedUpToInclusive, 0);
});

t.test('external party and interactive submission: generate-topology, allocate, prepare, execute, its completion', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  const fingerprint = '1220' + createHash('sha256').update(Buffer.concat([Buffer.from([0, 0, 0, 12]), raw])).digest('hex');
  const partyHint = hint('carol');
  const topology = await client.generateTopology(s.synchronizerId, raw.toString('base64'), partyHint);
  t.equal(topology.partyId, `${partyHint}::${fingerprint}`, 'the party\'s namespace is its key\'s fingerprint');
  t.equal(topology.publicKeyFingerprint, fingerprint);
  const hashes = await Promise.all(topology.topologyTransactions!.map((tx) => computeSha256CantonHash(11, Buffer.from(tx, 'base64'))));
  const multiHash = Buffer.from(await computeSha256CantonHash(55, await computeMultiHashForTopology(hashes))).toString('base64');
  t.equal(topology.multiHash, multiHash, 'the multi-hash is Canton\'s over the topology transactions');
  t.equal(await client.checkIfPartyExists(topology.partyId), false, 'not allocated yet');
  const allocated = await client.allocateExternalParty(
    s.synchronizerId,
    topology.topologyTransactions!.map((transaction) => ({ transaction })),
    [{ format: 'SIGNATURE_FORMAT_CONCAT', signature: sign(null, Buffer.from(topology.multiHash, 'base64'), privateKey).toString('base64'), signedBy: fingerprint, signingAlgorithmSpec: 'SIGNING_ALGORITHM_SPEC_ED25519' }],
  );
  t.equal(allocated.partyId, topology.partyId);
  t.equal(await client.checkIfPartyExists(topology.partyId), true);
  const carol = topology.partyId;

  const funded = await fund(carol, 'CC', '50');
  const begin = await ledgerEnd();
  const { command, disclosedContracts } = await transferCommand(carol, s.bob, '5', [funded.holdingCid]);
  const prepared = await post<S['JsPrepareSubmissionResponse']>('/v2/interactive-submission/prepare', {
    commands: [command], commandId: `carol-${randomUUID()}`, userId, actAs: [carol], readAs: [], disclosedContracts, synchronizerId: s.synchronizerId, packageIdSelectionPreference: [], verboseHashing: false,
  });
  t.equal(await hashPreparedTransaction(prepared.preparedTransaction!, 'base64'), prepared.preparedTransactionHash, 'the hash is the transaction\'s V2 hash');
  t.equal(await ledgerEnd(), begin, 'preparing commits nothing');
  const submissionId = randomUUID();
  const executed = await post<object>('/v2/interactive-submission/execute', {
    userId, preparedTransaction: prepared.preparedTransaction, hashingSchemeVersion: 'HASHING_SCHEME_VERSION_V2', submissionId, deduplicationPeriod: { Empty: {} },
    partySignatures: { signatures: [{ party: carol, signatures: [{ signature: sign(null, Buffer.from(prepared.preparedTransactionHash, 'base64'), privateKey).toString('base64'), signedBy: fingerprint, format: 'SIGNATURE_FORMAT_CONCAT', signingAlgorithmSpec: 'SIGNING_ALGORITHM_SPEC_ED25519' }] }] },
  });
  t.strictSame(executed, {}, 'execute answers at once, with an empty object');
  const polled = await completionFor(carol, begin, submissionId);
  t.ok(polled, 'the submission completes');
  if (!polled) return;
  // Only now is the package's poller safe: it re-asks without pause until it finds the completion.
  const completion = await awaitCompletion(client, begin, carol, userId, submissionId);
  t.equal(completion.submissionId, submissionId);
  t.equal(completion.status?.code ?? 0, 0, 'succeeded');
  t.ok(completion.offset > begin, 'committed');
  const holdings = createdEvents(await post<ActiveContract[]>('/v2/state/active-contracts', { eventFormat: byInterface(carol, HOLDING, false), activeAtOffset: completion.offset }));
  t.strictSame(holdings.map((e) => norm((e.interfaceViews?.[0]?.viewValue as { amount: string }).amount)).sort(), ['45', '5'], 'the change and the locked 5');
});

t.test('"every sandbox ledger and registry answer validated against the pinned OpenAPI documents": each one these packages were given', async (t) => {
  t.ok(sandbox.exchanges.length > 0, 'the packages reached the sandbox through the recording proxies');
  holdToDocuments(t, sandbox.exchanges);
});
