// The keyed quote: the same fee-free base quote every caller gets, with the partner's disclosed
// fee block on each available venue and the schema that applied. The fee lines are computed per
// response from the partner's terms and never enter any cache; the ranking is the base quote's.
import { checkIntegratorCap, clientFees } from './client-fees.js';
import { dec } from '../decimal.js';
import type { FeeSchemas, FeeTerms } from './fee-schemas.js';
import type { Partner } from '../keys/partner-keys.js';
import type { QuoteParams } from './params.js';
import type { QuoteService } from './service.js';
import type { QuoteResponse } from '../wire.js';

export interface PartnerQuote {
  readonly body: QuoteResponse;
  /** Whether the base quote came from the cache. */
  readonly cached: boolean;
}

export class PartnerQuotes {
  constructor(
    private readonly quotes: QuoteService,
    private readonly schemas: FeeSchemas,
    private readonly feeCollectionEnabled: boolean,
  ) {}

  async quote(params: QuoteParams, partner: Partner): Promise<PartnerQuote> {
    const terms = this.schemas.termsOfPartner(partner);
    checkIntegratorCap(params.integratorFee, terms);
    const { json, cached } = await this.quotes.baseQuote(params);
    return { body: withClientFees(JSON.parse(json) as QuoteResponse, terms, params, this.feeCollectionEnabled), cached };
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
