// The venue port's execution terms (core/venues/venue.ts, ExecutableVenue) from the real adapters
// against the sandbox's venues, reached only over HTTP: Nightly asked with the tolerance that keeps
// its minOutAmount at or above the service's floor, refused (venue_floor_below_service, 502) when
// its minimum is below it anyway, within its listed limits; Tradecraft's deposit to the pool party
// with the floor as the memo.
import t from 'tap';
import { Decimal, dec, floor10, toWire } from '../../../core/decimal.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { NightlyVenue } from '../../../core/venues/nightly.js';
import { TradecraftVenue } from '../../../core/venues/tradecraft.js';
import { VenueFloorBelowService, type ExecutionTerms, type Venue } from '../../../core/venues/venue.js';
import { hint } from '../../helpers/canton.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { noDeadline } from '../../helpers/venue-fetch.js';

const sandbox = await testSandbox();
t.teardown(() => sandbox.close());
const { manifest } = sandbox;
const nightly = new NightlyVenue({ baseUrl: manifest.venues.nightly!, timeoutMs: 5000, recipient: manifest.nightlyRecipient });
const tradecraft = new TradecraftVenue({ baseUrl: manifest.venues.tradecraft!, timeoutMs: 5000, poolParties: manifest.poolParties });
const TAKER = `${hint('taker')}::1220${'7'.repeat(64)}`;
const TENTH_NANO = dec('0.0000000001');

/** The service's floor for a net: floor(net × (1 - slippageBps/10000)), 10 digits. */
const floorOf = (net: Decimal, slippageBps: number): Decimal => floor10(net.times(10_000 - slippageBps).div(10_000));

/** The net the venue quotes now (its fee is inside the price for both venues here: gross is net for Nightly). */
async function netOf(venue: Venue, give: Token, want: Token, amount: string): Promise<Decimal> {
  const quoted = await venue.quote({ give, want, amount: dec(amount) }, noDeadline());
  if (!quoted.available) throw new Error(`${venue.id} did not quote ${amount} ${give.symbol}: ${quoted.rejectionCode}`);
  return quoted.gross;
}

async function terms(venue: NightlyVenue | TradecraftVenue, give: Token, want: Token, amount: string, floor: Decimal, expectedOut: Decimal): Promise<ExecutionTerms> {
  const answer = await venue.executionTerms({ give, want, amount: dec(amount), recipient: TAKER, floor, expectedOut }, noDeadline());
  if (!answer.available) throw new Error(`${venue.id} refused terms: ${answer.rejectionCode}`);
  return answer.terms;
}

async function moveNightly(pair: string, bps: number): Promise<void> {
  const response = await fetch(new URL('/sandbox/v1/move', manifest.ledger), {
    method: 'POST', headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ venue: 'nightly', pair, bps }),
  });
  if (response.status !== 200) throw new Error(`the move was refused: ${await response.text()}`);
}

t.test('nightly: "the tolerance sent keeps minOutAmount at or above the service\'s floor, and no higher than the floor needs"', async (t) => {
  const cases: Array<[Token, Token, string, number]> = [[CC, USDCX, '100', 50], [CC, USDCX, '5000', 100], [USDCX, CC, '250', 1], [CC, CBTC, '5000', 30], [CBTC, CC, '0.01', 500]];
  for (const [give, want, amount, bps] of cases) {
    const net = await netOf(nightly, give, want, amount);
    const floor = floorOf(net, bps);
    const got = await terms(nightly, give, want, amount, floor, net);
    const name = `${amount} ${give.symbol} -> ${want.symbol} at ${bps} bps`;
    t.ok(got.minOut.gte(floor), `${name}: minOutAmount ${toWire(got.minOut)} >= floor ${toWire(floor)}`);
    t.ok(got.minOut.lte(floor.plus(net.times(TENTH_NANO)).plus(TENTH_NANO)), `${name}: and within rounding of it (the widest tolerance the floor allows)`);
    t.equal(toWire(got.toAmount), toWire(net), `${name}: toAmount is what the quote said`);
    t.equal(toWire(got.fromAmount), amount);
    t.match(got.memo, /^nswap-[0-9a-f]{16}$/);
    t.match(got.target, /^nightly-swap::1220[0-9a-f]{64}$/, 'the deposit goes to swapAddress');
    t.equal(got.magicAddress, null, 'the sandbox offers no magicAddress');
    t.ok(got.priceImpact !== null && got.priceImpact.gt(0), 'priceImpact as the venue states it');
  }
});

t.test('nightly: "the terms are bound to the taker": asked with the taker as recipient, not the quote-time placeholder, and settled to the taker by the sandbox (test/sandbox/venues/nightly-settlement.test.ts pays the recipient)', async (t) => {
  // The adapter's own requests, read on their way to the sandbox's wire.
  const sent: Array<Record<string, unknown>> = [];
  const recording = new NightlyVenue({
    baseUrl: manifest.venues.nightly!,
    timeoutMs: 5000,
    recipient: manifest.nightlyRecipient,
    fetch: async (url, init) => {
      if (url.endsWith('/nswap/quote') && init.body) sent.push(JSON.parse(init.body) as Record<string, unknown>);
      const response = await fetch(url, init);
      return { status: response.status, text: () => response.text() };
    },
  });
  const net = await netOf(recording, CC, USDCX, '100');
  t.equal(sent.at(-1)?.recipient, manifest.nightlyRecipient, 'a quote asks for the placeholder, having no taker');
  await terms(recording, CC, USDCX, '100', floorOf(net, 50), net);
  t.equal(sent.at(-1)?.recipient, TAKER, 'terms ask for the taker');
});

t.test('nightly: "a floor equal to the net asks with tolerance 0; a floor above what Nightly pays is refused, venue_floor_below_service, 502"', async (t) => {
  const net = await netOf(nightly, CC, USDCX, '1000');
  const exact = await terms(nightly, CC, USDCX, '1000', net, net);
  t.equal(toWire(exact.minOut), toWire(net), 'tolerance 0: minOutAmount is toAmount');
  const refused = await nightly.executionTerms({ give: CC, want: USDCX, amount: dec('1000'), recipient: TAKER, floor: net.plus(TENTH_NANO), expectedOut: net }, noDeadline()).catch((err: unknown) => err);
  t.type(refused, VenueFloorBelowService);
  t.match(refused, { code: 'venue_floor_below_service', venueId: 'nightly' });
});

t.test('nightly: "the pool moved against the plan since its quote: Nightly\'s minimum is below the floor, refused, no terms"', async (t) => {
  const net = await netOf(nightly, CC, CBTC, '20000');
  const floor = floorOf(net, 50);
  await moveNightly('CC/CBTC', -100);
  t.ok((await netOf(nightly, CC, CBTC, '20000')).lt(floor), 'the pool now pays less than the floor');
  await t.rejects(terms(nightly, CC, CBTC, '20000', floor, net), { code: 'venue_floor_below_service' });
  const smaller = await netOf(nightly, CC, CBTC, '20000');
  const got = await terms(nightly, CC, CBTC, '20000', floorOf(smaller, 50), smaller);
  t.ok(got.minOut.gte(floorOf(smaller, 50)), 'a plan re-quoted at the new price gets terms');
});

t.test('nightly: "minSwapAmount and maxSwapUsd from /nswap/tokens refuse terms before asking"', async (t) => {
  const ask = (amount: string) => nightly.executionTerms({ give: CC, want: USDCX, amount: dec(amount), recipient: TAKER, floor: dec('1'), expectedOut: dec('2') }, noDeadline());
  t.strictSame(await ask('24.9999999999'), { available: false, rejectionCode: 'below_minimum' });
  t.strictSame(await ask('400000'), { available: false, rejectionCode: 'above_maximum' }, '400,000 CC is about 60,000 USD');
  t.strictSame(await nightly.executionTerms({ give: USDCX, want: CBTC, amount: dec('100'), recipient: TAKER, floor: dec('0.0001'), expectedOut: dec('0.001') }, noDeadline()), { available: false, rejectionCode: 'no_pool' });
});

t.test('tradecraft: "the deposit goes to the pair\'s pool party with the floor as its memo; its minimum is the floor"', async (t) => {
  const quoted = await tradecraft.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline());
  if (!quoted.available) throw new Error('tradecraft did not quote');
  const floor = dec('14.5');
  const got = await terms(tradecraft, CC, USDCX, '100', floor, quoted.gross);
  t.equal(got.target, manifest.poolParties['CC/USDCx']);
  t.equal(got.memo, '14.5');
  t.equal(toWire(got.minOut), '14.5');
  t.equal(got.magicAddress, null);
  t.ok(got.toAmount.gt(floor) && got.toAmount.lte(quoted.gross), `toAmount is the pool's user_gets (${toWire(got.toAmount)})`);
  const unconfigured = new TradecraftVenue({ baseUrl: manifest.venues.tradecraft!, timeoutMs: 5000 });
  t.strictSame(await unconfigured.executionTerms({ give: CC, want: USDCX, amount: dec('100'), recipient: TAKER, floor, expectedOut: quoted.gross }, noDeadline()), { available: false, rejectionCode: 'no_pool' }, 'no pool party configured: not executable');
});
