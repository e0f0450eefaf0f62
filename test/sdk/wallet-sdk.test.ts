// '@bestex/sdk/wallet-sdk' over the service and its sandbox, as a partner's backend uses it: Canton's
// wallet-sdk 1.4 on the sandbox participant allocates the taker (a participant-hosted party, or an
// external one with its own key), the service plans, and `execute` runs the plan through
// walletSdkProvider to its end; and signMessage, for a venue's sign-in challenge, by the external
// party's own key (checked against Canton's own signing library) and refused for a party its
// participant hosts. Nothing is mocked: the participant, the registries and the venue are the
// sandbox's.
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import t from 'tap';
import { signMessage, verifySignedTxHash } from '@canton-network/core-signing-lib';
import { CustomLogAdapter, SDK, signTransactionHash } from '@canton-network/wallet-sdk';
import { createClient, execute, memoryStorage, type AppPlan, type ExecutionStatus, type TxChangedEvent } from '@bestex/sdk';
import { walletSdkProvider, type SigningRequest } from '@bestex/sdk/wallet-sdk';
import { Decimal } from '../../core/decimal.js';
import { COLLECTING, listen, testApp } from '../helpers/app.js';
import { externalParties, hint } from '../helpers/canton.js';
import { spendable } from '../helpers/ledger.js';

const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1' } });
t.teardown(app.close);
const client = createClient({ baseUrl: await listen(app.server) });
const sandbox = app.sandbox!;
const { manifest, ledgerToken } = sandbox;
const auth = { method: 'static', token: ledgerToken } as const;
const quiet = new CustomLogAdapter(() => {});
const sdk = await SDK.create({ auth, ledgerClientUrl: manifest.ledger, logAdapter: quiet });

// The token registries by instrument admin, as the sandbox's manifest names them.
const { registries } = manifest;

async function fund(party: string, amount: string, token = 'CC', ledger = manifest.ledger, bearer = ledgerToken): Promise<void> {
  const response = await fetch(new URL('/sandbox/v1/fund', ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party, token, amount }),
  });
  if (response.status !== 200) throw new Error(`the faucet refused: ${response.status} ${await response.text()}`);
}

let plans = 0;
const planFor = async (party: string) =>
  (await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `wallet-sdk-${process.pid}-${++plans}` })) as AppPlan;

/** The tests' external parties, onboarded through wallet-sdk together, each with a key of its own. */
const externalParty = externalParties(sdk, ['wsdk-external', 'wsdk-declines', 'wsdk-sign', 'wsdk-sign-fn']);

/** What the provider tells its txChanged listeners, from now on. */
function recordEvents(provider: ReturnType<typeof walletSdkProvider>) {
  const events: TxChangedEvent[] = [];
  provider.on('txChanged', (event: TxChangedEvent) => void events.push(event));
  return events;
}

const statusesOf = () => {
  const statuses: ExecutionStatus[] = [];
  return { statuses, hooks: { onStatus: (status: ExecutionStatus) => void statuses.push(status) } };
};

const balance = (party: string, instrument: string) => spendable(sandbox.ledger, party, instrument).toFixed();
const depositsBy = (party: string) => sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).filter((tx) => tx.actAs.includes(party)).length;

t.test('an internal party: allocated and funded, its plan executed through walletSdkProvider (submit-and-wait) to COMPLETED; the same plan again is the ledger\'s DUPLICATE_COMMAND, tracked, not a second swap', { timeout: 90_000 }, async (t) => {
  const party = await sdk.party.internal.allocate({ partyHint: hint('wsdk-internal') });
  await fund(party, '1000');
  const provider = walletSdkProvider({ sdk, party });
  t.match(await provider.request({ method: 'getPrimaryAccount' }), { partyId: party, primary: true, status: 'allocated', hint: party.split('::')[0], namespace: party.split('::')[1], signingProviderId: 'participant', networkId: /\S/ });
  t.strictSame(await provider.request({ method: 'listAccounts' }), [await provider.request({ method: 'getPrimaryAccount' })]);
  const events = recordEvents(provider);
  const plan = await planFor(party);
  const { statuses, hooks } = statusesOf();
  const result = await execute(plan, { provider, client, hooks, registries });
  t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220/, submittedUpdateId: /^1220/, error: null, outcome: { status: 'completed', agrees: true } });
  t.strictSame(statuses, ['SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.strictSame(events.map((e) => [e.status, e.commandId]), [['pending', plan.planId], ['executed', plan.planId]], 'an internal party is never asked to sign');
  const executed = events[1] as TxChangedEvent & { status: 'executed' };
  t.equal(executed.payload.updateId, result.submittedUpdateId, 'the update the wallet reports is the one execute tracked');
  t.equal(sandbox.ledger.transactionById(result.submittedUpdateId!)?.commandId, plan.planId, 'submitted under commandId = planId');
  t.strictSame(sandbox.ledger.transactionById(result.submittedUpdateId!)?.actAs, [party]);
  t.equal(balance(party, 'Amulet'), '900');
  t.equal(balance(party, 'USDCx'), result.received, 'what was received is what the party holds');
  t.ok(new Decimal(result.received!).gte(plan.quoteRef.minReceive), 'at least the floor');

  const deposits = depositsBy(party);
  const again = await execute(plan, { provider, client, storage: memoryStorage(), registries });
  t.match(again, { status: 'COMPLETED', depositUpdateId: result.depositUpdateId }, 'the earlier submission is found and followed');
  t.equal(depositsBy(party), deposits, 'nothing more committed for the party');
  t.match(events.at(-1), { status: 'failed', commandId: plan.planId });
  t.equal(balance(party, 'Amulet'), '900', 'one swap, not two');
});

t.test('an external party: onboarded with its own key, its plan prepared, signed by the signer and executed to COMPLETED; a signing function (an HSM\'s) does the same', { timeout: 120_000 }, async (t) => {
  const { partyId: party, fingerprint, keys } = await externalParty('wsdk-external');
  await fund(party, '1000');
  const provider = walletSdkProvider({ sdk, party, signer: { privateKey: keys.privateKey } });
  t.match(await provider.request({ method: 'getPrimaryAccount' }), { partyId: party, namespace: fingerprint, publicKey: keys.publicKey, signingProviderId: 'wallet-sdk' });
  const events = recordEvents(provider);
  const plan = await planFor(party);
  const { statuses, hooks } = statusesOf();
  const result = await execute(plan, { provider, client, hooks, registries });
  t.match(result, { status: 'COMPLETED', party, depositUpdateId: /^1220/, error: null, outcome: { status: 'completed', agrees: true } });
  t.strictSame(statuses, ['SUBMITTING', 'INITIATED', 'COMPLETED']);
  t.strictSame(events.map((e) => e.status), ['pending', 'signed', 'executed']);
  t.match(events[1], { status: 'signed', commandId: plan.planId, payload: { signedBy: fingerprint, party, signature: /^[A-Za-z0-9+/]{86}==$/ } });
  t.equal(sandbox.ledger.transactionById(result.submittedUpdateId!)?.commandId, plan.planId);
  t.equal(balance(party, 'Amulet'), '900');
  t.equal(balance(party, 'USDCx'), result.received);

  const asked: Array<{ hash: string; request: SigningRequest }> = [];
  const hsm = walletSdkProvider({
    sdk,
    party,
    signer: async (hash, request) => {
      asked.push({ hash, request });
      return signTransactionHash(hash, keys.privateKey);
    },
  });
  const second = await planFor(party);
  const viaHsm = await execute(second, { provider: hsm, client, registries });
  t.match(viaHsm, { status: 'COMPLETED', error: null });
  t.equal(asked.length, 1, 'asked to sign once');
  t.match(asked[0]!.request, { commandId: second.planId, party });
  t.equal((await sdk.utils.hash.preparedTransaction(asked[0]!.request.preparedTransaction)).toBase64(), asked[0]!.hash, 'the hash given to sign is the given transaction\'s');
  t.equal(balance(party, 'Amulet'), '800');
});

t.test('an external party whose signer throws: USER_REJECTED, nothing on the ledger by the party, its holdings unchanged', { timeout: 90_000 }, async (t) => {
  const { partyId: party } = await externalParty('wsdk-declines');
  await fund(party, '1000');
  const provider = walletSdkProvider({
    sdk,
    party,
    signer: async () => {
      throw new Error('declined on the device');
    },
  });
  const events = recordEvents(provider);
  const plan = await planFor(party);
  const end = sandbox.ledger.ledgerEnd;
  const holdings = sandbox.ledger.activeHoldings(party).map((h) => h.contractId).sort();
  const { statuses, hooks } = statusesOf();
  const result = await execute(plan, { provider, client, hooks, registries });
  t.match(result, { status: 'USER_REJECTED', depositUpdateId: null, submittedUpdateId: null, error: { name: 'BestexError', code: 'user_rejected', cause: { code: 4001, message: /declined on the device/ } } });
  t.strictSame(statuses, ['SUBMITTING', 'USER_REJECTED']);
  t.strictSame(events.map((e) => [e.status, e.commandId]), [['pending', plan.planId], ['failed', plan.planId]]);
  t.strictSame(sandbox.ledger.transactions(end, sandbox.ledger.ledgerEnd).filter((tx) => tx.actAs.includes(party) || tx.commandId === plan.planId), [], 'nothing by the party since');
  t.strictSame(sandbox.ledger.activeHoldings(party).map((h) => h.contractId).sort(), holdings, 'the same holdings');
  t.equal(balance(party, 'Amulet'), '1000');
});

t.test('the provider\'s own answers: ledgerApi reaches the participant through the sdk\'s connection; refusals, unknown methods, other parties and a lost participant are EIP-1193 errors', { timeout: 60_000 }, async (t) => {
  const party = await sdk.party.internal.allocate({ partyHint: hint('wsdk-answers') });
  const provider = walletSdkProvider({ sdk, party });
  const ledgerApi = (params: Record<string, unknown>) => provider.request({ method: 'ledgerApi', params });
  t.strictSame(await ledgerApi({ requestMethod: 'get', resource: '/v2/state/ledger-end' }), { offset: await sdk.ledger.ledgerEnd() });
  t.match(await ledgerApi({ requestMethod: 'get', resource: '/v2/parties/participant-id' }), { participantId: /::/ });
  t.match(await ledgerApi({ requestMethod: 'get', resource: `/v2/parties/${encodeURIComponent(party)}` }), { partyDetails: [{ party }] });
  const end = await sdk.ledger.ledgerEnd();
  const updates = { beginExclusive: 0, endInclusive: end, updateFormat: { includeTransactions: { eventFormat: { filtersByParty: { [party]: {} }, verbose: false }, transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' } } };
  t.strictSame(await ledgerApi({ requestMethod: 'post', resource: '/v2/updates?limit=5', body: updates }), await ledgerApi({ requestMethod: 'post', resource: '/v2/updates', body: updates, query: { limit: '5' } }), 'a query in the resource is the same query');

  const unknownContract = { contractId: `00${'cd'.repeat(32)}`, eventFormat: { filtersByParty: { [party]: {} }, verbose: false } };
  await t.rejects(ledgerApi({ requestMethod: 'post', resource: '/v2/events/events-by-contract-id', body: unknownContract }), { name: 'ProviderRpcError', code: -32003, data: { ledgerCode: /^[A-Z_]+$/ }, message: /^the ledger refused POST \/v2\/events\/events-by-contract-id: .+ \([A-Z_]+\)$/ }, 'the participant\'s JsCantonError, its code kept');

  const bogus = { ExerciseCommand: { templateId: '#splice-api-token-transfer-instruction-v1:Splice.Api.Token.TransferInstructionV1:TransferFactory', contractId: `00${'ab'.repeat(32)}`, choice: 'TransferFactory_Transfer', choiceArgument: {} } };
  const events = recordEvents(provider);
  await t.rejects(provider.request({ method: 'prepareExecuteAndWait', params: { commands: [bogus], commandId: 'wsdk-bogus', actAs: [party], readAs: [party], disclosedContracts: [] } }), { code: -32003, data: { ledgerCode: /^[A-Z_]+$/ }, message: /the ledger refused submitting wsdk-bogus: .* \([A-Z_]+\)/ });
  t.strictSame(events.map((e) => e.status), ['pending', 'failed']);
  t.equal(await provider.request({ method: 'prepareExecute', params: { commands: [bogus], commandId: 'wsdk-bogus-2', actAs: [party] } }).catch((err: { code: number }) => err.code), -32003, 'prepareExecute refuses the same way');
  await t.rejects(provider.request({ method: 'prepareExecuteAndWait', params: { commands: [bogus], commandId: 'wsdk-other', actAs: [`someone-else::1220${'0'.repeat(64)}`] } }), { code: 4100, message: /acts for .* only/ });
  await t.rejects(provider.request({ method: 'prepareExecuteAndWait', params: { commandId: 'wsdk-empty' } }), { code: -32602 });
  await t.rejects(provider.request({ method: 'getActiveNetwork' }), { code: -32601, message: /getActiveNetwork/ });
  t.throws(() => walletSdkProvider({ sdk, party, signer: { privateKey: 'bm90IGEga2V5' } }), /64 bytes/);

  // The sdk's participant reached through a forwarder that then goes away: the connection is refused.
  const sockets = new Set<Socket>();
  const target = new URL(manifest.ledger);
  const forwarder: Server = createServer((inbound) => {
    sockets.add(inbound);
    const outbound = connect(Number(target.port), target.hostname);
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
    inbound.on('close', () => sockets.delete(inbound));
  });
  await new Promise<void>((resolve) => forwarder.listen(0, '127.0.0.1', resolve));
  const port = (forwarder.address() as { port: number }).port;
  const far = await SDK.create({ auth, ledgerClientUrl: `http://127.0.0.1:${port}`, logAdapter: quiet });
  const lost = walletSdkProvider({ sdk: far, party });
  t.match(await lost.request({ method: 'ledgerApi', params: { requestMethod: 'get', resource: '/v2/state/ledger-end' } }), { offset: Number });
  await new Promise<void>((resolve) => {
    forwarder.close(() => resolve());
    for (const socket of sockets) socket.destroy();
  });
  await t.rejects(lost.request({ method: 'ledgerApi', params: { requestMethod: 'get', resource: '/v2/state/ledger-end' } }), { code: 4900, message: /cannot be reached/ });
  await t.rejects(lost.request({ method: 'prepareExecuteAndWait', params: { commands: [bogus], commandId: 'wsdk-lost', actAs: [party] } }), { code: 4900 });
});

/** A service collecting fees on its own sandbox, its client, and wallet-sdk on that sandbox's participant. */
async function collectingService(t: { teardown(fn: () => unknown): void }) {
  const collecting = await testApp({ env: { ...COLLECTING, QUOTE_CACHE_TTL_MS: '1' } });
  t.teardown(collecting.close);
  const feeClient = createClient({ baseUrl: await listen(collecting.server) });
  const { manifest: feeManifest, ledgerToken: feeToken, ledger } = collecting.sandbox!;
  const feeSdk = await SDK.create({ auth: { method: 'static', token: feeToken }, ledgerClientUrl: feeManifest.ledger, logAdapter: quiet });
  return { feeClient, feeManifest, feeToken, ledger, feeSdk };
}

t.test('"SLIPPAGE_FAILED with fees on, through wallet-sdk: the escrow returned": the deposit and its fee leg come back whole', { timeout: 90_000 }, async (t) => {
  const { feeClient, feeManifest, feeToken, ledger, feeSdk } = await collectingService(t);
  const party = await feeSdk.party.internal.allocate({ partyHint: hint('wsdk-fees') });
  await fund(party, '1000', 'CC', feeManifest.ledger, feeToken);
  await fund(party, '5', 'USDCx', feeManifest.ledger, feeToken);
  const plan = (await feeClient.plan({ from: 'CC', to: 'USDCx', amount: '200', venueId: 'tradecraft', takerParty: party, idempotencyKey: `wallet-sdk-fees-${process.pid}` })) as AppPlan;
  t.ok(plan.collectsFees && plan.steps.length > 1, 'the plan collects a fee');
  // The pool's price falls 3 % between the quote and the deposit: it cannot pay the floor.
  const moved = await fetch(new URL('/sandbox/v1/move', feeManifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${feeToken}` }, body: JSON.stringify({ pair: 'CC/USDCx', bps: -300 }) });
  t.equal(moved.status, 200);
  const result = await execute(plan, { provider: walletSdkProvider({ sdk: feeSdk, party }), registries: feeManifest.registries });
  t.match(result, { status: 'SLIPPAGE_FAILED', fees: { included: true, released: false } });
  t.equal(spendable(ledger, party, 'USDCx').toFixed(), '5', 'the fee escrow is back');
  t.equal(spendable(ledger, party, 'Amulet').toFixed(), '1000', 'and the deposit');
});

t.test('an external party\'s fee-collecting plan through wallet-sdk: its CIP-0112 batch prepared on the participant, signed by the signer, executed to COMPLETED with the fee leg in the deposit\'s transaction', { timeout: 90_000 }, async (t) => {
  const { feeClient, feeManifest, feeToken, ledger, feeSdk } = await collectingService(t);
  const keys = feeSdk.keys.generate();
  const { partyId: party } = await feeSdk.party.external.create(keys.publicKey, { partyHint: hint('wsdk-ext-fees') }).sign(keys.privateKey).execute();
  await fund(party, '1000', 'CC', feeManifest.ledger, feeToken);
  await fund(party, '5', 'USDCx', feeManifest.ledger, feeToken);
  const plan = (await feeClient.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `wallet-sdk-ext-fees-${process.pid}` })) as AppPlan;
  t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'b2c-fee-transfer']);
  const signed: Array<{ hash: string; request: SigningRequest }> = [];
  const provider = walletSdkProvider({ sdk: feeSdk, party, signer: async (hash, request) => (signed.push({ hash, request }), signTransactionHash(hash, keys.privateKey)) });
  const result = await execute(plan, { provider, client: feeClient, registries: feeManifest.registries });
  t.match(result, { status: 'COMPLETED', fees: { included: true, released: true }, outcome: { agrees: true }, error: null });
  t.equal(signed.length, 1, 'one transaction signed');
  t.equal((await feeSdk.utils.hash.preparedTransaction(signed[0]!.request.preparedTransaction)).toBase64(), signed[0]!.hash, 'the prepared batch hashes, as wallet-sdk hashes it, to the hash signed');
  const tx = ledger.transactionById(result.submittedUpdateId!)!;
  t.match(tx.events.map((e) => (e.kind === 'exercised' ? e.choice : e.templateId.split(':').pop())), ['BatchingUtility', 'BatchingUtility_ExecuteBatch', 'TransferFactory_Transfer'], 'the utility, its ExecuteBatch, the deposit\'s transfer first');
  t.equal(tx.events.filter((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction')).length, 2, 'the deposit and its fee leg, in one transaction');
  t.equal(spendable(ledger, party, 'USDCx').toFixed(), new Decimal(5).minus(plan.steps[1]!.amount).plus(result.received!).toFixed());
});

t.test('"a dropped connection after submitting is tracked to its real end": the participant commits, the answer never reaches wallet-sdk, the swap still ends COMPLETED', { timeout: 90_000 }, async (t) => {
  // Between wallet-sdk and the participant: everything passes, but the submission's answer is cut off after the participant committed it.
  const dropper = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const name of ['authorization', 'content-type']) if (typeof request.headers[name] === 'string') headers[name] = request.headers[name];
      void fetch(`${manifest.ledger}${request.url}`, { method: request.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined }).then(async (answer) => {
        const text = await answer.text();
        if (request.url?.startsWith('/v2/commands/submit-and-wait')) {
          response.socket?.destroy();
          return;
        }
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(text);
      });
    });
  });
  await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    dropper.close(() => resolve());
    dropper.closeAllConnections();
  }));
  const droppingSdk = await SDK.create({ auth, ledgerClientUrl: `http://127.0.0.1:${(dropper.address() as AddressInfo).port}`, logAdapter: quiet });
  const party = await sdk.party.internal.allocate({ partyHint: hint('wsdk-dropped') });
  await fund(party, '1000');
  const plan = await planFor(party);
  const { statuses, hooks } = statusesOf();
  const provider = walletSdkProvider({ sdk: droppingSdk, party });
  const events = recordEvents(provider);
  const result = await execute(plan, { provider, registries, hooks });
  t.ok(events.some((e) => e.status === 'failed' && e.commandId === plan.planId) && !events.some((e) => e.status === 'executed'), 'the wallet lost the answer: it reported the submission failed');
  t.match(result, { status: 'COMPLETED', depositUpdateId: /^1220/ }, 'tracked on the ledger to its end');
  t.ok(statuses.includes('INITIATED'), 'the deposit was found on the ledger though the wallet never heard back');
  t.equal(depositsBy(party), 1, 'submitted once');
});

/** Whether `signature` (base64) is an Ed25519 signature of `message`'s UTF-8 bytes by `publicKey` (base64, raw 32 bytes), as Canton's signing library verifies one. */
const signedBy = (publicKey: string, message: string, signature: string) => verifySignedTxHash(Buffer.from(message, 'utf8').toString('base64'), publicKey, signature);

const CHALLENGE = 'OneSwap wallet authentication\nParty: someone\nNonce: 00ff\nIssued at: 2026-01-01T00:00:00.000Z';

t.test('"wallet-sdk with an external party signs with its own key": signMessage answers what Canton\'s signMessage gives for the same key, verifying under the account\'s publicKey', { timeout: 60_000 }, async (t) => {
  const { partyId, keys } = await externalParty('wsdk-sign');
  const provider = walletSdkProvider({ sdk, party: partyId, signer: { privateKey: keys.privateKey } });
  const account = (await provider.request({ method: 'getPrimaryAccount' })) as { publicKey: string; signingProviderId: string };
  t.equal(account.publicKey, keys.publicKey, 'the account shows the party\'s own key');
  const { signature } = (await provider.request({ method: 'signMessage', params: { message: CHALLENGE } })) as { signature: string };
  t.equal(signature, signMessage(CHALLENGE, keys.privateKey), 'Ed25519 over the UTF-8 bytes, as @canton-network/core-signing-lib signs');
  t.ok(signedBy(account.publicKey, CHALLENGE, signature), 'verifies under the account\'s publicKey');
  t.notOk(signedBy(account.publicKey, `${CHALLENGE}.`, signature), 'and under no other message');
});

t.test('an external party whose signer is a function (an HSM\'s) signs a message with messageSigner, under the publicKey given; without one, signMessage is refused (4200) saying what to give', { timeout: 60_000 }, async (t) => {
  const { partyId, keys } = await externalParty('wsdk-sign-fn');
  const asked: string[] = [];
  const hsm = walletSdkProvider({
    sdk,
    party: partyId,
    signer: async (hash) => signTransactionHash(hash, keys.privateKey),
    publicKey: keys.publicKey,
    messageSigner: async (message) => (asked.push(message), signMessage(message, keys.privateKey)),
  });
  t.match(await hsm.request({ method: 'getPrimaryAccount' }), { publicKey: keys.publicKey });
  const { signature } = (await hsm.request({ method: 'signMessage', params: { message: CHALLENGE } })) as { signature: string };
  t.strictSame(asked, [CHALLENGE], 'the message itself, to the messageSigner');
  t.ok(signedBy(keys.publicKey, CHALLENGE, signature));

  const declining = walletSdkProvider({ sdk, party: partyId, signer: async (hash) => signTransactionHash(hash, keys.privateKey), publicKey: keys.publicKey, messageSigner: async () => Promise.reject(new Error('not today')) });
  await t.rejects(declining.request({ method: 'signMessage', params: { message: CHALLENGE } }), { code: 4001, message: /declined to sign the message: not today/ }, 'a messageSigner that throws declines');

  const hashesOnly = walletSdkProvider({ sdk, party: partyId, signer: async (hash) => signTransactionHash(hash, keys.privateKey) });
  await t.rejects(hashesOnly.request({ method: 'signMessage', params: { message: CHALLENGE } }), { code: 4200, message: /signs transaction hashes only; give walletSdkProvider messageSigner and publicKey/ });
  t.throws(() => walletSdkProvider({ sdk, party: partyId, signer: { privateKey: keys.privateKey }, publicKey: sdk.keys.generate().publicKey }), /publicKey is not the public half of signer.privateKey/);
});

t.test('"a participant-hosted party cannot sign": its account shows no publicKey and signMessage is refused (4200) in words saying why, nothing signed', { timeout: 60_000 }, async (t) => {
  const party = await sdk.party.internal.allocate({ partyHint: hint('wsdk-no-sign') });
  const provider = walletSdkProvider({ sdk, party });
  t.match(await provider.request({ method: 'getPrimaryAccount' }), { publicKey: '', signingProviderId: 'participant' });
  await t.rejects(provider.request({ method: 'signMessage', params: { message: CHALLENGE } }), {
    code: 4200,
    message: /cannot sign a message: its party is hosted by its participant, which signs its transactions, and has no key of its own/,
  });
  t.throws(() => walletSdkProvider({ sdk, party, messageSigner: async () => 'x' }), /a participant-hosted party has no key to sign with/);
});
