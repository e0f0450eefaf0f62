// The participant around the sandbox ledger: who it hosts and who may use it. Parties are local
// (allocated here, `<hint>::<this participant's namespace>`) or external (onboarded with a key the
// participant never holds: `<hint>::<the key's fingerprint>`, submitting only by signed
// interactive submission); users hold rights; every committed submission leaves a completion.
//
// One bearer token reaches the participant: its user (the token's `sub`) is the participant's
// administrator with CanReadAsAnyParty and CanExecuteAsAnyParty, as a wallet's or a validator's
// operator user is. Other users exist as records that a wallet may create and grant rights to.
import { createHash, createPublicKey, verify } from 'node:crypto';
import { CryptoKeyFormat, Enums_ParticipantPermission, Enums_TopologyChangeOp, SigningKeyScheme, SigningKeySpec, SigningKeyUsage, TopologyTransaction } from '@canton-network/core-ledger-proto';

/** Canton's hash purposes (com.digitalasset.canton.crypto.HashPurpose) used here. */
const HASH_PURPOSE = { topologyTransaction: 11, publicKeyFingerprint: 12, multiTopologyTransaction: 55 } as const;

/** A multihash of SHA-256, as Canton writes hashes: 0x12 0x20, then the digest of the purpose (int32) and the bytes. */
export function cantonHash(purpose: number, bytes: Uint8Array): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(purpose);
  return Buffer.concat([Buffer.from([0x12, 0x20]), createHash('sha256').update(prefix).update(bytes).digest()]);
}

/** A public key's fingerprint, the namespace of the party it roots. */
export const fingerprintOf = (rawKey: Uint8Array) => cantonHash(HASH_PURPOSE.publicKeyFingerprint, rawKey).toString('hex');

/** The hash an external party signs to onboard: over its topology transactions, in the order of their hashes. */
export function topologyMultiHash(transactions: readonly Uint8Array[]): Buffer {
  const hashes = transactions.map((tx) => cantonHash(HASH_PURPOSE.topologyTransaction, tx)).sort((a, b) => (a.toString('hex') < b.toString('hex') ? -1 : 1));
  const count = Buffer.alloc(4);
  count.writeInt32BE(hashes.length);
  const parts = hashes.flatMap((h) => {
    const length = Buffer.alloc(4);
    length.writeInt32BE(h.length);
    return [length, h];
  });
  return cantonHash(HASH_PURPOSE.multiTopologyTransaction, Buffer.concat([count, ...parts]));
}

/** An Ed25519 signature over `message` by a raw 32-byte public key. */
export function ed25519Verifies(rawKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), rawKey]), format: 'der', type: 'spki' });
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

export type Right =
  | { readonly kind: { readonly ParticipantAdmin: { readonly value: Record<string, never> } } }
  | { readonly kind: { readonly CanReadAsAnyParty: { readonly value: Record<string, never> } } }
  | { readonly kind: { readonly CanExecuteAsAnyParty: { readonly value: Record<string, never> } } }
  | { readonly kind: { readonly CanActAs: { readonly value: { readonly party: string } } } }
  | { readonly kind: { readonly CanReadAs: { readonly value: { readonly party: string } } } }
  | { readonly kind: { readonly CanExecuteAs: { readonly value: { readonly party: string } } } }
  | { readonly kind: { readonly IdentityProviderAdmin: { readonly value: Record<string, never> } } };

export interface User {
  readonly id: string;
  readonly primaryParty: string;
  readonly isDeactivated: boolean;
  readonly rights: Right[];
}

export interface HostedParty {
  readonly party: string;
  /** An external party's Ed25519 key, raw (it submits only what that key signed); null for a party the participant submits for. */
  readonly signingKey: Buffer | null;
}

export interface Completion {
  readonly userId: string;
  readonly actAs: readonly string[];
  readonly commandId: string;
  readonly submissionId: string;
  readonly updateId: string;
  readonly offset: number;
  readonly recordTime: string;
}

/** An external party's onboarding, generated and waiting for its key's signature. */
interface PendingTopology {
  readonly partyId: string;
  readonly key: Buffer;
  readonly multiHash: Buffer;
}

const RIGHT_KEY = (right: Right) => JSON.stringify(right.kind);

export class Participant {
  /** `PAR::<name>::<namespace>`, the participant's own id. */
  readonly participantId: string;
  /** The namespace (fingerprint) local parties are allocated under. */
  readonly namespace: string;
  private readonly parties = new Map<string, HostedParty>();
  private readonly users = new Map<string, User>();
  private readonly completions: Completion[] = [];
  private readonly pending = new Map<string, PendingTopology>();

  constructor(
    readonly operatorUser: string,
    readonly synchronizerId: string,
  ) {
    this.namespace = `1220${createHash('sha256').update('bestex sandbox participant namespace').digest('hex')}`;
    this.participantId = `PAR::sandbox::${this.namespace}`;
    this.users.set(operatorUser, {
      id: operatorUser, primaryParty: '', isDeactivated: false,
      rights: [{ kind: { ParticipantAdmin: { value: {} } } }, { kind: { CanReadAsAnyParty: { value: {} } } }, { kind: { CanExecuteAsAnyParty: { value: {} } } }],
    });
  }

  /** Hosts `party` as a local party with the namespace it already has (the sandbox's own parties, and those its faucet funds). */
  host(party: string): HostedParty {
    const known = this.parties.get(party);
    if (known) return known;
    const hosted: HostedParty = { party, signingKey: null };
    this.parties.set(party, hosted);
    return hosted;
  }

  party(party: string): HostedParty | undefined {
    return this.parties.get(party);
  }

  listParties(): HostedParty[] {
    return [...this.parties.values()];
  }

  /** A new local party under this participant's namespace; refused when the id is taken. */
  allocate(hint: string): HostedParty | null {
    const party = `${hint}::${this.namespace}`;
    if (this.parties.has(party)) return null;
    return this.host(party);
  }

  /** The onboarding an external party's key signs: its topology transactions and their multihash. */
  generateTopology(hint: string, key: Buffer): { partyId: string; publicKeyFingerprint: string; topologyTransactions: string[]; multiHash: string } {
    const fingerprint = fingerprintOf(key);
    const partyId = `${hint}::${fingerprint}`;
    const signingKey = { format: CryptoKeyFormat.RAW, publicKey: key, scheme: SigningKeyScheme.ED25519, usage: [SigningKeyUsage.NAMESPACE, SigningKeyUsage.PROTOCOL], keySpec: SigningKeySpec.EC_CURVE25519, id: fingerprint };
    // The three mappings Canton onboards a single-key external party with: its namespace rooted
    // in the key, the key as the party's signing key, and this participant hosting it to confirm.
    const transactions = [
      { oneofKind: 'namespaceDelegation' as const, namespaceDelegation: { namespace: fingerprint, targetKey: signingKey, isRootDelegation: true, restriction: { oneofKind: undefined } } },
      { oneofKind: 'partyToKeyMapping' as const, partyToKeyMapping: { party: partyId, threshold: 1, signingKeys: [signingKey] } },
      { oneofKind: 'partyToParticipant' as const, partyToParticipant: { party: partyId, threshold: 1, participants: [{ participantUid: this.participantId.slice('PAR::'.length), permission: Enums_ParticipantPermission.CONFIRMATION }], partySigningKeys: undefined } },
    ].map((mapping) => Buffer.from(TopologyTransaction.toBinary(TopologyTransaction.create({ operation: Enums_TopologyChangeOp.ADD_REPLACE, serial: 1, mapping: { mapping } as never }))));
    const multiHash = topologyMultiHash(transactions);
    this.pending.set(multiHash.toString('base64'), { partyId, key, multiHash });
    return { partyId, publicKeyFingerprint: fingerprint, topologyTransactions: transactions.map((tx) => tx.toString('base64')), multiHash: multiHash.toString('base64') };
  }

  /**
   * Onboards the external party whose generated topology these transactions are, if the key's
   * signature over their multihash verifies; the reason it does not, otherwise.
   */
  allocateExternal(transactions: readonly Buffer[], signatures: ReadonlyArray<{ signedBy: string; signature: Buffer }>): HostedParty | string {
    const multiHash = topologyMultiHash(transactions);
    const pending = this.pending.get(multiHash.toString('base64'));
    if (!pending) return 'the onboarding transactions are not a topology this participant generated';
    const fingerprint = fingerprintOf(pending.key);
    const signed = signatures.some((s) => s.signedBy === fingerprint && ed25519Verifies(pending.key, pending.multiHash, s.signature));
    if (!signed) return `no valid signature by ${fingerprint} over the onboarding transactions' multihash`;
    this.pending.delete(multiHash.toString('base64'));
    const hosted: HostedParty = { party: pending.partyId, signingKey: pending.key };
    this.parties.set(pending.partyId, hosted);
    return hosted;
  }

  user(id: string): User | undefined {
    return this.users.get(id);
  }

  listUsers(): User[] {
    return [...this.users.values()];
  }

  createUser(user: User): User | null {
    if (this.users.has(user.id)) return null;
    const created = { ...user, rights: dedupe(user.rights) };
    this.users.set(user.id, created);
    return created;
  }

  /** Grants `rights` to `id`: the ones it did not have. */
  grant(id: string, rights: readonly Right[]): Right[] | null {
    const user = this.users.get(id);
    if (!user) return null;
    const had = new Set(user.rights.map(RIGHT_KEY));
    const added = dedupe(rights).filter((r) => !had.has(RIGHT_KEY(r)));
    user.rights.push(...added);
    return added;
  }

  /** Revokes `rights` from `id`: the ones it had. */
  revoke(id: string, rights: readonly Right[]): Right[] | null {
    const user = this.users.get(id);
    if (!user) return null;
    const gone = new Set(rights.map(RIGHT_KEY));
    const removed = user.rights.filter((r) => gone.has(RIGHT_KEY(r)));
    user.rights.splice(0, user.rights.length, ...user.rights.filter((r) => !gone.has(RIGHT_KEY(r))));
    return removed;
  }

  recordCompletion(completion: Completion): void {
    this.completions.push(completion);
  }

  /** The completions of `userId`'s submissions for any of `parties`, after `beginExclusive`. */
  completionsFor(userId: string, parties: readonly string[], beginExclusive: number): Completion[] {
    return this.completions.filter((c) => c.offset > beginExclusive && c.userId === userId && c.actAs.some((p) => parties.includes(p)));
  }
}

function dedupe(rights: readonly Right[]): Right[] {
  const seen = new Set<string>();
  return rights.filter((r) => {
    const key = RIGHT_KEY(r);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
