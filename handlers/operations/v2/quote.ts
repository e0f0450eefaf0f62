// GET /api/v2/quote: every venue's quote for a pair, ranked, each venue saying whether a wallet can
// execute it and how it settles. The same core as v1's quote (core/execution/quote.ts): the same
// cache, windows and fresh-quote budget. A keyless answer may be kept by a shared cache; a keyed
// one carries one partner's fee lines, so none may keep it.
import type { V2Quotes } from '../../../core/execution/quote.js';
import { checkFeeParams, memoizedQuoteParams } from '../../../core/quotes/params.js';
import type { BaseQuote } from '../../../core/quotes/service.js';
import type { GetQuoteQuery } from '../../../core/contract/v2.js';
import { JSON_TEXT, type OperationHandler, type OperationResult } from '../../http/operation.js';
import { FEE_FIELD_CODES } from './fee-field-codes.js';

// A shared cache keeps keyless bodies by URL; a keyed request for the same URL must not be
// answered from it (no fee lines, and never metered), so the key headers are part of its key.
const VARY = 'x-api-key, authorization';
// One frozen header set for every keyless quote: the hot path builds no header object.
const KEYLESS_HEADERS = Object.freeze({ 'cache-control': 'public, s-maxage=10', vary: VARY, 'content-type': JSON_TEXT });
// A keyed body holds one partner's fee lines: no shared cache may keep it.
const KEYED_HEADERS = Object.freeze({ 'cache-control': 'private, no-store', vary: VARY });

export function quoteHandler(quotes: V2Quotes): OperationHandler<GetQuoteQuery> {
  const parseParams = memoizedQuoteParams();
  return {
    // A quote's query holds tokens, an amount, a ref and an integrator's fee parameters: no secret
    // and no taker's party, so it may be kept by URL.
    rememberQueries: true,
    fieldCodes: FEE_FIELD_CODES,
    guard({ query, partner }) {
      checkFeeParams(query, partner !== null);
    },
    countsWithReads: true,
    handle({ query, partner, annotate, spendFreshQuote, counts }) {
      const params = parseParams(query);
      if (params.ref !== null) annotate({ ref: params.ref });
      if (partner) {
        return quotes.partner(params, partner, spendFreshQuote, counts).then(({ body, cached }): OperationResult => {
          annotate({ quoteCache: cached ? 'hit' : 'miss' });
          return { status: 200, headers: KEYED_HEADERS, body };
        });
      }
      const respond = ({ json, cached }: BaseQuote): OperationResult => {
        annotate({ quoteCache: cached ? 'hit' : 'miss' });
        return { status: 200, headers: KEYLESS_HEADERS, body: json };
      };
      if (counts) return quotes.counted(params, counts).then(respond);
      const ready = quotes.ready(params);
      if (ready) return respond(ready);
      // A quote computed for this request draws on its caller's fresh budget first (a key's, above).
      return quotes.baseQuote(params, spendFreshQuote).then(respond);
    },
  };
}
