// The widget's rules without a browser (sdk/src/widget/rules.ts, read from the package as built):
// what the form may be quoted with, the price impact and its warning threshold, and the field a
// refusal of the service concerns, the service's status of a plan in words and when it differs from
// the wallet's own view. The element that applies them is driven in Chromium by
// test/sdk/widget/widget.test.ts (and widget-status.test.ts for the service's status).
import t from 'tap';
import { BestexError, type V2 } from '@bestex/sdk';

const rules = (await import(new URL('./widget/rules.js', import.meta.resolve('@bestex/sdk')).href)) as {
  quoteProblem(amount: string, from: string, to: string): string | null;
  priceImpactBps(amount: string, gross: string, small: string, smallGross: string): bigint;
  percent(bps: bigint): string;
  warningBps(text: string | null): number;
  fieldOf(err: BestexError): string | null;
  AMOUNT_RULE: string;
  EXECUTION_REASONS: Readonly<Record<string, string>>;
  executionReason(reason: string | null): string;
  planVenue(quote: { venues: Array<{ venueId: string; available: boolean; execution: { executable: boolean } }>; bestExecutable: { venueId: string } | null }, chosen: string | null): string | null;
  planRoute(quote: { venues: Array<{ venueId: string; available: boolean; execution: { executable: boolean } }>; bestExecutable: { venueId: string } | null; split?: Split }, chosen: string | null): { venueId: string } | { split: Split } | null;
  SPLIT_CHOICE: string;
  legRequests(split: Split): Array<{ venueId: string; amount: string }>;
  edgeWords(bps: number): string;
  legFate(leg: { venueId: string; amount: string; status: string; received?: string | null }, give: string, want: string): string;
  batchingFallback(venueId: string): string;
  BATCHING_UNAVAILABLE: string;
  SERVICE_STATES: Readonly<Record<V2.PlanState, string>>;
  serviceWords(status: Pick<V2.PlanStatus, 'state' | 'received' | 'legs'>, want: string): string;
  serviceDisagreement(execution: string | null, service: Pick<V2.PlanStatus, 'state' | 'terminal'>): string | null;
};

interface Split {
  legs: Array<{ venueId: string; amount: string; net: string }>;
  net: string;
  edgeBps: number;
}

t.test('loading the rules needs no DOM: this process has no document', async (t) => {
  t.equal((globalThis as { document?: unknown }).document, undefined);
  t.type(rules.quoteProblem, 'function');
});

t.test('a form is quoted only with an amount of the contract and two different tokens', async (t) => {
  t.equal(rules.quoteProblem('', 'CC', 'USDCx'), 'Enter an amount to quote.');
  for (const amount of ['0', '0.000', 'abc', '1000000000.1', '1.12345678901']) t.equal(rules.quoteProblem(amount, 'CC', 'USDCx'), rules.AMOUNT_RULE, `${amount} is refused`);
  t.equal(rules.quoteProblem('100', 'CC', 'CC'), 'Sell and Buy are the same token: choose another to quote.');
  for (const amount of ['100', '0.0000000001', '1000000000', '0123456789.5']) t.equal(rules.quoteProblem(amount, 'CC', 'USDCx'), null, `${amount} is quoted`);
});

t.test('the price impact is rounded up against the reference, never negative, shown with two decimals', async (t) => {
  t.equal(rules.priceImpactBps('100', '50', '0.1', '0.1'), 5001n, 'half the reference price: 50 %, and a bps more, the reference taken at the top of its last digit');
  t.equal(rules.priceImpactBps('100', '200', '0.1', '0.1'), 0n, 'a better price is no impact');
  t.equal(rules.percent(7143n), '71.43 %');
  t.equal(rules.percent(5n), '0.05 %');
});

t.test('the warning threshold is a whole number of bps up to 10,000, else the default 100', async (t) => {
  t.equal(rules.warningBps('250'), 250);
  t.equal(rules.warningBps(' 10000 '), 10_000);
  for (const text of [null, '', '10001', '1.5', '-1', 'lots']) t.equal(rules.warningBps(text), 100, `${String(text)} is the default`);
});

t.test('a refusal names the widget\'s field it concerns, or none', async (t) => {
  const refusal = (code: string, message: string) => new BestexError(message, { status: 400, code });
  t.equal(rules.fieldOf(refusal('bad_party', 'anything')), 'party');
  t.equal(rules.fieldOf(refusal('bad_request', "'slippageBps' must be at most 5000")), 'slippage-bps');
  t.equal(rules.fieldOf(refusal('bad_request', "'takerParty' is required")), 'party');
  t.equal(rules.fieldOf(refusal('bad_request', 'the plan is refused')), null);
});

t.test('"each reason a v2 venue cannot be executed is said in words": one sentence per reason code of the contract', async (t) => {
  t.strictSame(rules.EXECUTION_REASONS, {
    venue_requires_account: 'it trades only from an account held at the venue, signed with the venue\'s own keys, which your wallet does not have.',
    venue_requires_credential: 'it trades only with credentialed institutional participants.',
    venue_requires_signed_challenge: 'it needs your wallet to sign its challenge, and this service to hold a key of its own there, before any swap.',
    venue_execution_not_served: 'this service does not make plans for it yet.',
  });
  t.equal(rules.executionReason('venue_requires_credential'), rules.EXECUTION_REASONS.venue_requires_credential);
  t.equal(rules.executionReason('venue_of_tomorrow'), 'venue_of_tomorrow.', 'a code this build does not know, as it is');
});

t.test('"a v2 plan is made on an executable venue": the person\'s choice while it is available and executable, else the quote\'s bestExecutable, else none', async (t) => {
  const venue = (venueId: string, available: boolean, executable: boolean) => ({ venueId, available, execution: { executable } });
  const quote = { venues: [venue('temple', true, false), venue('tradecraft', true, true), venue('nightly', true, true), venue('cantex', false, true)], bestExecutable: { venueId: 'tradecraft' } };
  t.equal(rules.planVenue(quote, null), 'tradecraft', 'nothing chosen: the best executable venue');
  t.equal(rules.planVenue(quote, 'nightly'), 'nightly', 'an executable choice stands');
  t.equal(rules.planVenue(quote, 'temple'), 'tradecraft', 'a venue that cannot be executed is never planned');
  t.equal(rules.planVenue(quote, 'cantex'), 'tradecraft', 'nor one not quoting now');
  t.equal(rules.planVenue({ venues: [venue('temple', true, false)], bestExecutable: null }, null), null, 'no executable venue: nothing to plan');
});

/** The spec's split at 1,000,000 CC (openapi/v2.yaml, splitAtOneMillion). */
const SPLIT: Split = {
  legs: [
    { venueId: 'oneswap', amount: '387909.7327266459', net: '56387.8850790716' },
    { venueId: 'tradecraft', amount: '612090.2672733541', net: '88827.725737196' },
  ],
  net: '145215.6108162676',
  edgeBps: 194,
};

t.test('"a v2 quote\'s split is the route while it has one": the person\'s executable venue stands; otherwise the split; without a split, the best executable venue', async (t) => {
  const venue = (venueId: string, available: boolean, executable: boolean) => ({ venueId, available, execution: { executable } });
  const venues = [venue('temple', true, false), venue('tradecraft', true, true), venue('oneswap', true, true), venue('nightly', false, true)];
  const quote = { venues, bestExecutable: { venueId: 'tradecraft' }, split: SPLIT };
  t.strictSame(rules.planRoute(quote, null), { split: SPLIT }, 'nothing chosen: the split');
  t.strictSame(rules.planRoute(quote, rules.SPLIT_CHOICE), { split: SPLIT }, 'the split chosen: the split');
  t.strictSame(rules.planRoute(quote, 'oneswap'), { venueId: 'oneswap' }, 'an executable venue chosen: that venue alone');
  t.strictSame(rules.planRoute(quote, 'temple'), { split: SPLIT }, 'a venue that cannot be executed: the split, never it');
  t.strictSame(rules.planRoute(quote, 'nightly'), { split: SPLIT }, 'nor one not quoting now');
  t.strictSame(rules.planRoute({ venues, bestExecutable: { venueId: 'tradecraft' } }, rules.SPLIT_CHOICE), { venueId: 'tradecraft' }, 'the split chosen, and the next quote has none: the best executable venue');
  t.equal(rules.planRoute({ venues: [venue('temple', true, false)], bestExecutable: null }, null), null, 'no executable venue and no split: nothing to plan');
});

t.test('"a split is planned with the quote\'s legs": each leg\'s venue and amount, in the quote\'s order, no net', async (t) => {
  t.strictSame(rules.legRequests(SPLIT), [
    { venueId: 'oneswap', amount: '387909.7327266459' },
    { venueId: 'tradecraft', amount: '612090.2672733541' },
  ]);
});

t.test('a split\'s edge is said in bps and as a percentage', async (t) => {
  t.equal(rules.edgeWords(194), '194 bps (1.94 %)');
  t.equal(rules.edgeWords(5), '5 bps (0.05 %)');
  t.equal(rules.edgeWords(12_345), '12345 bps (123.45 %)');
});

t.test('"each leg\'s fate in words": paid what, returned with its service fee not collected, unanswered by the expiry (its offer still open), held by its venue, or waiting', async (t) => {
  const leg = (status: string, received: string | null = null) => ({ venueId: 'oneswap', amount: '387909.7327266459', status, received });
  t.equal(rules.legFate(leg('COMPLETED', '56390.1'), 'CC', 'USDCx'), 'paid 56390.1 USDCx for 387909.7327266459 CC');
  for (const status of ['SLIPPAGE_FAILED', 'WITHDRAWN']) {
    t.equal(rules.legFate(leg(status), 'CC', 'USDCx'), 'returned: your 387909.7327266459 CC came back to you, and its service fee was not collected', `${status} is returned`);
  }
  t.equal(
    rules.legFate(leg('EXPIRED'), 'CC', 'USDCx'),
    "not answered by the plan's expiry: your 387909.7327266459 CC comes back when OneSwap rejects it, or when you withdraw it; its service fee is not collected",
    'an unanswered leg is not said to have come back',
  );
  t.equal(rules.legFate(leg('VENUE_FAILED'), 'CC', 'USDCx'), 'OneSwap took 387909.7327266459 CC and neither paid nor returned it: its operators must act');
  t.equal(rules.legFate(leg('INITIATED'), 'CC', 'USDCx'), 'deposited 387909.7327266459 CC, waiting for OneSwap to settle it');
  t.equal(rules.legFate(leg('COMPLETED'), 'CC', 'USDCx'), 'deposited 387909.7327266459 CC, waiting for OneSwap to settle it', 'a leg is paid only once what it received is known');
});

t.test('"a wallet that cannot batch is told why" the split is re-planned on one venue, naming it', async (t) => {
  t.equal(rules.BATCHING_UNAVAILABLE, 'batching_unavailable', 'the SDK\'s code');
  t.equal(
    rules.batchingFallback('tradecraft'),
    "Your wallet cannot send the split's deposits together in one batch (its participant lacks the CIP-0112 batching package), so nothing was signed: planning the whole amount on tradecraft alone instead.",
  );
  t.match(rules.batchingFallback('oneswap'), /on OneSwap alone instead\.$/, 'the venue by its own name');
});

t.test('"the service\'s status of a plan in words": each state of the contract, what was received, and a split\'s legs by their venues', async (t) => {
  t.strictSame(Object.keys(rules.SERVICE_STATES).sort(), ['awaiting_signature', 'completed', 'deposit_seen', 'expired', 'partially_completed', 'planned', 'slippage_failed', 'unobserved', 'venue_failed', 'withdrawn'], 'every PlanState of the contract');
  const leg = (venueId: string, state: V2.PlanState, received: string | null = null) => ({ leg: 0, venueId, amount: '1', minReceive: '1', state, basis: 'ledger' as const, depositUpdateId: null, settlementUpdateId: null, received });
  t.equal(rules.serviceWords({ state: 'deposit_seen', received: null, legs: [leg('tradecraft', 'deposit_seen')] }, 'USDCx'), 'deposit seen, waiting for the venue');
  t.equal(rules.serviceWords({ state: 'completed', received: '14.95', legs: [leg('tradecraft', 'completed', '14.95')] }, 'USDCx'), 'completed, 14.95 USDCx received');
  t.equal(
    rules.serviceWords({ state: 'partially_completed', received: '88.8', legs: [leg('oneswap', 'slippage_failed'), leg('tradecraft', 'completed', '88.8')] }, 'USDCx'),
    'partially completed, 88.8 USDCx received (OneSwap: slippage failed, the deposit returned; tradecraft: completed)',
  );
});

t.test('"when the service and the wallet disagree, the wallet\'s own view is what happened", said only once both have ended; a deposit the service cannot see is said so', async (t) => {
  t.equal(rules.serviceDisagreement('COMPLETED', { state: 'completed', terminal: true }), null, 'the same end');
  t.equal(rules.serviceDisagreement('PARTIALLY_COMPLETED', { state: 'partially_completed', terminal: true }), null);
  t.equal(rules.serviceDisagreement('COMPLETED', { state: 'slippage_failed', terminal: true }), "This differs from your wallet's own view (COMPLETED), which is what happened.");
  t.equal(rules.serviceDisagreement('EXPIRED', { state: 'completed', terminal: true }), "This differs from your wallet's own view (EXPIRED), which is what happened.");
  t.equal(rules.serviceDisagreement('INITIATED', { state: 'completed', terminal: true }), null, 'the wallet still waits: no disagreement yet');
  t.equal(rules.serviceDisagreement('COMPLETED', { state: 'deposit_seen', terminal: false }), null, 'the service still reads: none yet either');
  t.equal(rules.serviceDisagreement(null, { state: 'completed', terminal: true }), null);
  t.equal(rules.serviceDisagreement('COMPLETED', { state: 'unobserved', terminal: true }), "The service cannot see this deposit; your wallet's own view above is what happened.");
});
