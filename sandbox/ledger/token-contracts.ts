// The token model's contracts as they stand: holdings, open transfer instructions (CIP-0056
// two-step offers whose funds a locked holding keeps) and the instrument admins' transfer
// factories, each under a contract id made here; and the Daml nodes that create, spend and settle
// them, as a transaction records them. Only the ledger (sandbox/ledger/sandbox-ledger.ts), its
// staging (staging.ts) and the pools' operator (pool-operator.ts) change them.
import { createHash } from 'node:crypto';
import { Decimal, toWire } from '../../core/decimal.js';
import { CHOICES, RESULTS } from '../../core/ledger/token-standard.js';
import type { Token } from '../../core/tokens.js';
import { LedgerRejection } from './command-arguments.js';
import { ARCHIVE } from './daml-types.js';
import { INTERFACES, TEMPLATES, TOKEN_PACKAGE_NAME } from './packages.js';
import type { ActionNode, CreateNode, ExerciseNode } from './transaction-tree.js';

export type Instrument = Token['instrument'];

export interface Holding {
  readonly owner: string;
  readonly instrument: Instrument;
  readonly amount: Decimal;
  /** The offer whose funds this holding locks. */
  readonly lockedFor: string | null;
  readonly lockExpiresAt: string | null;
}

export interface Instruction {
  readonly sender: string;
  readonly receiver: string;
  readonly instrument: Instrument;
  readonly amount: Decimal;
  readonly requestedAt: string;
  readonly executeBefore: string;
  readonly meta: Readonly<Record<string, string>>;
  readonly inputHoldingCids: readonly string[];
  readonly lockedHoldingCid: string;
  /** The submission that created it: a deposit's fee legs share their deposit's. */
  readonly batch: string;
}

/** An instruction answered: its node, and the change to the contracts, made only when it commits. */
export interface Settlement {
  readonly node: ExerciseNode;
  readonly apply: () => void;
}

export class TokenContracts {
  readonly holdings = new Map<string, Holding>();
  readonly instructions = new Map<string, Instruction>();
  /** Each submission's instructions in the order it made them, while any of them is open: a deposit's fee legs follow it. */
  private readonly batches = new Map<string, Array<{ readonly cid: string; readonly receiver: string }>>();
  /** The transfer factory contract of each instrument admin. */
  readonly factories: ReadonlyMap<string, string>;
  private contractCounter = 0;

  constructor(
    /** The instrument admins (registry parties), by instrument. */
    readonly admins: Readonly<Record<Instrument, string>>,
    /** Makes the contract ids this ledger's own. */
    private readonly seed: string,
  ) {
    this.factories = new Map(Object.values(admins).map((admin) => [admin, this.newContractId()]));
  }

  newContractId(): string {
    this.contractCounter += 1;
    return `00${createHash('sha256').update(`${this.seed}:contract:${this.contractCounter}`).digest('hex')}`;
  }

  /** The admin whose factory `factoryId` is, if it is one. */
  factoryAdmin(factoryId: string): string | undefined {
    return [...this.factories.entries()].find(([, cid]) => cid === factoryId)?.[0];
  }

  /** Whether `cid` is an active holding, open instruction or factory. */
  isActive(cid: string): boolean {
    return this.holdings.has(cid) || this.instructions.has(cid) || this.factoryAdmin(cid) !== undefined;
  }

  /** The factories' creations: contracts of their admins, made before anything else. */
  factoriesCreated(): CreateNode[] {
    return [...this.factories].map(([admin, cid]): CreateNode => ({
      kind: 'created', contractId: cid, templateId: TEMPLATES.factory, packageName: TOKEN_PACKAGE_NAME, interfaces: [INTERFACES.factory],
      signatories: [admin], observers: [], createArgument: { admin }, views: { [INTERFACES.factory]: { admin, meta: { values: {} } } },
    }));
  }

  /** A new holding of `amount` for `owner`, applied at once (the registry's own issuance). */
  mint(owner: string, instrument: Instrument, amount: Decimal): CreateNode {
    const cid = this.newContractId();
    const holding: Holding = { owner, instrument, amount, lockedFor: null, lockExpiresAt: null };
    this.holdings.set(cid, holding);
    return this.holdingCreated(cid, holding);
  }

  /** Spends the pool's unlocked holdings of `instrument` for `amount`: their archives and the change, applied at once. */
  spendPool(party: string, instrument: Instrument, amount: Decimal): { inputs: string[]; nodes: ActionNode[]; changeCid: string | null } {
    const inputs = [...this.holdings.entries()].filter(([, h]) => h.owner === party && h.instrument === instrument && h.lockedFor === null);
    const total = inputs.reduce((sum, [, h]) => sum.plus(h.amount), new Decimal(0));
    if (total.lt(amount)) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `the pool holds ${toWire(total)} ${instrument}, less than ${toWire(amount)}`);
    const nodes: ActionNode[] = inputs.map(([cid, h]) => this.holdingArchived(cid, h));
    for (const [cid] of inputs) this.holdings.delete(cid);
    const change = total.minus(amount);
    let changeCid: string | null = null;
    if (change.gt(0)) {
      const node = this.mint(party, instrument, change);
      changeCid = node.contractId;
      nodes.push(node);
    }
    return { inputs: inputs.map(([cid]) => cid), nodes, changeCid };
  }

  /** An instruction made open by its submission, in its batch's order. */
  open(cid: string, instruction: Instruction): void {
    this.instructions.set(cid, instruction);
    const batch = this.batches.get(instruction.batch) ?? [];
    batch.push({ cid, receiver: instruction.receiver });
    this.batches.set(instruction.batch, batch);
  }

  /** The instructions `batch` made, open or answered, in its order; none once all are answered. */
  batchOrder(batch: string): ReadonlyArray<{ readonly cid: string; readonly receiver: string }> {
    return this.batches.get(batch) ?? [];
  }

  private close(cid: string, instruction: Instruction): void {
    this.instructions.delete(cid);
    const batch = this.batches.get(instruction.batch);
    if (batch && !batch.some((entry) => this.instructions.has(entry.cid))) this.batches.delete(instruction.batch);
  }

  /** The receiver's acceptance: the locked holding spent, the receiver's created. */
  accepted(instructionCid: string, instruction: Instruction): Settlement {
    const { receiver, instrument, amount } = instruction;
    const receivedCid = this.newContractId();
    const received: Holding = { owner: receiver, instrument, amount, lockedFor: null, lockExpiresAt: null };
    return {
      node: this.instructionExercised(instructionCid, instruction, CHOICES.accept, receiver, { output: { tag: RESULTS.completed, value: { receiverHoldingCids: [receivedCid] } }, senderChangeCids: [], meta: { values: {} } }, [
        this.holdingArchived(instruction.lockedHoldingCid, this.holdings.get(instruction.lockedHoldingCid)!),
        this.holdingCreated(receivedCid, received),
      ]),
      apply: () => {
        this.close(instructionCid, instruction);
        this.holdings.delete(instruction.lockedHoldingCid);
        this.holdings.set(receivedCid, received);
      },
    };
  }

  /** A rejection or withdrawal: the locked holding spent, the sender's funds returned whole. */
  returned(instructionCid: string, instruction: Instruction, choice: 'reject' | 'withdraw'): Settlement {
    const { receiver, sender, instrument, amount } = instruction;
    const refundCid = this.newContractId();
    const refund: Holding = { owner: sender, instrument, amount, lockedFor: null, lockExpiresAt: null };
    return {
      node: this.instructionExercised(
        instructionCid, instruction, choice === 'reject' ? CHOICES.reject : CHOICES.withdraw, choice === 'reject' ? receiver : sender,
        { output: { tag: RESULTS.failed, value: {} }, senderChangeCids: [refundCid], meta: { values: {} } },
        [this.holdingArchived(instruction.lockedHoldingCid, this.holdings.get(instruction.lockedHoldingCid)!), this.holdingCreated(refundCid, refund)],
      ),
      apply: () => {
        this.close(instructionCid, instruction);
        this.holdings.delete(instruction.lockedHoldingCid);
        this.holdings.set(refundCid, refund);
      },
    };
  }

  /** A holding spent: its template's Archive, by its signatories. */
  holdingArchived(cid: string, holding: Holding): ExerciseNode {
    const admin = this.admins[holding.instrument];
    return {
      kind: 'exercised', contractId: cid, templateId: TEMPLATES.holding, packageName: TOKEN_PACKAGE_NAME, interfaceId: null, interfaces: [INTERFACES.holding],
      signatories: [admin, holding.owner], observers: [], choice: ARCHIVE.choice, choiceArgument: {}, argumentType: ARCHIVE.argumentType,
      actingParties: [admin, holding.owner], consuming: true, exerciseResult: {}, resultType: ARCHIVE.resultType, children: [],
    };
  }

  holdingCreated(cid: string, holding: Holding): CreateNode {
    const admin = this.admins[holding.instrument];
    const lock = holding.lockExpiresAt === null ? null : { holders: [admin], expiresAt: holding.lockExpiresAt, expiresAfter: null, context: 'transfer offer' };
    const view = { owner: holding.owner, instrumentId: { admin, id: holding.instrument }, amount: toWire(holding.amount), lock, meta: { values: {} } };
    return {
      kind: 'created', contractId: cid, templateId: TEMPLATES.holding, packageName: TOKEN_PACKAGE_NAME, interfaces: [INTERFACES.holding],
      views: { [INTERFACES.holding]: view }, createArgument: { ...view, admin }, signatories: [admin, holding.owner], observers: [],
    };
  }

  instructionCreated(cid: string, instruction: Instruction): CreateNode {
    const admin = this.admins[instruction.instrument];
    const transfer = this.transferOf(instruction);
    const view = { originalInstructionCid: null, transfer, status: { tag: 'TransferPendingReceiverAcceptance', value: {} }, meta: { values: {} } };
    return {
      kind: 'created', contractId: cid, templateId: TEMPLATES.instruction, packageName: TOKEN_PACKAGE_NAME, interfaces: [INTERFACES.instruction],
      views: { [INTERFACES.instruction]: view }, createArgument: { transfer, lockedAmulet: instruction.lockedHoldingCid, admin },
      signatories: [admin, instruction.sender], observers: [instruction.receiver],
    };
  }

  private transferOf(instruction: Instruction) {
    const admin = this.admins[instruction.instrument];
    return {
      sender: instruction.sender, receiver: instruction.receiver, amount: toWire(instruction.amount), instrumentId: { admin, id: instruction.instrument },
      requestedAt: instruction.requestedAt, executeBefore: instruction.executeBefore, inputHoldingCids: instruction.inputHoldingCids, meta: { values: instruction.meta },
    };
  }

  private instructionExercised(cid: string, instruction: Instruction, choice: string, actor: string, exerciseResult: unknown, children: ActionNode[]): ExerciseNode {
    const admin = this.admins[instruction.instrument];
    return {
      kind: 'exercised', contractId: cid, templateId: TEMPLATES.instruction, packageName: TOKEN_PACKAGE_NAME, interfaceId: INTERFACES.instruction, interfaces: [INTERFACES.instruction],
      signatories: [admin, instruction.sender], observers: [instruction.receiver], choice,
      choiceArgument: { extraArgs: { context: { values: {} }, meta: { values: {} } } }, actingParties: [actor], consuming: true, exerciseResult, children,
    };
  }
}
