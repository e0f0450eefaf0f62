// The widget's rules that need no DOM: what it may plan (in v1 one venue; in v2 what the quote
// says can be executed, or the quote's split across venues), the contract's bounds on what a
// person types and the words for what is wrong, the reasons a venue gives in words, how a split's
// legs end in words, the service's status of a plan in words and when it differs from the
// wallet's own view, and the price-impact arithmetic. Tested without a browser.
import type { QuoteResponse } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { BestexError } from '../errors.js';
import { toUnits } from '../decimal.js';
import { isTerminal, type ExecutionStatus } from '../execution/types.js';

/** The venue v1 plans execute on; the others are shown with why they cannot be planned yet. */
export const PLANNABLE_VENUE = 'tradecraft';
export const TOKENS = ['CC', 'USDCx', 'CBTC'] as const;
/** The states in which the plan's deposit is on the ledger. */
export const ON_LEDGER: readonly ExecutionStatus[] = ['INITIATED', 'COMPLETED', 'PARTIALLY_COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN', 'VENUE_FAILED'];
/** The longest a retry after a 503 waits. */
export const MAX_BACKOFF_S = 60;

/** The contract's bound on slippageBps. */
export const MAX_SLIPPAGE_BPS = 5000;

/** The contract's Amount: positive, at most 1,000,000,000, at most 10 fractional digits. */
export const AMOUNT = /^(([0-9]{1,9}|0[0-9]{9})(\.[0-9]{1,10})?|1000000000(\.0{1,10})?)$/;
export const AMOUNT_RULE = 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.';

/**
 * The price impact is measured against a quote for this fraction of the amount: small enough that
 * its own impact is negligible on any pool deep enough to quote the amount, large enough to stay
 * clear of a Decimal's 10 fractional digits.
 */
export const REFERENCE_DIVISOR = 1000n;
/** Above this impact (1 %), unless the host sets price-impact-warning-bps, the widget warns. */
export const DEFAULT_IMPACT_WARNING_BPS = 100;
export const MAX_IMPACT_WARNING_BPS = 10_000;

export const REASONS: Readonly<Record<string, string>> = {
  no_pool: 'no pool for this pair',
  below_minimum: 'below the venue\'s minimum size',
  above_maximum: 'above the venue\'s maximum size',
  insufficient_liquidity: 'not enough liquidity for this amount',
  timeout: 'the venue did not answer in time',
  venue_error: 'the venue answered with an error',
  maintenance: 'the venue is in maintenance',
  venue_down: 'the venue is down',
};

type NotExecutableReason = NonNullable<V2.VenueExecution['reason']>;

/**
 * Why a venue cannot be executed through this service (a v2 quote's `execution.reason`), in words:
 * each follows "<venue> cannot be executed through this service: ".
 */
export const EXECUTION_REASONS: Readonly<Record<NotExecutableReason, string>> = {
  venue_requires_account: 'it trades only from an account held at the venue, signed with the venue\'s own keys, which your wallet does not have.',
  venue_requires_credential: 'it trades only with credentialed institutional participants.',
  venue_requires_signed_challenge: 'it needs your wallet to sign its challenge, and this service to hold a key of its own there, before any swap.',
  venue_execution_not_served: 'this service does not make plans for it yet.',
};

/** The venues' own names, for sentences; a venue this build does not know goes by its id. */
const VENUE_NAMES: Readonly<Record<string, string>> = { tradecraft: 'tradecraft', nightly: 'Nightly', oneswap: 'OneSwap', cantex: 'Cantex', temple: 'Temple' };

export const venueName = (venueId: string): string => (Object.hasOwn(VENUE_NAMES, venueId) ? VENUE_NAMES[venueId]! : venueId);

/** A v2 venue's reason in words; a code this build does not know, as it is. */
export const executionReason = (reason: string | null): string => EXECUTION_REASONS[reason as NotExecutableReason] ?? `${String(reason)}.`;

/** A quote's version, by its shape: only v2's has `bestExecutable`. */
export const isV2Quote = (quote: QuoteResponse | V2.QuoteResponse): quote is V2.QuoteResponse => 'bestExecutable' in quote;

/**
 * The venue a v2 plan is made on: the person's choice while the quote says it is available and
 * executable, else the quote's `bestExecutable`; null when no venue is.
 */
export function planVenue(quote: Pick<V2.QuoteResponse, 'venues' | 'bestExecutable'>, chosen: string | null): string | null {
  const venue = quote.venues.find((v) => v.venueId === chosen);
  return venue?.available && venue.execution.executable ? venue.venueId : (quote.bestExecutable?.venueId ?? null);
}

/** The venue choice that stands for the quote's split, beside the venues' own ids. */
export const SPLIT_CHOICE = 'split';

/** What a v2 plan is made on: one venue, or the quote's split (its legs sent as the request's `legs`). */
export type Route = { readonly venueId: string } | { readonly split: V2.SplitQuote };

/**
 * The route a v2 plan is made on: a venue the person chose while the quote says it is available
 * and executable; else the quote's split while it has one (it nets more than any venue alone);
 * else the quote's `bestExecutable`; null when there is none of these.
 */
export function planRoute(quote: Pick<V2.QuoteResponse, 'venues' | 'bestExecutable' | 'split'>, chosen: string | null): Route | null {
  const venue = quote.venues.find((v) => v.venueId === chosen);
  if (venue?.available && venue.execution.executable) return { venueId: venue.venueId };
  if (quote.split) return { split: quote.split };
  const venueId = planVenue(quote, chosen);
  return venueId === null ? null : { venueId };
}

/** A split's legs as a plan request names them: each leg's venue and amount, in the quote's order. */
export const legRequests = (split: V2.SplitQuote | V2.SplitPlanRef): V2.SplitLegRequest[] => split.legs.map(({ venueId, amount }) => ({ venueId, amount }));

/** A split's edge over the best venue alone: 194 is "194 bps (1.94 %)". */
export const edgeWords = (bps: number): string => `${bps} bps (${percent(BigInt(bps))})`;

/** How a split is settled, in words: one batch signed once, then each venue on its own. */
export const SPLIT_SETTLEMENT = 'Your wallet sends every leg\'s deposit together, in one batch; each venue then settles its own leg, so one leg can be paid while another is returned to you.';

/** execute()'s error code when the wallet cannot batch a split's deposits: nothing was signed. */
export const BATCHING_UNAVAILABLE = 'batching_unavailable';

/** Why a split is re-planned on one venue, in words. */
export const batchingFallback = (venueId: string): string =>
  `Your wallet cannot send the split's deposits together in one batch (its participant lacks the CIP-0112 batching package), so nothing was signed: planning the whole amount on ${venueName(venueId)} alone instead.`;

/** What a split plan's leg became, as far as the widget has heard. */
export interface LegProgress {
  readonly venueId: string;
  /** What the leg gives, in the give token. */
  readonly amount: string;
  readonly status: string;
  /** What its venue paid, in the want token, once it paid. */
  readonly received?: string | null | undefined;
}

/** The statuses of a leg whose deposit came back to the wallet: nothing was swapped on it. */
const RETURNED: readonly string[] = ['SLIPPAGE_FAILED', 'WITHDRAWN'];

/**
 * A deposited leg's fate in words, after "<venue>: ": paid, returned (its service fee returned
 * with it, never collected), unanswered by the plan's expiry (its offer still open until the venue
 * rejects it or the wallet withdraws it), held by a venue that neither paid nor returned it, or
 * still waiting. `give` and `want` are the tokens' symbols.
 */
export function legFate(leg: LegProgress, give: string, want: string): string {
  if (leg.status === 'COMPLETED' && leg.received) return `paid ${leg.received} ${want} for ${leg.amount} ${give}`;
  if (RETURNED.includes(leg.status)) return `returned: your ${leg.amount} ${give} came back to you, and its service fee was not collected`;
  if (leg.status === 'EXPIRED') return `not answered by the plan's expiry: your ${leg.amount} ${give} comes back when ${venueName(leg.venueId)} rejects it, or when you withdraw it; its service fee is not collected`;
  if (leg.status === 'VENUE_FAILED') return `${venueName(leg.venueId)} took ${leg.amount} ${give} and neither paid nor returned it: its operators must act`;
  return `deposited ${leg.amount} ${give}, waiting for ${venueName(leg.venueId)} to settle it`;
}

/** Each state of the service's status of a plan (a v2 plan's, and each of its legs'), in words. */
export const SERVICE_STATES: Readonly<Record<V2.PlanState, string>> = {
  awaiting_signature: 'waiting for your wallet to sign the venue\'s message',
  planned: 'planned, no deposit seen yet',
  deposit_seen: 'deposit seen, waiting for the venue',
  completed: 'completed',
  partially_completed: 'partially completed',
  slippage_failed: 'slippage failed, the deposit returned',
  expired: 'expired, not answered in time',
  withdrawn: 'withdrawn',
  venue_failed: 'the venue kept the deposit',
  unobserved: 'not seen by the service',
};

/** The end the SDK's execution reports for each end of the service's status that it can reach. */
const EXECUTION_ENDS: Readonly<Partial<Record<V2.PlanState, ExecutionStatus>>> = {
  completed: 'COMPLETED',
  partially_completed: 'PARTIALLY_COMPLETED',
  slippage_failed: 'SLIPPAGE_FAILED',
  expired: 'EXPIRED',
  withdrawn: 'WITHDRAWN',
  venue_failed: 'VENUE_FAILED',
};

/**
 * The service's status of the plan in one line, after "The service reads: ": its state, what it
 * says was received, and, for a split, each leg's state by its venue. `want` is the want token's symbol.
 */
export function serviceWords(status: Pick<V2.PlanStatus, 'state' | 'received' | 'legs'>, want: string): string {
  const received = status.received === null ? '' : `, ${status.received} ${want} received`;
  const legs = status.legs.length > 1 ? ` (${status.legs.map((leg) => `${venueName(leg.venueId)}: ${SERVICE_STATES[leg.state] ?? leg.state}`).join('; ')})` : '';
  return `${SERVICE_STATES[status.state] ?? status.state}${received}${legs}`;
}

/**
 * What the widget says when the service's status and the wallet's own view of the execution
 * differ, or when the service cannot see the deposit; null while they agree or either has not
 * ended. The wallet's view is what happened: the service's reading is only said beside it.
 */
export function serviceDisagreement(execution: ExecutionStatus | null, service: Pick<V2.PlanStatus, 'state' | 'terminal'>): string | null {
  if (service.state === 'unobserved') return 'The service cannot see this deposit; your wallet\'s own view above is what happened.';
  if (execution === null || !isTerminal(execution) || !service.terminal) return null;
  const end = EXECUTION_ENDS[service.state];
  if (end === execution) return null;
  return `This differs from your wallet's own view (${execution}), which is what happened.`;
}

/** The service names a field in its words ('takerParty'); the widget's field for it. */
const FIELDS_NAMED: ReadonlyArray<readonly [RegExp, string]> = [
  [/'takerParty'/, 'party'],
  [/'slippageBps'/, 'slippage-bps'],
  [/'amount'/, 'amount'],
  [/'from'/, 'from'],
  [/'to'/, 'to'],
];

/** An amount in 1e-10 units; the contract's Amount may carry leading zeros, a Decimal may not. */
export const units = (text: string): bigint => toUnits(text.replace(/^0+(?=[0-9])/, ''));

/** bps as a percentage with two decimals: 7143 is "71.43 %". */
export const percent = (bps: bigint): string => `${bps / 100n}.${String(bps % 100n).padStart(2, '0')} %`;

/**
 * How much worse, in bps, `amount` is paid (`gross`) than `small` is (`smallGross`), rounded up:
 * the reference price is taken at the top of its last digit's rounding, so the impact shown is
 * never less than the pool's. Never negative.
 */
export function priceImpactBps(amount: string, gross: string, small: string, smallGross: string): bigint {
  const [a, g, s, r] = [units(amount), units(gross), units(small), units(smallGross) + 1n];
  const whole = a * r;
  const lost = whole - g * s;
  return lost <= 0n ? 0n : (lost * 10_000n + whole - 1n) / whole;
}

/** What an attribute sets the warning at: a whole number of bps up to 10,000, else the default. */
export function warningBps(text: string | null): number {
  const trimmed = text?.trim() ?? '';
  return /^[0-9]{1,5}$/.test(trimmed) && Number(trimmed) <= MAX_IMPACT_WARNING_BPS ? Number(trimmed) : DEFAULT_IMPACT_WARNING_BPS;
}

/** A problem the person has to act on, and the field it concerns (null: the plan as a whole). */
export interface ActionError {
  readonly text: string;
  readonly field: string | null;
}

/** The execution venue's quote for a small part of the amount, or why there is none. */
export type Reference = { readonly amount: string; readonly gross: string } | { readonly unknown: string };

/** Why the form cannot be quoted as it is, in words; null when it can. */
export function quoteProblem(amount: string, from: string, to: string): string | null {
  if (amount === '') return 'Enter an amount to quote.';
  if (!AMOUNT.test(amount) || /^[0.]*$/.test(amount)) return AMOUNT_RULE;
  if (from === to) return 'Sell and Buy are the same token: choose another to quote.';
  return null;
}

/** The widget's field a refusal of the service concerns, as its message names it. */
export function fieldOf(err: BestexError): string | null {
  if (err.code === 'bad_party') return 'party';
  return FIELDS_NAMED.find(([pattern]) => pattern.test(err.message))?.[1] ?? null;
}
