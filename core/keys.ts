// The key-verification port. A presented key either belongs to a partner or is invalid; a store
// that cannot be read throws KeyStoreUnavailable, never a silent "invalid".

export interface Partner {
  readonly id: string;
  readonly name: string;
}

export interface KeyVerifier {
  /** The key's partner, or null when the key is malformed, unknown or revoked. */
  verify(presentedKey: string): Promise<Partner | null>;
}

export class KeyStoreUnavailable extends Error {
  override readonly name = 'KeyStoreUnavailable';
}

/**
 * The embedded default until partner keys can be issued: it holds no keys, so every presented
 * key is invalid and keyless use is unaffected.
 */
export const emptyKeyStore: KeyVerifier = {
  verify: async () => null,
};
