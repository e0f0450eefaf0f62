import { DomainError } from '../core/errors.js';
import { parseQuoteParams } from '../core/quote-params.js';
import type { QuoteService } from '../core/quote-service.js';
import type { GetQuoteQuery, QuoteResponse } from '../core/wire.js';
import { json, type OperationHandler } from './operation.js';

const KEY_ONLY_PARAMS = ['feeBps', 'feeRecipient'] as const;
export const KEYLESS_QUOTE_CACHE_CONTROL = 'public, s-maxage=10';

export function quoteHandler(quotes: QuoteService): OperationHandler<GetQuoteQuery> {
  // One serialisation per cached quote: keyless bodies are byte-identical for everyone within the
  // cache window, and a hit costs no JSON work.
  const serialised = new WeakMap<QuoteResponse, string>();
  const toJson = (response: QuoteResponse): string => {
    let text = serialised.get(response);
    if (text === undefined) {
      text = JSON.stringify(response);
      serialised.set(response, text);
    }
    return text;
  };
  return {
    guard({ query, partner }) {
      if (!partner && KEY_ONLY_PARAMS.some((p) => query[p] !== undefined)) {
        throw new DomainError('missing_key', "'feeBps' and 'feeRecipient' require a partner key");
      }
    },
    async handle({ query, annotate }) {
      const params = parseQuoteParams(query);
      if (params.ref !== null) annotate({ ref: params.ref });
      const { response, cached } = await quotes.baseQuote(params.request);
      annotate({ quoteCache: cached ? 'hit' : 'miss' });
      return json(200, toJson(response), KEYLESS_QUOTE_CACHE_CONTROL);
    },
  };
}
