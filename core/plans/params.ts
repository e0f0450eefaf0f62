// Turns a schema-valid plan body into the domain request, applying the rules the schema cannot
// express: known and distinct tokens, the amount's range, the taker's party format, fee params
// together and well-formed, and a quoteRef that agrees with the chosen venue.
import { hash } from 'node:crypto';
import { toWire } from '../decimal.js';
import { badRequest, DomainError } from '../errors.js';
import { isPartyId } from '../party.js';
import { DEFAULT_SLIPPAGE_BPS, parseAmount, parseIntegratorFee, type IntegratorFeeParams } from '../quotes/params.js';
import { quoteCacheKey, type KeyedQuoteRequest } from '../quotes/service.js';
import { resolvePair } from '../tokens.js';
import type { PlanRequest } from '../contract/v1.js';

/** `app`: the keyless first-party route; `partner`: the keyed route. */
export type PlanRoute = 'app' | 'partner';

export interface PlanParams extends KeyedQuoteRequest {
  readonly venueId: string;
  readonly takerParty: string;
  readonly idempotencyKey: string;
  readonly slippageBps: number;
  readonly integratorFee: IntegratorFeeParams | null;
  /**
   * A digest of the request's meaning (route, pair, amount, venue, taker, slippage, integrator fee):
   * equal for the same request however it is spelt (`"50"` or `50`, `CC` or `amulet`), different for
   * any other. Idempotency records keep this, never the taker's party itself.
   */
  readonly fingerprint: string;
}

/**
 * The keyless route's rule that schema validation cannot state, on the body as sent: fee params
 * belong to the keyed route, whatever their values.
 */
export function refuseFeeParams(body: unknown): void {
  if (body !== null && typeof body === 'object' && ('feeBps' in body || 'feeRecipient' in body)) {
    throw badRequest('fee params (feeBps, feeRecipient) are not accepted on the keyless plan route');
  }
}

const integer = (value: number | string | undefined): number | undefined => (value === undefined ? undefined : Number(value));

export function parsePlanRequest(body: PlanRequest, route: PlanRoute): PlanParams {
  const { give, want } = resolvePair(body.from, body.to);
  const request = { give, want, amount: parseAmount(body.amount, 'amount') };
  if (!isPartyId(body.takerParty)) {
    throw new DomainError(route === 'partner' ? 'bad_party' : 'bad_request', "'takerParty' must be a ledger party id <hint>::1220<64 lowercase hex digits>");
  }
  if (body.quoteRef !== undefined && body.quoteRef.venueId !== body.venueId) {
    throw badRequest(`'quoteRef.venueId' (${body.quoteRef.venueId}) must equal 'venueId' (${body.venueId})`);
  }
  // The schema has checked both forms of each number: an integer in range, or its decimal text.
  const integratorFee = parseIntegratorFee(integer(body.feeBps), body.feeRecipient);
  if (integratorFee && !isPartyId(integratorFee.recipient)) {
    throw new DomainError('bad_fee_params', "'feeRecipient' must be a ledger party id <hint>::1220<64 lowercase hex digits>");
  }
  const slippageBps = integer(body.slippageBps) ?? DEFAULT_SLIPPAGE_BPS;
  const meaning = [route, give.symbol, want.symbol, toWire(request.amount), body.venueId, body.takerParty, slippageBps, integratorFee?.bps ?? null, integratorFee?.recipient ?? null];
  return {
    request,
    cacheKey: quoteCacheKey(request),
    venueId: body.venueId,
    takerParty: body.takerParty,
    idempotencyKey: body.idempotencyKey,
    slippageBps,
    integratorFee,
    fingerprint: hash('sha256', JSON.stringify(meaning), 'base64url'),
  };
}
