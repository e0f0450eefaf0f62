// Nightly CantonSwap's sandbox market and its wire (adapter: core/venues/nightly.ts), from the
// public "Canton Swap API Docs" (cantonswap.nightly.app/docs; no auth).
//
// The market (createNightlySpec): constant-product AMM, 0.20 % fee inside the price, nothing
// charged outside it (so gross = net); minimum 25 CC a side; at most 50,000 USD given.
//   CC/USDCx: 16,000,000 CC / 2,396,000 USDCx (CC = 0.14975 USDCx)
//   CC/CBTC:   6,000,000 CC / 8.97 CBTC       (CBTC = 668,896.3 CC, about 100,167 USDCx)
//
// Endpoints served:
// - GET /nswap/tokens -> {tokens: [ApiToken]}: {index, instrumentId, name, symbol, decimals,
//   displayDecimals, iconUrl, price, instrumentAdmin, minSwapAmount, maxSwapUsd}, amounts as
//   decimal strings. Listed: Amulet and each token the spec has a CC pool with.
// - POST /nswap/quote {fromToken, toToken, amount, recipient, slippageTolerance?} ->
//   {fromToken, toToken, fromAmount, toAmount, minOutAmount, rate, priceImpact, memo, swapAddress}
//   (no magicAddress: the docs make it optional, and settlement goes to swapAddress with the memo).
//   Every quote is recorded in the venue's quote book (NightlyQuoteBook) under its memo; the
//   sandbox ledger's Nightly desk (sandbox/ledger/nightly-desk.ts) settles a transfer to
//   swapAddress carrying that memo against it, paying `recipient` from the same pools.
//
// Decided here, where the docs are silent:
// - Tokens are named by instrumentId (Amulet, USDCx, CBTC), as the adapter sends them; the symbol
//   of Amulet is "Amulet" (the docs: it shows as CC "in the frontend UI layer only"). `decimals`
//   is 10 for every token, the ledger's Daml Decimal, and amounts are accepted to 10 fractional
//   digits, so the wire prices exactly what the in-process venue of the same spec prices.
// - `price` is USD per token from the pools' current reserves (spot, before the fee, USDCx = 1
//   USD), rounded down: CC from the USDCx pool, any other token through its CC pool. Without a
//   USDCx pool no token but USDCx is priced: "0", and no USD cap applies.
// - The spec's minimum is in CC on either side (SandboxVenueSpec.minCc: what CC is given, or what
//   CC the swap pays). The venue lists a minimum per give token, so for a token other than CC the
//   list shows what must be given to buy that much CC at the pool's current reserves, rounded up;
//   the quote itself checks the CC side exactly, as the in-process venue does.
// - `maxSwapUsd` (50,000, as Nightly lists) caps the give amount valued at its `price`. The
//   in-process venue has no such cap (SandboxVenueSpec has no field for one).
// - `slippageTolerance` is a fraction (0.005 = 0.5 %), 0.005 when absent; minOutAmount =
//   toAmount × (1 - slippageTolerance). `rate` is toAmount / fromAmount; `priceImpact` the
//   fraction the trade moves the pool's price, in' / (reserveIn + in') with in' the amount after
//   the fee. All rounded down to 10 fractional digits.
// - `memo` names one quote and settles it once: a hash of the quote's figures, its recipient and
//   its place in the quote book, so two quotes of the same market state have the same figures and
//   different memos. swapAddress is a fixed sandbox party (NIGHTLY_SWAP_ADDRESS).
// - Settlement (the docs say only that the transfer to swapAddress must carry the memo and the
//   recipient is paid at least minOutAmount; the rest is the sandbox's assumption): a memo is
//   valid for NIGHTLY_MEMO_TTL_MS after its quote (the 90 s a plan is valid; Nightly publishes no
//   quote lifetime), and is used up by the first transfer carrying it, paid or returned. The
//   transfer must be of the quote's fromToken and exactly its fromAmount. The payout is priced at
//   the pools as they are at settlement by the quote's own formula (nightlyPayout); below the
//   quote's minOutAmount the transfer is rejected, its funds returned, and nothing is paid.
// - Errors: the one error body on record is {"message": "..."} (the maintenance capture), so every
//   error is that shape: 400 for a body that is not a quote request, a recipient that is not a
//   party id (`<hint>::1220<64 hex>`), an unlisted token, a pair without a pool, an amount below
//   the minimum or above the maximum; 404 for an unknown path; 405 for another method.
import { createHash } from 'node:crypto';
import { BPS, ceil10, dec, type Decimal, divFloor10, floor10, toWire } from '../../core/decimal.js';
import { isPartyId } from '../../core/party.js';
import { CBTC, CC, TOKENS, USDCX, type Token } from '../../core/tokens.js';
import { parseJsonKeepingNumbers } from '../../core/json-numbers.js';
import { PLAN_VALIDITY_MS } from '../../core/plan-validity.js';
import { poolPayout } from '../pricing/constant-product.js';
import type { AmmPool, SandboxVenueSpec } from './sandbox-venue.js';
import { jsonReply, SANDBOX_INSTRUMENT_ADMINS, type SandboxVenueDefinition, type WireHandler, type WireResponse } from './wire.js';

/** Nightly's cap on what is given, in USD at the give token's listed price. */
export const NIGHTLY_MAX_SWAP_USD = dec('50000');
/** Where the sandbox's Nightly quotes send the give token (with the quote's memo). */
export const NIGHTLY_SWAP_ADDRESS = `nightly-swap::1220${'e'.repeat(64)}`;

/** How long a quote's memo can be settled (the sandbox's assumption: the 90 s a plan is valid). */
export const NIGHTLY_MEMO_TTL_MS = PLAN_VALIDITY_MS;

/** A quote the venue gave, as its quote book keeps it until its memo is settled or expires. */
export interface NightlyQuote {
  readonly memo: string;
  readonly from: Token;
  readonly to: Token;
  readonly fromAmount: Decimal;
  readonly toAmount: Decimal;
  readonly minOutAmount: Decimal;
  readonly recipient: string;
  /** When it was given, in the book's clock (ms). */
  readonly issuedAt: number;
}

/** What a settlement finds under a memo: the quote, or why there is none to settle. */
export type NightlyRedemption = { readonly quote: NightlyQuote } | { readonly refused: 'unknown' | 'used' | 'expired' };

/**
 * The quotes a sandbox Nightly gave, by memo: its wire issues them, the ledger's Nightly desk
 * redeems each once. Memos that expired are forgotten at the next issue (a transfer carrying one
 * then finds it unknown, refused all the same).
 */
export class NightlyQuoteBook {
  private readonly quotes = new Map<string, NightlyQuote>();
  private readonly used = new Set<string>();
  private issued = 0;

  constructor(
    private readonly now: () => Date = () => new Date(),
    readonly ttlMs: number = NIGHTLY_MEMO_TTL_MS,
  ) {}

  issue(quote: Omit<NightlyQuote, 'memo' | 'issuedAt'>): NightlyQuote {
    const issuedAt = this.now().getTime();
    for (const [memo, old] of this.quotes) {
      if (issuedAt - old.issuedAt < this.ttlMs) break;
      this.quotes.delete(memo);
      this.used.delete(memo);
    }
    this.issued += 1;
    const { from, to, fromAmount, toAmount, minOutAmount, recipient } = quote;
    const digest = createHash('sha256').update(JSON.stringify([this.issued, from.instrument, to.instrument, toWire(fromAmount), toWire(toAmount), toWire(minOutAmount), recipient])).digest('hex');
    const issuedQuote: NightlyQuote = { ...quote, memo: `nswap-${digest.slice(0, 16)}`, issuedAt };
    this.quotes.set(issuedQuote.memo, issuedQuote);
    return issuedQuote;
  }

  /** The quote under `memo`, used up by this call; refused when unknown, used before, or expired. */
  redeem(memo: string | undefined): NightlyRedemption {
    const quote = memo === undefined ? undefined : this.quotes.get(memo);
    if (!quote) return { refused: 'unknown' };
    if (this.used.has(quote.memo)) return { refused: 'used' };
    this.used.add(quote.memo);
    if (this.now().getTime() - quote.issuedAt >= this.ttlMs) return { refused: 'expired' };
    return { quote };
  }
}

const QUOTE_BOOKS = new WeakMap<SandboxVenueSpec, NightlyQuoteBook>();

/**
 * The quote book of the Nightly market `spec`, shared by its wire and the ledger's desk; made on
 * first use, on `now` (the sandbox's clock) when given then.
 */
export function nightlyQuoteBook(spec: SandboxVenueSpec, now?: () => Date): NightlyQuoteBook {
  let book = QUOTE_BOOKS.get(spec);
  if (!book) {
    book = new NightlyQuoteBook(now);
    QUOTE_BOOKS.set(spec, book);
  }
  return book;
}

/** The CC-paired pool of a Nightly market that trades `from` for `to`, if any. */
export function nightlyPool(spec: SandboxVenueSpec, from: Token, to: Token): AmmPool | undefined {
  const other = from === CC ? to : to === CC ? from : null;
  if (!other || spec.pricing.kind !== 'amm') return undefined;
  return spec.pricing.pools.find((p) => p.quote === other);
}

/**
 * What giving `amount` of `from` for `to` pays on `pool` now: the curve's output for the amount
 * after the in-price fee, rounded down. The quote's `toAmount`, and what the desk pays at settlement.
 */
export function nightlyPayout(spec: SandboxVenueSpec, pool: AmmPool, from: Token, amount: Decimal): Decimal {
  const feeBps = spec.pricing.kind === 'amm' ? spec.pricing.inPriceFeeBps : 0;
  const [reserveIn, reserveOut] = from === CC ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve];
  return poolPayout(reserveIn, reserveOut, amount.times(BPS.times(10_000 - feeBps)));
}

export function createNightlySpec(): SandboxVenueSpec {
  return {
    id: 'nightly',
    pricing: {
      kind: 'amm',
      inPriceFeeBps: 20,
      pools: [
        { quote: USDCX, baseReserve: dec('16000000'), quoteReserve: dec('2396000') },
        { quote: CBTC, baseReserve: dec('6000000'), quoteReserve: dec('8.97') },
      ],
    },
    fee: () => null,
    minCc: dec('25'),
  };
}

/** The list entries' fixed fields, by token. */
const LISTING: Readonly<Record<Token['symbol'], { name: string; symbol: string; displayDecimals: number; instrumentAdmin: string }>> = {
  CC: { name: 'Amulet', symbol: 'Amulet', displayDecimals: 2, instrumentAdmin: SANDBOX_INSTRUMENT_ADMINS.Amulet },
  USDCx: { name: 'USDCx', symbol: 'USDCx', displayDecimals: 2, instrumentAdmin: SANDBOX_INSTRUMENT_ADMINS.USDCx },
  CBTC: { name: 'CBTC', symbol: 'CBTC', displayDecimals: 6, instrumentAdmin: SANDBOX_INSTRUMENT_ADMINS.CBTC },
};

const DECIMALS = 10;
const DEFAULT_SLIPPAGE = dec('0.005');
const ONE = dec('1');
// At most 20 integer digits: past ~40, arithmetic at 50 significant digits would round the answer.
const AMOUNT = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,10})?$/;
const FRACTION = /^0(\.[0-9]{1,10})?$/;

const error = (status: number, message: string): WireResponse => jsonReply(status, { message });

/** The market as the venue sees it at this moment: its pools, fee share and USD prices. */
interface Market {
  readonly pools: readonly AmmPool[];
  /** What of the give amount is priced, after the in-price fee. */
  readonly share: Decimal;
  readonly minCc: Decimal | undefined;
  /** The tokens listed, CC first. */
  readonly tokens: readonly Token[];
  /** USD per token; absent where no price is known. */
  readonly prices: ReadonlyMap<Token, Decimal>;
}

function marketOf(spec: SandboxVenueSpec): Market {
  const { pricing } = spec;
  // Read on every request: the pools are the market's live state, which others change.
  const pools = pricing.kind === 'amm' ? pricing.pools : [];
  const share = BPS.times(10_000 - (pricing.kind === 'amm' ? pricing.inPriceFeeBps : 0));
  const tokens = TOKENS.filter((t) => t === CC || pools.some((p) => p.quote === t));
  const prices = new Map<Token, Decimal>();
  const usd = pools.find((p) => p.quote === USDCX);
  if (usd) {
    const cc = divFloor10(usd.quoteReserve, usd.baseReserve);
    prices.set(CC, cc);
    for (const p of pools) prices.set(p.quote, p === usd ? ONE : divFloor10(cc.times(p.baseReserve), p.quoteReserve));
  }
  return { pools, share, minCc: spec.minCc, tokens, prices };
}

/** The minimum given of `token`: minCc itself for CC, else what buys minCc CC now, rounded up. */
function minSwapAmount(market: Market, token: Token): Decimal | null {
  const { minCc } = market;
  if (!minCc) return null;
  if (token === CC) return minCc;
  const pool = market.pools.find((p) => p.quote === token)!;
  // Inverting out = rCc × in' / (rX + in') for out = minCc, with in' = in × share.
  return ceil10(pool.quoteReserve.times(minCc).div(pool.baseReserve.minus(minCc).times(market.share)));
}

function tokensAnswer(market: Market): WireResponse {
  const tokens = market.tokens.map((token, index) => {
    const { name, symbol, displayDecimals, instrumentAdmin } = LISTING[token.symbol];
    return {
      index,
      instrumentId: token.instrument,
      name,
      symbol,
      decimals: DECIMALS,
      displayDecimals,
      iconUrl: '',
      price: toWire(market.prices.get(token) ?? dec('0')),
      instrumentAdmin,
      minSwapAmount: toWire(minSwapAmount(market, token) ?? dec('0')),
      maxSwapUsd: toWire(NIGHTLY_MAX_SWAP_USD),
    };
  });
  return jsonReply(200, { tokens });
}

/** A JSON string or number (its source text) matching `pattern`, as a decimal; null otherwise. */
const decimalMatching = (value: unknown, pattern: RegExp): Decimal | null => (typeof value === 'string' && pattern.test(value) ? dec(value) : null);

function quoteAnswer(spec: SandboxVenueSpec, market: Market, body: string): WireResponse {
  let request: Record<string, unknown>;
  try {
    const parsed = parseJsonKeepingNumbers(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return error(400, 'Request body must be a JSON object');
    request = parsed as Record<string, unknown>;
  } catch {
    return error(400, 'Request body is not valid JSON');
  }
  const { fromToken, toToken, recipient } = request;
  if (!isPartyId(recipient)) return error(400, 'Invalid recipient: expected a party id <hint>::1220<64 hex>');
  const from = market.tokens.find((t) => t.instrument === fromToken);
  const to = market.tokens.find((t) => t.instrument === toToken);
  if (!from || !to) return error(400, `Unsupported token: ${String(from ? toToken : fromToken)}`);
  if (from === to) return error(400, 'fromToken and toToken must differ');
  const pool = nightlyPool(spec, from, to);
  if (!pool) return error(400, `No pool for ${from.instrument}/${to.instrument}`);
  const amount = decimalMatching(request.amount, AMOUNT);
  if (!amount || amount.isZero()) return error(400, 'amount must be a positive decimal with at most 10 fractional digits');
  const slippage = request.slippageTolerance === undefined ? DEFAULT_SLIPPAGE : decimalMatching(request.slippageTolerance, FRACTION);
  if (!slippage) return error(400, 'slippageTolerance must be a fraction from 0 to below 1, at most 10 fractional digits');

  const price = market.prices.get(from);
  if (price && amount.times(price).gt(NIGHTLY_MAX_SWAP_USD)) return error(400, `Amount exceeds the maximum swap value of ${toWire(NIGHTLY_MAX_SWAP_USD)} USD`);
  const sellingCc = from === CC;
  const effectiveIn = amount.times(market.share);
  const reserveIn = sellingCc ? pool.baseReserve : pool.quoteReserve;
  const toAmount = nightlyPayout(spec, pool, from, amount);
  const ccSize = sellingCc ? amount : toAmount;
  if (market.minCc && ccSize.lt(market.minCc)) {
    return error(400, `Amount is below the minimum swap amount of ${toWire(minSwapAmount(market, from)!)} ${from.instrument}`);
  }
  const minOutAmount = floor10(toAmount.times(ONE.minus(slippage)));
  const { memo } = nightlyQuoteBook(spec).issue({ from, to, fromAmount: amount, toAmount, minOutAmount, recipient });
  return jsonReply(200, {
    fromToken: from.instrument,
    toToken: to.instrument,
    fromAmount: toWire(amount),
    toAmount: toWire(toAmount),
    minOutAmount: toWire(minOutAmount),
    rate: toWire(divFloor10(toAmount, amount)),
    priceImpact: toWire(divFloor10(effectiveIn, reserveIn.plus(effectiveIn))),
    memo,
    swapAddress: NIGHTLY_SWAP_ADDRESS,
  });
}

const ROUTES = new Map<string, 'GET' | 'POST'>([
  ['/nswap/tokens', 'GET'],
  ['/nswap/quote', 'POST'],
]);

export function nightlyWire(spec: SandboxVenueSpec): WireHandler {
  if (spec.pricing.kind !== 'amm') throw new Error(`nightlyWire needs an AMM venue; ${spec.id} is ${spec.pricing.kind}`);
  return (request) => {
    const route = ROUTES.get(request.path);
    if (!route) return error(404, `Not found: ${request.path}`);
    if (request.method !== route) return error(405, `${request.method} is not allowed on ${request.path}`);
    const market = marketOf(spec);
    return route === 'GET' ? tokensAnswer(market) : quoteAnswer(spec, market, request.body);
  };
}

/** The sandbox's nightly: its market and its wire, under its prefix. */
export const nightlyVenue: SandboxVenueDefinition = { id: 'nightly', prefix: '/nightly', keyed: false, spec: createNightlySpec, wire: nightlyWire };
