// core/execution/: which venues execute and how each settles (one place), the v2 quote made from
// v1's, and the instruments' registries.
import t from 'tap';
import { DomainError } from '../../../core/errors.js';
import { EXECUTABLE_VENUE_IDS, requireExecutable, SETTLEMENTS, V1_EXECUTION_VENUE_ID, venueExecution } from '../../../core/execution/venues.js';
import { V2QuoteBodies, V2Quotes, withExecution } from '../../../core/execution/quote.js';
import { InstrumentRegistries } from '../../../core/execution/tokens.js';
import { dec } from '../../../core/decimal.js';
import { DEFAULT_FEE_SCHEMAS, FeeSchemas } from '../../../core/quotes/fee-schemas.js';
import { parseQuoteParams } from '../../../core/quotes/params.js';
import { PartnerQuotes } from '../../../core/quotes/partner-quotes.js';
import { QuoteService } from '../../../core/quotes/service.js';
import { CC, USDCX } from '../../../core/tokens.js';
import type { Venue, VenueQuote } from '../../../core/venues/venue.js';
import type { QuoteResponse } from '../../../core/contract/v1.js';

const venue = (venueId: string, net: string | null) => ({
  venueId,
  settlementMode: 'managed-deposit' as const,
  available: net !== null,
  gross: net,
  net,
  fee: null,
  feeBps: net === null ? null : 0,
  rejectionCode: net === null ? ('timeout' as const) : null,
});

const quote = (venues: ReturnType<typeof venue>[]): QuoteResponse => ({
  pair: { give: 'Amulet', want: 'USDCx' },
  amount: '100',
  asOf: '2026-11-22T12:00:00.000Z',
  venues,
  best: venues[0]?.net ? { venueId: venues[0].venueId, gross: venues[0].gross!, net: venues[0].net } : null,
  edgeBps: null,
});

t.test('each venue\'s execution: executable exactly when it has no reason; a venue this build does not know is not executable', async (t) => {
  for (const id of ['tradecraft', 'nightly', 'oneswap', 'cantex', 'temple', 'elsewhere']) {
    const execution = venueExecution(id);
    t.equal(execution.executable, execution.reason === null, id);
    if (id !== 'elsewhere') t.ok(SETTLEMENTS.includes(execution.settlement!), `${id} settles one known way`);
  }
  t.strictSame(venueExecution('elsewhere'), { executable: false, settlement: null, reason: 'venue_execution_not_served' });
  t.strictSame(venueExecution('toString'), venueExecution('elsewhere'), 'no inherited name is a venue');
  t.strictSame(EXECUTABLE_VENUE_IDS, ['tradecraft', 'nightly', 'oneswap']);
  t.ok(EXECUTABLE_VENUE_IDS.includes(V1_EXECUTION_VENUE_ID));
  t.equal(requireExecutable('tradecraft').settlement, 'memo-floor');
  t.equal(requireExecutable('nightly').settlement, 'swap-address-memo');
  t.equal(requireExecutable('oneswap').settlement, 'intent-deposit-reference');
  t.throws(() => requireExecutable('cantex'), new DomainError('venue_not_executable', 'venue cantex is not executable by a wallet through this service: venue_requires_account (see its execution block in the quote)'));
});

t.test('the v2 quote: v1\'s, each venue with its execution block; bestExecutable the first available executable venue, null without one', async (t) => {
  const v1 = quote([venue('temple', '15'), venue('tradecraft', '14.9'), venue('cantex', '14.8'), venue('nightly', null)]);
  const impacts = { temple: '0', tradecraft: '0.0000049851', cantex: null, nightly: '0.5' };
  const v2 = withExecution(v1, impacts);
  t.strictSame(v2.best, v1.best);
  t.strictSame(v2.bestExecutable, { venueId: 'tradecraft', gross: '14.9', net: '14.9' });
  t.strictSame(v2.venues.map((v) => v.execution.reason), ['venue_requires_credential', null, 'venue_requires_account', null]);
  t.strictSame(v2.venues.map((v) => v.priceImpact), ['0', '0.0000049851', null, null], 'each venue\'s impact; none for an unavailable venue, whatever is recorded');
  t.notOk('appliedSchema' in v2, 'keyless: no applied schema');
  t.equal(withExecution(quote([venue('temple', '15'), venue('tradecraft', null)]), {}).bestExecutable, null, 'the executable venue not quoting: none executable now');
  t.strictSame(withExecution(quote([venue('temple', '15'), venue('nightly', '14.95'), venue('tradecraft', '14.9')]), {}).bestExecutable, { venueId: 'nightly', gross: '14.95', net: '14.95' }, 'Nightly ahead of tradecraft: it is the best executable');
  t.strictSame(withExecution({ ...v1, appliedSchema: { schemaId: 's', overrideId: null } }, impacts).appliedSchema, { schemaId: 's', overrideId: null }, 'keyed: kept');

  const bodies = new V2QuoteBodies(2);
  const text = JSON.stringify(v1);
  const impactsText = JSON.stringify(impacts);
  const first = bodies.body(text, impactsText);
  t.strictSame(JSON.parse(first), v2);
  t.equal(bodies.body(text, impactsText), first, 'the same v1 text and impacts, the same v2 text');
  t.equal(bodies.body(text, JSON.stringify(impacts)), first, 'the impacts compared by their text, not their string object');
  t.strictSame(JSON.parse(bodies.body(text, '{"temple":"0.1"}')).venues[0].priceImpact, '0.1', 'the same v1 text with other impacts: not the other v2 text');
  bodies.body(JSON.stringify({ ...v1, amount: '1' }), impactsText);
  bodies.body(JSON.stringify({ ...v1, amount: '2' }), impactsText);
  t.equal(bodies.body(text, impactsText), first, 'recomputed alike once dropped at its bound');
});

/** v1's keyless body for FIXED_VENUES, as the service answered it before price impacts existed. */
const V1_BODY_BEFORE_IMPACTS =
  '{"pair":{"give":"Amulet","want":"USDCx"},"amount":"100","asOf":"2026-11-22T12:00:00.000Z","venues":[' +
  '{"venueId":"temple","settlementMode":"managed-deposit","available":true,"gross":"15","net":"14.9985","fee":{"amount":"0.01","asset":"Amulet","appliedTo":"deducted_from_give"},"feeBps":1,"rejectionCode":null},' +
  '{"venueId":"tradecraft","settlementMode":"managed-deposit","available":true,"gross":"14.9999252252","net":"14.9549254495","fee":{"amount":"0.3","asset":"Amulet","appliedTo":"deducted_from_give"},"feeBps":30,"rejectionCode":null},' +
  '{"venueId":"nightly","settlementMode":"managed-deposit","available":true,"gross":"14.9449567808","net":"14.9449567808","fee":null,"feeBps":0,"rejectionCode":null},' +
  '{"venueId":"cantex","settlementMode":"managed-deposit","available":false,"gross":null,"net":null,"fee":null,"feeBps":null,"rejectionCode":"no_pool"}],' +
  '"best":{"venueId":"temple","gross":"15","net":"14.9985"},"edgeBps":29}';

const fixedVenue = (id: string, answer: VenueQuote): Venue & { calls: number } => {
  const v = { id, settlementMode: 'managed-deposit' as const, calls: 0, quote: async () => (v.calls++, answer), probe: async () => ({ live: true, pairs: [] }) };
  return v;
};

const FIXED_VENUES = () => [
  fixedVenue('temple', { available: true, gross: dec('15'), fee: { amount: dec('0.01'), asset: CC, appliedTo: 'deducted_from_give' }, priceImpact: dec('0') }),
  fixedVenue('tradecraft', { available: true, gross: dec('14.9999252252'), fee: { amount: dec('0.3'), asset: CC, appliedTo: 'deducted_from_give' }, priceImpact: dec('0.00000498501') }),
  fixedVenue('nightly', { available: true, gross: dec('14.9449567808'), fee: null, priceImpact: null }),
  fixedVenue('cantex', { available: false, rejectionCode: 'no_pool' }),
];

t.test('"v1\'s body does not change by a byte": the price impacts travel beside it through the cache, into the v2 body (keyless, byte-identical and cached; keyed)', async (t) => {
  const venues = FIXED_VENUES();
  const quotes = new QuoteService({ venues, venueTimeoutMs: 1000, cacheTtlMs: 10_000, cacheMaxEntries: 10, isVenueDown: () => false, onVenueError: () => {}, now: () => new Date('2026-11-22T12:00:00.000Z') });
  const v2Quotes = new V2Quotes(quotes, new PartnerQuotes(quotes, new FeeSchemas(DEFAULT_FEE_SCHEMAS), false));
  const params = parseQuoteParams({ from: 'CC', to: 'USDCx', amount: '100' });

  const v1 = await quotes.baseQuote(params);
  t.equal(v1.json, V1_BODY_BEFORE_IMPACTS, 'v1: byte for byte the body before impacts');
  t.notMatch(v1.json, /priceImpact/);

  const v2 = await v2Quotes.baseQuote(params);
  t.ok(v2.cached, 'v2 is the cached v1 quote');
  const body = JSON.parse(v2.json) as { venues: Array<{ venueId: string; priceImpact: string | null }> };
  t.strictSame(Object.fromEntries(body.venues.map((v) => [v.venueId, v.priceImpact])), { temple: '0', tradecraft: '0.0000049851', nightly: null, cantex: null }, 'each venue\'s impact, rounded up to 10 digits');
  t.equal(v2Quotes.ready(params)?.json, v2.json, 'keyless v2: byte-identical again, from the cache');
  t.ok(venues.every((v) => v.calls === 1), 'one computation for v1 and v2');

  const keyed = await v2Quotes.partner(params, { id: 'key_1', name: 'p', schemaId: 'partner-default', origins: null });
  t.strictSame(keyed.body.venues.map((v) => v.priceImpact), ['0', '0.0000049851', null, null], 'keyed v2: the same impacts');
  t.ok(keyed.body.venues.every((v) => !v.available || v.clientFees), 'with its fee lines');
});

t.test('InstrumentRegistries: an instrument\'s admin and its registry, null where not configured', async (t) => {
  const admin = `dso::1220${'a'.repeat(64)}`;
  const registries = new InstrumentRegistries({ instrumentAdmins: { Amulet: admin, USDCx: `circle::1220${'b'.repeat(64)}`, CBTC: `bitsafe::1220${'c'.repeat(64)}` }, registries: { [admin]: 'https://registry.example' } });
  t.strictSame(registries.of(CC), { instrument: 'Amulet', admin, registryUrl: 'https://registry.example' });
  t.equal(registries.of(USDCX).registryUrl, null, 'an admin without a registry');
  t.strictSame(new InstrumentRegistries({ instrumentAdmins: null, registries: {} }).of(CC), { instrument: 'Amulet', admin: null, registryUrl: null });
});
