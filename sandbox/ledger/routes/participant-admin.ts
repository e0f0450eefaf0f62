// The participant's own endpoints: its version and packages, its parties (local and external,
// with their topology) and its users with their rights, as Canton 3.4's JSON Ledger API serves them.
import { randomUUID } from 'node:crypto';
import type { v3_4 } from '@canton-network/core-ledger-client-types';
import { LedgerRejection } from '../command-arguments.js';
import type { Participant, Right } from '../participant.js';
import { SYNCHRONIZER_ID, type Context } from './context.js';
import { record } from './reading.js';
import { cantonError, invalid, notFound, ok, packageNamesCause, type Reply } from './replies.js';

type Api = v3_4.components['schemas'];

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

/** A GET of this family, or undefined when the path is none of its. */
export function participantRead(context: Context, url: URL): Reply | undefined {
  const { participant } = context;
  const path = url.pathname;
  const segment = (i: number) => decodeURIComponent(path.split('/')[i] ?? '');
  switch (path) {
    case '/v2/version':
      return ok(VERSION);
    case '/v2/authenticated-user':
      return ok({ user: userOf(participant, participant.operatorUser) });
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
  return undefined;
}

/** A PATCH or POST of this family, or undefined when the path is none of its. */
export function participantWrite(context: Context, method: 'PATCH' | 'POST', path: string, input: Record<string, unknown>): Reply | undefined {
  const { participant } = context;
  const rights = /^\/v2\/users\/[^/]+\/rights$/.test(path) ? decodeURIComponent(path.split('/')[3] ?? '') : null;
  if (method === 'PATCH') {
    if (rights === null) return undefined;
    const revoked = participant.revoke(rights, rightsOf(input.rights));
    return revoked ? ok({ newlyRevokedRights: revoked }) : userNotFound(rights);
  }
  if (rights !== null) {
    const granted = participant.grant(rights, rightsOf(input.rights));
    return granted ? ok({ newlyGrantedRights: granted }) : userNotFound(rights);
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
    default:
      return undefined;
  }
}

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
