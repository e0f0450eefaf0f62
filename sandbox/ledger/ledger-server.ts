// The sandbox participant over HTTP on loopback: a faithful subset of a Canton 3.4 participant's
// JSON Ledger API v2 (the endpoints wallets and Canton's own TypeScript packages use; README, "The
// sandbox"), typed by the official schemas (@canton-network/core-ledger-client-types) and checked
// in tests against the pinned OpenAPI document (sandbox/ledger/openapi/). Refusals are
// JsCantonError bodies with Canton's error ids.
//
// Beside the API, what a real participant does not serve, named as the sandbox's own: POST
// /sandbox/v1/fund {party, token, amount}, /sandbox/v1/move {pair, bps}, /sandbox/v1/operator
// {paused}: the faucet, the price mover and the pools' operator switch. The token registries are
// servers of their own (sandbox/registry/), as on a real network.
//
// Every request needs `Authorization: Bearer <LEDGER_TOKEN>`: the token's user (its `sub`) is the
// participant's administrator.
//
// Whether the participant has Splice's batching utility package (splice-util-token-standard-wallet)
// is its own: with it, a CreateAndExerciseCommand of BatchingUtility_ExecuteBatch runs its actions
// in one transaction; without it, a command or filter naming the package is refused as Canton
// refuses a package name it does not know (PACKAGE_NAMES_NOT_FOUND).
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { answeredPreflight, BodyTooLarge, closeServer, listen, readBody, sendJson, sendText } from '../loopback-server.js';
import { Decimal } from '../../core/decimal.js';
import { isPartyId } from '../../core/party.js';
import { resolveToken, type Token } from '../../core/tokens.js';
import { BATCHING_UTILITY_TEMPLATE, EXECUTE_BATCH, readBatchCommand } from './batching-utility.js';
import { ARCHIVE, DamlTypeError } from './daml-types.js';
import { createdEventBlob, FilterRefused, readEventFilter, renderActive, renderEvent, renderTransaction, renderTree, type EventFilter, type KnownIds, type Shape } from './event-format.js';
import { ed25519Verifies, Participant, type Right } from './participant.js';
import { decodePrepared, encodePrepared, hashPrepared, preparedTransaction } from './prepared-transaction.js';
import {
  INTERFACES, LedgerRejection, PACKAGES, SANDBOX_USER, TEMPLATES, UNIMPLEMENTED_INTERFACES, type LedgerCommand, type PreparedCommit, type SandboxLedger, type SandboxTransaction,
} from './sandbox-ledger.js';

/** The participant's `http-list-max-elements-limit`: a longer list is refused with 413, as Canton does. */
export const MAX_LIST_ELEMENTS = 1000;
const MAX_BODY_BYTES = 256 * 1024;
export const SYNCHRONIZER_ID = `sandbox::1220${'5'.repeat(64)}`;

type Api = v3_4.components['schemas'];

/** The packages a participant has, and what they define: the batching utility's only if it has that package. */
function knownIds(batchingUtility: boolean): KnownIds {
  const { batchingUtility: batching, ...always } = PACKAGES;
  return {
    packages: [...Object.values(always), ...(batchingUtility ? [batching] : [])],
    templates: new Set([...Object.values(TEMPLATES), ...(batchingUtility ? [BATCHING_UTILITY_TEMPLATE] : [])]),
    interfaces: new Set([...Object.values(INTERFACES), ...UNIMPLEMENTED_INTERFACES]),
  };
}

/**
 * What a Canton 3.4 participant answers at GET /v2/version, each feature as the sandbox has it:
 * user and party management served, static time and command inspection not.
 */
const VERSION: Api['GetLedgerApiVersionResponse'] = {
  version: '3.4.12',
  features: {
    experimental: { staticTime: { supported: false }, commandInspectionService: { supported: false } },
    userManagement: { supported: true, maxRightsPerUser: 1000, maxUsersPageSize: 1000 },
    partyManagement: { maxPartiesPageSize: 10000 },
    offsetCheckpoint: { maxOffsetCheckpointEmissionDelay: { seconds: 1, nanos: 0 } },
    packageFeature: { maxVettedPackagesPageSize: 100 },
  },
};

interface Reply {
  readonly status: number;
  readonly body: unknown;
  /** The body is plain text, as Canton's HTTP layer answers a request it cannot decode. */
  readonly text?: true;
}

/** Canton's error categories: the HTTP status, category number and gRPC code each answers with. */
const CATEGORY = {
  invalidIndependentOfSystemState: [400, 8, 3],
  invalidGivenCurrentSystemStateOther: [400, 9, 9],
  resourceMissing: [404, 11, 5],
  resourceExists: [409, 10, 6],
  authInterceptorInvalidAuthenticationCredentials: [401, 6, 16],
  insufficientPermission: [403, 7, 7],
  systemInternal: [500, 4, 13],
} as const;

/** A JsCantonError, as a participant answers a refused request. */
function cantonError(category: keyof typeof CATEGORY, code: string, cause: string): Reply {
  const [status, errorCategory, grpcCodeValue] = CATEGORY[category];
  const body = {
    code, cause, correlationId: randomUUID(), context: { category: String(errorCategory), definite_answer: 'false' }, resources: [],
    errorCategory, grpcCodeValue, definiteAnswer: false,
  };
  return { status, body };
}
const invalid = (cause: string) => cantonError('invalidIndependentOfSystemState', 'INVALID_ARGUMENT', cause);
const notFound = (code: string, cause: string) => cantonError('resourceMissing', code, cause);
const packageNamesCause = (names: readonly string[]) => `The following package names do not match upgradable packages uploaded on this participant: [${names.join(', ')}].`;

function rejection(err: LedgerRejection): Reply {
  if (err.code === 'CONTRACT_NOT_FOUND' || err.code === 'NOT_FOUND') return cantonError('resourceMissing', 'CONTRACT_NOT_FOUND', err.message);
  if (err.code === 'CONTRACT_NOT_ACTIVE') return cantonError('invalidGivenCurrentSystemStateOther', 'LOCAL_VERDICT_LOCKED_CONTRACTS', err.message);
  if (err.code === 'DUPLICATE_COMMAND') return cantonError('resourceExists', 'DUPLICATE_COMMAND', err.message);
  if (err.code === 'INVALID_ARGUMENT') return invalid(err.message);
  return cantonError('invalidGivenCurrentSystemStateOther', err.code, err.message);
}

export interface SandboxLedgerServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly participant: Participant;
  close(): Promise<void>;
}

/** The user a bearer token names: its JWT `sub`, or the sandbox's operator for a token that is no JWT. */
export function userOfToken(token: string): string {
  const payload = token.split('.')[1];
  try {
    const sub = (JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    if (typeof sub === 'string' && sub !== '') return sub;
  } catch {
    // Not a JWT: the operator's token all the same.
  }
  return SANDBOX_USER;
}

export interface SandboxLedgerServerOptions {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly hosted?: readonly string[];
  /** Whether the participant has Splice's batching utility package; it has by default. */
  readonly batchingUtility?: boolean;
}

export async function startSandboxLedgerServer(ledger: SandboxLedger, options: SandboxLedgerServerOptions): Promise<SandboxLedgerServer> {
  const participant = new Participant(userOfToken(options.token), SYNCHRONIZER_ID);
  for (const party of options.hosted ?? []) participant.host(party);
  const batchingUtility = options.batchingUtility ?? true;
  const context: Context = { ledger, participant, token: options.token, prepared: new Map(), batchingUtility, known: knownIds(batchingUtility) };
  const server = createServer((request, response) => void serve(context, request, response));
  const url = await listen(server, options.host, options.port, 'the sandbox ledger', 'set LEDGER_URL to a free loopback port, or port 0 for any');
  return { url, participant, close: () => closeServer(server) };
}

interface Context {
  readonly ledger: SandboxLedger;
  readonly participant: Participant;
  readonly token: string;
  /** Prepared transactions by their base64, oldest first: what `execute` is handed back. */
  readonly prepared: Map<string, PreparedEntry>;
  readonly batchingUtility: boolean;
  readonly known: KnownIds;
}

interface PreparedEntry {
  readonly submission: Submission;
  readonly prepared: PreparedCommit;
  readonly hash: Buffer;
}

/** Prepared transactions kept for execution; the oldest is forgotten past this many, as a participant's prepared state is bounded in time. */
const PREPARED_KEPT = 1000;


async function serve(context: Context, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (answeredPreflight(request, response)) return;
  let reply: Reply;
  try {
    const url = new URL(request.url ?? '/', 'http://sandbox');
    const body = await readBody(request, MAX_BODY_BYTES);
    if (!bearerIs(request.headers.authorization, context.token)) {
      reply = cantonError('authInterceptorInvalidAuthenticationCredentials', 'UNAUTHENTICATED', 'The command is missing a (valid) JWT token');
    } else {
      reply = route(context, request.method ?? 'GET', url, body);
    }
  } catch (err) {
    reply =
      err instanceof BodyTooLarge ? cantonError('invalidIndependentOfSystemState', 'REQUEST_TOO_LARGE', 'request body too large')
      : err instanceof LedgerRejection ? rejection(err)
      : err instanceof DamlTypeError ? cantonError('invalidIndependentOfSystemState', 'COMMAND_PREPROCESSING_FAILED', err.message)
      : err instanceof FilterRefused ? { status: err.status, body: cantonError(err.status === 404 ? 'resourceMissing' : 'invalidIndependentOfSystemState', err.code, err.message).body }
      : cantonError('systemInternal', 'INTERNAL', 'the sandbox ledger failed');
  }
  if (reply.text) sendText(response, reply.status, String(reply.body));
  else sendJson(response, reply.status, reply.body);
}

/** Whether the Authorization header carries `token`, compared in constant time. */
function bearerIs(header: string | undefined, token: string): boolean {
  const sent = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;

const ok = (body: unknown): Reply => ({ status: 200, body });

function route(context: Context, method: string, url: URL, text: string): Reply {
  const { ledger, participant } = context;
  const path = url.pathname;
  const segment = (i: number) => decodeURIComponent(path.split('/')[i] ?? '');
  if (method === 'GET') {
    switch (path) {
      case '/v2/version':
        return ok(VERSION);
      case '/v2/authenticated-user':
        return ok({ user: userOf(participant, participant.operatorUser) });
      case '/v2/state/connected-synchronizers':
        return ok({ connectedSynchronizers: [{ synchronizerAlias: 'sandbox', synchronizerId: SYNCHRONIZER_ID, permission: 'PARTICIPANT_PERMISSION_SUBMISSION' }] });
      case '/v2/state/ledger-end':
        return ok({ offset: ledger.ledgerEnd } satisfies Api['GetLedgerEndResponse']);
      case '/v2/state/latest-pruned-offsets':
        // The sandbox keeps its whole history.
        return ok({ participantPrunedUpToInclusive: 0, allDivulgedContractsPrunedUpToInclusive: 0 } satisfies Api['GetLatestPrunedOffsetsResponse']);
      case '/v2/parties':
        return ok({ partyDetails: participant.listParties().map(partyDetails), nextPageToken: '' });
      case '/v2/parties/participant-id':
        return ok({ participantId: participant.participantId });
      case '/v2/users':
        return ok({ users: participant.listUsers().map((u) => userOf(participant, u.id)), nextPageToken: '' });
      case '/v2/packages':
        return ok({ packageIds: context.known.packages.map((p) => p.id) } satisfies Api['ListPackagesResponse']);
      case '/v2/interactive-submission/preferred-package-version':
        return preferredPackageVersion(context, url);
      default:
        break;
    }
    if (/^\/v2\/parties\/[^/]+$/.test(path)) {
      // Unknown parties are left out, as Canton does, not refused.
      const asked = [segment(3), ...url.searchParams.getAll('parties')];
      return ok({ partyDetails: asked.flatMap((p) => (participant.party(p) ? [partyDetails(participant.party(p)!)] : [])) });
    }
    if (/^\/v2\/users\/[^/]+$/.test(path)) return participant.user(segment(3)) ? ok({ user: userOf(participant, segment(3)) }) : userNotFound(segment(3));
    if (/^\/v2\/users\/[^/]+\/rights$/.test(path)) return participant.user(segment(3)) ? ok({ rights: participant.user(segment(3))!.rights }) : userNotFound(segment(3));
    return noRoute(method, path);
  }
  let json: unknown;
  try {
    // Canton's own clients send JSON without a Content-Type: the body is read as JSON whatever it says.
    json = JSON.parse(text === '' ? '{}' : text);
  } catch {
    return invalid('the request body is not JSON');
  }
  const input = record(json);
  if (!input) return invalid('the request body must be a JSON object');
  if (method === 'PATCH' && /^\/v2\/users\/[^/]+\/rights$/.test(path)) {
    const revoked = participant.revoke(segment(3), rightsOf(input.rights));
    return revoked ? ok({ newlyRevokedRights: revoked }) : userNotFound(segment(3));
  }
  if (method !== 'POST') return noRoute(method, path);
  if (/^\/v2\/users\/[^/]+\/rights$/.test(path)) {
    const granted = participant.grant(segment(3), rightsOf(input.rights));
    return granted ? ok({ newlyGrantedRights: granted }) : userNotFound(segment(3));
  }
  switch (path) {
    case '/v2/parties':
      return allocateParty(context, input);
    case '/v2/parties/external/generate-topology':
      return generateTopology(context, input);
    case '/v2/parties/external/allocate':
      return allocateExternal(context, input);
    case '/v2/users':
      return createUser(context, input);
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
    case '/v2/state/active-contracts':
      return activeContracts(context, input);
    case '/v2/updates':
    case '/v2/updates/flats':
      return updates(context, input, url, 'flat');
    case '/v2/updates/trees':
      return updates(context, input, url, 'tree');
    case '/v2/updates/transaction-by-id':
      return transactionById(context, input);
    case '/v2/events/events-by-contract-id':
      return eventsByContractId(context, input);
    case '/sandbox/v1/fund':
      return fund(context, input);
    case '/sandbox/v1/move':
      return move(ledger, input);
    case '/sandbox/v1/operator':
      if (typeof input.paused !== 'boolean') return invalid('paused must be true or false');
      ledger.setOperatorPaused(input.paused);
      return ok({ paused: ledger.operatorPaused });
    default:
      return noRoute(method, path);
  }
}

const noRoute = (method: string, path: string) => notFound('NOT_FOUND', `no route ${method} ${path.slice(0, 160)}`);
const userNotFound = (id: string) => notFound('USER_NOT_FOUND', `getting user failed for unknown user "${id.slice(0, 80)}"`);

/**
 * The package version a command for `package-name` would use: the participant's only version of the
 * package of that name. Canton answers a name it has no package of as it answers a command naming
 * it; its HTTP layer refuses a request without the parameter in plain text, before Canton reads it.
 */
function preferredPackageVersion(context: Context, url: URL): Reply {
  const name = url.searchParams.get('package-name');
  if (name === null) return { status: 400, body: 'Invalid value for: query parameter package-name (missing)', text: true };
  if (name === '') return invalid('package-name must name a package');
  const pkg = context.known.packages.find((p) => p.name === name);
  if (!pkg) return notFound('PACKAGE_NAMES_NOT_FOUND', packageNamesCause([name.slice(0, 120)]));
  const synchronizerId = url.searchParams.get('synchronizer-id') || SYNCHRONIZER_ID;
  if (synchronizerId !== SYNCHRONIZER_ID) return invalid(`synchronizer-id must be the connected synchronizer ${SYNCHRONIZER_ID}`);
  return ok({ packagePreference: { packageReference: { packageId: pkg.id, packageName: pkg.name, packageVersion: pkg.version }, synchronizerId } } satisfies Api['GetPreferredPackageVersionResponse']);
}

/** A hosted party as the participant lists it: every party it hosts is local to it, external ones included. */
function partyDetails(p: { party: string }) {
  return { party: p.party, isLocal: true, localMetadata: { resourceVersion: '0', annotations: {} }, identityProviderId: '' };
}

function userOf(participant: Participant, id: string) {
  const user = participant.user(id)!;
  return { id: user.id, primaryParty: user.primaryParty, isDeactivated: user.isDeactivated, metadata: { resourceVersion: '0', annotations: {} }, identityProviderId: '' };
}

const RIGHT_KINDS = new Set(['ParticipantAdmin', 'CanReadAsAnyParty', 'CanExecuteAsAnyParty', 'CanActAs', 'CanReadAs', 'CanExecuteAs', 'IdentityProviderAdmin']);

function rightsOf(value: unknown): Right[] {
  if (!Array.isArray(value)) throw new LedgerRejection('INVALID_ARGUMENT', 'rights must be a list');
  return value.map((right, i) => {
    const kind = record(record(right)?.kind);
    const [name] = Object.keys(kind ?? {});
    if (!kind || name === undefined || !RIGHT_KINDS.has(name)) throw new LedgerRejection('INVALID_ARGUMENT', `rights[${i}].kind must be one of ${[...RIGHT_KINDS].join(', ')}`);
    const party = record(record(kind[name])?.value)?.party;
    if (name.startsWith('Can') && !name.endsWith('AnyParty') && typeof party !== 'string') throw new LedgerRejection('INVALID_ARGUMENT', `rights[${i}] must name a party`);
    return { kind: { [name]: { value: typeof party === 'string' ? { party } : {} } } } as unknown as Right;
  });
}

const HINT = /^[a-zA-Z0-9:\-_ ]{1,185}$/;

function allocateParty(context: Context, input: Record<string, unknown>): Reply {
  const hint = typeof input.partyIdHint === 'string' && input.partyIdHint !== '' ? input.partyIdHint : `party-${randomUUID()}`;
  if (!HINT.test(hint) || hint.includes('::')) return invalid('partyIdHint must be up to 185 letters, digits, spaces, colons, hyphens and underscores, without ::');
  const allocated = context.participant.allocate(hint);
  if (!allocated) return cantonError('resourceExists', 'INVALID_ARGUMENT', `Party already exists: party ${hint}::${context.participant.namespace} is already allocated on this node`);
  // As Canton 3.4 does when the request names a user: the user may act as the new party.
  if (typeof input.userId === 'string' && input.userId !== '' && context.participant.user(input.userId)) {
    context.participant.grant(input.userId, [{ kind: { CanActAs: { value: { party: allocated.party } } } }]);
  }
  return ok({ partyDetails: partyDetails(allocated) });
}

function generateTopology(context: Context, input: Record<string, unknown>): Reply {
  if (input.synchronizer !== SYNCHRONIZER_ID) return invalid(`synchronizer must be the connected synchronizer ${SYNCHRONIZER_ID}`);
  const hint = typeof input.partyHint === 'string' && input.partyHint !== '' ? input.partyHint : null;
  if (!hint || !HINT.test(hint) || hint.includes('::')) return invalid('partyHint must be up to 185 letters, digits, spaces, colons, hyphens and underscores, without ::');
  const key = record(input.publicKey);
  if (!key || key.format !== 'CRYPTO_KEY_FORMAT_RAW' || key.keySpec !== 'SIGNING_KEY_SPEC_EC_CURVE25519' || typeof key.keyData !== 'string') {
    return invalid('publicKey must be {format: CRYPTO_KEY_FORMAT_RAW, keySpec: SIGNING_KEY_SPEC_EC_CURVE25519, keyData: <base64 of the 32-byte Ed25519 key>}: the sandbox hosts Ed25519 keys');
  }
  const raw = Buffer.from(key.keyData, 'base64');
  if (raw.length !== 32) return invalid('publicKey.keyData must be 32 bytes of an Ed25519 public key, base64');
  return ok(context.participant.generateTopology(hint, raw));
}

function allocateExternal(context: Context, input: Record<string, unknown>): Reply {
  const transactions = Array.isArray(input.onboardingTransactions) ? input.onboardingTransactions.map((t) => record(t)?.transaction) : null;
  if (!transactions || transactions.length === 0 || !transactions.every((t): t is string => typeof t === 'string')) return invalid('onboardingTransactions must list {transaction: <base64>}');
  const signatures = Array.isArray(input.multiHashSignatures) ? input.multiHashSignatures.map(record) : [];
  const readable = signatures.flatMap((s) => (s && typeof s.signedBy === 'string' && typeof s.signature === 'string' ? [{ signedBy: s.signedBy, signature: Buffer.from(s.signature, 'base64') }] : []));
  const result = context.participant.allocateExternal(transactions.map((t) => Buffer.from(t, 'base64')), readable);
  if (typeof result === 'string') return invalid(result);
  return ok({ partyId: result.party });
}

function createUser(context: Context, input: Record<string, unknown>): Reply {
  const user = record(input.user);
  const id = user?.id;
  if (typeof id !== 'string' || !/^[a-z0-9@^$.!`\-#+'~_|:]{1,128}$/.test(id)) return invalid('user.id must be a user id: up to 128 lowercase letters, digits and @^$.!`-#+\'~_|:');
  const created = context.participant.createUser({ id, primaryParty: typeof user!.primaryParty === 'string' ? user!.primaryParty : '', isDeactivated: user!.isDeactivated === true, rights: rightsOf(input.rights ?? []) });
  if (!created) return cantonError('resourceExists', 'USER_ALREADY_EXISTS', `creating user failed for existing user "${id}"`);
  return ok({ user: userOf(context.participant, id) });
}

interface Submission {
  readonly actAs: string[];
  readonly readAs: string[];
  readonly commandId: string;
  readonly userId: string;
  readonly submissionId: string;
  readonly commands: LedgerCommand[];
  readonly disclosed: ReadonlySet<string>;
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

function shapeOf(value: unknown): Shape {
  if (value === 'TRANSACTION_SHAPE_LEDGER_EFFECTS' || value === 'TRANSACTION_SHAPE_ACS_DELTA') return value;
  throw new LedgerRejection('INVALID_ARGUMENT', 'transactionShape must be TRANSACTION_SHAPE_LEDGER_EFFECTS or TRANSACTION_SHAPE_ACS_DELTA');
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

const OFFSET = /^(0|[1-9][0-9]{0,15})$/;
const offsetOf = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : typeof value === 'string' && OFFSET.test(value) ? Number(value) : null);

function limitOf(url: URL): number | null {
  const text = url.searchParams.get('limit');
  if (text === null) return null;
  if (!/^[1-9][0-9]{0,8}$/.test(text)) throw new LedgerRejection('INVALID_ARGUMENT', 'limit must be a positive integer');
  return Number(text);
}

/** The filter and shape of an updates request: its `updateFormat`, or the deprecated `filter` with `verbose`. */
function updatesFormat(context: Context, input: Record<string, unknown>, form: 'flat' | 'tree'): { filter: EventFilter; shape: Shape } | null {
  if (input.updateFormat !== undefined) {
    const transactions = record(record(input.updateFormat)?.includeTransactions);
    // Only reassignments or topology asked for: the sandbox has one synchronizer and no such updates.
    if (!transactions) return null;
    return { filter: readEventFilter(transactions.eventFormat, 'updateFormat.includeTransactions.eventFormat', context.known), shape: form === 'tree' ? 'TRANSACTION_SHAPE_LEDGER_EFFECTS' : shapeOf(transactions.transactionShape) };
  }
  if (input.filter === undefined) throw new LedgerRejection('INVALID_ARGUMENT', 'updateFormat (or the deprecated filter) is required');
  // The deprecated form read flat transactions as the ACS delta, and trees as ledger effects.
  return { filter: readEventFilter(input.filter, 'filter', context.known), shape: form === 'tree' ? 'TRANSACTION_SHAPE_LEDGER_EFFECTS' : 'TRANSACTION_SHAPE_ACS_DELTA' };
}

function updates(context: Context, input: Record<string, unknown>, url: URL, form: 'flat' | 'tree'): Reply {
  const { ledger } = context;
  const begin = offsetOf(input.beginExclusive ?? 0);
  if (begin === null) return invalid('beginExclusive must be a non-negative offset');
  const end = input.endInclusive === undefined || input.endInclusive === null ? ledger.ledgerEnd : offsetOf(input.endInclusive);
  if (end === null) return invalid('endInclusive must be an offset');
  if (end > ledger.ledgerEnd) return cantonError('invalidGivenCurrentSystemStateOther', 'OFFSET_AFTER_LEDGER_END', `End offset (${end}) is after the ledger end (${ledger.ledgerEnd})`);
  if (begin > end) return invalid(`beginExclusive (${begin}) is after endInclusive (${end})`);
  const limit = limitOf(url);
  const format = updatesFormat(context, input, form);
  if (!format) return ok([]);
  const items: unknown[] = [];
  for (const tx of ledger.transactions(begin, end)) {
    const rendered = form === 'tree' ? renderTree(tx, format.filter, SYNCHRONIZER_ID) : renderTransaction(tx, format.filter, format.shape, SYNCHRONIZER_ID);
    if (rendered === null) continue;
    if (limit !== null && items.length >= limit) break;
    if (items.length >= MAX_LIST_ELEMENTS) {
      return cantonError('invalidIndependentOfSystemState', 'HTTP_LIST_MAX_ELEMENTS_LIMIT_EXCEEDED', `the answer would exceed http-list-max-elements-limit (${MAX_LIST_ELEMENTS}); ask for fewer with limit`);
    }
    items.push(form === 'tree' ? { update: { TransactionTree: { value: rendered } } } : { update: { Transaction: { value: rendered } } });
  }
  return ok(items);
}

function transactionById(context: Context, input: Record<string, unknown>): Reply {
  if (typeof input.updateId !== 'string') return invalid('updateId is required');
  const format = record(input.transactionFormat);
  const filter = format ? readEventFilter(format.eventFormat, 'transactionFormat.eventFormat', context.known) : input.requestingParties !== undefined ? readEventFilter({ filtersByParty: Object.fromEntries((input.requestingParties as string[]).map((p) => [p, { cumulative: [] }])) }, 'requestingParties', context.known) : null;
  if (!filter) return invalid('transactionFormat is required');
  const tx = context.ledger.transactionById(input.updateId);
  const rendered = tx ? renderTransaction(tx, filter, format ? shapeOf(format.transactionShape) : 'TRANSACTION_SHAPE_ACS_DELTA', SYNCHRONIZER_ID) : null;
  if (!rendered) return notFound('TRANSACTION_NOT_FOUND', 'Transaction not found, or not visible.');
  return ok({ transaction: rendered });
}

function eventsByContractId(context: Context, input: Record<string, unknown>): Reply {
  if (typeof input.contractId !== 'string') return invalid('contractId is required');
  const filter =
    input.eventFormat !== undefined ? readEventFilter(input.eventFormat, 'eventFormat', context.known)
    : Array.isArray(input.requestingParties) ? readEventFilter({ filtersByParty: Object.fromEntries(input.requestingParties.map((p) => [String(p), { cumulative: [] }])) }, 'requestingParties', context.known)
    : null;
  if (!filter) return invalid('eventFormat is required');
  const life = context.ledger.contract(input.contractId);
  const created = life ? renderActive(life.created, life.createdIn, filter) : null;
  if (!life || !created) return notFound('CONTRACT_EVENTS_NOT_FOUND', 'Contract events not found, or not visible.');
  const archive = life.archivedIn;
  const archived = archive ? (renderEvent(archive.event, archive.transaction, filter, 'TRANSACTION_SHAPE_ACS_DELTA', true) as { ArchivedEvent?: unknown } | null) : null;
  return ok({
    created: { createdEvent: created, synchronizerId: SYNCHRONIZER_ID },
    ...(archived?.ArchivedEvent ? { archived: { archivedEvent: archived.ArchivedEvent, synchronizerId: SYNCHRONIZER_ID } } : {}),
  });
}

function activeContracts(context: Context, input: Record<string, unknown>): Reply {
  const { ledger } = context;
  const at = offsetOf(input.activeAtOffset);
  if (at === null || at > ledger.ledgerEnd) return cantonError('invalidGivenCurrentSystemStateOther', 'OFFSET_AFTER_LEDGER_END', `activeAtOffset must be an offset up to the ledger end (${ledger.ledgerEnd})`);
  const filter = input.eventFormat !== undefined ? readEventFilter(input.eventFormat, 'eventFormat', context.known) : readEventFilter(input.filter, 'filter', context.known);
  const items = ledger
    .activeAt(at)
    .map((life) => renderActive(life.created, life.createdIn, filter))
    .filter((e) => e !== null)
    .map((createdEvent) => ({ workflowId: '', contractEntry: { JsActiveContract: { createdEvent, synchronizerId: SYNCHRONIZER_ID, reassignmentCounter: 0 } } }));
  if (items.length > MAX_LIST_ELEMENTS) {
    return cantonError('invalidIndependentOfSystemState', 'HTTP_LIST_MAX_ELEMENTS_LIMIT_EXCEEDED', `the answer would exceed http-list-max-elements-limit (${MAX_LIST_ELEMENTS})`);
  }
  return ok(items);
}

function tokenOf(value: unknown): Token | Reply {
  if (typeof value !== 'string') return invalid('token must be a token symbol');
  try {
    return resolveToken(value, 'token');
  } catch (err) {
    return invalid((err as Error).message);
  }
}

const isReply = (value: unknown): value is Reply => record(value) !== null && 'status' in (value as object) && 'body' in (value as object);

/** The faucet: funds a party, hosting it on the participant if it was not (a party a wallet names before allocating it). */
function fund(context: Context, input: Record<string, unknown>): Reply {
  if (!isPartyId(input.party)) return invalid('party must be a ledger party id <hint>::1220<64 hex>');
  const token = tokenOf(input.token);
  if (isReply(token)) return token;
  if (typeof input.amount !== 'string' || !/^[0-9]{1,12}(\.[0-9]{1,10})?$/.test(input.amount) || !new Decimal(input.amount).gt(0)) {
    return invalid('amount must be a positive decimal string with at most 10 fractional digits, below 1e12');
  }
  if (!context.participant.party(input.party)) context.participant.host(input.party);
  const { contractId, transaction } = context.ledger.fund(input.party, token.instrument, new Decimal(input.amount));
  return ok({ holdingCid: contractId, updateId: transaction.updateId, offset: transaction.offset });
}

function move(ledger: SandboxLedger, input: Record<string, unknown>): Reply {
  const pair = typeof input.pair === 'string' ? /^([^/\s]+)\/([^/\s]+)$/.exec(input.pair) : null;
  if (!pair) return invalid('pair must be two token symbols, such as CC/USDCx');
  const first = tokenOf(pair[1]);
  if (isReply(first)) return first;
  const second = tokenOf(pair[2]);
  if (isReply(second)) return second;
  const bps = input.bps;
  if (typeof bps !== 'number' || !Number.isInteger(bps) || bps <= -10_000 || bps > 100_000 || bps === 0) return invalid('bps must be a non-zero whole number above -10000 (-300: the price falls by 3 %)');
  const entry = ledger.poolFor(first, second);
  if (!entry) return notFound('NOT_FOUND', `the sandbox has no tradecraft pool for ${first.symbol}/${second.symbol}`);
  const { before, after } = ledger.movePool(entry.party, first, bps);
  return ok({ pair: `${first.symbol}/${second.symbol}`, priceBefore: before, priceAfter: after });
}
