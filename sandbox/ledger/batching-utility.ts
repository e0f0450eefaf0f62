// Splice's CIP-0112 batching utility (package splice-util-token-standard-wallet, module
// Splice.Util.Token.Wallet.BatchingUtilityV2): its Daml types, the command that creates a
// `BatchingUtility {user}` and exercises `BatchingUtility_ExecuteBatch` on it, and the holding map
// the choice threads from one action into the next, written from the module's source
// (hyperledger-labs/splice, commit 0085938849c8477078c31f283cab2705ebe45c5d): getHoldingsForInstrument,
// holdingMapFromTransferV1 and the map's merge, so that a batch's outputHoldingMap is the one
// Daml computes. The ledger's staging runs the actions (staging.ts).
import { RESULTS } from '../../core/ledger/token-standard.js';
import { checkValue, compareValues, T, type DamlType } from './daml-types.js';

/** The package, as a participant that has it lists it. */
export const BATCHING_UTILITY_PACKAGE = { id: 'b7'.repeat(32), name: 'splice-util-token-standard-wallet', version: '1.0.0' } as const;

const MODULE = 'Splice.Util.Token.Wallet.BatchingUtilityV2';
export const BATCHING_UTILITY_TEMPLATE = `${BATCHING_UTILITY_PACKAGE.id}:${MODULE}:BatchingUtility`;
/** The template as a command names it by package name. */
export const BATCHING_UTILITY_TEMPLATE_BY_NAME = `#${BATCHING_UTILITY_PACKAGE.name}:${MODULE}:BatchingUtility`;
export const EXECUTE_BATCH = 'BatchingUtility_ExecuteBatch';
export const TRANSFER_V1 = 'TSA_TransferFactory_TransferV1';
const TRANSFER_RESULT_V1 = 'TSAR_TransferInstructionResultV1';

// The token standard's V1 types (splice-api-token-metadata-v1, -holding-v1, -transfer-instruction-v1).
const anyValue: DamlType = T.variant('AnyValue', () => ({
  AV_Text: T.text, AV_Int: T.int64, AV_Decimal: T.decimal, AV_Bool: T.bool, AV_Date: T.date, AV_Time: T.time,
  AV_RelTime: T.record('RelTime', [['microseconds', T.int64]]), AV_Party: T.party, AV_ContractId: T.contractId,
  AV_List: T.list(anyValue), AV_Map: T.textMap(anyValue),
}));
const metadata = T.record('Metadata', [['values', T.textMap(T.text)]]);
const instrumentId = T.record('InstrumentId', [['admin', T.party], ['id', T.text]]);
const transferV1 = T.record('Transfer', [
  ['sender', T.party], ['receiver', T.party], ['amount', T.decimal], ['instrumentId', instrumentId], ['requestedAt', T.time],
  ['executeBefore', T.time], ['inputHoldingCids', T.list(T.contractId)], ['meta', metadata],
]);
const extraArgs = T.record('ExtraArgs', [['context', T.record('ChoiceContext', [['values', T.textMap(anyValue)]])], ['meta', metadata]]);
const transferFactoryTransferV1 = T.record('TransferFactory_Transfer', [['expectedAdmin', T.party], ['transfer', transferV1], ['extraArgs', extraArgs]]);
const transferInstructionResultV1 = T.record('TransferInstructionResult', [
  ['output', T.variant('TransferInstructionResult_Output', () => ({
    TransferInstructionResult_Pending: T.record('TransferInstructionResult_Pending', [['transferInstructionCid', T.contractId]]),
    TransferInstructionResult_Completed: T.record('TransferInstructionResult_Completed', [['receiverHoldingCids', T.list(T.contractId)]]),
    TransferInstructionResult_Failed: T.unit,
  }))],
  ['senderChangeCids', T.list(T.contractId)],
  ['meta', metadata],
]);

// The package's own types.
const account = T.record('Account', [['provider', T.optional(T.party)], ['id', T.optional(T.text)], ['owner', T.party]]);
const scopedAccount = T.record('ScopedAccount', [['admin', T.party], ['account', account]]);
const holdingMap = T.record('HoldingMap', [['byAdminAndAccount', T.genMap(scopedAccount, T.textMap(T.list(T.contractId)))]]);
const choiceCall = (arg: DamlType) => T.record('ChoiceCall', [['cid', T.contractId], ['arg', arg]]);
/**
 * The actions the sandbox does not run: their choice calls are not checked (it has none of the V2
 * interfaces they name), and the ledger refuses them by name.
 */
export const UNSERVED_ACTIONS = [
  'TSA_TransferFactory_TransferV2', 'TSA_TransferInstruction_AcceptV1', 'TSA_TransferInstruction_AcceptV2',
  'TSA_AllocationFactory_AllocateV1', 'TSA_AllocationFactory_AllocateV2', 'TSA_AllocationRequestV2_Accept',
] as const;
const action = T.variant('TokenStandardAction', () => ({
  [TRANSFER_V1]: choiceCall(transferFactoryTransferV1),
  ...Object.fromEntries(UNSERVED_ACTIONS.map((tag) => [tag, T.unchecked])),
}));
const actionResult = T.variant('TokenStandardActionResult', () => ({ [TRANSFER_RESULT_V1]: transferInstructionResultV1 }));

export const BATCHING_TYPES = {
  template: T.record('BatchingUtility', [['user', T.party]]),
  executeBatch: T.record(EXECUTE_BATCH, [['inputHoldingMap', holdingMap], ['actions', T.list(action)], ['archiveAfterExecution', T.bool]]),
  executeBatchResult: T.record('BatchingUtility_ExecuteBatchResult', [['actionResults', T.list(actionResult)], ['outputHoldingMap', holdingMap]]),
} as const;

export interface Account {
  readonly provider: string | null;
  readonly id: string | null;
  readonly owner: string;
}
export interface ScopedAccount {
  readonly admin: string;
  readonly account: Account;
}
/** A HoldingMap's byAdminAndAccount as its JSON: [key, {instrument id: holding cids}] pairs, ordered by key. */
export type HoldingMap = ReadonlyArray<readonly [ScopedAccount, Readonly<Record<string, readonly string[]>>]>;

/** A checked V1 TransferFactory_Transfer call. */
export interface TransferCall {
  readonly cid: string;
  readonly arg: {
    readonly expectedAdmin: string;
    readonly transfer: { readonly sender: string; readonly receiver: string; readonly instrumentId: { readonly admin: string; readonly id: string }; readonly inputHoldingCids: readonly string[] } & Record<string, unknown>;
    readonly extraArgs: unknown;
  };
}

/** A checked BatchingUtility_ExecuteBatch command. */
export interface BatchCommand {
  readonly kind: 'batch';
  readonly user: string;
  /** The choice argument as Canton renders it: normalised. */
  readonly argument: { readonly inputHoldingMap: { readonly byAdminAndAccount: HoldingMap }; readonly actions: ReadonlyArray<{ readonly tag: string; readonly value: unknown }>; readonly archiveAfterExecution: boolean };
}

/** A command's template and choice are the utility's: checks its arguments against the package's types. */
export function readBatchCommand(createArguments: unknown, choiceArgument: unknown): BatchCommand {
  const created = checkValue(BATCHING_TYPES.template, createArguments, 'createArguments') as { user: string };
  const argument = checkValue(BATCHING_TYPES.executeBatch, choiceArgument, 'choiceArgument') as BatchCommand['argument'];
  return { kind: 'batch', user: created.user, argument };
}

export const basicAccount = (owner: string): Account => ({ provider: null, id: null, owner });

const sameKey = (a: ScopedAccount, b: ScopedAccount) => compareValues(scopedAccount, a, b) === 0;

/** getHoldingsForInstrument: the account's holdings of the instrument, and the map with that instrument's entry taken out (the account's other instruments stay). */
export function takeHoldings(map: HoldingMap, account: Account, instrument: { admin: string; id: string }): { inputs: string[]; rest: HoldingMap } {
  const key: ScopedAccount = { admin: instrument.admin, account };
  const found = map.find(([k]) => sameKey(k, key));
  if (!found) return { inputs: [], rest: map };
  const { [instrument.id]: inputs = [], ...others } = found[1];
  return { inputs: [...inputs], rest: map.map((entry) => (entry === found ? [entry[0], others] as const : entry)) };
}

/** holdingMapFromList: entries of one key united (lists concatenated in list order), empty TextMaps dropped, keys ordered. */
function fromList(entries: HoldingMap): HoldingMap {
  const out: Array<readonly [ScopedAccount, Readonly<Record<string, readonly string[]>>]> = [];
  for (const [key, value] of entries) {
    const at = out.findIndex(([k]) => sameKey(k, key));
    if (at === -1) out.push([key, value]);
    else out[at] = [key, unionWithConcat(out[at]![1], value)];
  }
  return sorted(out.filter(([, value]) => Object.keys(value).length > 0));
}

/** textMapUnionWith (++): keys of both, a shared key's lists concatenated, the first map's first. */
function unionWithConcat(a: Readonly<Record<string, readonly string[]>>, b: Readonly<Record<string, readonly string[]>>): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = { ...b, ...a };
  for (const key of Object.keys(a)) if (b[key]) out[key] = [...a[key]!, ...b[key]!];
  return Object.fromEntries(Object.entries(out).sort(([x], [y]) => compareValues(T.text, x, y)));
}

const sorted = (map: Array<readonly [ScopedAccount, Readonly<Record<string, readonly string[]>>]>): HoldingMap => map.sort(([a], [b]) => compareValues(scopedAccount, a, b));

/** holdingMapMerge (the map's `<>`): keys of both; a shared key's TextMaps united; empty TextMaps dropped. */
export function mergeHoldingMaps(first: HoldingMap, second: HoldingMap): HoldingMap {
  const out: Array<readonly [ScopedAccount, Readonly<Record<string, readonly string[]>>]> = [];
  for (const [key, value] of first) {
    const other = second.find(([k]) => sameKey(k, key));
    out.push([key, other ? unionWithConcat(value, other[1]) : value]);
  }
  for (const entry of second) if (!first.some(([k]) => sameKey(k, entry[0]))) out.push(entry);
  return sorted(out.filter(([, value]) => Object.keys(value).length > 0));
}

/** holdingMapFromTransferV1: the sender's change, and the receiver's holdings when the transfer completed, under each one's basic account. */
export function holdingMapFromTransferV1(
  transfer: { sender: string; receiver: string; instrumentId: { admin: string; id: string } },
  result: { output: { tag: string; value: unknown }; senderChangeCids: readonly string[] },
): HoldingMap {
  const { admin, id } = transfer.instrumentId;
  const receiverCids = result.output.tag === RESULTS.completed ? (result.output.value as { receiverHoldingCids: string[] }).receiverHoldingCids : [];
  return fromList([
    [{ admin, account: basicAccount(transfer.sender) }, { [id]: [...result.senderChangeCids] }],
    [{ admin, account: basicAccount(transfer.receiver) }, { [id]: receiverCids }],
  ]);
}

/** A V1 transfer's result as the batch reports it. */
export const transferResult = (result: unknown) => ({ tag: TRANSFER_RESULT_V1, value: result });

