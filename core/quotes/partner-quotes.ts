// The keyed quote: the same fee-free base quote every caller gets, with the partner's disclosed
// fee block on each available venue and the schema that applied. The fee lines are computed per
// response from the partner's terms and never enter any cache; the ranking is the base quote's.
import { checkIntegratorCap, clientFees } from './client-fees.js';
import { dec } from '../decimal.js';
import { DomainError } from '../errors.js';
import type { FeeSchemas, FeeTerms } from './fee-schemas.js';
import type { Partner } from '../keys/partner-keys.js';
import type { QuoteParams } from './params.js';
import type { QuoteCounts, QuoteService } from './service.js';
import type { QuoteResponse } from '../contract/v1.js';

export interface PartnerQuote {
  readonly body: QuoteResponse;
  /** Whether the base quote came from the cache. */
  readonly cached: boolean;
  /** The base quote's price impacts, as JSON text (service.ts CachedQuote): never in the body. */
  readonly impacts: string;
}

/** Seconds a partner is told to wait when its key's fee schema is not configured: an operator's fix takes a while. */
export const UNCONFIGURED_SCHEMA_RETRY_SECONDS = 60;

export class PartnerQuotes {
  /** `onUnconfiguredSchema` hears each refused quote of a key whose fee schema is not configured. */
  constructor(
    private readonly quotes: QuoteService,
    private readonly schemas: FeeSchemas,
    private readonly feeCollectionEnabled: boolean,
    private readonly onUnconfiguredSchema: (partner: Partner) => void = () => {},
  ) {}

  /**
   * `beforeCompute`: spends the key's fresh-quote budget when the base quote is computed for this
   * request (throws over it). `counts`: where the windows are shared, the request's counts, made
   * with the base quote's read (QuoteService.counted) instead.
   */
  async quote(params: QuoteParams, partner: Partner, beforeCompute?: () => void | Promise<void>, counts?: QuoteCounts): Promise<PartnerQuote> {
    const terms = this.schemas.termsOf(partner.schemaId);
    // Never a quote under other terms. The quote's contract has no 500: the key is recognised and
    // cannot be served until the operator configures its schema (told at start, and here), which is
    // a 503 with Retry-After, as for a key the service cannot verify now. The answer names no schema.
    if (!terms) {
      this.onUnconfiguredSchema(partner);
      throw new DomainError('key_verification_unavailable', "this key's fee terms are not configured on the service right now; nothing was quoted; the operator is told", UNCONFIGURED_SCHEMA_RETRY_SECONDS);
    }
    checkIntegratorCap(params.integratorFee, terms);
    const { json, impacts, cached } = counts ? await this.quotes.counted(params, counts) : await this.quotes.baseQuote(params, beforeCompute);
    return { body: withClientFees(JSON.parse(json) as QuoteResponse, terms, params, this.feeCollectionEnabled), cached, impacts };
  }
}

/** `base` with the fee block on each available venue and `appliedSchema`; base itself is not changed. */
export function withClientFees(base: QuoteResponse, terms: FeeTerms, params: Pick<QuoteParams, 'integratorFee'>, collecting: boolean): QuoteResponse {
  return {
    ...base,
    venues: base.venues.map((venue) =>
      venue.available && venue.net !== null ? { ...venue, clientFees: clientFees(dec(venue.net), terms, params.integratorFee, collecting) } : venue,
    ),
    appliedSchema: { schemaId: terms.schemaId, overrideId: terms.overrideId },
  };
}
