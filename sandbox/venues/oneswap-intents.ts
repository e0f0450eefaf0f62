// OneSwap's wallet auth and swap intents on the sandbox OneSwap's wire, beside its quote
// (oneswap.ts), from OneSwap's docs (docs.oneswap.cc: /guides/wallets, /guides/swaps,
// /guides/error-handling, /reference/sdk-methods, /reference/types). Every intent is kept in the
// venue's intent book (OneSwapIntentBook); the sandbox ledger's OneSwap desk
// (sandbox/ledger/oneswap-desk.ts) settles a deposit to depositAddress against it.
//
// What the docs fix: the SDK's calls walletAuth.requestChallenge(partyId) ->
// {partyId, nonce, message, expiresIn}; walletAuth.verifyChallenge({partyId, nonce, signature,
// publicKey}) -> {partyId, token}, a short-lived wallet token; swaps.create, which needs the
// `os_live_` key and that token, at /api/v1/swaps, {fromToken, toToken, amount, walletAddress?
// (must match the token), slippageTolerance? (0.001-0.5, default 0.01), poolId?, fromAdmin?,
// toAdmin?, outputAddress? (ignored)} -> SwapIntentResponse; swaps.getStatus(intentId) ->
// SwapStatusResponse; swaps.cancel(intentId) -> {success}; minOutput = expectedOutput x (1 -
// slippageTolerance); a 24 h deposit window; the 15 % price-impact cap (a 400, and
// price_impact_exceeded during execution); a 400 with `minimumAmount` for an amount below the
// traffic cost; a 409 for a second active intent of the same wallet, pool and input token; the
// statuses.
//
// Decided here, where the docs are silent (docs/sandbox.md lists them):
// - Paths: POST /api/v1/wallet-auth/challenge {partyId}, POST /api/v1/wallet-auth/verify,
//   POST /api/v1/swaps, GET /api/v1/swaps/<intentId>, POST /api/v1/swaps/<intentId>/cancel. The
//   wallet token rides as `Authorization: Bearer <token>`; every call also needs `X-API-Key`.
// - The challenge message is text naming the party and the nonce; the wallet signs its UTF-8 bytes
//   with Ed25519 (what Canton's signing library's signMessage does); `signature` and `publicKey`
//   (the raw 32-byte key) are base64. A challenge lives 300 s and is used up by its first
//   verification, good or bad; the token lives 15 minutes.
// - Whose key: for an external party, the key the sandbox participant holds for it (its
//   onboarding's); publicKey must be that key. For a party the participant hosts without a key
//   of its own (a local party, which the participant signs for), the sandbox cannot tie any key
//   to it, and takes the signature under the publicKey given (an assumption: real OneSwap's rule
//   for such wallets is not documented). A party the participant does not host is 404.
// - The answer to create is 200; status and cancel of another wallet's intent is 404; cancel of an
//   intent that is no longer pending is 409. Errors are {"error": "<message>"} as the quote's.
// - Statuses served: pending until the desk answers the deposit, then the terminal status at
//   once (the desk settles in one transaction: matched, deposit_received, forwarded, processing
//   and sending_output are never observed). matchedAt is when the desk met the deposit.
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import { dec, floor10, toWire, type Decimal } from '../../core/decimal.js';
import { parseJsonKeepingNumbers } from '../../core/json-numbers.js';
import { isPartyId } from '../../core/party.js';
import { CC, TOKENS, type Token } from '../../core/tokens.js';
import { oneswapPoolId, oneswapSwap } from './oneswap-swap.js';
import type { AmmPool, SandboxVenueSpec } from './sandbox-venue.js';
import { jsonReply, SANDBOX_INSTRUMENT_ADMINS, type WireRequest, type WireResponse } from './wire.js';

/** The sandbox OneSwap's pool swap party: every intent's depositAddress and swapAddress. */
export const ONESWAP_SWAP_ADDRESS = `oneswap-swap::1220${'f'.repeat(64)}`;
/** The documented deposit window. */
export const ONESWAP_INTENT_TTL_MS = 24 * 60 * 60 * 1000;
/** The documented price-impact cap, as a fraction and as the percent the docs show. */
export const ONESWAP_MAX_PRICE_IMPACT = dec('0.15');
const MAX_PRICE_IMPACT_PERCENT = 15;
export const ONESWAP_CHALLENGE_TTL_S = 300;
export const ONESWAP_WALLET_TOKEN_TTL_MS = 15 * 60 * 1000;

export const SWAP_STATUSES = [
  'pending', 'matched', 'deposit_received', 'forwarded', 'processing', 'sending_output', 'completed', 'slippage_failed', 'price_impact_exceeded',
  'insufficient_liquidity', 'insufficient_amount', 'output_failed', 'no_output_holdings', 'failed', 'refund_failed', 'expired', 'cancelled',
] as const;
export type SwapStatus = (typeof SWAP_STATUSES)[number];

/** The outcomes the sandbox's control API can impose on the next settled deposit (test-only). */
export const FORCEABLE_OUTCOMES = ['slippage_failed', 'price_impact_exceeded', 'insufficient_liquidity', 'insufficient_amount', 'output_failed', 'no_output_holdings', 'failed', 'refund_failed'] as const;
export type ForceableOutcome = (typeof FORCEABLE_OUTCOMES)[number];

/** What the ledger knows of a party: undefined when its participant does not host it; its key when it is external. */
export type PartyKeys = (party: string) => { readonly key: Buffer | null } | undefined;

export interface OneSwapIntent {
  readonly intentId: string;
  readonly poolId: string;
  /** The signed-in wallet party: the only sender whose deposit settles it, and the payout's receiver. */
  readonly party: string;
  readonly give: Token;
  readonly want: Token;
  readonly amount: Decimal;
  readonly expectedOutput: Decimal;
  readonly minOutput: Decimal;
  /** Its source text, a fraction. */
  readonly slippageTolerance: string;
  readonly depositReference: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  status: SwapStatus;
  actualOutput: Decimal | null;
  matchedAt: number | null;
}

interface Challenge {
  readonly party: string;
  readonly message: string;
  readonly expiresAt: number;
}

/**
 * The sandbox OneSwap's challenges, wallet tokens and intents: its wire issues them, the ledger's
 * OneSwap desk settles the intents. One outcome can be queued for the next settlement (test-only).
 */
export class OneSwapIntentBook {
  private readonly challenges = new Map<string, Challenge>();
  private readonly tokens = new Map<string, { party: string; expiresAt: number }>();
  private readonly intents = new Map<string, OneSwapIntent>();
  private forced: ForceableOutcome | null = null;
  /** Set by the sandbox once its participant runs; until then no party is known. */
  partyKeys: PartyKeys = () => undefined;

  constructor(readonly now: () => Date = () => new Date()) {}

  private time(): number {
    return this.now().getTime();
  }

  challenge(party: string): { nonce: string; message: string } {
    const nonce = randomBytes(16).toString('hex');
    const issued = this.now();
    const message = `OneSwap wallet authentication\nParty: ${party}\nNonce: ${nonce}\nIssued at: ${issued.toISOString()}`;
    this.challenges.set(nonce, { party, message, expiresAt: issued.getTime() + ONESWAP_CHALLENGE_TTL_S * 1000 });
    return { nonce, message };
  }

  /** The wallet token for a good signature over the party's challenge; why not, otherwise. The challenge is used up either way. */
  verify(party: string, nonce: string, signature: Buffer, publicKey: Buffer): { token: string } | { refused: string } {
    const challenge = this.challenges.get(nonce);
    this.challenges.delete(nonce);
    if (!challenge || challenge.party !== party || this.time() >= challenge.expiresAt) return { refused: 'Unknown, used or expired challenge' };
    const hosted = this.partyKeys(party);
    if (!hosted) return { refused: 'Party not found' };
    if (hosted.key && !hosted.key.equals(publicKey)) return { refused: 'publicKey is not the party\'s key' };
    if (!ed25519Verifies(publicKey, Buffer.from(challenge.message, 'utf8'), signature)) return { refused: 'Invalid signature' };
    const token = `osw_${randomBytes(24).toString('hex')}`;
    this.tokens.set(token, { party, expiresAt: this.time() + ONESWAP_WALLET_TOKEN_TTL_MS });
    return { token };
  }

  /** The party a live wallet token was issued to. */
  walletParty(token: string | undefined): string | undefined {
    const entry = token === undefined ? undefined : this.tokens.get(token);
    if (!entry) return undefined;
    if (this.time() >= entry.expiresAt) {
      this.tokens.delete(token!);
      return undefined;
    }
    return entry.party;
  }

  create(intent: Omit<OneSwapIntent, 'intentId' | 'depositReference' | 'createdAt' | 'expiresAt' | 'status' | 'actualOutput' | 'matchedAt'>): OneSwapIntent {
    const createdAt = this.time();
    const id = randomBytes(12).toString('hex');
    const made: OneSwapIntent = {
      ...intent, intentId: `osi_${id}`, depositReference: `osr-${createHash('sha256').update(id).digest('hex').slice(0, 20)}`,
      createdAt, expiresAt: createdAt + ONESWAP_INTENT_TTL_MS, status: 'pending', actualOutput: null, matchedAt: null,
    };
    this.intents.set(made.intentId, made);
    return made;
  }

  /** An intent as it stands now: a pending one past its window has expired. */
  get(intentId: string): OneSwapIntent | undefined {
    const intent = this.intents.get(intentId);
    if (intent && intent.status === 'pending' && this.time() >= intent.expiresAt) intent.status = 'expired';
    return intent;
  }

  /** The party's pending intent on `pool` for input `give`, if any (the docs allow one). */
  activeIntent(party: string, poolId: string, give: Token): OneSwapIntent | undefined {
    return [...this.intents.keys()].map((id) => this.get(id)!).find((i) => i.status === 'pending' && i.party === party && i.poolId === poolId && i.give === give);
  }

  /**
   * The intent a deposit of `instrument` from `sender` settles: the one its reason names by
   * depositReference when the sender made it, else the sender's pending intent for that input.
   */
  match(sender: string, instrument: string, reason: string | undefined): OneSwapIntent | undefined {
    const named = reason === undefined ? undefined : [...this.intents.values()].find((i) => i.depositReference === reason);
    if (named) return named.party === sender ? this.get(named.intentId) : undefined;
    return [...this.intents.keys()].map((id) => this.get(id)!).find((i) => i.status === 'pending' && i.party === sender && i.give.instrument === instrument);
  }

  /** Queues the outcome of the next deposit that meets a pending intent. */
  forceNext(outcome: ForceableOutcome | null): void {
    this.forced = outcome;
  }

  /** The queued outcome, taken off the queue. */
  takeForced(): ForceableOutcome | null {
    const forced = this.forced;
    this.forced = null;
    return forced;
  }
}

/** An Ed25519 signature over `message` by a raw 32-byte public key. */
function ed25519Verifies(rawKey: Buffer, message: Buffer, signature: Buffer): boolean {
  if (rawKey.length !== 32 || signature.length !== 64) return false;
  const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), rawKey]), format: 'der', type: 'spki' });
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

const BOOKS = new WeakMap<SandboxVenueSpec, OneSwapIntentBook>();

/** The intent book of the OneSwap market `spec`, shared by its wire and the ledger's desk; made on first use, on `now` when given then. */
export function oneswapIntentBook(spec: SandboxVenueSpec, now?: () => Date): OneSwapIntentBook {
  let book = BOOKS.get(spec);
  if (!book) {
    book = new OneSwapIntentBook(now);
    BOOKS.set(spec, book);
  }
  return book;
}

const AMOUNT = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,10})?$/;
const FRACTION = /^0(\.[0-9]{1,10})?$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const DEFAULT_SLIPPAGE = '0.01';
const [MIN_SLIPPAGE, MAX_SLIPPAGE] = [dec('0.001'), dec('0.5')];
const SWAPS = '/api/v1/swaps';
const INTENT_PATH = /^\/api\/v1\/swaps\/([A-Za-z0-9_-]{1,64})(\/cancel)?$/;

const error = (status: number, message: string, extra: Record<string, unknown> = {}): WireResponse => jsonReply(status, { error: message, ...extra });

/** A request's JSON object body, or the 400 answer. */
function objectBody(body: string): Record<string, unknown> | WireResponse {
  try {
    const parsed = parseJsonKeepingNumbers(body);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  return error(400, 'Request body must be a JSON object');
}
const isAnswer = (x: unknown): x is WireResponse => typeof x === 'object' && x !== null && 'status' in x && 'body' in x && typeof (x as WireResponse).body === 'string';

/** A JSON text's object from its fields' JSON texts, so numbers are written as decimal text. */
const object = (fields: ReadonlyArray<readonly [string, string]>): string => `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
const str = (x: string | null): string => JSON.stringify(x);
const amountText = (x: Decimal | null): string => str(x === null ? null : toWire(x));
const iso = (ms: number | null): string => str(ms === null ? null : new Date(ms).toISOString());

function intentAnswer(intent: OneSwapIntent): string {
  return object([
    ['intentId', str(intent.intentId)],
    ['poolId', str(intent.poolId)],
    ['depositAddress', str(ONESWAP_SWAP_ADDRESS)],
    ['swapAddress', str(ONESWAP_SWAP_ADDRESS)],
    ['depositReference', str(intent.depositReference)],
    ['inputToken', str(intent.give.instrument)],
    ['inputTokenAdmin', str(SANDBOX_INSTRUMENT_ADMINS[intent.give.instrument])],
    ['outputToken', str(intent.want.instrument)],
    ['outputTokenAdmin', str(SANDBOX_INSTRUMENT_ADMINS[intent.want.instrument])],
    ['expectedAmount', amountText(intent.amount)],
    ['expectedOutput', amountText(intent.expectedOutput)],
    ['minOutput', amountText(intent.minOutput)],
    ['slippageTolerance', intent.slippageTolerance],
    ['outputAddress', str(intent.party)],
    ['expiresAt', iso(intent.expiresAt)],
    ['instructions', JSON.stringify({
      step1: `Send ${toWire(intent.amount)} ${intent.give.instrument} from ${intent.party} to ${ONESWAP_SWAP_ADDRESS}`,
      step2: `Put ${intent.depositReference} in the transfer's reason`,
      step3: `Receive at least ${toWire(intent.minOutput)} ${intent.want.instrument} back to ${intent.party}`,
    })],
  ]);
}

function statusAnswer(intent: OneSwapIntent): string {
  return object([
    ['intentId', str(intent.intentId)],
    ['poolId', str(intent.poolId)],
    ['status', str(intent.status)],
    ['inputToken', str(intent.give.instrument)],
    ['outputToken', str(intent.want.instrument)],
    ['expectedAmount', amountText(intent.amount)],
    ['expectedOutput', amountText(intent.expectedOutput)],
    ['actualOutput', amountText(intent.actualOutput)],
    ['minOutput', amountText(intent.minOutput)],
    ['slippageTolerance', intent.slippageTolerance],
    ['depositReference', str(intent.depositReference)],
    ['outputAddress', str(intent.party)],
    ['matchedAt', iso(intent.matchedAt)],
    ['createdAt', iso(intent.createdAt)],
    ['expiresAt', iso(intent.expiresAt)],
  ]);
}

/**
 * The intents' and wallet auth's routes of the OneSwap market `spec`; undefined for a path that
 * is none of theirs. The API key is checked before, by the wire.
 */
export function oneswapIntentsWire(spec: SandboxVenueSpec): (request: WireRequest) => WireResponse | undefined {
  const pools: readonly AmmPool[] = spec.pricing.kind === 'amm' ? spec.pricing.pools : [];

  const walletOf = (request: WireRequest, book: OneSwapIntentBook): string | undefined => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
    return book.walletParty(bearer?.[1]);
  };

  function challenge(book: OneSwapIntentBook, input: Record<string, unknown>): WireResponse {
    if (!isPartyId(input.partyId)) return error(400, 'partyId must be a party id <hint>::1220<64 hex>');
    if (!book.partyKeys(input.partyId)) return error(404, 'Party not found');
    const { nonce, message } = book.challenge(input.partyId);
    return { status: 200, body: object([['partyId', str(input.partyId)], ['nonce', str(nonce)], ['message', str(message)], ['expiresIn', String(ONESWAP_CHALLENGE_TTL_S)]]) };
  }

  function verifyChallenge(book: OneSwapIntentBook, input: Record<string, unknown>): WireResponse {
    const { partyId, nonce, signature, publicKey } = input;
    if (!isPartyId(partyId)) return error(400, 'partyId must be a party id <hint>::1220<64 hex>');
    if (typeof nonce !== 'string' || typeof signature !== 'string' || typeof publicKey !== 'string' || !BASE64.test(signature) || !BASE64.test(publicKey)) {
      return error(400, 'nonce, signature and publicKey are required; signature and publicKey in base64');
    }
    const verified = book.verify(partyId, nonce, Buffer.from(signature, 'base64'), Buffer.from(publicKey, 'base64'));
    if ('refused' in verified) return error(401, verified.refused);
    return jsonReply(200, { partyId, token: verified.token });
  }

  function create(book: OneSwapIntentBook, party: string, input: Record<string, unknown>): WireResponse {
    const give = TOKENS.find((t) => t.instrument === input.fromToken);
    const want = TOKENS.find((t) => t.instrument === input.toToken);
    if (!give || !want) return error(400, `Unsupported token: ${String(give ? input.toToken : input.fromToken)}`);
    if (give === want) return error(400, 'fromToken and toToken must be different tokens');
    if (typeof input.amount !== 'string' || !AMOUNT.test(input.amount) || dec(input.amount).isZero()) return error(400, 'amount must be a positive decimal string with at most 10 fractional digits');
    if (input.walletAddress !== undefined && input.walletAddress !== party) return error(400, 'walletAddress does not match the authenticated wallet');
    const tolerance = input.slippageTolerance === undefined ? DEFAULT_SLIPPAGE : input.slippageTolerance;
    if (typeof tolerance !== 'string' || !FRACTION.test(tolerance) || dec(tolerance).lt(MIN_SLIPPAGE) || dec(tolerance).gt(MAX_SLIPPAGE)) return error(400, 'slippageTolerance must be from 0.001 to 0.5');
    const other = give === CC ? want : want === CC ? give : null;
    const pool = pools.find((p) => p.quote === other);
    if (!pool) return error(404, `Pool not found for ${give.instrument}/${want.instrument}`);
    const poolId = oneswapPoolId(pool);
    if (input.poolId !== undefined && input.poolId !== poolId) return error(400, `poolId ${String(input.poolId)} does not trade ${give.instrument}/${want.instrument}`);
    if ((input.fromAdmin !== undefined && input.fromAdmin !== SANDBOX_INSTRUMENT_ADMINS[give.instrument]) || (input.toAdmin !== undefined && input.toAdmin !== SANDBOX_INSTRUMENT_ADMINS[want.instrument])) {
      return error(404, `Pool not found for ${give.instrument}/${want.instrument} with those admins`);
    }
    const amount = dec(input.amount);
    const swap = oneswapSwap(spec, pool, give, amount);
    if (swap.afterTrafficFee.isZero()) return error(400, 'Amount is below the estimated traffic cost', { minimumAmount: toWire(swap.trafficFee) });
    if (swap.priceImpact.gt(ONESWAP_MAX_PRICE_IMPACT) || !swap.output.lt(swap.reserveOut)) {
      return error(400, `Price impact ${swap.priceImpact.times(100).toFixed(2)}% exceeds the maximum of ${MAX_PRICE_IMPACT_PERCENT}%`, { maxPriceImpact: MAX_PRICE_IMPACT_PERCENT });
    }
    if (book.activeIntent(party, poolId, give)) return error(409, 'An active swap intent already exists for this wallet, pool and input token');
    const minOutput = floor10(swap.output.times(dec('1').minus(tolerance)));
    const intent = book.create({ poolId, party, give, want, amount, expectedOutput: swap.output, minOutput, slippageTolerance: toWire(dec(tolerance)) });
    return { status: 200, body: intentAnswer(intent) };
  }

  return (request) => {
    const book = oneswapIntentBook(spec);
    const { path, method } = request;
    const auth = path === '/api/v1/wallet-auth/challenge' ? challenge : path === '/api/v1/wallet-auth/verify' ? verifyChallenge : null;
    const intentPath = INTENT_PATH.exec(path);
    if (!auth && path !== SWAPS && !intentPath) return undefined;
    const expected = intentPath && !intentPath[2] ? 'GET' : 'POST';
    if (method !== expected) return error(405, `${method} is not allowed on ${path}`);
    const input = method === 'POST' && (auth || path === SWAPS) ? objectBody(request.body) : {};
    if (isAnswer(input)) return input;
    if (auth) return auth(book, input);
    const party = walletOf(request, book);
    if (!party) return error(401, 'Invalid or missing wallet token');
    if (!intentPath) return create(book, party, input);
    const intent = book.get(intentPath[1]!);
    if (!intent || intent.party !== party) return error(404, 'Swap intent not found');
    if (!intentPath[2]) return { status: 200, body: statusAnswer(intent) };
    if (intent.status !== 'pending') return error(409, `Swap intent is ${intent.status}, not pending`);
    intent.status = 'cancelled';
    return jsonReply(200, { success: true });
  };
}
