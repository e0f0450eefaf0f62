// Turns a schema-valid quote query into the domain request, applying the rules the schema cannot
// express (known tokens, distinct tokens, amount range, fee params together).
import { Decimal, type Decimal as D } from '../decimal.js';
import { badRequest, DomainError } from '../errors.js';
import { quoteCacheKey, type KeyedQuoteRequest } from './service.js';
import { resolvePair } from '../tokens.js';
import type { GetQuoteQuery } from '../contract/v1.js';

export const MAX_AMOUNT = new Decimal(1_000_000_000);
export const DEFAULT_SLIPPAGE_BPS = 50;

export interface IntegratorFeeParams {
  readonly bps: number;
  readonly recipient: string;
}

export interface QuoteParams extends KeyedQuoteRequest {
  readonly slippageBps: number;
  readonly ref: string | null;
  readonly integratorFee: IntegratorFeeParams | null;
}

const DECIMAL_TEXT = /^[0-9]+(\.[0-9]+)?$/;

export function parseAmount(text: string, param: string): D {
  if (!DECIMAL_TEXT.test(text)) throw badRequest(`'${param}' must be a decimal number such as "100" or "0.5"`);
  const amount = new Decimal(text);
  if (amount.isZero()) throw badRequest(`'${param}' must be greater than 0`);
  if (amount.gt(MAX_AMOUNT)) throw badRequest(`'${param}' must be at most 1000000000`);
  return amount;
}

const notTogether = (): DomainError => new DomainError('bad_fee_params', "'feeBps' and 'feeRecipient' must be sent together");

/** The integrator's fee from validated parameters. Core's own rule too, whatever checked the request before. */
export function parseIntegratorFee(bps: number | undefined, recipient: string | undefined): IntegratorFeeParams | null {
  if (bps === undefined && recipient === undefined) return null;
  if (bps === undefined || recipient === undefined) throw notTogether();
  return { bps, recipient };
}

/**
 * The fee-parameter rules schema validation cannot state, on the query as sent (before
 * validation, so a keyless caller hears that it needs a key whatever else is wrong): fee params
 * need a key (missing_key), and come both or neither (bad_fee_params). Their range and format are
 * the spec's schema, which answers bad_fee_params too; a partner's lower cap is checked with its
 * terms.
 */
export function checkFeeParams(query: { readonly feeBps?: unknown; readonly feeRecipient?: unknown }, keyed: boolean): void {
  const { feeBps, feeRecipient } = query;
  if (feeBps === undefined && feeRecipient === undefined) return;
  if (!keyed) throw new DomainError('missing_key', "'feeBps' and 'feeRecipient' require a partner key");
  if (feeBps === undefined || feeRecipient === undefined) throw notTogether();
}

export function parseQuoteParams(query: GetQuoteQuery): QuoteParams {
  const { give, want } = resolvePair(query.from, query.to);
  const request = { give, want, amount: parseAmount(query.amount, 'amount') };
  return {
    request,
    cacheKey: quoteCacheKey(request),
    slippageBps: query.slippageBps ?? DEFAULT_SLIPPAGE_BPS,
    ref: query.ref ?? null,
    integratorFee: parseIntegratorFee(query.feeBps, query.feeRecipient),
  };
}

/**
 * parseQuoteParams, remembered per query object: the HTTP edge hands a repeated query (a cached
 * quote, the hot path) over as the very same frozen object, so it skips token resolution, decimal
 * parsing and key normalisation. Any other object is parsed afresh, so an equal query that comes as
 * a new object still gets equal parameters. Entries go with their query objects; only queries that
 * parse are remembered, and the parameters are immutable, so callers share them safely.
 */
export function memoizedQuoteParams(): (query: GetQuoteQuery) => QuoteParams {
  const memo = new WeakMap<GetQuoteQuery, QuoteParams>();
  return (query) => {
    let params = memo.get(query);
    if (params === undefined) {
      params = parseQuoteParams(query);
      memo.set(query, params);
    }
    return params;
  };
}
