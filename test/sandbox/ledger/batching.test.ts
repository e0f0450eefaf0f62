// The sandbox participant's CIP-0112 batching utility (sandbox/ledger/batching-utility.ts): a
// deposit and its fee legs as one CreateAndExerciseCommand of Splice's BatchingUtility_ExecuteBatch,
// run as the module's Daml runs it, and a participant started without the package.
import { hashPreparedTransaction } from '@canton-network/core-tx-visualizer';
import t from 'tap';
import { Decimal } from '../../../core/decimal.js';
import { REASON_KEY } from '../../../core/ledger/token-standard.js';
import { holdingMapFromTransferV1, mergeHoldingMaps, takeHoldings, type HoldingMap } from '../../../sandbox/ledger/batching-utility.js';
import { createdEventBlob } from '../../../sandbox/ledger/event-format.js';
import { decodePrepared } from '../../../sandbox/ledger/prepared-transaction.js';
import { SYNCHRONIZER_ID } from '../../../sandbox/ledger/routes/context.js';
import { SANDBOX_POOL_PARTIES } from '../../../sandbox/venues/market.js';
import { startSandbox, type Sandbox } from '../../../sandbox/sandbox.js';
import { SANDBOX_INSTRUMENT_ADMINS } from '../../../sandbox/venues/wire.js';
import { spendable } from '../../helpers/ledger.js';
import { loadOfficialOpenApi, validateAnswer } from '../../helpers/official-openapi.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const TEMPLATE = '#splice-util-token-standard-wallet:Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility';
const CC_ADMIN = SANDBOX_INSTRUMENT_ADMINS.Amulet;
const USD_ADMIN = SANDBOX_INSTRUMENT_ADMINS.USDCx;
const POOL = SANDBOX_POOL_PARTIES['CC/USDCx']!;
const FEE_A = `bestex-fees::1220${'e'.repeat(64)}`;
const FEE_B = `bestex-partner::1220${'f'.repeat(64)}`;
const LEDGER_DOC = loadOfficialOpenApi('ledger');

let takers = 0;
const newTaker = () => `taker-${(takers += 1)}::1220${'c'.repeat(64)}`;

async function sandboxFor(t: Test, batchingUtility?: boolean) {
  const sandbox = await startSandbox({ venuesPort: 0, ledgerHost: '127.0.0.1', ledgerPort: 0, ...(batchingUtility === undefined ? {} : { batchingUtility }) });
  t.teardown(() => sandbox.close());
  return sandbox;
}

/** A ledger call whose answer, when the pinned document describes it, must hold to it. */
async function call(t: Test, sandbox: Sandbox, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${sandbox.manifest.ledger}${path}`, { method, headers: { authorization: `Bearer ${sandbox.ledgerToken}` }, body: body === undefined ? undefined : JSON.stringify(body) });
  const contentType = response.headers.get('content-type') ?? '';
  const answer = { status: response.status, body: contentType.startsWith('application/json') ? await response.json() : await response.text() };
  if (!path.startsWith('/sandbox/')) {
    const verdict = validateAnswer(LEDGER_DOC, { method, path: path.split('?')[0]!, status: answer.status, body: answer.body, contentType });
    t.ok(verdict.ok, `${method} ${path.split('?')[0]} -> ${answer.status} holds to the pinned JSON Ledger API document${verdict.ok ? '' : `: ${verdict.errors}`}`);
  }
  return answer;
}

/** `party` funded with exactly one holding of `amount` of each instrument given. */
async function funded(t: Test, sandbox: Sandbox, party: string, amounts: Record<string, string>): Promise<Record<string, string>> {
  const cids: Record<string, string> = {};
  for (const [token, amount] of Object.entries(amounts)) cids[token] = (await call(t, sandbox, 'POST', '/sandbox/v1/fund', { party, token, amount })).body.holdingCid;
  return cids;
}

const basic = (owner: string) => ({ provider: null, id: null, owner });

function transferArg(admin: string, instrument: string, sender: string, receiver: string, amount: string, memo: string) {
  return {
    expectedAdmin: admin,
    transfer: {
      sender, receiver, amount, instrumentId: { admin, id: instrument }, requestedAt: new Date(Date.now() - 60_000).toISOString(),
      executeBefore: new Date(Date.now() + 90_000).toISOString(), inputHoldingCids: [], meta: { values: { [REASON_KEY]: memo } },
    },
    extraArgs: { context: { values: {} }, meta: { values: {} } },
  };
}

/** The SDK's batch: the deposit of `give` CC to the pool with `floor`, then USDCx fee legs, all threaded from one holding of each. */
function batchCommand(sandbox: Sandbox, taker: string, holdings: { CC: string; USDCx: string }, give: string, floor: string, legs: ReadonlyArray<[string, string]>) {
  const action = (admin: string, arg: unknown) => ({ tag: 'TSA_TransferFactory_TransferV1', value: { cid: sandbox.ledger.factories.get(admin)!, arg } });
  return {
    CreateAndExerciseCommand: {
      templateId: TEMPLATE,
      createArguments: { user: taker },
      choice: 'BatchingUtility_ExecuteBatch',
      choiceArgument: {
        inputHoldingMap: { byAdminAndAccount: [[{ admin: CC_ADMIN, account: basic(taker) }, { Amulet: [holdings.CC] }], [{ admin: USD_ADMIN, account: basic(taker) }, { USDCx: [holdings.USDCx] }]] },
        actions: [
          action(CC_ADMIN, transferArg(CC_ADMIN, 'Amulet', taker, POOL, give, floor)),
          ...legs.map(([receiver, amount]) => action(USD_ADMIN, transferArg(USD_ADMIN, 'USDCx', taker, receiver, amount, 'fee'))),
        ],
        archiveAfterExecution: true,
      },
    },
  };
}

function disclosed(sandbox: Sandbox) {
  return [CC_ADMIN, USD_ADMIN].map((admin) => {
    const factory = sandbox.ledger.contract(sandbox.ledger.factories.get(admin)!)!.created;
    return { templateId: factory.templateId, contractId: factory.contractId, createdEventBlob: createdEventBlob(factory), synchronizerId: SYNCHRONIZER_ID };
  });
}

const commands = (sandbox: Sandbox, taker: string, command: unknown, commandId = `plan-${taker}`) => ({ commands: [command], commandId, actAs: [taker], disclosedContracts: disclosed(sandbox) });
const ledgerEffects = (party: string, cumulative: unknown[] = [{ identifierFilter: { WildcardFilter: { value: {} } } }]) => ({
  eventFormat: { filtersByParty: { [party]: { cumulative } }, verbose: true }, transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS',
});

/** The direct children of the node at `index` of a pre-order event list. */
function childrenOf(events: any[], index: number): any[] {
  const node = Object.values(events[index])[0] as any;
  const out: any[] = [];
  for (let i = index + 1; i < events.length && (Object.values(events[i])[0] as any).nodeId <= node.lastDescendantNodeId;) {
    const child = Object.values(events[i])[0] as any;
    out.push(events[i]);
    const last = child.lastDescendantNodeId ?? child.nodeId;
    i = events.findIndex((e) => (Object.values(e)[0] as any).nodeId === last) + 1;
  }
  return out;
}

const activeIds = (sandbox: Sandbox) => sandbox.ledger.activeContracts().map((c) => c.contractId).sort();

// The holding map's functions against results worked out by hand from BatchingUtilityV2.daml:
// getHoldingsForInstrument (Map.insert the key with the instrument TextMap.delete'd), holdingMapMerge
// (Map.merge, a shared key's TextMaps united with (++), the first map's list first, empty TextMaps
// dropped), holdingMapFromTransferV1 (holdingMapFromList of the sender's change and, when Completed,
// the receiver's holdings, each under basicAccount), and Map's order: ScopedAccount by admin, then
// Account by provider, id, owner, with None before Some.
const party = (name: string) => `${name}::1220${'d'.repeat(64)}`;
const cid = (n: number) => `00${n.toString(16).padStart(64, '0')}`;
const ADMIN_A = party('admin-a');
const ADMIN_B = party('admin-b');
const AMY = party('amy');
const ZED = party('zed');

t.test('"getHoldingsForInstrument": the instrument\'s holdings taken out of its scoped account; the account\'s other instruments stay in its TextMap', async (t) => {
  const shared: HoldingMap = [[{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(1), cid(2)], TokenY: [cid(3)] }], [{ admin: ADMIN_B, account: basic(AMY) }, { TokenX: [cid(4)] }]];
  t.strictSame(takeHoldings(shared, basic(AMY), { admin: ADMIN_A, id: 'TokenX' }), {
    inputs: [cid(1), cid(2)],
    rest: [[{ admin: ADMIN_A, account: basic(AMY) }, { TokenY: [cid(3)] }], [{ admin: ADMIN_B, account: basic(AMY) }, { TokenX: [cid(4)] }]],
  }, 'two instruments of one admin: TokenX taken, TokenY left; the same id under another admin untouched');
  t.strictSame(takeHoldings(shared, basic(AMY), { admin: ADMIN_A, id: 'TokenY' }).rest[0], [{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(1), cid(2)] }]);
  t.strictSame(takeHoldings([[{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(1)] }]], basic(AMY), { admin: ADMIN_A, id: 'TokenX' }), {
    inputs: [cid(1)], rest: [[{ admin: ADMIN_A, account: basic(AMY) }, {}]],
  }, 'the last instrument taken: Map.insert leaves the key with an empty TextMap (the next merge drops it)');
  t.strictSame(takeHoldings(shared, basic(AMY), { admin: ADMIN_A, id: 'TokenZ' }), { inputs: [], rest: shared }, 'an instrument the account does not hold: no inputs, the map as it was');
  t.strictSame(takeHoldings(shared, basic(ZED), { admin: ADMIN_A, id: 'TokenX' }), { inputs: [], rest: shared }, 'an account the map does not have: no inputs, the map as it was');
});

t.test('"holdingMapMerge": a key both maps have gets its TextMaps united, a shared instrument\'s lists concatenated new first; empty TextMaps dropped; keys in Daml\'s order', async (t) => {
  const fresh: HoldingMap = [[{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(10)] }]];
  const old: HoldingMap = [[{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(1), cid(2)], TokenY: [cid(3)] }], [{ admin: ADMIN_A, account: basic(ZED) }, {}]];
  t.strictSame(mergeHoldingMaps(fresh, old), [[{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(10), cid(1), cid(2)], TokenY: [cid(3)] }]], 'TokenX: the new change, then the old holdings; ZED\'s empty TextMap dropped');
  t.strictSame(mergeHoldingMaps(old, fresh)[0]![1].TokenX, [cid(1), cid(2), cid(10)], 'the other way round: the first map\'s list first');
  const provided = { provider: party('bank'), id: null, owner: AMY };
  const named = { provider: null, id: 'savings', owner: AMY };
  const merged = mergeHoldingMaps(
    [[{ admin: ADMIN_B, account: basic(AMY) }, { TokenX: [cid(5)] }], [{ admin: ADMIN_A, account: provided }, { TokenX: [cid(6)] }], [{ admin: ADMIN_A, account: named }, { TokenX: [cid(8)] }]],
    [[{ admin: ADMIN_A, account: basic(ZED) }, { TokenX: [cid(7)] }]],
  );
  t.strictSame(merged.map(([key]) => key), [
    { admin: ADMIN_A, account: basic(ZED) },
    { admin: ADMIN_A, account: named },
    { admin: ADMIN_A, account: provided },
    { admin: ADMIN_B, account: basic(AMY) },
  ], 'admin first ("admin-a" before "admin-b"); then provider None before Some, whatever the owners ("zed" with none before "amy" with a provider); then id None before Some');
});

t.test('"holdingMapFromTransferV1": the sender\'s change under its basic account, and the receiver\'s holdings only when the transfer Completed', async (t) => {
  const transfer = { sender: ZED, receiver: AMY, instrumentId: { admin: ADMIN_A, id: 'TokenX' } };
  t.strictSame(holdingMapFromTransferV1(transfer, { output: { tag: 'TransferInstructionResult_Completed', value: { receiverHoldingCids: [cid(2)] } }, senderChangeCids: [cid(1)] }), [
    [{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [cid(2)] }],
    [{ admin: ADMIN_A, account: basic(ZED) }, { TokenX: [cid(1)] }],
  ], 'Completed: both, the receiver AMY\'s key before the sender ZED\'s');
  t.strictSame(holdingMapFromTransferV1(transfer, { output: { tag: 'TransferInstructionResult_Pending', value: { transferInstructionCid: cid(3) } }, senderChangeCids: [cid(1)] }), [
    [{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [] }],
    [{ admin: ADMIN_A, account: basic(ZED) }, { TokenX: [cid(1)] }],
  ], 'Pending: the receiver\'s entry holds an empty list (a TextMap with a key is not null, so holdingMapFromList keeps it)');
  t.strictSame(holdingMapFromTransferV1(transfer, { output: { tag: 'TransferInstructionResult_Failed', value: {} }, senderChangeCids: [] }), [
    [{ admin: ADMIN_A, account: basic(AMY) }, { TokenX: [] }],
    [{ admin: ADMIN_A, account: basic(ZED) }, { TokenX: [] }],
  ], 'Failed, no change: both entries, both lists empty');
});

t.test('"a deposit and its fee legs are one CIP-0112 batch": committed as Canton records BatchingUtility_ExecuteBatch, the fee legs threaded through the holding map, settled with the deposit', async (t) => {
  const sandbox = await sandboxFor(t);
  t.equal(sandbox.manifest.batchingUtility, true, 'the manifest says the participant has the package');
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  await call(t, sandbox, 'POST', '/sandbox/v1/operator', { paused: true });
  const answer = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait-for-transaction', {
    commands: commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '0.5'], [FEE_B, '0.25']])),
    transactionFormat: ledgerEffects(taker),
  });
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
  const tx = answer.body.transaction;
  const recorded = sandbox.ledger.transactionById(tx.updateId);
  t.ok(recorded, 'the update id answered is the transaction recorded');
  const byId = await call(t, sandbox, 'POST', '/v2/updates/transaction-by-id', { updateId: tx.updateId, transactionFormat: ledgerEffects(taker) });
  t.equal(byId.body.transaction.updateId, tx.updateId, 'read back by its update id');

  const events: any[] = tx.events;
  const [created, executed] = [events[0].CreatedEvent, events[1].ExercisedEvent];
  t.match(created, { templateId: /:Splice\.Util\.Token\.Wallet\.BatchingUtilityV2:BatchingUtility$/, packageName: 'splice-util-token-standard-wallet', createArgument: { user: taker }, signatories: [taker], observers: [], acsDelta: false });
  t.match(executed, { contractId: created.contractId, choice: 'BatchingUtility_ExecuteBatch', consuming: false, actingParties: [taker], lastDescendantNodeId: events.length - 1 });
  const children = childrenOf(events, 1).map((e) => e.ExercisedEvent);
  t.strictSame(children.map((c) => c.choice), ['TransferFactory_Transfer', 'TransferFactory_Transfer', 'TransferFactory_Transfer', 'Archive'], 'its children: each action\'s transfer, then the utility\'s Archive');
  t.match(children[3], { contractId: created.contractId, consuming: true, acsDelta: false });
  const [deposit, legA, legB] = children;
  t.strictSame(deposit.choiceArgument.transfer.inputHoldingCids, [holdings.CC], 'the deposit spends the map\'s CC holding');
  t.strictSame(legA.choiceArgument.transfer.inputHoldingCids, [holdings.USDCx], 'the first fee leg the map\'s USDCx holding');
  t.strictSame(legB.choiceArgument.transfer.inputHoldingCids, legA.exerciseResult.senderChangeCids, 'the second fee leg spends the first one\'s change');
  t.strictSame(executed.choiceArgument.actions[2].value.arg.transfer.inputHoldingCids, [], 'the choice argument is as submitted');

  const result = executed.exerciseResult;
  t.strictSame(result.actionResults, [deposit, legA, legB].map((c) => ({ tag: 'TSAR_TransferInstructionResultV1', value: c.exerciseResult })), 'one result per action, in order');
  t.ok(result.actionResults.every((r: any) => r.value.output.tag === 'TransferInstructionResult_Pending'), 'each an offer');
  // The source's holdingMapFromTransferV1 keeps the receiver's entry of a pending transfer with no
  // holdings. Keys in Daml's Ord of ScopedAccount: by admin ("DSO::" before "decentralized-usdc-…":
  // 'D' is U+0044, 'd' U+0064), then by owner, every provider and id being None ("taker-…" before
  // "tradecraft-pool-…"; "bestex-fees" before "bestex-partner" before "taker-…").
  const expected = [
    [{ admin: CC_ADMIN, account: basic(taker) }, { Amulet: deposit.exerciseResult.senderChangeCids }],
    [{ admin: CC_ADMIN, account: basic(POOL) }, { Amulet: [] }],
    [{ admin: USD_ADMIN, account: basic(FEE_A) }, { USDCx: [] }],
    [{ admin: USD_ADMIN, account: basic(FEE_B) }, { USDCx: [] }],
    [{ admin: USD_ADMIN, account: basic(taker) }, { USDCx: legB.exerciseResult.senderChangeCids }],
  ];
  t.strictSame(result.outputHoldingMap, { byAdminAndAccount: expected }, 'the output holding map as the module computes it, ordered by key');
  t.equal(deposit.exerciseResult.senderChangeCids.length, 1);
  t.equal(legB.exerciseResult.senderChangeCids.length, 1);

  t.equal(spendable(sandbox.ledger, taker, 'USDCx').toFixed(), '1.25', 'the fee legs are locked meanwhile');
  await call(t, sandbox, 'POST', '/sandbox/v1/operator', { paused: false });
  await new Promise((resolve) => setImmediate(resolve));
  const settlement = sandbox.ledger.transactions(sandbox.ledger.ledgerEnd - 1, sandbox.ledger.ledgerEnd)[0]!;
  const accepted = settlement.events.filter((e) => e.kind === 'exercised' && e.choice === 'TransferInstruction_Accept').map((e) => e.contractId);
  t.strictSame(accepted.sort(), result.actionResults.map((r: any) => r.value.output.value.transferInstructionCid).sort(), 'the pools\' operator accepts the deposit and both fee legs in one transaction');
  t.equal(spendable(sandbox.ledger, FEE_A, 'USDCx').toFixed(), '0.5', 'the escrow is released');
  t.equal(spendable(sandbox.ledger, FEE_B, 'USDCx').toFixed(), '0.25');
  t.equal(spendable(sandbox.ledger, taker, 'Amulet').toFixed(), '40', 'the deposit\'s change stays');
  t.ok(spendable(sandbox.ledger, taker, 'USDCx').gt(new Decimal('1.25')), 'and the payout arrived');
  t.notOk(activeIds(sandbox).includes(created.contractId), 'the utility is archived');
});

t.test('"fee escrow is not released" without a payout: a floor the pool cannot pay returns the batch\'s deposit and its fee legs', async (t) => {
  const sandbox = await sandboxFor(t);
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const answer = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '1000000', [[FEE_A, '0.5'], [FEE_B, '0.25']])));
  t.equal(answer.status, 200);
  await new Promise((resolve) => setImmediate(resolve));
  const settlement = sandbox.ledger.transactions(sandbox.ledger.ledgerEnd - 1, sandbox.ledger.ledgerEnd)[0]!;
  t.equal(settlement.events.filter((e) => e.kind === 'exercised' && e.choice === 'TransferInstruction_Reject').length, 3, 'the deposit and both fee legs rejected in the operator\'s transaction');
  t.equal(spendable(sandbox.ledger, taker, 'Amulet').toFixed(), '100');
  t.equal(spendable(sandbox.ledger, taker, 'USDCx').toFixed(), '2');
  t.equal(spendable(sandbox.ledger, FEE_A, 'USDCx').toFixed(), '0');
});

t.test('"each deposit\'s fees follow its own fate": a batch of two deposits, each followed by its fee leg (a split), has the paid deposit\'s fee accepted and the returned one\'s returned', async (t) => {
  const sandbox = await sandboxFor(t);
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const action = (admin: string, arg: unknown) => ({ tag: 'TSA_TransferFactory_TransferV1', value: { cid: sandbox.ledger.factories.get(admin)!, arg } });
  const command = batchCommand(sandbox, taker, holdings, '30', '0.0000000001', []);
  command.CreateAndExerciseCommand.choiceArgument.actions = [
    action(CC_ADMIN, transferArg(CC_ADMIN, 'Amulet', taker, POOL, '30', '0.0000000001')),
    action(USD_ADMIN, transferArg(USD_ADMIN, 'USDCx', taker, FEE_A, '0.5', 'fee')),
    // A floor the pool cannot pay: this deposit is returned.
    action(CC_ADMIN, transferArg(CC_ADMIN, 'Amulet', taker, POOL, '30', '1000000')),
    action(USD_ADMIN, transferArg(USD_ADMIN, 'USDCx', taker, FEE_B, '0.25', 'fee')),
  ];
  const before = sandbox.ledger.ledgerEnd;
  const answer = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, command));
  t.equal(answer.status, 200, JSON.stringify(answer.body).slice(0, 300));
  await new Promise((resolve) => setImmediate(resolve));
  const answers = sandbox.ledger.transactions(before + 1, sandbox.ledger.ledgerEnd).flatMap((tx) => tx.events.filter((e) => e.kind === 'exercised' && e.choice.startsWith('TransferInstruction_')).map((e) => (e as { choice: string }).choice));
  t.strictSame(answers.sort(), ['TransferInstruction_Accept', 'TransferInstruction_Accept', 'TransferInstruction_Reject', 'TransferInstruction_Reject'], 'every offer of the batch answered: one deposit and its fee accepted, the other and its fee rejected');
  t.equal(spendable(sandbox.ledger, FEE_A, 'USDCx').toFixed(), '0.5', 'the paid deposit\'s fee is released');
  t.equal(spendable(sandbox.ledger, FEE_B, 'USDCx').toFixed(), '0', 'the returned deposit\'s fee is not');
  t.equal(spendable(sandbox.ledger, taker, 'Amulet').toFixed(), '70', 'the returned deposit is back');
  t.ok(spendable(sandbox.ledger, taker, 'USDCx').gt(new Decimal('1.75')), 'the returned fee is back, and the payout arrived');
});

t.test('"a batch is all or nothing": an action that fails leaves every holding as it was, and the refusal says which and why', async (t) => {
  const sandbox = await sandboxFor(t);
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const [before, end] = [activeIds(sandbox), sandbox.ledger.ledgerEnd];
  const answer = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '1.5'], [FEE_B, '1']])));
  t.match(answer, { status: 400, body: { code: 'DAML_INTERPRETATION_ERROR', cause: /^actions\[2\] \(TSA_TransferFactory_TransferV1\): the input holdings hold 0\.5 USDCx; the transfer needs 1$/ } });
  t.strictSame(activeIds(sandbox), before, 'every contract as it was');
  t.equal(sandbox.ledger.ledgerEnd, end, 'no transaction');
  t.equal(sandbox.ledger.openPoolOffers().length, 0, 'no deposit offered');
  const firstLeg = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '3'], [FEE_B, '0.5']])));
  t.match(firstLeg, { status: 400, body: { code: 'DAML_INTERPRETATION_ERROR', cause: /^actions\[1\] \(TSA_TransferFactory_TransferV1\): the input holdings hold 2 USDCx; the transfer needs 3$/ } }, 'the first fee leg, right after the deposit, fails');
  t.strictSame(activeIds(sandbox), before, 'the deposit that ran before it undone: every contract as it was');
  t.equal(sandbox.ledger.ledgerEnd, end, 'no transaction');
  t.equal(sandbox.ledger.openPoolOffers().length, 0, 'no deposit offered');
  t.equal(spendable(sandbox.ledger, taker, 'Amulet').toFixed(), '100', 'the CC the deposit would have locked is spendable');
  t.equal(spendable(sandbox.ledger, taker, 'USDCx').toFixed(), '2');
  const retried = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '1.5'], [FEE_B, '0.5']])));
  t.equal(retried.status, 200, 'the same commandId may be submitted again: nothing was committed under it');
});

t.test('"the prepared transaction carries the batch": prepared and executed through the interactive submission service, hashed as Canton\'s own hasher hashes it', async (t) => {
  const sandbox = await sandboxFor(t);
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const prepared = await call(t, sandbox, 'POST', '/v2/interactive-submission/prepare', {
    ...commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '0.5'], [FEE_B, '0.25']])), userId: 'wallet', synchronizerId: SYNCHRONIZER_ID, packageIdSelectionPreference: [], verboseHashing: false,
  });
  t.equal(prepared.status, 200, JSON.stringify(prepared.body).slice(0, 300));
  t.equal(await hashPreparedTransaction(prepared.body.preparedTransaction, 'base64'), prepared.body.preparedTransactionHash, 'core-tx-visualizer recomputes the same hash over the typed values');
  const proto = decodePrepared(prepared.body.preparedTransaction);
  const nodes = proto.transaction!.nodes.map((n) => (n.versionedNode.oneofKind === 'v1' ? n.versionedNode.v1.nodeType : null)) as any[];
  t.strictSame(nodes.map((n) => (n.oneofKind === 'create' ? `create ${n.create.templateId.entityName}` : `${n.exercise.choiceId}`)).slice(0, 3), ['create BatchingUtility', 'BatchingUtility_ExecuteBatch', 'TransferFactory_Transfer']);
  t.equal(proto.transaction!.roots.length, 2, 'the create and the exercise are its roots');
  t.equal(nodes[1].exercise.chosenValue.sum.record.fields[0].value.sum.record.fields[0].value.sum.oneofKind, 'genMap', 'the holding map is a Daml Map');
  const utility = nodes[0].create.contractId;
  const archives = nodes.filter((n) => n.oneofKind === 'exercise' && n.exercise.choiceId === 'Archive');
  const utilityArchive = archives.find((n) => n.exercise.contractId === utility);
  t.ok(utilityArchive && archives.length > 1, 'the utility\'s Archive is there, beside the spent holdings\'');
  for (const { exercise } of archives) {
    t.strictSame(exercise.chosenValue.sum, { oneofKind: 'record', record: { fields: [] } }, `${exercise.contractId === utility ? 'the utility' : 'a holding'}: Archive's argument is the record Archive, which has no fields`);
    t.strictSame(exercise.exerciseResult.sum, { oneofKind: 'unit', unit: {} }, `${exercise.contractId === utility ? 'the utility' : 'a holding'}: Archive's result is Unit`);
  }
  const executed = await call(t, sandbox, 'POST', '/v2/interactive-submission/executeAndWait', {
    userId: 'wallet', preparedTransaction: prepared.body.preparedTransaction, hashingSchemeVersion: 'HASHING_SCHEME_VERSION_V2', submissionId: 'batch', deduplicationPeriod: { Empty: {} }, partySignatures: { signatures: [] },
  });
  t.equal(executed.status, 200);
  const tx = sandbox.ledger.transactionById(executed.body.updateId)!;
  t.equal(tx.events.filter((e) => e.kind === 'exercised' && e.choice === 'TransferFactory_Transfer').length, 3, 'the executed transaction is the prepared batch');
});

t.test('"the utility is transient": the ACS delta shows neither its creation nor its archival; filters name its template only where the participant has the package', async (t) => {
  const sandbox = await sandboxFor(t);
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const { body } = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '0.5']])));
  const read = async (format: unknown) => (await call(t, sandbox, 'POST', '/v2/updates/transaction-by-id', { updateId: body.updateId, transactionFormat: format })).body;
  const delta = await read({ ...ledgerEffects(taker), transactionShape: 'TRANSACTION_SHAPE_ACS_DELTA' });
  const templates = (events: any[]) => events.map((e) => `${Object.keys(e)[0]} ${(Object.values(e)[0] as any).templateId.split(':').slice(1).join(':')}`);
  t.notOk(templates(delta.transaction.events).some((e) => e.includes('BatchingUtility')), 'no BatchingUtility event in the ACS delta');
  t.ok(templates(delta.transaction.events).includes('ArchivedEvent Sandbox.Token:Holding'), 'the holdings the batch spent are');
  const byTemplate = await read(ledgerEffects(taker, [{ identifierFilter: { TemplateFilter: { value: { templateId: TEMPLATE, includeCreatedEventBlob: false } } } }]));
  t.strictSame(templates(byTemplate.transaction.events), ['CreatedEvent Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility', 'ExercisedEvent Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility', 'ExercisedEvent Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility'], 'a Template filter on it: its creation, its batch and its archival');
  const byInterface = await read(ledgerEffects(taker, [{ identifierFilter: { InterfaceFilter: { value: { interfaceId: '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding', includeInterfaceView: true } } } }]));
  t.notOk(templates(byInterface.transaction.events).some((e) => e.includes('BatchingUtility')), 'an Interface filter on Holding: not the utility, which implements none');
  const utility = byTemplate.transaction.events[0].CreatedEvent.contractId;
  const life = await call(t, sandbox, 'POST', '/v2/events/events-by-contract-id', { contractId: utility, eventFormat: ledgerEffects(taker).eventFormat });
  t.match(life.body, { created: { createdEvent: { contractId: utility } }, archived: { archivedEvent: { contractId: utility } } }, 'its own events show its creation and its archival');
  const packages = await call(t, sandbox, 'GET', '/v2/packages');
  t.ok(packages.body.packageIds.includes('b7'.repeat(32)), 'GET /v2/packages lists the package');
});

t.test('"preferred-package-version tells whether the participant has the batching utility": 200 with its reference when it has, 404 PACKAGE_NAMES_NOT_FOUND when not', async (t) => {
  const withIt = await sandboxFor(t);
  const taker = newTaker();
  const query = (name: string) => `/v2/interactive-submission/preferred-package-version?package-name=${name}&parties=${encodeURIComponent(taker)}`;
  const preference = (packageId: string, packageName: string) => ({ packagePreference: { packageReference: { packageId, packageName, packageVersion: '1.0.0' }, synchronizerId: SYNCHRONIZER_ID } });
  t.strictSame((await call(t, withIt, 'GET', query('splice-util-token-standard-wallet'))).body, preference('b7'.repeat(32), 'splice-util-token-standard-wallet'));
  t.match(await call(t, withIt, 'GET', query('splice-amulet')), { status: 404, body: { code: 'PACKAGE_NAMES_NOT_FOUND', cause: 'The following package names do not match upgradable packages uploaded on this participant: [splice-amulet].' } }, 'a name it does not have');
  const without = await sandboxFor(t, false);
  t.match(await call(t, without, 'GET', query('splice-util-token-standard-wallet')), { status: 404, body: { code: 'PACKAGE_NAMES_NOT_FOUND' } });
  for (const sandbox of [withIt, without]) {
    const listed: string[] = (await call(t, sandbox, 'GET', '/v2/packages')).body.packageIds;
    const holdingApi = await call(t, sandbox, 'GET', query('splice-api-token-holding-v1'));
    t.strictSame(holdingApi, { status: 200, body: preference('71'.repeat(32), 'splice-api-token-holding-v1') }, 'any package the participant has is answered by name, not only the batching utility\'s');
    t.ok(listed.includes(holdingApi.body.packagePreference.packageReference.packageId), 'the package answered is one GET /v2/packages lists');
    t.equal((await call(t, sandbox, 'GET', query('sandbox-token'))).body.packagePreference.packageReference.packageId, '5a'.repeat(32), 'the token implementation\'s too');
  }
  t.strictSame(
    await call(t, withIt, 'GET', `/v2/interactive-submission/preferred-package-version?parties=${encodeURIComponent(taker)}`),
    { status: 400, body: 'Invalid value for: query parameter package-name (missing)' },
    'no package-name: refused in plain text, as the pinned document describes the 400',
  );
});

t.test('"without the package the batch is refused as Canton refuses it": 404 PACKAGE_NAMES_NOT_FOUND, nothing committed, the package nowhere', async (t) => {
  const sandbox = await sandboxFor(t, false);
  t.equal(sandbox.manifest.batchingUtility, false, 'the manifest says so');
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const end = sandbox.ledger.ledgerEnd;
  const batch = commands(sandbox, taker, batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '0.5']]));
  for (const [path, body] of [['/v2/commands/submit-and-wait', batch], ['/v2/commands/submit-and-wait-for-transaction', { commands: batch }], ['/v2/interactive-submission/prepare', batch]] as const) {
    const refused = await call(t, sandbox, 'POST', path, body);
    t.equal(refused.status, 404, path);
    t.strictSame({ ...refused.body, correlationId: '' }, {
      code: 'PACKAGE_NAMES_NOT_FOUND', cause: 'The following package names do not match upgradable packages uploaded on this participant: [splice-util-token-standard-wallet].',
      correlationId: '', context: { category: '11', definite_answer: 'false' }, resources: [], errorCategory: 11, grpcCodeValue: 5, definiteAnswer: false,
    }, `${path}: exactly as Canton shapes it`);
  }
  t.equal(sandbox.ledger.ledgerEnd, end, 'nothing committed');
  t.notOk((await call(t, sandbox, 'GET', '/v2/packages')).body.packageIds.includes('b7'.repeat(32)), 'GET /v2/packages does not list it');
  const filter = await call(t, sandbox, 'POST', '/v2/updates', { beginExclusive: 0, updateFormat: { includeTransactions: ledgerEffects(taker, [{ identifierFilter: { TemplateFilter: { value: { templateId: TEMPLATE } } } }]) } });
  t.match(filter, { status: 404, body: { code: 'PACKAGE_NAMES_NOT_FOUND' } }, 'a filter naming its template is refused too');
});

t.test('"arguments that do not type-check against the Daml types are refused before anything runs" (COMMAND_PREPROCESSING_FAILED), as is a user who is not a submitter', async (t) => {
  const sandbox = await sandboxFor(t);
  const taker = newTaker();
  const holdings = (await funded(t, sandbox, taker, { CC: '100', USDCx: '2' })) as { CC: string; USDCx: string };
  const valid = () => batchCommand(sandbox, taker, holdings, '60', '0.0000000001', [[FEE_A, '0.5']]).CreateAndExerciseCommand as any;
  const cases: Array<[string, (c: any) => void, string, RegExp]> = [
    ['missing byAdminAndAccount', (c) => { c.choiceArgument.inputHoldingMap = {}; }, 'COMMAND_PREPROCESSING_FAILED', /choiceArgument\.inputHoldingMap: missing non-optional field byAdminAndAccount of HoldingMap/],
    ['a Map given as an object', (c) => { c.choiceArgument.inputHoldingMap.byAdminAndAccount = { [CC_ADMIN]: { Amulet: [holdings.CC] } }; }, 'COMMAND_PREPROCESSING_FAILED', /byAdminAndAccount: expected a Map \(a JSON array of \[key, value\] pairs\)/],
    ['a variant without tag', (c) => { c.choiceArgument.actions[0] = { value: c.choiceArgument.actions[0].value }; }, 'COMMAND_PREPROCESSING_FAILED', /choiceArgument\.actions\[0\]: expected a variant TokenStandardAction/],
    ['a tag the variant does not have', (c) => { c.choiceArgument.actions[0].tag = 'TSA_Transfer'; }, 'COMMAND_PREPROCESSING_FAILED', /TokenStandardAction has no constructor TSA_Transfer/],
    ['account missing owner', (c) => { delete c.choiceArgument.inputHoldingMap.byAdminAndAccount[0][0].account.owner; }, 'COMMAND_PREPROCESSING_FAILED', /byAdminAndAccount\[0\]\[0\]\.account: missing non-optional field owner of Account/],
    ['archiveAfterExecution not a bool', (c) => { c.choiceArgument.archiveAfterExecution = 'true'; }, 'COMMAND_PREPROCESSING_FAILED', /choiceArgument\.archiveAfterExecution: expected a Bool/],
    ['a field the record does not have', (c) => { c.choiceArgument.actions[0].value.arg.transfer.memo = 'x'; }, 'COMMAND_PREPROCESSING_FAILED', /transfer: Transfer has no field memo/],
    ['an amount that is no Decimal', (c) => { c.choiceArgument.actions[0].value.arg.transfer.amount = 60; }, 'COMMAND_PREPROCESSING_FAILED', /transfer\.amount: expected a Decimal/],
    ['a holding cid that is no ContractId', (c) => { c.choiceArgument.inputHoldingMap.byAdminAndAccount[0][1].Amulet = ['holding-1']; }, 'COMMAND_PREPROCESSING_FAILED', /\["Amulet"\]\[0\]: expected a ContractId/],
    ['a key twice', (c) => { c.choiceArgument.inputHoldingMap.byAdminAndAccount.push(c.choiceArgument.inputHoldingMap.byAdminAndAccount[0]); }, 'COMMAND_PREPROCESSING_FAILED', /a Map must not repeat a key/],
    ['user missing', (c) => { c.createArguments = {}; }, 'COMMAND_PREPROCESSING_FAILED', /createArguments: missing non-optional field user of BatchingUtility/],
    ['a choice the template does not have', (c) => { c.choice = 'BatchingUtility_Execute'; }, 'COMMAND_PREPROCESSING_FAILED', /the template BatchingUtility has no choice BatchingUtility_Execute/],
    ['the template\'s Archive, which the sandbox does not run', (c) => { c.choice = 'Archive'; }, 'INVALID_ARGUMENT', /^the sandbox participant runs only BatchingUtility_ExecuteBatch in a CreateAndExerciseCommand of BatchingUtility, not Archive$/],
    ['user not an actAs party', (c) => { c.createArguments.user = FEE_A; }, 'DAML_AUTHORIZATION_ERROR', /its user, must be one of actAs/],
    ['an action whose instrument the holding map does not hold', (c) => { c.choiceArgument.inputHoldingMap.byAdminAndAccount.splice(1, 1); }, 'INVALID_ARGUMENT', /^actions\[1\] \(TSA_TransferFactory_TransferV1\): transfer\.inputHoldingCids must list the sender's holdings to spend$/],
    ['an action the sandbox does not run', (c) => { c.choiceArgument.actions[1] = { tag: 'TSA_TransferFactory_TransferV2', value: {} }; }, 'INVALID_ARGUMENT', /runs TSA_TransferFactory_TransferV1 actions only, not TSA_TransferFactory_TransferV2/],
  ];
  const end = sandbox.ledger.ledgerEnd;
  for (const [name, mutate, code, cause] of cases) {
    const command = valid();
    mutate(command);
    const refused = await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, { CreateAndExerciseCommand: command }, `bad-${name}`));
    t.match(refused, { status: 400, body: { code, cause } }, name);
    if (code === 'COMMAND_PREPROCESSING_FAILED') t.match(refused.body, { errorCategory: 8, grpcCodeValue: 3 }, `${name}: invalid independent of the system state`);
  }
  t.equal(sandbox.ledger.ledgerEnd, end, 'none committed');
  t.equal((await call(t, sandbox, 'POST', '/v2/commands/submit-and-wait', commands(sandbox, taker, { CreateAndExerciseCommand: valid() }))).status, 200, 'the valid command, for contrast, is run');
});
