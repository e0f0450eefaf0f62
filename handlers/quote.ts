import { DomainError } from '../core/errors.js';
import { memoizedQuoteParams } from '../core/quote-params.js';
import type { BaseQuote, QuoteService } from '../core/quote-service.js';
import type { GetQuoteQuery } from '../core/wire.js';
import { JSON_TEXT, type OperationHandler, type OperationResult } from './operation.js';

const KEY_ONLY_PARAMS = ['feeBps', 'feeRecipient'] as const;
// One frozen header set for every keyless quote: the hot path builds no header object.
const KEYLESS_HEADERS = Object.freeze({ 'cache-control': 'public, s-maxage=10', 'content-type': JSON_TEXT });

export function quoteHandler(quotes: QuoteService): OperationHandler<GetQuoteQuery> {
  const parseParams = memoizedQuoteParams();
  return {
    // A quote's query holds tokens, an amount, a ref and an integrator's fee parameters: no secret
    // and no taker's party, so it may be kept by URL.
    rememberQueries: true,
    guard({ query, partner }) {
      if (!partner && KEY_ONLY_PARAMS.some((p) => query[p] !== undefined)) {
        throw new DomainError('missing_key', "'feeBps' and 'feeRecipient' require a partner key");
      }
    },
    handle({ query, annotate }) {
      const params = parseParams(query);
      if (params.ref !== null) annotate({ ref: params.ref });
      const respond = ({ json, cached }: BaseQuote): OperationResult => {
        annotate({ quoteCache: cached ? 'hit' : 'miss' });
        return { status: 200, headers: KEYLESS_HEADERS, body: json };
      };
      const base = quotes.baseQuote(params);
      return base instanceof Promise ? base.then(respond) : respond(base);
    },
  };
}
