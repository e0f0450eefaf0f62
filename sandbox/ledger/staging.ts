// The staging of a submission: each command checked against the state the earlier ones leave, as
// Daml runs them (a transfer through its factory, a CIP-0112 batch through Splice's
// BatchingUtility_ExecuteBatch, an instruction accepted, rejected or withdrawn), its nodes built and
// its changes kept back, so the ledger commits all of them or none.
import { Decimal, toWire } from '../../core/decimal.js';
import { CHOICES, RESULTS } from '../../core/ledger/token-standard.js';
import { TOKENS, type Token } from '../../core/tokens.js';
import {
  basicAccount, BATCHING_TYPES, BATCHING_UTILITY_PACKAGE, BATCHING_UTILITY_TEMPLATE, EXECUTE_BATCH, holdingMapFromTransferV1, mergeHoldingMaps, takeHoldings,
  transferResult, TRANSFER_V1, type BatchCommand, type HoldingMap, type TransferCall,
} from './batching-utility.js';
import { asMeta, asRecord, asText, asTime, checkAmount, DAML_DECIMAL, LedgerRejection } from './command-arguments.js';
import { ARCHIVE } from './daml-types.js';
import { INTERFACES, TEMPLATES, TOKEN_PACKAGE_NAME } from './packages.js';
import type { Holding, Instruction, TokenContracts } from './token-contracts.js';
import type { ActionNode, ExerciseNode } from './transaction-tree.js';

/** A command the ledger runs: an exercise of one of its token's choices, or a batch of the batching utility. */
export type LedgerCommand = { readonly contractId: string; readonly choice: string; readonly argument: unknown; readonly kind?: undefined } | BatchCommand;

/** A batch checked against the state as it was at `stateVersion`: its nodes, the contracts it reads, and how to apply it. */
export interface PreparedCommit {
  readonly roots: readonly ActionNode[];
  /** The contracts it exercises or spends, each of which must still be active when it commits. */
  readonly inputs: readonly string[];
  readonly stateVersion: number;
  readonly apply: () => void;
}

const byInstrument = (id: string): Token | undefined => TOKENS.find((t) => t.instrument === id);

/**
 * A staging area over the contracts as they stand: checks a batch's commands and builds its nodes,
 * applied only on commit. `stateVersion` is the ledger end it reads.
 */
export function stage(contracts: TokenContracts, now: Date, stateVersion: number) {
  const consumed = new Set<string>();
  const inputs: string[] = [];
  const roots: ActionNode[] = [];
  const effects: Array<() => void> = [];
  /** Holdings created by the batch's earlier commands, spendable by its later ones. */
  const staged = new Map<string, Holding>();
  const holdingOf = (cid: string) => (consumed.has(cid) ? undefined : staged.get(cid) ?? contracts.holdings.get(cid));
  const batch = contracts.newContractId();
  /** A TransferFactory_Transfer exercised by `actAs`: its node and result, its effects staged. */
  const transferNode = (actAs: readonly string[], factoryId: string, argument: unknown) => {
    const admin = contracts.factoryAdmin(factoryId);
    if (!admin) throw new LedgerRejection('CONTRACT_NOT_FOUND', 'no transfer factory has that contract id');
    inputs.push(factoryId);
    const args = asRecord(argument, 'the choice argument');
    const transfer = asRecord(args.transfer, 'transfer');
    const sender = asText(transfer.sender, 'transfer.sender');
    const receiver = asText(transfer.receiver, 'transfer.receiver');
    if (!actAs.includes(sender)) throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the sender of a transfer must be one of actAs');
    if (receiver === sender) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'a transfer needs a receiver other than its sender');
    if (args.expectedAdmin !== admin) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'expectedAdmin is not the admin of this transfer factory');
    const instrumentId = asRecord(transfer.instrumentId, 'transfer.instrumentId');
    const instrument = byInstrument(asText(instrumentId.id, 'transfer.instrumentId.id'))?.instrument;
    if (!instrument || instrumentId.admin !== admin || contracts.admins[instrument] !== admin) {
      throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'transfer.instrumentId is not an instrument of this factory\'s admin');
    }
    const amountText = asText(transfer.amount, 'transfer.amount');
    if (!DAML_DECIMAL.test(amountText)) throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.amount must be a Daml Decimal');
    const amount = new Decimal(amountText);
    checkAmount(amount, 'transfer.amount');
    const requestedAt = asTime(transfer.requestedAt, 'transfer.requestedAt');
    const executeBefore = asTime(transfer.executeBefore, 'transfer.executeBefore');
    if (executeBefore.getTime() <= now.getTime()) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `executeBefore (${executeBefore.toISOString()}) has passed`);
    if (requestedAt.getTime() > now.getTime()) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'requestedAt is in the future');
    const meta = asMeta(transfer.meta);
    const spent = transfer.inputHoldingCids;
    if (!Array.isArray(spent) || spent.length === 0 || !spent.every((c) => typeof c === 'string')) {
      throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.inputHoldingCids must list the sender\'s holdings to spend');
    }
    let total = new Decimal(0);
    const spentHoldings: Array<[string, Holding]> = [];
    for (const cid of spent as string[]) {
      const holding = holdingOf(cid);
      if (!holding || holding.owner !== sender || holding.instrument !== instrument || holding.lockedFor !== null) {
        throw new LedgerRejection('CONTRACT_NOT_ACTIVE', `input holding ${cid.slice(0, 16)}... is not an unlocked ${instrument} holding of the sender (spent, locked, or another's)`);
      }
      consumed.add(cid);
      if (!staged.has(cid)) inputs.push(cid);
      spentHoldings.push([cid, holding]);
      total = total.plus(holding.amount);
    }
    if (total.lt(amount)) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `the input holdings hold ${toWire(total)} ${instrument}; the transfer needs ${toWire(amount)}`);
    const lockedCid = contracts.newContractId();
    const change = total.minus(amount);
    const changeCid = change.gt(0) ? contracts.newContractId() : null;
    const instructionCid = contracts.newContractId();
    const instruction: Instruction = {
      sender, receiver, instrument, amount, meta, inputHoldingCids: spent as string[], lockedHoldingCid: lockedCid,
      requestedAt: requestedAt.toISOString(), executeBefore: executeBefore.toISOString(), batch,
    };
    const locked: Holding = { owner: sender, instrument, amount, lockedFor: instructionCid, lockExpiresAt: executeBefore.toISOString() };
    const changeHolding: Holding | null = changeCid ? { owner: sender, instrument, amount: change, lockedFor: null, lockExpiresAt: null } : null;
    if (changeCid && changeHolding) staged.set(changeCid, changeHolding);
    const result = { output: { tag: RESULTS.pending, value: { transferInstructionCid: instructionCid } }, senderChangeCids: changeCid ? [changeCid] : [], meta: { values: {} } };
    const node: ExerciseNode = {
      kind: 'exercised', contractId: factoryId, templateId: TEMPLATES.factory, packageName: TOKEN_PACKAGE_NAME, interfaceId: INTERFACES.factory, interfaces: [INTERFACES.factory],
      signatories: [admin], observers: [], choice: CHOICES.transfer, choiceArgument: argument, actingParties: [sender], consuming: false,
      exerciseResult: result,
      children: [
        ...spentHoldings.map(([cid, holding]) => contracts.holdingArchived(cid, holding)),
        contracts.holdingCreated(lockedCid, locked),
        ...(changeCid && changeHolding ? [contracts.holdingCreated(changeCid, changeHolding)] : []),
        contracts.instructionCreated(instructionCid, instruction),
      ],
    };
    effects.push(() => {
      for (const [cid] of spentHoldings) contracts.holdings.delete(cid);
      contracts.holdings.set(lockedCid, locked);
      if (changeCid && changeHolding) contracts.holdings.set(changeCid, changeHolding);
      contracts.open(instructionCid, instruction);
    });
    return { node, result };
  };
  return {
    transfer(actAs: readonly string[], factoryId: string, argument: unknown) {
      roots.push(transferNode(actAs, factoryId, argument).node);
    },
    /**
     * BatchingUtility_ExecuteBatch on a BatchingUtility {user} created in the same transaction,
     * as its Daml runs it: each action's transfer spends what the holding map holds for its
     * instrument in the user's basic account (whatever its inputHoldingCids said), and the
     * map takes the transfer's change and the receiver's holdings before the next action.
     */
    batch(actAs: readonly string[], command: BatchCommand) {
      const { user, argument } = command;
      if (!actAs.includes(user)) {
        throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the BatchingUtility\'s signatory and the choice\'s controller, its user, must be one of actAs');
      }
      const utilityCid = contracts.newContractId();
      roots.push({
        kind: 'created', contractId: utilityCid, templateId: BATCHING_UTILITY_TEMPLATE, packageName: BATCHING_UTILITY_PACKAGE.name, interfaces: [],
        signatories: [user], observers: [], createArgument: { user }, argumentType: BATCHING_TYPES.template, views: {},
      });
      let map: HoldingMap = argument.inputHoldingMap.byAdminAndAccount;
      const children: ActionNode[] = [];
      const actionResults: unknown[] = [];
      argument.actions.forEach((action, i) => {
        if (action.tag !== TRANSFER_V1) {
          throw new LedgerRejection('INVALID_ARGUMENT', `actions[${i}]: the sandbox participant runs ${TRANSFER_V1} actions only, not ${action.tag}`);
        }
        const { cid, arg } = action.value as TransferCall;
        const { inputs, rest } = takeHoldings(map, basicAccount(user), arg.transfer.instrumentId);
        const transfer = { ...arg.transfer, inputHoldingCids: inputs };
        let exercised: ReturnType<typeof transferNode>;
        try {
          // Exercised within the utility's choice: its only authorizer is the user.
          exercised = transferNode([user], cid, { ...arg, transfer });
        } catch (err) {
          throw err instanceof LedgerRejection ? new LedgerRejection(err.code, `actions[${i}] (${TRANSFER_V1}): ${err.message}`) : err;
        }
        children.push(exercised.node);
        actionResults.push(transferResult(exercised.result));
        map = mergeHoldingMaps(holdingMapFromTransferV1(transfer, exercised.result), rest);
      });
      if (argument.archiveAfterExecution) {
        children.push({
          kind: 'exercised', contractId: utilityCid, templateId: BATCHING_UTILITY_TEMPLATE, packageName: BATCHING_UTILITY_PACKAGE.name, interfaceId: null, interfaces: [],
          signatories: [user], observers: [], choice: ARCHIVE.choice, choiceArgument: {}, argumentType: ARCHIVE.argumentType,
          actingParties: [user], consuming: true, exerciseResult: {}, resultType: ARCHIVE.resultType, children: [],
        });
      }
      roots.push({
        kind: 'exercised', contractId: utilityCid, templateId: BATCHING_UTILITY_TEMPLATE, packageName: BATCHING_UTILITY_PACKAGE.name, interfaceId: null, interfaces: [],
        signatories: [user], observers: [], choice: EXECUTE_BATCH, choiceArgument: argument, argumentType: BATCHING_TYPES.executeBatch,
        actingParties: [user], consuming: false, exerciseResult: { actionResults, outputHoldingMap: { byAdminAndAccount: map } }, resultType: BATCHING_TYPES.executeBatchResult,
        children,
      });
    },
    settle(actAs: readonly string[], instructionCid: string, choice: 'accept' | 'reject' | 'withdraw') {
      const instruction = consumed.has(instructionCid) ? undefined : contracts.instructions.get(instructionCid);
      if (!instruction) throw new LedgerRejection('CONTRACT_NOT_FOUND', 'no open transfer instruction has that contract id');
      const controller = choice === 'withdraw' ? instruction.sender : instruction.receiver;
      if (!actAs.includes(controller)) throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', `only the ${choice === 'withdraw' ? 'sender' : 'receiver'} may ${choice} a transfer instruction`);
      if (choice === 'accept' && now.getTime() >= Date.parse(instruction.executeBefore)) {
        throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'the transfer instruction expired: it can no longer be accepted');
      }
      consumed.add(instructionCid);
      inputs.push(instructionCid);
      const settled = choice === 'accept' ? contracts.accepted(instructionCid, instruction) : contracts.returned(instructionCid, instruction, choice);
      roots.push(settled.node);
      effects.push(settled.apply);
    },
    prepared(): PreparedCommit {
      return { roots, inputs, stateVersion, apply: () => effects.forEach((effect) => effect()) };
    },
  };
}
