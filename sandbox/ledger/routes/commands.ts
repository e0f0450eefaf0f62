// Command submission: submit-and-wait (answering ids or the transaction), the command
// completions, and the interactive submission service's prepare and execute for external parties,
// each submission read and checked as the participant checks a JsCommands.
import { randomUUID } from 'node:crypto';
import { isPartyId } from '../../../core/party.js';
import { BATCHING_UTILITY_TEMPLATE, EXECUTE_BATCH, readBatchCommand } from '../batching-utility.js';
import { LedgerRejection } from '../command-arguments.js';
import { ARCHIVE, DamlTypeError } from '../daml-types.js';
import { createdEventBlob, FilterRefused, readEventFilter, renderTransaction, type EventFilter, type Shape } from '../event-format.js';
import { ed25519Verifies } from '../participant.js';
import { decodePrepared, encodePrepared, hashPrepared, preparedTransaction } from '../prepared-transaction.js';
import type { SandboxTransaction } from '../sandbox-ledger.js';
import type { LedgerCommand, PreparedCommit } from '../staging.js';
import { MAX_LIST_ELEMENTS, SYNCHRONIZER_ID, type Context, type Submission } from './context.js';
import { limitOf, offsetOf, record, shapeOf } from './reading.js';
import { cantonError, invalid, ok, packageNamesCause, type Reply } from './replies.js';

/** Prepared transactions kept for execution; the oldest is forgotten past this many, as a participant's prepared state is bounded in time. */
const PREPARED_KEPT = 1000;

/** A POST of this family, or undefined when the path is none of its. */
export function commandWrite(context: Context, path: string, input: Record<string, unknown>, url: URL): Reply | undefined {
  switch (path) {
    case '/v2/commands/submit-and-wait':
      return submit(context, input, 'ids');
    case '/v2/commands/submit-and-wait-for-transaction':
      return submit(context, record(input.commands) ?? {}, 'transaction', input.transactionFormat);
    case '/v2/commands/completions':
      return completions(context, input, url);
    case '/v2/interactive-submission/prepare':
      return prepare(context, input);
    case '/v2/interactive-submission/execute':
      return execute(context, input, false);
    case '/v2/interactive-submission/executeAndWait':
      return execute(context, input, true);
    default:
      return undefined;
  }
}

/** A JsCommands as the participant checks it: its parties hosted, its commands ones the sandbox runs, its disclosures genuine. */
function readSubmission(context: Context, input: Record<string, unknown>): Submission {
  const { participant, ledger } = context;
  const actAs = input.actAs;
  if (!Array.isArray(actAs) || actAs.length === 0 || !actAs.every((p) => typeof p === 'string' && isPartyId(p))) throw new LedgerRejection('INVALID_ARGUMENT', 'actAs must list the submitting parties');
  const readAs = Array.isArray(input.readAs) ? input.readAs.filter((p): p is string => typeof p === 'string') : [];
  const commandId = typeof input.commandId === 'string' && input.commandId !== '' ? input.commandId : null;
  if (!commandId) throw new LedgerRejection('INVALID_ARGUMENT', 'commandId is required');
  const list = input.commands;
  if (!Array.isArray(list) || list.length === 0) throw new LedgerRejection('INVALID_ARGUMENT', 'commands must list at least one command');
  const commands = list.map((command): LedgerCommand => {
    const createAndExercise = record(record(command)?.CreateAndExerciseCommand);
    if (createAndExercise) return batchCommand(context, createAndExercise);
    const exercise = record(record(command)?.ExerciseCommand);
    if (!exercise || typeof exercise.contractId !== 'string' || typeof exercise.choice !== 'string') {
      throw new LedgerRejection('INVALID_ARGUMENT', 'the sandbox participant runs ExerciseCommand commands, and the CreateAndExerciseCommand of Splice\'s batching utility, only');
    }
    return { contractId: exercise.contractId, choice: exercise.choice, argument: exercise.choiceArgument };
  });
  const disclosed = new Set<string>();
  for (const [i, entry] of (Array.isArray(input.disclosedContracts) ? input.disclosedContracts : []).entries()) {
    const contract = record(entry);
    const life = typeof contract?.contractId === 'string' ? ledger.contract(contract.contractId) : undefined;
    if (!life || contract?.createdEventBlob !== createdEventBlob(life.created)) throw new LedgerRejection('INVALID_ARGUMENT', `disclosedContracts[${i}] is not a contract of this ledger with its created-event blob`);
    disclosed.add(life.created.contractId);
  }
  for (const party of actAs as string[]) {
    if (!participant.party(party)) throw new LedgerRejection('NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT', 'This participant cannot submit as the given submitter on any connected synchronizer');
  }
  return {
    actAs: actAs as string[], readAs, commandId, commands, disclosed,
    userId: typeof input.userId === 'string' && input.userId !== '' ? input.userId : participant.operatorUser,
    submissionId: typeof input.submissionId === 'string' && input.submissionId !== '' ? input.submissionId : randomUUID(),
  };
}

/**
 * A CreateAndExerciseCommand: the batching utility's BatchingUtility_ExecuteBatch, its arguments
 * checked against the package's Daml types; a template of a package the participant lacks is
 * refused as Canton refuses it.
 */
function batchCommand(context: Context, command: Record<string, unknown>): LedgerCommand {
  const { templateId, choice } = command;
  if (typeof templateId !== 'string') throw new LedgerRejection('INVALID_ARGUMENT', 'CreateAndExerciseCommand.templateId must be a template id');
  const match = /^(#?[^:]+):([^:]+:[^:]+)$/.exec(templateId);
  if (!match) throw new LedgerRejection('INVALID_ARGUMENT', `CreateAndExerciseCommand.templateId must be <package-id>:<Module>:<Entity> or #<package-name>:<Module>:<Entity>, not ${templateId.slice(0, 120)}`);
  const [, packageRef, entity] = match as unknown as [string, string, string];
  const pkg = context.known.packages.find((p) => (packageRef.startsWith('#') ? `#${p.name}` === packageRef : p.id === packageRef));
  if (!pkg) throw packageRef.startsWith('#') ? new FilterRefused(404, 'PACKAGE_NAMES_NOT_FOUND', packageNamesCause([packageRef.slice(1)])) : new FilterRefused(404, 'PACKAGE_NOT_FOUND', `Package not found: ${packageRef}`);
  if (`${pkg.id}:${entity}` !== BATCHING_UTILITY_TEMPLATE) {
    throw new LedgerRejection('INVALID_ARGUMENT', 'the sandbox participant runs the CreateAndExerciseCommand of Splice\'s BatchingUtility only: its own templates are created by their choices');
  }
  // Archive is a choice of every template, BatchingUtility's too: refused as the sandbox's limit, not as a choice the template lacks.
  if (choice === ARCHIVE.choice) throw new LedgerRejection('INVALID_ARGUMENT', `the sandbox participant runs only ${EXECUTE_BATCH} in a CreateAndExerciseCommand of BatchingUtility, not ${ARCHIVE.choice}`);
  if (choice !== EXECUTE_BATCH) throw new DamlTypeError(`the template BatchingUtility has no choice ${String(choice).slice(0, 80)}; the sandbox participant runs ${EXECUTE_BATCH}`);
  return readBatchCommand(command.createArguments, command.choiceArgument);
}

/** The submission's tree, refused when it uses a contract its parties can neither see nor were disclosed. */
function prepareCommit(context: Context, submission: Submission): PreparedCommit {
  const prepared = context.ledger.prepare(submission.actAs, submission.commands);
  const readers = new Set([...submission.actAs, ...submission.readAs]);
  for (const cid of prepared.inputs) {
    const life = context.ledger.contract(cid);
    const visible = life && [...life.created.signatories, ...life.created.observers].some((p) => readers.has(p));
    if (!visible && !submission.disclosed.has(cid)) {
      throw new LedgerRejection('CONTRACT_NOT_FOUND', `Contract could not be found with id ${cid}: it is not visible to the submitting parties and was not disclosed`);
    }
  }
  return prepared;
}

function commit(context: Context, submission: Submission, prepared: PreparedCommit): SandboxTransaction {
  const tx = context.ledger.commitPrepared(prepared, submission.actAs, submission.commandId, submission.userId);
  context.participant.recordCompletion({ userId: submission.userId, actAs: submission.actAs, commandId: submission.commandId, submissionId: submission.submissionId, updateId: tx.updateId, offset: tx.offset, recordTime: tx.recordTime });
  return tx;
}

function submit(context: Context, input: Record<string, unknown>, answer: 'ids' | 'transaction', transactionFormat?: unknown): Reply {
  const submission = readSubmission(context, input);
  for (const party of submission.actAs) {
    if (context.participant.party(party)!.signingKey !== null) {
      throw new LedgerRejection('NO_SYNCHRONIZER_ON_WHICH_ALL_SUBMITTERS_CAN_SUBMIT', 'This participant cannot submit as the given submitter on any connected synchronizer: an external party submits through the interactive submission service');
    }
  }
  // Read before committing: a malformed format refuses the submission, not only its answer.
  const format = answer === 'transaction' ? transactionFormatOf(context, transactionFormat, submission) : null;
  const tx = commit(context, submission, prepareCommit(context, submission));
  if (!format) return ok({ updateId: tx.updateId, completionOffset: tx.offset });
  return ok({ transaction: renderTransaction(tx, format.filter, format.shape, SYNCHRONIZER_ID) ?? emptyTransaction(tx, submission) });
}

/** A submission's transaction with no event its format shows, as Canton answers it. */
function emptyTransaction(tx: SandboxTransaction, submission: Submission) {
  return { updateId: tx.updateId, commandId: submission.commandId, workflowId: '', effectiveAt: tx.recordTime, events: [], offset: tx.offset, synchronizerId: SYNCHRONIZER_ID, recordTime: tx.recordTime };
}

/** A TransactionFormat, or Canton's default: the ACS delta, every template, for the submission's parties. */
function transactionFormatOf(context: Context, value: unknown, submission: Submission): { filter: EventFilter; shape: Shape } {
  const format = record(value);
  if (!format) {
    const parties = [...submission.actAs, ...submission.readAs];
    return { filter: readEventFilter({ filtersByParty: Object.fromEntries(parties.map((p) => [p, { cumulative: [] }])) }, 'transactionFormat', context.known), shape: 'TRANSACTION_SHAPE_ACS_DELTA' };
  }
  return { filter: readEventFilter(format.eventFormat, 'transactionFormat.eventFormat', context.known), shape: shapeOf(format.transactionShape) };
}

function completions(context: Context, input: Record<string, unknown>, url: URL): Reply {
  const userId = typeof input.userId === 'string' && input.userId !== '' ? input.userId : context.participant.operatorUser;
  const parties = Array.isArray(input.parties) ? input.parties.filter((p): p is string => typeof p === 'string') : [];
  if (parties.length === 0) return invalid('parties must name at least one party');
  const begin = offsetOf(input.beginExclusive ?? 0);
  if (begin === null) return invalid('beginExclusive must be a non-negative offset');
  const limit = limitOf(url);
  const found = context.participant.completionsFor(userId, parties, begin).slice(0, limit ?? MAX_LIST_ELEMENTS);
  return ok(found.map((c) => ({
    completionResponse: {
      Completion: {
        value: {
          commandId: c.commandId, status: { code: 0, message: '', details: [] }, updateId: c.updateId, userId: c.userId, actAs: c.actAs, submissionId: c.submissionId,
          deduplicationPeriod: { Empty: {} }, offset: c.offset, synchronizerTime: { synchronizerId: SYNCHRONIZER_ID, recordTime: c.recordTime },
        },
      },
    },
  })));
}

function prepare(context: Context, input: Record<string, unknown>): Reply {
  const submission = readSubmission(context, input);
  const prepared = prepareCommit(context, submission);
  const inputContracts = prepared.inputs.map((cid) => context.ledger.contract(cid)!).map((life) => ({ created: life.created, createdAt: life.createdIn.recordTime, blob: createdEventBlob(life.created) }));
  const proto = preparedTransaction(prepared.roots, { actAs: submission.actAs, commandId: submission.commandId, synchronizerId: SYNCHRONIZER_ID, preparationTime: new Date(), inputContracts });
  const encoded = encodePrepared(proto);
  const hash = hashPrepared(proto);
  context.prepared.set(encoded, { submission, prepared, hash });
  if (context.prepared.size > PREPARED_KEPT) context.prepared.delete(context.prepared.keys().next().value!);
  return ok({ preparedTransaction: encoded, preparedTransactionHash: hash.toString('base64'), hashingSchemeVersion: 'HASHING_SCHEME_VERSION_V2' });
}

function execute(context: Context, input: Record<string, unknown>, wait: boolean): Reply {
  if (typeof input.preparedTransaction !== 'string') return invalid('preparedTransaction is required: the base64 the prepare step answered');
  if (input.hashingSchemeVersion !== 'HASHING_SCHEME_VERSION_V2') return invalid('hashingSchemeVersion must be HASHING_SCHEME_VERSION_V2');
  const pending = context.prepared.get(input.preparedTransaction);
  let hash: Buffer;
  try {
    hash = hashPrepared(decodePrepared(input.preparedTransaction));
  } catch {
    return invalid('preparedTransaction is not a prepared transaction');
  }
  if (!pending || !pending.hash.equals(hash)) return invalid('preparedTransaction is not one this participant prepared, or was changed since');
  const { submission, prepared } = pending;
  const signed = record(input.partySignatures)?.signatures;
  const byParty = new Map((Array.isArray(signed) ? signed : []).map((s) => [record(s)?.party, record(s)?.signatures] as const));
  for (const party of submission.actAs) {
    const hosted = context.participant.party(party)!;
    if (hosted.signingKey === null) continue;
    const signatures = byParty.get(party);
    const valid = Array.isArray(signatures) && signatures.some((s) => {
      const signature = record(s);
      return typeof signature?.signature === 'string' && signature.signedBy === party.split('::')[1] && ed25519Verifies(hosted.signingKey!, hash, Buffer.from(signature.signature, 'base64'));
    });
    if (!valid) {
      return cantonError(
        'invalidIndependentOfSystemState', 'FAILED_TO_EXECUTE_TRANSACTION',
        `The participant failed to execute the transaction: Received 0 valid signatures from distinct keys, but expected at least 1 valid for ${party}. Transaction hash to be signed: ${hash.toString('hex')}. Ensure the correct transaction hash is signed with the correct key(s).`,
      );
    }
  }
  // Kept: executing it again is refused as Canton refuses it, a duplicate of the committed command.
  const userId = typeof input.userId === 'string' && input.userId !== '' ? input.userId : submission.userId;
  const submissionId = typeof input.submissionId === 'string' && input.submissionId !== '' ? input.submissionId : submission.submissionId;
  const tx = commit(context, { ...submission, userId, submissionId }, prepared);
  return ok(wait ? { updateId: tx.updateId, completionOffset: tx.offset } : {});
}
