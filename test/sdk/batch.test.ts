// The SDK's CIP-0112 batch: a plan that collects fees goes as one CreateAndExerciseCommand of
// Splice's BatchingUtility (splice-util-token-standard-wallet, BatchingUtilityV2.daml), which the
// wallet's participant runs in one transaction, threading the taker's holdings from one transfer
// into the next. The command is held field by field to the Daml types as the source declares them,
// and to the JSON Ledger API's encoding of each; a plan is then swapped against the sandbox
// participant with the package and without it.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { TransferInstructionV1 } from '@canton-network/core-token-standard';
import { createClient, execute, readRefusal, type CantonProvider, type ExecutionHooks, type ExecutionPlan, type ExecutionStatus, type PlanStep, type StepUpdate } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { walletSdkProvider } from '@bestex/sdk/wallet-sdk';
import { CustomLogAdapter, SDK } from '@canton-network/wallet-sdk';
import { Decimal } from '../../core/decimal.js';
import { repoRoot } from '../../handlers/app.js';
import { COLLECTING, listen, testApp, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { extensionWallet, remoteGateway } from '../helpers/dapp-wallets.js';
import { issueKey } from '../helpers/keys.js';
import { unlockedHoldings } from '../helpers/ledger.js';

const PARTY = /^[A-Za-z0-9][A-Za-z0-9_-]*::1220[0-9a-f]{64}$/;
const DECIMAL = /^-?[0-9]+(\.[0-9]{1,10})?$/;
const REASON = 'splice.lfdecentralizedtrust.org/reason';
const BATCHING = '#splice-util-token-standard-wallet:Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility';

let takers = 0;

/** A collecting service over its sandbox, a taker holding one CC holding and one USDCx holding, and a partner plan with two fee legs. */
async function partnerSwap(t: { teardown(fn: () => Promise<void>): void }, options: TestAppOptions = {}, funding = { usdcx: true }) {
  const app = await testApp({ ...options, env: { ...COLLECTING, QUOTE_CACHE_TTL_MS: '1', ...options.env } });
  t.teardown(app.close);
  const sandbox = app.sandbox!;
  const taker = `sdk-batch-${++takers}::1220${'5'.repeat(64)}`;
  const provider = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party: taker });
  const fund = (token: string, amount: string) => provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party: taker, token, amount } } });
  await fund('CC', '1000');
  if (funding.usdcx) await fund('USDCx', '5');
  const { key } = await issueKey(app.core.keyStore);
  const client = createClient({ baseUrl: await listen(app.server), apiKey: key });
  const recipient = `wallet-co::1220${'a'.repeat(64)}`;
  const plan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: taker, idempotencyKey: `${taker}-batch`, feeBps: 5, feeRecipient: recipient });
  return { app, sandbox, taker, provider, fund, client, plan, recipient, registries: sandbox.manifest.registries };
}

/** What the wallet was asked to submit, and the user declining it: nothing reaches the ledger. */
function capturing(provider: CantonProvider, batching: 'present' | 'absent') {
  const asked: Array<{ method: string; params: Record<string, unknown> }> = [];
  const wrapped: CantonProvider = {
    request: async (args) => {
      const params = args.params as { resource?: string } | undefined;
      if (args.method === 'ledgerApi' && params?.resource === '/v2/interactive-submission/preferred-package-version') {
        asked.push({ method: 'ledgerApi', params: params as Record<string, unknown> });
        if (batching === 'absent') {
          throw Object.assign(new Error('the ledger refused'), { code: -32003, data: { ledgerCode: 'PACKAGE_NAMES_NOT_FOUND' } });
        }
        return { packagePreference: { packageReference: { packageId: 'ab'.repeat(32), packageName: 'splice-util-token-standard-wallet', packageVersion: '1.0.0' }, synchronizerId: 'sync::1220' } };
      }
      if (args.method === 'prepareExecuteAndWait' || args.method === 'prepareExecute') {
        asked.push({ method: args.method, params: args.params as Record<string, unknown> });
        throw Object.assign(new Error('User rejected the request.'), { code: 4001 });
      }
      return provider.request(args);
    },
    on: (event, listener) => provider.on(event, listener),
    removeListener: (event, listener) => provider.removeListener(event, listener),
  };
  return { asked, provider: wrapped };
}

// The Daml types the command carries, as BatchingUtilityV2.daml (commit 0085938849c8) declares
// them, with the V1 token-standard types its TSA_TransferFactory_TransferV1 action takes
// (TransferInstructionV1, HoldingV1, MetadataV1 of CIP-0056) and V2's Account (HoldingV2).
type DamlType =
  | { readonly kind: 'Party' | 'Text' | 'Decimal' | 'Time' | 'Bool' | 'ContractId' }
  | { readonly kind: 'List' | 'Optional' | 'TextMap'; readonly of: DamlType }
  | { readonly kind: 'Map'; readonly key: DamlType; readonly of: DamlType }
  | { readonly kind: 'Record'; readonly name: string; readonly fields: Readonly<Record<string, DamlType>> }
  | { readonly kind: 'Variant'; readonly name: string; readonly constructors: Readonly<Record<string, DamlType>> }
  | { readonly kind: 'Any'; readonly name: string };

const prim = (kind: 'Party' | 'Text' | 'Decimal' | 'Time' | 'Bool' | 'ContractId'): DamlType => ({ kind });
const list = (of: DamlType): DamlType => ({ kind: 'List', of });
const optional = (of: DamlType): DamlType => ({ kind: 'Optional', of });
const textMap = (of: DamlType): DamlType => ({ kind: 'TextMap', of });
const record = (name: string, fields: Record<string, DamlType>): DamlType => ({ kind: 'Record', name, fields });

const Metadata = record('Metadata', { values: textMap(prim('Text')) });
// ChoiceContext.values is a TextMap AnyValue: the registry's data, passed on as the registry gave it.
const ChoiceContext = record('ChoiceContext', { values: textMap({ kind: 'Any', name: 'AnyValue' }) });
const ExtraArgs = record('ExtraArgs', { context: ChoiceContext, meta: Metadata });
const InstrumentId = record('InstrumentId', { admin: prim('Party'), id: prim('Text') });
const Transfer = record('Transfer', {
  sender: prim('Party'),
  receiver: prim('Party'),
  amount: prim('Decimal'),
  instrumentId: InstrumentId,
  requestedAt: prim('Time'),
  executeBefore: prim('Time'),
  inputHoldingCids: list(prim('ContractId')),
  meta: Metadata,
});
const TransferFactory_Transfer = record('TransferFactory_Transfer', { expectedAdmin: prim('Party'), transfer: Transfer, extraArgs: ExtraArgs });
const ChoiceCall = (arg: DamlType) => record('ChoiceCall', { cid: prim('ContractId'), arg });
const Account = record('V2.Account', { provider: optional(prim('Party')), id: optional(prim('Text')), owner: prim('Party') });
const ScopedAccount = record('ScopedAccount', { admin: prim('Party'), account: Account });
const HoldingMap = record('HoldingMap', { byAdminAndAccount: { kind: 'Map', key: ScopedAccount, of: textMap(list(prim('ContractId'))) } });
const TokenStandardAction: DamlType = {
  kind: 'Variant',
  name: 'TokenStandardAction',
  constructors: {
    TSA_TransferFactory_TransferV1: ChoiceCall(TransferFactory_Transfer),
    // The other constructors carry types this command never sends; only their tags matter here.
    TSA_TransferFactory_TransferV2: { kind: 'Any', name: 'ChoiceCall V2.TransferFactory_Transfer' },
    TSA_TransferInstruction_AcceptV1: { kind: 'Any', name: 'ChoiceCall V1.TransferInstruction_Accept' },
    TSA_TransferInstruction_AcceptV2: { kind: 'Any', name: 'ChoiceCall V2.TransferInstruction_Accept' },
    TSA_AllocationFactory_AllocateV1: { kind: 'Any', name: 'ChoiceCall V1.AllocationFactory_Allocate' },
    TSA_AllocationFactory_AllocateV2: { kind: 'Any', name: 'ChoiceCall V2.AllocationFactory_Allocate' },
    TSA_AllocationRequestV2_Accept: { kind: 'Any', name: 'ChoiceCall V2.AllocationRequest_Accept' },
  },
};
const BatchingUtility = record('BatchingUtility', { user: prim('Party') });
const BatchingUtility_ExecuteBatch = record('BatchingUtility_ExecuteBatch', { inputHoldingMap: HoldingMap, actions: list(TokenStandardAction), archiveAfterExecution: prim('Bool') });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Where `value` is not the JSON Ledger API's encoding of `type`: Party, Text and ContractId a
 * string, Decimal a string of at most 10 fractional digits, Time an ISO 8601 string, Bool a JSON
 * boolean, a list an array, Optional None null (Some x as x), a Map a list of [key, value] pairs
 * with distinct keys, a TextMap an object, a record an object with exactly its fields, a variant
 * {tag, value}.
 */
function mismatches(value: unknown, type: DamlType, at: string): string[] {
  const wrong = (what: string) => [`${at}: ${what}, not ${JSON.stringify(value)?.slice(0, 80)}`];
  switch (type.kind) {
    case 'Party':
      return typeof value === 'string' && PARTY.test(value) ? [] : wrong('a Party is a party id string');
    case 'Text':
    case 'ContractId':
      return typeof value === 'string' && value !== '' ? [] : wrong(`a ${type.kind} is a string`);
    case 'Decimal':
      return typeof value === 'string' && DECIMAL.test(value) ? [] : wrong('a Decimal is a string of at most 10 fractional digits');
    case 'Time':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value)) && /T.*(Z|[+-]\d\d:\d\d)$/.test(value) ? [] : wrong('a Time is an ISO 8601 date-time string');
    case 'Bool':
      return typeof value === 'boolean' ? [] : wrong('a Bool is a JSON boolean');
    case 'List':
      return Array.isArray(value) ? value.flatMap((v, i) => mismatches(v, type.of, `${at}[${i}]`)) : wrong('a list is an array');
    case 'Optional':
      // Not nested here: Some x is x itself.
      return value === null ? [] : mismatches(value, type.of, at);
    case 'TextMap':
      return isObject(value) ? Object.entries(value).flatMap(([k, v]) => mismatches(v, type.of, `${at}.${k}`)) : wrong('a TextMap is a JSON object');
    case 'Map': {
      if (!Array.isArray(value)) return wrong('a Map is a list of [key, value] pairs');
      const keys = value.map((pair) => JSON.stringify(Array.isArray(pair) ? pair[0] : null));
      if (new Set(keys).size !== keys.length) return wrong('a Map\'s keys are distinct');
      return value.flatMap((pair, i) =>
        Array.isArray(pair) && pair.length === 2 ? [...mismatches(pair[0], type.key, `${at}[${i}][0]`), ...mismatches(pair[1], type.of, `${at}[${i}][1]`)] : wrong('each Map entry is a [key, value] pair'),
      );
    }
    case 'Record': {
      if (!isObject(value)) return wrong(`the record ${type.name} is a JSON object`);
      const fields = Object.keys(type.fields);
      const extra = Object.keys(value).filter((k) => !fields.includes(k));
      const missing = fields.filter((k) => !(k in value));
      if (extra.length > 0 || missing.length > 0) return wrong(`the record ${type.name} has exactly the fields ${fields.join(', ')} (extra: ${extra.join(', ') || 'none'}; missing: ${missing.join(', ') || 'none'})`);
      return fields.flatMap((k) => mismatches(value[k], type.fields[k]!, `${at}.${k}`));
    }
    case 'Variant': {
      if (!isObject(value) || Object.keys(value).sort().join() !== 'tag,value' || typeof value.tag !== 'string') return wrong(`the variant ${type.name} is {tag, value}`);
      const constructor = type.constructors[value.tag];
      return constructor ? mismatches(value.value, constructor, `${at}.value`) : wrong(`the tag is one of ${type.name}'s constructors`);
    }
    case 'Any':
      return [];
  }
}

t.test('"the batch command, field by field, is the Daml types of BatchingUtilityV2.daml in the JSON Ledger API encoding": one CreateAndExerciseCommand of BatchingUtility_ExecuteBatch, deposit first, each fee leg a TSA_TransferFactory_TransferV1', async (t) => {
  const swap = await partnerSwap(t);
  const { taker, plan, sandbox } = swap;
  t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock', 'fee-transfer']);
  const wallet = capturing(swap.provider, 'present');
  const result = await execute(plan, { provider: wallet.provider, registries: swap.registries });
  t.equal(result.status, 'USER_REJECTED', 'the wallet was asked once, and declined');
  const submissions = wallet.asked.filter((a) => a.method !== 'ledgerApi');
  t.equal(submissions.length, 1, 'one submission');
  const { commands, commandId, actAs, disclosedContracts } = submissions[0]!.params as { commands: unknown[]; commandId: string; actAs: string[]; disclosedContracts: unknown[] };
  t.equal(commandId, plan.planId, 'commandId = planId');
  t.strictSame(actAs, [taker]);
  t.equal(commands.length, 1, 'ONE command');
  const command = commands[0] as Record<string, unknown>;
  t.strictSame(Object.keys(command), ['CreateAndExerciseCommand']);
  const body = (command.CreateAndExerciseCommand ?? {}) as Record<string, unknown>;
  const amulet = sandbox.manifest.instrumentAdmins.Amulet;
  const usdcx = sandbox.manifest.instrumentAdmins.USDCx;

  // The table: each field, its Daml type as the source declares it, and its JSON encoding.
  const rows: ReadonlyArray<readonly [string, string, string, unknown, DamlType | ((v: unknown) => boolean)]> = [
    ['templateId', 'template BatchingUtility (package splice-util-token-standard-wallet, module Splice.Util.Token.Wallet.BatchingUtilityV2)', 'the package-name reference', body.templateId, (v) => v === '#splice-util-token-standard-wallet:Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility'],
    ['createArguments', 'BatchingUtility with user : Party', 'an object with exactly user', body.createArguments, BatchingUtility],
    ['createArguments.user', 'Party (signatory user)', 'the taker', (body.createArguments as Record<string, unknown>)?.user, (v) => v === taker],
    ['choice', 'nonconsuming choice BatchingUtility_ExecuteBatch, controller user', 'its name', body.choice, (v) => v === 'BatchingUtility_ExecuteBatch'],
    ['choiceArgument', 'BatchingUtility_ExecuteBatch with inputHoldingMap : HoldingMap; actions : [TokenStandardAction]; archiveAfterExecution : Bool', 'an object with exactly those fields, each encoded below', body.choiceArgument, BatchingUtility_ExecuteBatch],
  ];
  const argument = body.choiceArgument as { inputHoldingMap: { byAdminAndAccount: Array<[{ admin: string; account: unknown }, Record<string, string[]>]> }; actions: Array<{ tag: string; value: { cid: string; arg: { expectedAdmin: string; transfer: Record<string, unknown>; extraArgs: unknown } } }>; archiveAfterExecution: unknown };
  const entries = argument?.inputHoldingMap?.byAdminAndAccount ?? [];
  const actions = argument?.actions ?? [];
  const disclosedIds = (disclosedContracts as Array<{ contractId: string }>).map((d) => d.contractId);
  t.strictSame([...disclosedIds].sort(), [...new Set(actions.map((a) => a.value.cid))].sort(), 'disclosedContracts: each transfer factory the actions call, once');
  const more: typeof rows = [
    ['inputHoldingMap', 'HoldingMap with byAdminAndAccount : Map ScopedAccount (TextMap [ContractId V2.Holding])', 'an object with exactly byAdminAndAccount', argument?.inputHoldingMap, HoldingMap],
    ['inputHoldingMap.byAdminAndAccount', 'Map ScopedAccount (TextMap [ContractId V2.Holding])', 'a list of [key, value] pairs: one per admin whose instruments the batch spends', entries, (v) => Array.isArray(v) && v.length === 2],
    ['inputHoldingMap.byAdminAndAccount[*][0]', 'ScopedAccount with admin : Party; account : V2.Account', 'an object with exactly admin and account', entries.map((e) => e[0]), list(ScopedAccount)],
    ['inputHoldingMap.byAdminAndAccount[*][0].admin', 'Party', 'the instrument admins of the give and want instruments', entries.map((e) => e[0].admin).sort(), (v) => JSON.stringify(v) === JSON.stringify([amulet, usdcx].sort())],
    ['inputHoldingMap.byAdminAndAccount[*][0].account', 'V2.Account (basicAccount user: provider = None, id = None, owner = user)', '{provider: null, id: null, owner: taker}: Optional None is null', entries.map((e) => e[0].account), (v) => Array.isArray(v) && v.every((a) => JSON.stringify(a) === JSON.stringify({ provider: null, id: null, owner: taker }))],
    ['inputHoldingMap.byAdminAndAccount[*][1]', 'TextMap [ContractId V2.Holding], keyed by instrumentId.id', 'an object: the instrument id -> a list of contract id strings', entries.map((e) => e[1]), list(textMap(list(prim('ContractId'))))],
    ['actions', '[TokenStandardAction]', 'an array: the deposit first, then each fee leg, in the plan\'s order', actions, (v) => Array.isArray(v) && v.length === plan.steps.length],
    ['actions[*]', 'TokenStandardAction (variant), constructor TSA_TransferFactory_TransferV1 (ChoiceCall V1.TransferFactory_Transfer)', '{tag: "TSA_TransferFactory_TransferV1", value}', actions, list(TokenStandardAction)],
    ['actions[*].tag', 'the constructor', 'TSA_TransferFactory_TransferV1 for every transfer', actions.map((a) => a.tag), (v) => Array.isArray(v) && v.every((tag) => tag === 'TSA_TransferFactory_TransferV1')],
    ['actions[*].value', 'ChoiceCall with cid : AnyContractId; arg : V1.TransferFactory_Transfer', 'an object with exactly cid and arg', actions.map((a) => a.value), list(ChoiceCall(TransferFactory_Transfer))],
    ['actions[*].value.cid', 'AnyContractId', 'the registry\'s transfer factory, a contract id string', actions.map((a) => a.value.cid), (v) => Array.isArray(v) && v.every((cid) => cid === sandbox.ledger.factories.get(amulet) || cid === sandbox.ledger.factories.get(usdcx))],
    ['actions[*].value.arg', 'V1.TransferFactory_Transfer with expectedAdmin : Party; transfer : Transfer; extraArgs : ExtraArgs', 'as an ExerciseCommand\'s choiceArgument', actions.map((a) => a.value.arg), list(TransferFactory_Transfer)],
    ['actions[*].value.arg.transfer.inputHoldingCids', '[ContractId V1.Holding]: replaced by the utility (callChoiceV1: transfer with inputHoldingCids = the map\'s)', '[]', actions.map((a) => a.value.arg.transfer.inputHoldingCids), (v) => JSON.stringify(v) === JSON.stringify(actions.map(() => []))],
    ['actions[*].value.arg.transfer.sender', 'Party: the map is read for basicAccount user, so the sender is the user', 'the taker', actions.map((a) => a.value.arg.transfer.sender), (v) => Array.isArray(v) && v.every((s) => s === taker)],
    ['archiveAfterExecution', 'Bool (archive self after the actions: createAndExercise leaves no utility behind)', 'true, a JSON boolean', argument?.archiveAfterExecution, (v) => v === true],
  ];
  for (const [field, daml, json, value, check] of [...rows, ...more]) {
    const problems = typeof check === 'function' ? (check(value) ? [] : [`${field}: ${JSON.stringify(value)?.slice(0, 200)}`]) : mismatches(value, check, field);
    t.strictSame(problems, [], `${field}: ${daml} -> ${json}`);
  }

  // Each action's argument, as Canton's own codegen of the released token standard decodes it.
  for (const [i, action] of actions.entries()) {
    const decoded = TransferInstructionV1.TransferFactory_Transfer.decoder.run(action.value.arg);
    t.ok(decoded.ok, `action ${i}'s arg decodes as V1 TransferFactory_Transfer (@canton-network/core-token-standard)`);
  }

  // Each action is its plan step; the deposit carries the floor as its memo.
  actions.forEach((action, i) => {
    const step = plan.steps[i] as PlanStep;
    const { transfer } = action.value.arg;
    t.match(transfer, { receiver: step.target, amount: step.amount, instrumentId: { id: step.instrument }, executeBefore: step.expiresAt }, `action ${i} is step ${i} (${step.kind})`);
    t.equal(action.value.arg.expectedAdmin, (transfer.instrumentId as { admin: string }).admin, 'expectedAdmin is the instrument\'s admin');
  });
  t.equal((actions[0]?.value.arg.transfer.meta as { values: Record<string, string> }).values[REASON], (plan as ExecutionPlan).quoteRef.minReceive, 'the deposit\'s memo is the floor');

  // callChoiceV1, run on the map: each action takes every holding the map has for
  // (instrumentId.admin, basicAccount user)[instrumentId.id], and its change goes back there. With
  // one CC holding and one USDCx holding, the deposit and both fee legs are covered.
  const amounts = new Map([...unlockedHoldings(sandbox.ledger, taker, 'Amulet'), ...unlockedHoldings(sandbox.ledger, taker, 'USDCx')].map((h) => [h.contractId, h.amount]));
  t.equal(amounts.size, 2, 'the taker holds exactly one holding of each instrument');
  const map = new Map<string, Decimal>();
  for (const [scoped, ids] of entries) for (const [id, cids] of Object.entries(ids)) map.set(`${scoped.admin}|${id}`, cids.reduce((sum, cid) => sum.plus(amounts.get(cid) ?? 0), new Decimal(0)));
  for (const [i, action] of actions.entries()) {
    const { instrumentId, amount } = action.value.arg.transfer as { instrumentId: { admin: string; id: string }; amount: string };
    const key = `${instrumentId.admin}|${instrumentId.id}`;
    const held = map.get(key) ?? new Decimal(0);
    map.delete(key);
    t.ok(held.gte(amount), `action ${i} finds ${amount} ${instrumentId.id} in the map (${held.toFixed()})`);
    if (held.gt(amount)) map.set(key, held.minus(amount));
  }
});

/** The SDK's batching module as built (sdk/dist): what its functions answer, unexported from the package. */
interface BatchingModule {
  batchingSupport(provider: CantonProvider, party: string): Promise<'present' | 'absent' | 'unknown'>;
  batchCommand(user: string, inputs: ReadonlyArray<{ admin: string; id: string; contractIds: readonly string[] }>, transfers: ReadonlyArray<{ factoryId: string; argument: unknown }>): Record<string, any>;
}
const batchingModule = async () => (await import(pathToFileURL(path.join(repoRoot(), 'sdk/dist/batching.js')).href)) as BatchingModule;

t.test('"instruments of one admin share its key": the give and want instruments under ONE admin are both ids of one ScopedAccount\'s TextMap', async (t) => {
  const { batchCommand } = await batchingModule();
  const admin = `registry::1220${'1'.repeat(64)}`;
  const taker = `taker::1220${'2'.repeat(64)}`;
  const [a1, a2, b1] = ['a1', 'a2', 'b1'].map((n) => `00${n.padEnd(64, '0')}`);
  const command = batchCommand(taker, [{ admin, id: 'TokenA', contractIds: [a1!, a2!] }, { admin, id: 'TokenB', contractIds: [b1!] }], []);
  t.strictSame(command.CreateAndExerciseCommand.choiceArgument.inputHoldingMap, {
    byAdminAndAccount: [[{ admin, account: { provider: null, id: null, owner: taker } }, { TokenA: [a1, a2], TokenB: [b1] }]],
  }, 'one key, (admin, basicAccount taker), and a TextMap with both instruments: a Map must not repeat a key');
});

t.test('"the package query\'s answers, read": 404 PACKAGE_NAMES_NOT_FOUND or a 200 without packagePreference is no package; only a preference naming the package is the package', async (t) => {
  const { batchingSupport } = await batchingModule();
  const answering = (answer: () => unknown): CantonProvider => ({ request: async () => answer(), on: () => undefined, removeListener: () => undefined });
  const reference = (packageName: string) => ({ packagePreference: { packageReference: { packageId: 'ab'.repeat(32), packageName, packageVersion: '1.0.0' }, synchronizerId: 'sync::1220' } });
  const cases: ReadonlyArray<readonly [string, () => unknown, string]> = [
    ['a preference naming the package', () => reference('splice-util-token-standard-wallet'), 'present'],
    ['200 {}: no preferred package found', () => ({}), 'absent'],
    ['404 PACKAGE_NAMES_NOT_FOUND', () => { throw Object.assign(new Error('the ledger refused'), { code: -32003, data: { ledgerCode: 'PACKAGE_NAMES_NOT_FOUND' } }); }, 'absent'],
    ['a preference naming another package', () => reference('splice-amulet'), 'unknown'],
    ['no answer the SDK can read', () => 'not json', 'unknown'],
    ['a wallet that will not pass the call on', () => { throw Object.assign(new Error('unsupported'), { code: 4100 }); }, 'unknown'],
  ];
  for (const [name, answer, support] of cases) t.equal(await batchingSupport(answering(answer), `taker::1220${'2'.repeat(64)}`), support, name);
});

/** Hooks that record what they are told: each status with its note, each step's states. */
function recorder() {
  const statuses: Array<{ status: ExecutionStatus; note?: string }> = [];
  const steps: StepUpdate[] = [];
  const hooks: ExecutionHooks = {
    onStatus: (status, detail) => void statuses.push(detail.note === undefined ? { status } : { status, note: detail.note }),
    onStep: (update) => void steps.push(update),
  };
  return { statuses, steps, hooks, statesOf: (index: number) => steps.filter((s) => s.index === index).map((s) => s.state) };
}

/** Each unlocked holding of the taker, by contract id: what a failed submission must leave as it was. */
const holdingsOf = (sandbox: NonNullable<TestApp['sandbox']>, party: string) =>
  Object.fromEntries(['Amulet', 'USDCx'].flatMap((instrument) => unlockedHoldings(sandbox.ledger, party, instrument).map((h) => [h.contractId, `${h.amount.toFixed()} ${instrument}`])));

const spendableOf = (sandbox: NonNullable<TestApp['sandbox']>, party: string, instrument: string) => unlockedHoldings(sandbox.ledger, party, instrument).reduce((s, h) => s.plus(h.amount), new Decimal(0));

/** The deposit offers and fee offers the taker made, ever. */
const offersBy = (sandbox: NonNullable<TestApp['sandbox']>, party: string) =>
  sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).flatMap((tx) => tx.events).filter((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction') && (e.createArgument as { transfer: { sender: string } }).transfer.sender === party).length;

t.test('with the package: a taker holding ONE CC holding and ONE USDCx holding swaps to COMPLETED, both fee legs paid in the deposit\'s transaction, the escrow released', async (t) => {
  const swap = await partnerSwap(t);
  const { sandbox, taker, plan, recipient } = swap;
  const rec = recorder();
  const result = await execute(plan, { provider: swap.provider, registries: swap.registries, client: swap.client, hooks: rec.hooks });
  t.match(result, { status: 'COMPLETED', fees: { included: true, released: true, note: null }, outcome: { agrees: true }, error: null });
  const tx = sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).find((x) => x.updateId === result.submittedUpdateId)!;
  t.equal(tx.commandId, plan.planId, 'submitted under commandId = planId');
  const offers = tx.events.filter((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction'));
  t.equal(offers.length, 3, 'the deposit and both fee legs: one transaction');
  t.match(tx.events[0], { kind: 'created', templateId: /:Splice\.Util\.Token\.Wallet\.BatchingUtilityV2:BatchingUtility$/ }, 'the utility created first');
  t.match(tx.events[1], { kind: 'exercised', choice: 'BatchingUtility_ExecuteBatch', consuming: false, actingParties: [taker] }, 'then its ExecuteBatch');
  t.match(tx.events.at(-1), { kind: 'exercised', choice: 'Archive', consuming: true, contractId: tx.events[0]!.contractId }, 'and the utility archived last');
  // The ledger's record: the update each offer was created in, and the one each was accepted in.
  const history = sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd);
  const offerOf = (step: PlanStep) => {
    const found = history.flatMap((x) => x.events.flatMap((e) => {
      const transfer = e.kind === 'created' && e.templateId.endsWith(':TransferInstruction') ? (e.createArgument as { transfer: { sender: string; receiver: string; amount: string } }).transfer : null;
      return transfer?.sender === taker && transfer.receiver === step.target && new Decimal(transfer.amount).eq(step.amount) ? [{ updateId: x.updateId, cid: e.contractId }] : [];
    }));
    t.equal(found.length, 1, `${step.kind}: one offer on the ledger`);
    return found[0]!;
  };
  const acceptedIn = (cid: string) => history.find((x) => x.events.some((e) => e.kind === 'exercised' && e.choice === 'TransferInstruction_Accept' && e.contractId === cid))?.updateId;
  const payout = history.find((x) => x.events.some((e) => e.kind === 'exercised' && e.choice === 'TransferFactory_Transfer' && (e.choiceArgument as { transfer: { receiver: string } }).transfer.receiver === taker));
  t.ok(payout, 'the pool paid the taker out');
  const deposit = offerOf(plan.steps[0]!);
  t.equal(deposit.updateId, result.submittedUpdateId, 'the deposit was offered in the update the result names');
  t.equal(acceptedIn(deposit.cid), payout!.updateId, 'the deposit accepted where the payout is');
  for (const index of [1, 2]) {
    const step = plan.steps[index]!;
    const leg = offerOf(step);
    t.equal(leg.updateId, deposit.updateId, `${step.kind}: its TransferInstruction created in the deposit's update`);
    t.equal(acceptedIn(leg.cid), payout!.updateId, `${step.kind}: accepted for its receiver in the payout's transaction: the escrow released`);
    t.strictSame(rec.statesOf(index), ['pending', 'submitted', 'accepted'], `${step.kind}: paid, then released`);
    t.equal(rec.steps.find((s) => s.index === index && s.state === 'submitted')?.updateId, leg.updateId, `${step.kind}: the hooks name the update the ledger created it in`);
  }
  t.equal(spendableOf(sandbox, recipient, 'USDCx').toFixed(), plan.steps[2]!.amount, 'the integrator holds its fee');
  t.equal(spendableOf(sandbox, plan.steps[1]!.target, 'USDCx').gte(plan.steps[1]!.amount), true, 'the service holds its fee');
  const fees = new Decimal(plan.steps[1]!.amount).plus(plan.steps[2]!.amount);
  t.equal(spendableOf(sandbox, taker, 'USDCx').toFixed(), new Decimal(5).minus(fees).plus(result.received!).toFixed(), 'the taker paid both fees from its one holding');
  t.equal(spendableOf(sandbox, taker, 'Amulet').toFixed(), '900');
});

t.test('with the package: "SLIPPAGE_FAILED returns the escrow": the deposit and both fee legs come back whole', async (t) => {
  const swap = await partnerSwap(t);
  const { sandbox, taker, plan } = swap;
  await swap.provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/move', body: { pair: 'CC/USDCx', bps: -300 } } });
  const rec = recorder();
  const result = await execute(plan, { provider: swap.provider, registries: swap.registries, hooks: rec.hooks });
  t.match(result, { status: 'SLIPPAGE_FAILED', fees: { included: true, released: false } });
  for (const index of [1, 2]) t.strictSame(rec.statesOf(index), ['pending', 'submitted', 'returned'], plan.steps[index]!.kind);
  t.equal(spendableOf(sandbox, taker, 'USDCx').toFixed(), '5', 'the fees are back');
  t.equal(spendableOf(sandbox, taker, 'Amulet').toFixed(), '1000', 'and the deposit');
});

t.test('without the package: the same plan goes fee-less, "reported in hooks and result", nothing charged', async (t) => {
  const swap = await partnerSwap(t, { sandbox: { batchingUtility: false } });
  const { sandbox, taker, plan, recipient } = swap;
  const rec = recorder();
  const result = await execute(plan, { provider: swap.provider, registries: swap.registries, client: swap.client, hooks: rec.hooks });
  const lacking = /wallet's participant lacks the batching package splice-util-token-standard-wallet.*fee-less/;
  t.match(result, { status: 'COMPLETED', fees: { included: false, released: null, note: lacking }, outcome: { agrees: true } });
  t.match(rec.statuses[0], { status: 'SUBMITTING', note: lacking }, 'the hooks say so before anything is signed');
  for (const index of [1, 2]) t.strictSame(rec.statesOf(index), ['skipped'], `${plan.steps[index]!.kind}: skipped`);
  t.equal(offersBy(sandbox, taker), 1, 'the deposit alone');
  t.equal(spendableOf(sandbox, taker, 'USDCx').toFixed(), new Decimal(5).plus(result.received!).toFixed(), 'USDCx: the payout and nothing else');
  t.equal(spendableOf(sandbox, recipient, 'USDCx').toFixed(), '0', 'no integrator fee');
});

t.test('"packagePreference: not populated when no preferred package is found": a 200 without it reads as no package, so the plan goes fee-less with the same note, nothing charged', async (t) => {
  const swap = await partnerSwap(t);
  const { sandbox, taker, plan, recipient } = swap;
  const submitted: string[] = [];
  const wallet: CantonProvider = {
    request: async (args) => {
      const params = args.params as { resource?: string; commands?: Array<Record<string, unknown>> } | undefined;
      if (args.method === 'ledgerApi' && params?.resource === '/v2/interactive-submission/preferred-package-version') return {};
      if (args.method === 'prepareExecuteAndWait') submitted.push(Object.keys(params!.commands![0]!)[0]!);
      return swap.provider.request(args);
    },
    on: (event, listener) => swap.provider.on(event, listener),
    removeListener: (event, listener) => swap.provider.removeListener(event, listener),
  };
  const rec = recorder();
  const result = await execute(plan, { provider: wallet, registries: swap.registries, client: swap.client, hooks: rec.hooks });
  const lacking = /wallet's participant lacks the batching package splice-util-token-standard-wallet.*fee-less/;
  t.match(result, { status: 'COMPLETED', fees: { included: false, released: null, note: lacking } });
  t.match(rec.statuses[0], { status: 'SUBMITTING', note: lacking }, 'the hooks say so before anything is signed');
  t.strictSame(submitted, ['ExerciseCommand'], 'no batch submitted: the deposit alone');
  for (const index of [1, 2]) t.strictSame(rec.statesOf(index), ['skipped'], `${plan.steps[index]!.kind}: skipped`);
  t.equal(offersBy(sandbox, taker), 1, 'one offer: the deposit');
  t.equal(spendableOf(sandbox, taker, 'USDCx').toFixed(), new Decimal(5).plus(result.received!).toFixed(), 'USDCx: the payout and nothing else');
  t.equal(spendableOf(sandbox, recipient, 'USDCx').toFixed(), '0', 'no integrator fee');
});

t.test('without the package, and a wallet that will not ask the participant: the batch is refused with PACKAGE_NAMES_NOT_FOUND, and the deposit goes alone under the same commandId', async (t) => {
  const swap = await partnerSwap(t, { sandbox: { batchingUtility: false } });
  const { sandbox, taker, plan } = swap;
  const submitted: string[] = [];
  const wallet: CantonProvider = {
    request: async (args) => {
      const params = args.params as { resource?: string; commands?: Array<Record<string, unknown>> } | undefined;
      if (args.method === 'ledgerApi' && params?.resource === '/v2/interactive-submission/preferred-package-version') throw Object.assign(new Error('this wallet does not pass that resource on'), { code: 4100 });
      if (args.method === 'prepareExecuteAndWait') submitted.push(Object.keys(params!.commands![0]!)[0]!);
      return swap.provider.request(args);
    },
    on: (event, listener) => swap.provider.on(event, listener),
    removeListener: (event, listener) => swap.provider.removeListener(event, listener),
  };
  const rec = recorder();
  const result = await execute(plan, { provider: wallet, registries: swap.registries, hooks: rec.hooks });
  t.strictSame(submitted, ['CreateAndExerciseCommand', 'ExerciseCommand'], 'the batch, refused; then the deposit alone');
  t.match(result, { status: 'COMPLETED', fees: { included: false, note: /lacks the batching package splice-util-token-standard-wallet/ } });
  for (const index of [1, 2]) t.strictSame(rec.statesOf(index), ['pending', 'skipped'], `${plan.steps[index]!.kind}: skipped once the batch was refused`);
  const mine = sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).filter((tx) => tx.actAs.includes(taker));
  t.strictSame(mine.map((tx) => tx.commandId), [plan.planId], 'one transaction, under the plan\'s commandId');
  t.equal(offersBy(sandbox, taker), 1);
});

for (const wallet of ['sandboxProvider', 'walletSdkProvider'] as const) {
  t.test(`"the swap also goes fee-less when the taker's holdings cannot cover the fee legs", through ${wallet}: USDCx enough for the first fee leg but not both goes fee-less, the deposit alone, no fee leg charged, the note saying what is short`, async (t) => {
    const swap = await partnerSwap(t, {}, { usdcx: false });
    const { sandbox, taker, plan, recipient } = swap;
    t.strictSame(plan.steps.map((s) => s.kind), ['venue-deposit', 'fee-escrow-lock', 'fee-transfer'], 'a deposit and two fee legs');
    const [deposit, escrow, integrator] = plan.steps as [PlanStep, PlanStep, PlanStep];
    // One unit short of both legs together: enough for either leg alone, so only a check of their sum sees it.
    const both = new Decimal(escrow.amount).plus(integrator.amount);
    const held = both.minus('0.0000000001');
    t.ok(held.gte(escrow.amount) && held.gte(integrator.amount), 'the holding covers each fee leg alone');
    await swap.fund('USDCx', held.toFixed());
    const sdk = wallet === 'walletSdkProvider' ? await SDK.create({ auth: { method: 'static', token: sandbox.ledgerToken }, ledgerClientUrl: sandbox.manifest.ledger, logAdapter: new CustomLogAdapter(() => {}) }) : null;
    const inner = sdk ? walletSdkProvider({ sdk, party: taker }) : swap.provider;
    const submitted: string[] = [];
    const provider: CantonProvider = {
      request: (args) => {
        if (args.method === 'prepareExecuteAndWait' || args.method === 'prepareExecute') submitted.push(...(args.params as { commands: Array<Record<string, unknown>> }).commands.map((c) => Object.keys(c)[0]!));
        return inner.request(args);
      },
      on: (event, listener) => inner.on(event, listener),
      removeListener: (event, listener) => inner.removeListener(event, listener),
    };
    const rec = recorder();
    const result = await execute(plan, { provider, registries: swap.registries, client: swap.client, hooks: rec.hooks });
    const short = `the fee-escrow-lock and fee-transfer legs need ${both.toFixed()} USDCx together and the party holds ${held.toFixed()} USDCx spendable, 0.0000000001 short: the deposit goes alone, fee-less`;
    t.match(result, { status: 'COMPLETED', fees: { included: false, released: null, note: short }, outcome: { agrees: true }, error: null }, 'COMPLETED, fee-less, with the reason');
    t.strictSame(rec.statuses.map((s) => s.status), ['SUBMITTING', 'INITIATED', 'COMPLETED'], 'never SUBMIT_FAILED');
    t.strictSame(rec.statuses[0], { status: 'SUBMITTING', note: short }, 'the hooks say so before anything is signed');
    t.equal(rec.statuses.at(-1)!.note, short, 'and again at the end');
    t.strictSame(rec.statesOf(0), ['pending', 'submitted', 'accepted'], 'the deposit, swapped');
    for (const index of [1, 2]) t.strictSame(rec.statesOf(index), ['skipped'], `${plan.steps[index]!.kind}: skipped`);
    t.strictSame(submitted, ['ExerciseCommand'], 'one submission, no batch: the deposit alone');
    const transfers = sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).flatMap((tx) => tx.events).flatMap((e) => {
      const transfer = e.kind === 'created' && e.templateId.endsWith(':TransferInstruction') ? (e.createArgument as { transfer: { sender: string; receiver: string; amount: string; instrumentId: { id: string } } }).transfer : null;
      return transfer?.sender === taker ? [[transfer.receiver, transfer.instrumentId.id, new Decimal(transfer.amount).toFixed()]] : [];
    });
    t.strictSame(transfers, [[deposit.target, deposit.instrument, deposit.amount]], 'the ledger holds one transfer by the taker: the deposit');
    t.equal(spendableOf(sandbox, taker, 'USDCx').toFixed(), held.plus(result.received ?? 0).toFixed(), 'USDCx: its holding untouched, plus the payout');
    t.equal(spendableOf(sandbox, taker, 'Amulet').toFixed(), new Decimal(1000).minus(deposit.amount).toFixed(), 'CC: less the deposit');
    t.equal(spendableOf(sandbox, escrow.target, 'USDCx').toFixed(), '0', 'no service fee');
    t.equal(spendableOf(sandbox, recipient, 'USDCx').toFixed(), '0', 'no integrator fee');
  });
}

for (const failing of ['the first fee leg', 'the second fee leg'] as const) {
  t.test(`with the package, an action the ledger refuses (the USDCx holding too small for ${failing}): SUBMIT_FAILED with the ledger's reason, every holding as it was`, async (t) => {
    const swap = await partnerSwap(t, {}, { usdcx: false });
    const { sandbox, taker, plan } = swap;
    // One USDCx holding, one unit short of the first fee leg, or of both together (enough for the
    // first, not for what it leaves to the second). A wallet whose view of that holding is stale
    // (it reports 5 USDCx more) lets the SDK's own check pass; the ledger runs the batch on the real one.
    const [first, second] = [new Decimal(plan.steps[1]!.amount), new Decimal(plan.steps[2]!.amount)];
    const action = failing === 'the first fee leg' ? 1 : 2;
    await swap.fund('USDCx', (action === 1 ? first : first.plus(second)).minus('0.0000000001').toFixed());
    const [usdcx] = unlockedHoldings(sandbox.ledger, taker, 'USDCx');
    const stale: CantonProvider = {
      request: async (args) => {
        const answer = await swap.provider.request(args);
        const params = args.params as { resource?: string } | undefined;
        if (args.method !== 'ledgerApi' || params?.resource !== '/v2/state/active-contracts') return answer;
        return (answer as Array<{ contractEntry?: { JsActiveContract?: { createdEvent: { contractId: string; interfaceViews?: Array<{ viewValue: { amount?: string } }> } } } }>).map((entry) => {
          const created = entry.contractEntry?.JsActiveContract?.createdEvent;
          if (created?.contractId !== usdcx!.contractId) return entry;
          const interfaceViews = created.interfaceViews?.map((v) => ({ ...v, viewValue: { ...v.viewValue, amount: new Decimal(v.viewValue.amount!).plus(5).toFixed() } }));
          return { contractEntry: { JsActiveContract: { ...entry.contractEntry!.JsActiveContract!, createdEvent: { ...created, interfaceViews } } } };
        });
      },
      on: (event, listener) => swap.provider.on(event, listener),
      removeListener: (event, listener) => swap.provider.removeListener(event, listener),
    };
    const before = holdingsOf(sandbox, taker);
    const end = sandbox.ledger.ledgerEnd;
    const result = await execute(plan, { provider: stale, registries: swap.registries });
    t.match(result, { status: 'SUBMIT_FAILED', fees: { included: true }, error: { code: 'submit_failed', message: new RegExp(`actions\\[${action}\\] \\(TSA_TransferFactory_TransferV1\\): the input holdings hold [0-9.]+ USDCx; the transfer needs [0-9.]+`) } });
    t.strictSame(holdingsOf(sandbox, taker), before, 'every holding as it was: the same contracts, the same amounts');
    t.equal(sandbox.ledger.ledgerEnd, end, 'nothing committed');
    t.equal(offersBy(sandbox, taker), 0, 'no offer, not even the deposit');
  });
}

t.test('"PACKAGE_NAMES_NOT_FOUND reaches the SDK through each provider": the participant\'s answer to the package query, and to a batch, read as the ledger\'s refusal with that code', async (t) => {
  const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1' }, sandbox: { batchingUtility: false } });
  t.teardown(app.close);
  const sandbox = app.sandbox!;
  const taker = `sdk-batch-${++takers}::1220${'5'.repeat(64)}`;
  const sdk = await SDK.create({ auth: { method: 'static', token: sandbox.ledgerToken }, ledgerClientUrl: sandbox.manifest.ledger, logAdapter: new CustomLogAdapter(() => {}) });
  const extension = extensionWallet(sandbox, taker);
  const remote = await remoteGateway(sandbox, taker);
  t.teardown(() => Promise.all([extension.close(), remote.close()]).then(() => undefined));
  // The official providers are what execute() takes, typed as their packages type them.
  const extensionProvider: CantonProvider = extension.provider;
  const remoteProvider: CantonProvider = remote.provider;
  const providers: ReadonlyArray<readonly [string, CantonProvider, boolean]> = [
    ['sandboxProvider', sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party: taker }), true],
    ['walletSdkProvider', walletSdkProvider({ sdk, party: taker }), true],
    ['dapp-sdk extension pair', extensionProvider, true],
    // The remote API's prepareExecute answers before the ledger does: a refusal comes as a failed txChanged only.
    ['dapp-sdk remote pair', remoteProvider, false],
  ];
  const batch = { CreateAndExerciseCommand: { templateId: BATCHING, createArguments: { user: taker }, choice: 'BatchingUtility_ExecuteBatch', choiceArgument: { inputHoldingMap: { byAdminAndAccount: [] }, actions: [], archiveAfterExecution: true } } };
  for (const [name, provider, submitRefusal] of providers) {
    const query = provider.request({ method: 'ledgerApi', params: { requestMethod: 'get', resource: '/v2/interactive-submission/preferred-package-version', query: { 'package-name': 'splice-util-token-standard-wallet', parties: taker } } });
    const queried = await query.then(() => null, (err: unknown) => err);
    t.strictSame(queried === null ? null : readRefusal(queried, 'ledgerApi'), { kind: 'refused', ledgerCode: 'PACKAGE_NAMES_NOT_FOUND' }, `${name}: the package query`);
    if (!submitRefusal) continue;
    const method = 'prepareExecuteAndWait';
    const submitted = await provider.request({ method, params: { commands: [batch], commandId: `probe-${name.replace(/\W/g, '-')}`, actAs: [taker], readAs: [taker], disclosedContracts: [] } }).then(() => null, (err: unknown) => err);
    t.strictSame(submitted === null ? null : readRefusal(submitted, method), { kind: 'refused', ledgerCode: 'PACKAGE_NAMES_NOT_FOUND' }, `${name}: a batch`);
  }
});
