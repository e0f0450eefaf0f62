// An interactive submission's prepared transaction, as a Canton 3.4 participant hands it to an
// external party to sign: the transaction tree and its metadata as the Ledger API's
// `PreparedTransaction` protobuf (@canton-network/core-ledger-proto), and its hash under Canton's
// hashing scheme V2, written here from the scheme's specification so that the official packages
// that re-hash a prepared transaction (core-tx-visualizer, wallet-sdk) check this one.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { PreparedTransaction, type Value } from '@canton-network/core-ledger-proto';
import { Decimal } from '../../core/decimal.js';
import { typedValue, type DamlType } from './daml-types.js';
import type { ActionNode, CreateNode } from './transaction-tree.js';

type Proto = ReturnType<typeof PreparedTransaction.create>;
type Identifier = { packageId: string; moduleName: string; entityName: string };
interface ExerciseProto {
  lfVersion: string; contractId: string; packageName: string; templateId?: Identifier; signatories: string[]; stakeholders: string[]; actingParties: string[];
  interfaceId?: Identifier; choiceId: string; chosenValue?: Value; consuming: boolean; exerciseResult?: Value; choiceObservers: string[]; children: string[];
}

/** The Daml-LF version the sandbox's packages are written in. */
const LF_VERSION = '2.1';

/** The sandbox token's field types, by field name: what a typed Daml value needs and JSON does not say. */
const PARTY_FIELDS = new Set(['owner', 'sender', 'receiver', 'admin', 'expectedAdmin', 'holders']);
const NUMERIC_FIELDS = new Set(['amount']);
const TIME_FIELDS = new Set(['requestedAt', 'executeBefore', 'expiresAt']);
const CONTRACT_ID_FIELDS = new Set(['inputHoldingCids', 'lockedAmulet', 'receiverHoldingCids', 'senderChangeCids', 'transferInstructionCid', 'originalInstructionCid']);
const TEXT_MAP_FIELDS = new Set(['values']);

const identifier = (id: string): Identifier => {
  const [packageId, moduleName, entityName] = id.split(':') as [string, string, string];
  return { packageId, moduleName, entityName };
};

/** A JSON Ledger API value as the typed Daml value it encodes, its type read from the field it sits in. */
export function damlValue(json: unknown, field = ''): Value {
  if (json === null || json === undefined) return { sum: { oneofKind: 'optional', optional: {} } };
  if (Array.isArray(json)) return { sum: { oneofKind: 'list', list: { elements: json.map((e) => damlValue(e, field)) } } };
  if (typeof json === 'boolean') return { sum: { oneofKind: 'bool', bool: json } };
  if (typeof json === 'string') {
    if (PARTY_FIELDS.has(field)) return { sum: { oneofKind: 'party', party: json } };
    if (NUMERIC_FIELDS.has(field)) return { sum: { oneofKind: 'numeric', numeric: new Decimal(json).toFixed(10) } };
    if (TIME_FIELDS.has(field)) return { sum: { oneofKind: 'timestamp', timestamp: String(BigInt(Date.parse(json)) * 1000n) } };
    if (CONTRACT_ID_FIELDS.has(field)) return { sum: { oneofKind: 'contractId', contractId: json } };
    return { sum: { oneofKind: 'text', text: json } };
  }
  if (typeof json === 'number') return { sum: { oneofKind: 'int64', int64: String(json) } };
  const object = json as Record<string, unknown>;
  if (TEXT_MAP_FIELDS.has(field)) return { sum: { oneofKind: 'textMap', textMap: { entries: Object.entries(object).map(([key, value]) => ({ key, value: damlValue(value) })) } } };
  const keys = Object.keys(object);
  if (keys.length === 2 && typeof object.tag === 'string' && 'value' in object) {
    return { sum: { oneofKind: 'variant', variant: { constructor: object.tag, value: damlValue(object.value, object.tag) } } };
  }
  return { sum: { oneofKind: 'record', record: { fields: keys.map((label) => ({ label, value: damlValue(object[label], label) })) } } };
}

/** A node's value: typed by its Daml type where the node carries it, else by its field names. */
const valueOf = (json: unknown, type: DamlType | undefined): Value => (type ? typedValue(type, json) : damlValue(json));

const stakeholdersOf = (node: ActionNode) => [...new Set([...node.signatories, ...node.observers])];

function createOf(node: CreateNode) {
  return {
    lfVersion: LF_VERSION, contractId: node.contractId, packageName: node.packageName, templateId: identifier(node.templateId),
    argument: valueOf(node.createArgument, node.argumentType), signatories: [...node.signatories], stakeholders: stakeholdersOf(node),
  };
}

export interface PreparedMetadata {
  readonly actAs: readonly string[];
  readonly commandId: string;
  readonly synchronizerId: string;
  readonly preparationTime: Date;
  /** The contracts the transaction uses that it does not create, with when they were created and their blobs. */
  readonly inputContracts: ReadonlyArray<{ readonly created: CreateNode; readonly createdAt: string; readonly blob: string }>;
}

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;

/** The protobuf a participant prepares for `roots`: nodes in pre-order, a seed for each, and the metadata. */
export function preparedTransaction(roots: readonly ActionNode[], meta: PreparedMetadata): Proto {
  const nodes: Proto['transaction'] extends infer T ? (T extends { nodes: infer N } ? N : never) : never = [];
  const seeds: Array<{ nodeId: number; seed: Uint8Array }> = [];
  const add = (node: ActionNode): string => {
    const nodeId = String(nodes.length);
    seeds.push({ nodeId: nodes.length, seed: randomBytes(32) });
    const index = nodes.length;
    nodes.push(null as never);
    if (node.kind === 'created') {
      nodes[index] = { nodeId, versionedNode: { oneofKind: 'v1', v1: { nodeType: { oneofKind: 'create', create: createOf(node) } } } };
      return nodeId;
    }
    const children = node.children.map(add);
    nodes[index] = {
      nodeId,
      versionedNode: {
        oneofKind: 'v1',
        v1: {
          nodeType: {
            oneofKind: 'exercise',
            exercise: {
              lfVersion: LF_VERSION, contractId: node.contractId, packageName: node.packageName, templateId: identifier(node.templateId),
              signatories: [...node.signatories], stakeholders: stakeholdersOf(node), actingParties: [...node.actingParties],
              ...(node.interfaceId === null ? {} : { interfaceId: identifier(node.interfaceId) }),
              choiceId: node.choice, chosenValue: valueOf(node.choiceArgument, node.argumentType), consuming: node.consuming, children,
              exerciseResult: valueOf(node.exerciseResult, node.resultType), choiceObservers: [...(node.choiceObservers ?? [])],
            },
          },
        },
      },
    };
    return nodeId;
  };
  const rootIds = roots.map(add);
  return PreparedTransaction.create({
    transaction: { version: LF_VERSION, roots: rootIds, nodes, nodeSeeds: seeds },
    metadata: {
      submitterInfo: { actAs: [...meta.actAs], commandId: meta.commandId },
      synchronizerId: meta.synchronizerId,
      mediatorGroup: 0,
      transactionUuid: randomUUID(),
      preparationTime: micros(meta.preparationTime.toISOString()),
      inputContracts: meta.inputContracts.map((input) => ({ contract: { oneofKind: 'v1', v1: createOf(input.created) }, createdAt: micros(input.createdAt), eventBlob: Buffer.from(input.blob, 'base64') })),
      globalKeyMapping: [],
    },
  });
}

// Hashing scheme V2: every value written with its length or count first, big-endian.
const PURPOSE = Buffer.from([0, 0, 0, 0x30]);
const sha256 = (...parts: Buffer[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const text = (s: string) => {
  const bytes = Buffer.from(s, 'utf8');
  return Buffer.concat([int32(bytes.length), bytes]);
};
const hexBytes = (s: string) => {
  const bytes = Buffer.from(s, 'hex');
  return Buffer.concat([int32(bytes.length), bytes]);
};
const many = <T>(items: readonly T[], encode: (item: T) => Buffer) => Buffer.concat([int32(items.length), ...items.map(encode)]);
const optional = <T>(item: T | undefined, encode: (item: T) => Buffer) => (item === undefined ? Buffer.from([0]) : Buffer.concat([Buffer.from([1]), encode(item)]));
const ident = (id: Identifier | undefined) => {
  const { packageId, moduleName, entityName } = id ?? { packageId: '', moduleName: '', entityName: '' };
  return Buffer.concat([text(packageId), many(moduleName.split('.'), text), many(entityName.split('.'), text)]);
};

function valueBytes(value: Value | undefined): Buffer {
  const sum = value?.sum;
  switch (sum?.oneofKind) {
    case 'unit': return Buffer.from([0]);
    case 'bool': return Buffer.from([1, sum.bool ? 1 : 0]);
    case 'int64': return Buffer.concat([Buffer.from([2]), int64(BigInt(sum.int64))]);
    case 'numeric': return Buffer.concat([Buffer.from([3]), text(sum.numeric)]);
    case 'timestamp': return Buffer.concat([Buffer.from([4]), int64(BigInt(sum.timestamp))]);
    case 'date': return Buffer.concat([Buffer.from([5]), int32(sum.date)]);
    case 'party': return Buffer.concat([Buffer.from([6]), text(sum.party)]);
    case 'text': return Buffer.concat([Buffer.from([7]), text(sum.text)]);
    case 'contractId': return Buffer.concat([Buffer.from([8]), hexBytes(sum.contractId)]);
    case 'optional': return Buffer.concat([Buffer.from([9]), optional(sum.optional.value, valueBytes)]);
    case 'list': return Buffer.concat([Buffer.from([0x0a]), many(sum.list.elements, valueBytes)]);
    case 'textMap': return Buffer.concat([Buffer.from([0x0b]), many(sum.textMap.entries, (e) => Buffer.concat([text(e.key), valueBytes(e.value)]))]);
    case 'record':
      return Buffer.concat([Buffer.from([0x0c]), optional(sum.record.recordId, ident), many(sum.record.fields, (f) => Buffer.concat([optional(f.label, text), valueBytes(f.value)]))]);
    case 'variant': return Buffer.concat([Buffer.from([0x0d]), optional(sum.variant.variantId, ident), text(sum.variant.constructor), valueBytes(sum.variant.value)]);
    case 'enum': return Buffer.concat([Buffer.from([0x0e]), optional(sum.enum.enumId, ident), text(sum.enum.constructor)]);
    case 'genMap': return Buffer.concat([Buffer.from([0x0f]), many(sum.genMap.entries, (e) => Buffer.concat([valueBytes(e.key), valueBytes(e.value)]))]);
    default: throw new Error('a Daml value without a type cannot be hashed');
  }
}

/** The V2 hash of a prepared transaction: what its submitting parties sign. */
export function hashPrepared(prepared: Proto): Buffer {
  const tx = prepared.transaction!;
  const meta = prepared.metadata!;
  const byId = new Map(tx.nodes.map((n) => [n.nodeId, n]));
  const seedOf = (nodeId: string) => tx.nodeSeeds.find((s) => String(s.nodeId) === nodeId)?.seed;
  const nodeHash = (nodeId: string): Buffer => {
    const node = byId.get(nodeId);
    if (node?.versionedNode.oneofKind !== 'v1') throw new Error(`node ${nodeId} is not a v1 node`);
    return sha256(nodeBytes(node.versionedNode.v1.nodeType, seedOf(nodeId)));
  };
  const createBytes = (create: ReturnType<typeof createOf>, seed: Uint8Array | undefined) =>
    Buffer.concat([
      Buffer.from([1]), text(create.lfVersion), Buffer.from([0]), optional(seed, (s) => Buffer.from(s)), hexBytes(create.contractId), text(create.packageName),
      ident(create.templateId), valueBytes(create.argument), many(create.signatories, text), many(create.stakeholders, text),
    ]);
  const nodeBytes = (nodeType: { oneofKind: string | undefined } & Record<string, unknown>, seed: Uint8Array | undefined): Buffer => {
    if (nodeType.oneofKind === 'create') return createBytes(nodeType.create as ReturnType<typeof createOf>, seed);
    if (nodeType.oneofKind !== 'exercise') throw new Error(`the sandbox prepares no ${nodeType.oneofKind ?? 'empty'} nodes`);
    const e = nodeType.exercise as ExerciseProto;
    if (!seed) throw new Error('an exercise node needs its seed');
    return Buffer.concat([
      Buffer.from([1]), text(e.lfVersion), Buffer.from([1]), Buffer.from(seed), hexBytes(e.contractId), text(e.packageName), ident(e.templateId),
      many(e.signatories, text), many(e.stakeholders, text), many(e.actingParties, text), optional(e.interfaceId, ident), text(e.choiceId),
      valueBytes(e.chosenValue), Buffer.from([e.consuming ? 1 : 0]), optional(e.exerciseResult, valueBytes), many(e.choiceObservers, text),
      many(e.children, nodeHash),
    ]);
  };
  const txHash = sha256(PURPOSE, text(tx.version), many(tx.roots, nodeHash));
  const metaHash = sha256(
    PURPOSE, Buffer.from([1]), many(meta.submitterInfo?.actAs ?? [], text), text(meta.submitterInfo?.commandId ?? ''), text(meta.transactionUuid),
    int32(meta.mediatorGroup), text(meta.synchronizerId), optional(meta.minLedgerEffectiveTime, int64), optional(meta.maxLedgerEffectiveTime, int64),
    int64(meta.preparationTime),
    many(meta.inputContracts, (ic) => {
      if (ic.contract.oneofKind !== 'v1') throw new Error('an input contract must be a v1 create');
      return Buffer.concat([int64(ic.createdAt), sha256(createBytes(ic.contract.v1 as ReturnType<typeof createOf>, undefined))]);
    }),
  );
  return sha256(PURPOSE, Buffer.from([2]), txHash, metaHash);
}

export const encodePrepared = (prepared: Proto) => Buffer.from(PreparedTransaction.toBinary(prepared)).toString('base64');
export const decodePrepared = (base64: string): Proto => PreparedTransaction.fromBinary(Buffer.from(base64, 'base64'));
