// Turns a schema-valid plan body into the domain request, applying the rules the schema cannot
// express: known and distinct tokens, the amount's range, the taker's party format, fee params
// together and well-formed, and a quoteRef that agrees with the chosen venue.
import { hash } from 'node:crypto';
import { toWire, ZERO, type Decimal } from '../decimal.js';
import { badRequest, DomainError } from '../errors.js';
import { isPartyId } from '../party.js';
import { DEFAULT_SLIPPAGE_BPS, parseAmount, parseIntegratorFee, type IntegratorFeeParams } from '../quotes/params.js';
import { quoteCacheKey, type KeyedQuoteRequest } from '../quotes/service.js';
import { resolvePair } from '../tokens.js';
import type { PlanRequest } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';

/** `app`: the keyless first-party route; `partner`: the keyed route. */
export type PlanRoute = 'app' | 'partner';

/** One leg of a split a plan request names: its venue and what it is given. */
export interface SplitLegParams {
  readonly venueId: string;
  readonly amount: Decimal;
}

export interface PlanParams extends KeyedQuoteRequest {
  /** The chosen venue; for a split, its legs' venues joined by '+' (logs and metrics name it so). */
  readonly venueId: string;
  /** A split's legs, as the request named them (v2 only); null for a plan on one venue. */
  readonly legs: readonly SplitLegParams[] | null;
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

/** A split's legs as named: distinct venues, amounts summing exactly to the request's. */
function parseLegs(legs: readonly V2.SplitLegRequest[], amount: Decimal): SplitLegParams[] {
  const parsed = legs.map((leg, i) => ({ venueId: leg.venueId, amount: parseAmount(leg.amount, `legs[${i}].amount`) }));
  const venues = new Set(parsed.map((leg) => leg.venueId));
  if (venues.size !== parsed.length) throw badRequest("'legs' must name each venue once");
  const sum = parsed.reduce((total, leg) => total.plus(leg.amount), ZERO);
  if (!sum.eq(amount)) throw badRequest(`'legs' amounts must sum exactly to 'amount' (${toWire(amount)}); they sum to ${toWire(sum)}`);
  // One order whatever order they were sent in: the same split is the same request.
  return parsed.sort((a, b) => (a.venueId < b.venueId ? -1 : a.venueId > b.venueId ? 1 : 0));
}

export function parsePlanRequest(body: PlanRequest | V2.PlanRequest, route: PlanRoute): PlanParams {
  const { give, want } = resolvePair(body.from, body.to);
  const request = { give, want, amount: parseAmount(body.amount, 'amount') };
  const named = 'legs' in body && body.legs !== undefined ? body.legs : null;
  if (named !== null && body.venueId !== undefined) throw badRequest("send either 'venueId' or 'legs', not both");
  if (named !== null && body.quoteRef !== undefined) throw badRequest("'quoteRef' names one venue: it is not taken with 'legs'");
  const legs = named === null ? null : parseLegs(named, request.amount);
  const venueId = legs === null ? body.venueId! : legs.map((leg) => leg.venueId).join('+');
  if (!isPartyId(body.takerParty)) {
    throw new DomainError(route === 'partner' ? 'bad_party' : 'bad_request', "'takerParty' must be a ledger party id <hint>::1220<64 lowercase hex digits>");
  }
  if (body.quoteRef !== undefined && body.quoteRef.venueId !== venueId) {
    throw badRequest(`'quoteRef.venueId' (${body.quoteRef.venueId}) must equal 'venueId' (${venueId})`);
  }
  // The schema has checked both forms of each number: an integer in range, or its decimal text.
  const integratorFee = parseIntegratorFee(integer(body.feeBps), body.feeRecipient);
  if (integratorFee && !isPartyId(integratorFee.recipient)) {
    throw new DomainError('bad_fee_params', "'feeRecipient' must be a ledger party id <hint>::1220<64 lowercase hex digits>");
  }
  const slippageBps = integer(body.slippageBps) ?? DEFAULT_SLIPPAGE_BPS;
  const split = legs === null ? [] : [legs.map((leg) => [leg.venueId, toWire(leg.amount)])];
  const meaning = [route, give.symbol, want.symbol, toWire(request.amount), venueId, body.takerParty, slippageBps, integratorFee?.bps ?? null, integratorFee?.recipient ?? null, ...split];
  return {
    request,
    cacheKey: quoteCacheKey(request),
    venueId,
    legs,
    takerParty: body.takerParty,
    idempotencyKey: body.idempotencyKey,
    slippageBps,
    integratorFee,
    fingerprint: hash('sha256', JSON.stringify(meaning), 'base64url'),
  };
}
