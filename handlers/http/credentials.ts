// Reads the partner key from `x-api-key` or `Authorization: Bearer <key>` and resolves it to a
// partner through the key port.
import type { IncomingHttpHeaders } from 'node:http';
import { DomainError } from '../../core/errors.js';
import { KeyStoreUnavailable, type KeyCheck, type KeyVerifier, type Partner } from '../../core/keys/partner-keys.js';
import { NO_METRICS, type Metrics } from '../../core/metrics.js';

export type KeyRequirement = 'none' | 'optional' | 'required';

/** Seconds a caller should wait before retrying when the key store cannot be read. */
export const KEY_STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The key the caller presents, or null when it presents none. A header that is there but holds no
 * usable key (an empty x-api-key, an Authorization that is not `Bearer <key>`) is returned as it
 * is, to be refused as a malformed key: a partner who gets the header wrong must hear so, not get
 * a keyless answer without its fees. Both headers naming different keys is refused (bad_request).
 */
export function presentedKey(headers: IncomingHttpHeaders): string | null {
  const header = headers['x-api-key'];
  const { authorization } = headers;
  const bearer = authorization === undefined ? undefined : (/^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? authorization);
  if (header !== undefined) {
    const key = String(header).trim();
    // Two different keys: which one the caller meant to be metered and billed under is not guessed.
    if (bearer !== undefined && /^Bearer\s/i.test(authorization!) && bearer !== key) {
      throw new DomainError('bad_request', 'x-api-key and Authorization: Bearer name different keys: send the key once, in either header');
    }
    return key;
  }
  return bearer ?? null;
}

/** Where a key is taken from any page: the key portal, the key holder's own page, where a key bound to other origins is managed. */
export const ANY_ORIGIN = Symbol('any origin');

/**
 * The partner a presented key belongs to; throws invalid_key or key_verification_unavailable. A key
 * kept to browser origins is invalid from any other Origin, or without one: copied out of a page,
 * it is useless in other sites' pages (it binds browsers, which cannot forge Origin).
 */
export async function verifyKey(key: string, keys: KeyVerifier, origin?: string | typeof ANY_ORIGIN, metrics: Metrics = NO_METRICS): Promise<Partner> {
  let partner: Partner | null;
  try {
    partner = await keys.verify(key);
  } catch (err) {
    if (err instanceof KeyStoreUnavailable) throw unverifiable(metrics);
    throw err;
  }
  return admitKey(partner, origin, metrics);
}

/** The refusal of a key the store could not be asked about (503 key_verification_unavailable). */
export function unverifiable(metrics: Metrics = NO_METRICS): DomainError {
  metrics.keyVerification('unavailable');
  return new DomainError('key_verification_unavailable', 'the key could not be verified right now; it may be valid', KEY_STORE_RETRY_AFTER_SECONDS);
}

/** `partner` (a key's, null when unknown or revoked) when it may be used from `origin`; throws invalid_key otherwise. */
export function admitKey(partner: Partner | null, origin: string | undefined | typeof ANY_ORIGIN, metrics: Metrics = NO_METRICS): Partner {
  if (!partner) {
    metrics.keyVerification('invalid');
    throw new DomainError('invalid_key', 'the API key is not valid');
  }
  if (origin !== ANY_ORIGIN && partner.origins !== null && (origin === undefined || !partner.origins.includes(origin))) {
    metrics.keyVerification('wrong_origin');
    throw new DomainError('invalid_key', 'the API key is not valid from this origin');
  }
  metrics.keyVerification('valid');
  return partner;
}

/** The refusals made by a KeyCheck whose round trip failed: like a lookup that failed, counted in no window. */
const unverifiedRefusals = new WeakSet<object>();

/** Whether `err` refuses a request whose kept key could not be confirmed: it is counted in no rate-limit window. */
export const countsInNoWindow = (err: unknown): boolean => typeof err === 'object' && err !== null && unverifiedRefusals.has(err);

/**
 * The partner a kept record gives the key (KeyVerifier.kept), admitted as verifyKey would, and the
 * check its request's round trip confirms it with: when the store's version changed since, the
 * key is verified again, by the same rules.
 */
export function keptKey(key: string, keys: KeyVerifier, origin: string | undefined, metrics: Metrics = NO_METRICS): { readonly partner: Partner; readonly check: KeyCheck } | undefined {
  const kept = keys.kept?.(key);
  if (!kept) return undefined;
  return {
    partner: admitKey(kept.partner, origin, metrics),
    check: {
      versionKey: kept.versionKey,
      confirm: async (version) => {
        if (version !== null && version === kept.version) return;
        try {
          await verifyKey(key, keys, origin, metrics);
        } catch (err) {
          if (err instanceof DomainError && err.code === 'key_verification_unavailable') unverifiedRefusals.add(err);
          throw err;
        }
      },
      unverifiable: () => {
        const refusal = unverifiable(metrics);
        unverifiedRefusals.add(refusal);
        return refusal;
      },
    },
  };
}
