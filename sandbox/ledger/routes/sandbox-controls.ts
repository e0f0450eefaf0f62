// The sandbox's own controls beside the API, which no real participant serves: POST
// /sandbox/v1/fund {party, token, amount} (the faucet), /sandbox/v1/move {pair, bps, venue?} (the
// price mover: a tradecraft pool, or with venue "nightly" or "oneswap" that venue's),
// /sandbox/v1/operator {paused} (the pools' operator switch) and, for tests only,
// /sandbox/v1/oneswap/next-outcome {status} (the status the next deposit meeting a pending OneSwap
// intent ends in, whatever the pools say; null: priced as usual).
import { Decimal } from '../../../core/decimal.js';
import { isPartyId } from '../../../core/party.js';
import { resolveToken, type Token } from '../../../core/tokens.js';
import { ONESWAP_FORCEABLE_OUTCOMES, type ForceableOutcome } from '../sandbox-ledger.js';
import type { Context } from './context.js';
import { record } from './reading.js';
import { invalid, notFound, ok, type Reply } from './replies.js';

/** A POST of this family, or undefined when the path is none of its. */
export function controlWrite(context: Context, path: string, input: Record<string, unknown>): Reply | undefined {
  const { ledger } = context;
  switch (path) {
    case '/sandbox/v1/fund':
      return fund(context, input);
    case '/sandbox/v1/move':
      return move(context, input);
    case '/sandbox/v1/operator':
      if (typeof input.paused !== 'boolean') return invalid('paused must be true or false');
      ledger.setOperatorPaused(input.paused);
      return ok({ paused: ledger.operatorPaused });
    case '/sandbox/v1/oneswap/next-outcome':
      return nextOneSwapOutcome(context, input);
    default:
      return undefined;
  }
}

function tokenOf(value: unknown): Token | Reply {
  if (typeof value !== 'string') return invalid('token must be a token symbol');
  try {
    return resolveToken(value, 'token');
  } catch (err) {
    return invalid((err as Error).message);
  }
}

const isReply = (value: unknown): value is Reply => record(value) !== null && 'status' in (value as object) && 'body' in (value as object);

/** The faucet: funds a party, hosting it on the participant if it was not (a party a wallet names before allocating it). */
function fund(context: Context, input: Record<string, unknown>): Reply {
  if (!isPartyId(input.party)) return invalid('party must be a ledger party id <hint>::1220<64 hex>');
  const token = tokenOf(input.token);
  if (isReply(token)) return token;
  if (typeof input.amount !== 'string' || !/^[0-9]{1,12}(\.[0-9]{1,10})?$/.test(input.amount) || !new Decimal(input.amount).gt(0)) {
    return invalid('amount must be a positive decimal string with at most 10 fractional digits, below 1e12');
  }
  if (!context.participant.party(input.party)) context.participant.host(input.party);
  const { contractId, transaction } = context.ledger.fund(input.party, token.instrument, new Decimal(input.amount));
  return ok({ holdingCid: contractId, updateId: transaction.updateId, offset: transaction.offset });
}

function move({ ledger }: Context, input: Record<string, unknown>): Reply {
  const pair = typeof input.pair === 'string' ? /^([^/\s]+)\/([^/\s]+)$/.exec(input.pair) : null;
  if (!pair) return invalid('pair must be two token symbols, such as CC/USDCx');
  const first = tokenOf(pair[1]);
  if (isReply(first)) return first;
  const second = tokenOf(pair[2]);
  if (isReply(second)) return second;
  const bps = input.bps;
  if (typeof bps !== 'number' || !Number.isInteger(bps) || bps <= -10_000 || bps > 100_000 || bps === 0) return invalid('bps must be a non-zero whole number above -10000 (-300: the price falls by 3 %)');
  const venue = input.venue ?? 'tradecraft';
  if (venue !== 'tradecraft' && venue !== 'nightly' && venue !== 'oneswap') return invalid('venue must be "tradecraft" (the default), "nightly" or "oneswap"');
  let moved: { before: string; after: string } | null = null;
  if (venue === 'nightly') moved = ledger.moveNightlyPool(first, second, bps);
  else if (venue === 'oneswap') moved = ledger.moveOneSwapPool(first, second, bps);
  else {
    const entry = ledger.poolFor(first, second);
    if (entry) moved = ledger.movePool(entry.party, first, bps);
  }
  if (!moved) return notFound('NOT_FOUND', `the sandbox has no ${venue} pool for ${first.symbol}/${second.symbol}`);
  return ok({ pair: `${first.symbol}/${second.symbol}`, priceBefore: moved.before, priceAfter: moved.after });
}

/** Queues the status the next deposit meeting a pending OneSwap intent ends in (test-only: for clients' handling of each). */
function nextOneSwapOutcome({ ledger }: Context, input: Record<string, unknown>): Reply {
  const { status } = input;
  if (status !== null && !ONESWAP_FORCEABLE_OUTCOMES.includes(status as ForceableOutcome)) return invalid(`status must be null or one of ${ONESWAP_FORCEABLE_OUTCOMES.join(', ')}`);
  if (!ledger.forceOneSwapOutcome(status as ForceableOutcome | null)) return notFound('NOT_FOUND', 'the sandbox has no OneSwap desk');
  return ok({ nextOutcome: status });
}
