// A Daml transaction as a participant records it: a forest of action nodes, each exercise owning
// the nodes it caused. Committing numbers the nodes in pre-order (the JSON Ledger API's `nodeId`),
// gives each exercise the id of its last descendant, and computes who witnessed each node: the
// informees of the node itself and of every ancestor, as Daml's ledger model projects a
// transaction to each party.
import type { DamlType } from './daml-types.js';

export interface NodeCommon {
  readonly contractId: string;
  readonly templateId: string;
  readonly packageName: string;
  /** The interfaces the contract's template implements (an interface filter on any shows the node). */
  readonly interfaces: readonly string[];
  readonly signatories: readonly string[];
  readonly observers: readonly string[];
}

export interface CreateNode extends NodeCommon {
  readonly kind: 'created';
  readonly createArgument: unknown;
  /** Its Daml type, where the sandbox knows it (a prepared transaction types the other values by their field names). */
  readonly argumentType?: DamlType;
  /** The interface views by interface id. */
  readonly views: Readonly<Record<string, unknown>>;
}

export interface ExerciseNode extends NodeCommon {
  readonly kind: 'exercised';
  /** The interface the choice was exercised through, or null for a template choice. */
  readonly interfaceId: string | null;
  readonly choice: string;
  readonly choiceArgument: unknown;
  /** The Daml types of the choice's argument and result, where the sandbox knows them. */
  readonly argumentType?: DamlType;
  readonly resultType?: DamlType;
  readonly actingParties: readonly string[];
  /** Parties the choice itself discloses the exercise to (Daml's choice observers). */
  readonly choiceObservers?: readonly string[];
  readonly consuming: boolean;
  readonly exerciseResult: unknown;
  readonly children: readonly ActionNode[];
}

export type ActionNode = CreateNode | ExerciseNode;

/** A node as committed: its pre-order id and its witnesses; an exercise's children replaced by the span they take. */
export type CommittedNode =
  | (CreateNode & { readonly nodeId: number; readonly witnesses: readonly string[] })
  | (Omit<ExerciseNode, 'children'> & { readonly nodeId: number; readonly lastDescendantNodeId: number; readonly witnesses: readonly string[] });

const unique = (parties: Iterable<string>) => [...new Set(parties)];

/** The parties a node is shown to on its own (Daml's informees). */
function informees(node: ActionNode): string[] {
  if (node.kind === 'created') return unique([...node.signatories, ...node.observers]);
  // A consuming choice informs every stakeholder; a non-consuming one its signatories only.
  return unique([...node.signatories, ...(node.consuming ? node.observers : []), ...node.actingParties, ...(node.choiceObservers ?? [])]);
}

/** The forest's nodes in pre-order, numbered from 0. */
export function commitNodes(roots: readonly ActionNode[]): CommittedNode[] {
  const out: CommittedNode[] = [];
  const visit = (node: ActionNode, inherited: readonly string[]) => {
    const witnesses = unique([...inherited, ...informees(node)]);
    const nodeId = out.length;
    if (node.kind === 'created') {
      out.push({ ...node, nodeId, witnesses });
      return;
    }
    const { children, ...exercise } = node;
    const index = out.length;
    out.push({ ...exercise, nodeId, lastDescendantNodeId: nodeId, witnesses });
    for (const child of children) visit(child, witnesses);
    out[index] = { ...exercise, nodeId, lastDescendantNodeId: out.length - 1, witnesses };
  };
  for (const root of roots) visit(root, []);
  return out;
}
