// The ledger commands of a plan: its deposit alone, the deposit with its fee legs as one CIP-0112
// batch, and the withdraw of a deposit no pool answered, each transfer with its registry's factory.
import { batchCommand, distinctDisclosures, type BatchTransfer } from '../batching.js';
import type { OwnHolding } from '../ledger-view.js';
import type { DisclosedContract, LedgerCommand } from '../provider.js';
import { CHOICES, REASON_KEY, TRANSFER_FACTORY, TRANSFER_INSTRUCTION } from '../generated/token-standard.js';
import type { Executable, ExecutableStep } from './executable.js';
import type { ExecuteOptions } from './options.js';
import { transferFactory, type Factory } from './registry.js';

/** How far in the past a transfer's requestedAt is set. */
const REQUESTED_AT_SKEW_MS = 60_000;

/**
 * A step to transfer, of the instrument's admin (the plan's, else its holdings'), from its
 * holdings: `inputs`, or none where a batch gives them.
 */
interface Leg {
  readonly step: ExecutableStep;
  /** The step's index in the plan. */
  readonly index: number;
  readonly admin: string;
  readonly inputs: readonly string[];
}

/**
 * A step's transfer reason: the memo its venue requires, or, on a fee leg, the plan and its kind;
 * a split's fee leg names its leg too, so the ledger says whose deposit each fee goes with.
 */
function reasonOf(plan: Executable, { step, index }: Leg): string {
  if (step.memo !== null) return step.memo;
  const leg = plan.split ? plan.legs.find((l) => l.feeLegs.includes(index)) : undefined;
  return leg === undefined ? `${plan.planId} ${step.kind}` : `${plan.planId} leg ${leg.index} ${step.kind}`;
}

/** One TransferFactory_Transfer per leg, with its factory from the admin's registry and the factory's disclosed contracts. */
async function transfersOf(options: ExecuteOptions, plan: Executable, party: string, legs: readonly Leg[]): Promise<{ transfers: BatchTransfer[]; disclosed: DisclosedContract[] }> {
  const transfers: BatchTransfer[] = [];
  const disclosed: DisclosedContract[] = [];
  // Set in the past, as Canton's own token-standard code does: a participant whose clock runs
  // behind the wallet's refuses a transfer requested in its future.
  const requestedAt = new Date(Date.now() - REQUESTED_AT_SKEW_MS).toISOString();
  for (const leg of legs) {
    const { step, admin, inputs } = leg;
    const transfer = {
      sender: party,
      receiver: step.target,
      amount: step.amount,
      instrumentId: { admin, id: step.instrument },
      requestedAt,
      executeBefore: step.expiresAt,
      inputHoldingCids: inputs,
      meta: { values: { [REASON_KEY]: reasonOf(plan, leg) } },
    };
    const factory = await transferFactory(options, plan.registries, admin, { choiceArguments: { expectedAdmin: admin, transfer, extraArgs: { context: { values: {} }, meta: { values: {} } } }, excludeDebugFields: true });
    disclosed.push(...(factory.choiceContext.disclosedContracts ?? []));
    transfers.push({ factoryId: factory.factoryId, argument: { expectedAdmin: admin, transfer, extraArgs: { context: factory.choiceContext.choiceContextData ?? { values: {} }, meta: { values: {} } } } });
  }
  return { transfers, disclosed };
}

/** The deposit alone, as one ExerciseCommand spending `inputs`. */
export async function depositCommand(options: ExecuteOptions, plan: Executable, party: string, inputs: readonly OwnHolding[]) {
  const { transfers, disclosed } = await transfersOf(options, plan, party, [{ step: plan.steps[0]!, index: 0, admin: plan.steps[0]!.admin ?? inputs[0]!.admin, inputs: inputs.map((h) => h.contractId) }]);
  const commands: LedgerCommand[] = transfers.map(({ factoryId, argument }) => ({
    ExerciseCommand: { templateId: TRANSFER_FACTORY.filterId, contractId: factoryId, choice: CHOICES.transfer, choiceArgument: argument },
  }));
  return { commands, disclosed };
}

/**
 * The deposit and its fee legs as one CIP-0112 batch: the registries are asked for each transfer
 * as the batch sends it, with no inputs of its own (the utility gives each the holdings it threads).
 */
export async function batchedCommand(options: ExecuteOptions, plan: Executable, party: string, included: readonly number[], inputs: ReadonlyMap<string, readonly OwnHolding[]>) {
  const legs = included.map((i) => {
    const step = plan.steps[i]!;
    return { step, index: i, admin: step.admin ?? inputs.get(step.instrument)![0]!.admin, inputs: [] };
  });
  const { transfers, disclosed } = await transfersOf(options, plan, party, legs);
  const held = [...inputs].map(([id, holdings]) => ({ admin: holdings[0]!.admin, id, contractIds: holdings.map((h) => h.contractId) }));
  return { commands: [batchCommand(party, held, transfers)], disclosed: distinctDisclosures(disclosed) };
}

/** The withdraw of the open offer `offerCid`, with the choice context its registry gave. */
export function withdrawCommand(offerCid: string, context: Factory['choiceContext']): LedgerCommand {
  return {
    ExerciseCommand: {
      templateId: TRANSFER_INSTRUCTION.filterId,
      contractId: offerCid,
      choice: CHOICES.withdraw,
      choiceArgument: { extraArgs: { context: context.choiceContextData ?? { values: {} }, meta: { values: {} } } },
    },
  };
}
