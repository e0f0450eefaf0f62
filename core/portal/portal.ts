// The key portal's operations on a partner's own key. Creation issues a key under the configured
// default fee schema (negotiated schemas stay the operator's, through the keys CLI), within the
// creation limits; the other operations act on the key the caller signed in with, by its record
// id. The key itself is returned by creation and rotation only, and never logged: every action is
// logged with the key's id.
import { generateKey, hashKey } from '../keys/api-key.js';
import { KeyStoreUnavailable, newKey, parseOrigin, type KeyRecord, type KeyStore, type Partner } from '../keys/partner-keys.js';
import { DomainError } from '../errors.js';
import type { CoreLog } from '../log.js';
import type { FeeSchemas, FeeTerms } from '../quotes/fee-schemas.js';
import { keyedWindowKey, type RateWindows } from '../state/rate-windows.js';
import type { UsageDay, UsageReader } from '../usage/usage.js';
import { CreationLimits, type CreationLimitSettings } from './creation-limits.js';

/** Seconds a caller should wait when the key store cannot be read or written, as for a key that cannot be verified. */
const KEY_STORE_RETRY_AFTER_S = 5;

/** The keyed rate-limit window's length (handlers/http/rate-limits.ts). */
const KEYED_WINDOW_S = 60;

/** How a key's traffic is attributed: by the key itself (the swap API's `ref` is for keyless callers). */
export const ATTRIBUTION = 'Every swap API request sent with this key is attributed to it by the key itself, with no ref parameter, and counted here.';

export interface PortalOptions {
  readonly store: KeyStore;
  readonly schemas: FeeSchemas;
  /** The rate-limit windows, where a key's window is read. */
  readonly windows: RateWindows;
  /** Where the creation limits are counted (core/portal/creation-limits.ts). */
  readonly creationWindows: RateWindows;
  readonly usage: UsageReader;
  /** RATE_LIMIT_KEYED_PER_MINUTE: the window a key raises a caller to. */
  readonly keyedPerMinute: number;
  readonly creation: CreationLimitSettings;
  readonly log: CoreLog;
  readonly now: () => Date;
}

/** A key just issued or rotated: the key, shown once, and its record. */
export interface IssuedKey {
  readonly key: string;
  readonly record: KeyRecord;
}

export interface KeyWindow {
  readonly limit: number;
  readonly remaining: number;
  readonly resetsInSeconds: number;
}

export interface KeyView {
  readonly record: KeyRecord;
  readonly feeTerms: FeeTerms;
  readonly window: KeyWindow;
  readonly attribution: string;
  readonly usage: readonly UsageDay[];
}

export interface NewKeyRequest {
  readonly name: string;
  readonly origins?: readonly string[];
}

export class KeyPortal {
  private readonly limits: CreationLimits;

  constructor(private readonly options: PortalOptions) {
    this.limits = new CreationLimits(options.creationWindows, options.creation, options.now);
  }

  /** Issues a key; throws bad_request for a blank name or a malformed origin, rate_limited over a creation limit (storing nothing either way). */
  async create(request: NewKeyRequest, clientIp: string): Promise<IssuedKey> {
    const name = request.name.trim();
    if (name === '') throw new DomainError('bad_request', 'name must not be blank');
    const origins = checkedOrigins(request.origins ?? []);
    await this.limits.admit(clientIp);
    const issued = newKey(name, this.options.schemas.defaultSchemaId, this.options.now(), origins, 'portal');
    await stored(() => this.options.store.add(issued.record));
    this.options.log.info({ keyId: issued.record.id, portalAction: 'created', schemaId: issued.record.schemaId }, 'portal: key created');
    return issued;
  }

  /** The signed-in key's record, fee terms, window now (read without counting) and usage. */
  async view(partner: Partner): Promise<KeyView> {
    const { options } = this;
    const record = await this.activeRecord(partner);
    const [window, usage] = await Promise.all([options.windows.peek(keyedWindowKey(record.id)), options.usage.days(record.id)]);
    return {
      record,
      feeTerms: options.schemas.termsOfPartner(record),
      window: {
        limit: options.keyedPerMinute,
        remaining: window === null ? options.keyedPerMinute : Math.max(0, options.keyedPerMinute - window.count),
        resetsInSeconds: window === null ? KEYED_WINDOW_S : Math.min(KEYED_WINDOW_S, Math.ceil(window.resetInMs / 1000)),
      },
      attribution: ATTRIBUTION,
      usage,
    };
  }

  /** A new key for the same record: the old one is no longer found. */
  async rotate(partner: Partner): Promise<IssuedKey> {
    const key = generateKey();
    const record = await stored(() => this.options.store.rotate(partner.id, hashKey(key)));
    if (!record) throw revokedMeanwhile();
    this.options.log.info({ keyId: record.id, portalAction: 'rotated' }, 'portal: key rotated');
    return { key, record };
  }

  async revoke(partner: Partner): Promise<KeyRecord> {
    const record = await stored(() => this.options.store.revoke({ id: partner.id }, this.options.now()));
    if (!record) throw revokedMeanwhile();
    this.options.log.info({ keyId: record.id, portalAction: 'revoked' }, 'portal: key revoked');
    return record;
  }

  /** Replaces the key's allowed origins; throws bad_request for a malformed one. */
  async setOrigins(partner: Partner, origins: readonly string[]): Promise<KeyRecord> {
    const checked = checkedOrigins(origins);
    const record = await stored(() => this.options.store.setOrigins(partner.id, checked));
    if (!record) throw revokedMeanwhile();
    this.options.log.info({ keyId: record.id, portalAction: 'origins-set', origins: checked }, 'portal: key origins set');
    return record;
  }

  private async activeRecord(partner: Partner): Promise<KeyRecord> {
    const record = (await stored(() => this.options.store.list())).find((r) => r.id === partner.id);
    if (record?.status !== 'active') throw revokedMeanwhile();
    return record;
  }
}

/** A key store call; a store that cannot be read or written is 503 with Retry-After (the key may be fine), never a 500. */
async function stored<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof KeyStoreUnavailable) {
      throw new DomainError('key_verification_unavailable', 'the key store cannot be read or written right now; nothing was changed', KEY_STORE_RETRY_AFTER_S);
    }
    throw err;
  }
}

/** Each origin as an Origin header names it, once each; bad_request naming the first that is not one. */
function checkedOrigins(raw: readonly string[]): string[] {
  const origins = raw.map((value, i) => {
    const origin = parseOrigin(value);
    if (origin === null) throw new DomainError('bad_request', `origins[${i}] must be an origin: scheme, host and optional port, nothing after (https://wallet.example)`);
    return origin;
  });
  return [...new Set(origins)];
}

// The key was verified a moment ago and revoked (or rotated) since: to its holder, it is no longer valid.
const revokedMeanwhile = (): DomainError => new DomainError('invalid_key', 'the API key is not valid');
