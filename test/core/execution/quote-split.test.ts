// The v2 quote's split (core/execution/split.ts) on the sandbox market, as a partner reads it from
// GET /api/v2/quote: shown where it nets more than any executable venue alone by more than the
// threshold, its figures recomputing from one another, each leg within its venue's own quote for
// that leg, byte-identical for every keyless caller; absent where one venue is best.
import t from 'tap';
import { Decimal } from '../../../core/decimal.js';
import { SPLIT_MIN_EDGE_BPS } from '../../../core/routing/split.js';
import type * as V2 from '../../../core/contract/v2.js';
import { testApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';

const app = await testApp();
t.teardown(app.close);

const quote = async (amount: string, headers: Record<string, string> = {}) => {
  const response = await app.server.inject({ url: `/api/v2/quote?from=CC&to=USDCx&amount=${amount}`, headers });
  t.equal(response.statusCode, 200, `the quote of ${amount} CC`);
  return { body: JSON.parse(response.body) as V2.QuoteResponse, text: response.body };
};

t.test('at 1,000,000 CC the quote shows a split across the executable venues that nets more than any one of them alone, by more than the threshold; its figures recompute', async (t) => {
  const { body } = await quote('1000000');
  const split = body.split;
  t.ok(split, 'a split is shown');
  const executable = body.venues.filter((v) => v.available && v.execution.executable);
  for (const venue of executable) t.ok(new Decimal(split!.net).gt(venue.net!), `it nets more than ${venue.venueId} alone (${venue.net})`);
  t.ok(split!.legs.length >= 2);
  for (const leg of split!.legs) t.ok(executable.some((v) => v.venueId === leg.venueId), `${leg.venueId} is an executable venue that quoted the whole amount`);
  t.strictSame(split!.legs.map((l) => l.venueId), [...split!.legs.map((l) => l.venueId)].sort(), 'legs by venueId');
  t.equal(split!.legs.reduce((sum, l) => sum.plus(l.amount), new Decimal(0)).toFixed(), body.amount, 'the legs\' amounts sum to the amount');
  t.equal(split!.legs.reduce((sum, l) => sum.plus(l.net), new Decimal(0)).toFixed(), new Decimal(split!.net).toFixed(), 'their nets to the net');
  const best = new Decimal(body.bestExecutable!.net);
  t.equal(split!.edgeBps, new Decimal(split!.net).minus(best).times(10_000).dividedToIntegerBy(best).toNumber(), 'edgeBps = floor(10000 x (net - bestExecutable.net) / bestExecutable.net)');
  t.ok(split!.edgeBps > SPLIT_MIN_EDGE_BPS);
});

t.test("each leg's net is never above what its venue itself quotes for the leg's amount", async (t) => {
  const { body } = await quote('1000000');
  for (const leg of body.split!.legs) {
    const { body: alone } = await quote(leg.amount);
    const venue = alone.venues.find((v) => v.venueId === leg.venueId)!;
    t.ok(venue.available, `${leg.venueId} quotes its leg of ${leg.amount}`);
    const own = new Decimal(venue.net!);
    t.ok(new Decimal(leg.net).lte(own), `${leg.venueId}: ${leg.net} <= ${venue.net}`);
    t.ok(own.minus(leg.net).lte(own.times('1e-9').plus('4e-10')), `and within 1e-9 of it (${own.minus(leg.net).toFixed()})`);
  }
});

t.test('where one venue alone is best (100 CC), no split is shown', async (t) => {
  const { body } = await quote('100');
  t.notOk('split' in body, 'no split');
});

t.test('a keyless quote with its split is byte-identical for every caller, and a keyed one carries the same split', async (t) => {
  const first = await quote('1000000', { 'x-forwarded-for': '203.0.113.7' });
  const second = await quote('1000000', { 'x-forwarded-for': '203.0.113.8' });
  t.equal(second.text, first.text, 'the same bytes');
  const { key } = await issueKey(app.core.keyStore);
  const keyed = await quote('1000000', { 'x-api-key': key });
  t.strictSame(keyed.body.split, first.body.split, 'the keyed quote\'s split: the venues\' nets are the same, fee lines aside');
});
