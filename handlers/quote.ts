import { DomainError } from '../core/errors.js';
import { parseQuoteParams } from '../core/quote-params.js';
import type { QuoteService } from '../core/quote-service.js';
import type { GetQuoteQuery } from '../core/wire.js';
import { JSON_TEXT, type OperationHandler } from './operation.js';

const KEY_ONLY_PARAMS = ['feeBps', 'feeRecipient'] as const;
// One frozen header set for every keyless quote: the hot path builds no header object.
const KEYLESS_HEADERS = Object.freeze({ 'cache-control': 'public, s-maxage=10', 'content-type': JSON_TEXT });

export function quoteHandler(quotes: QuoteService): OperationHandler<GetQuoteQuery> {
  return {
    guard({ query, partner }) {
      if (!partner && KEY_ONLY_PARAMS.some((p) => query[p] !== undefined)) {
        throw new DomainError('missing_key', "'feeBps' and 'feeRecipient' require a partner key");
      }
    },
    async handle({ query, annotate }) {
      const params = parseQuoteParams(query);
      if (params.ref !== null) annotate({ ref: params.ref });
      const { json, cached } = await quotes.baseQuote(params.request);
      annotate({ quoteCache: cached ? 'hit' : 'miss' });
      return { status: 200, headers: KEYLESS_HEADERS, body: json };
    },
  };
}
