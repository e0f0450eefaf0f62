// core/execution/: which venues execute and how each settles (one place), the v2 quote made from
// v1's, and the instruments' registries.
import t from 'tap';
import { DomainError } from '../../../core/errors.js';
import { EXECUTABLE_VENUE_IDS, requireExecutable, SETTLEMENTS, V1_EXECUTION_VENUE_ID, venueExecution } from '../../../core/execution/venues.js';
import { V2QuoteBodies, withExecution } from '../../../core/execution/quote.js';
import { InstrumentRegistries } from '../../../core/execution/tokens.js';
import { CC, USDCX } from '../../../core/tokens.js';
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
  t.strictSame(EXECUTABLE_VENUE_IDS, ['tradecraft', 'nightly']);
  t.ok(EXECUTABLE_VENUE_IDS.includes(V1_EXECUTION_VENUE_ID));
  t.equal(requireExecutable('tradecraft').settlement, 'memo-floor');
  t.equal(requireExecutable('nightly').settlement, 'swap-address-memo');
  t.throws(() => requireExecutable('cantex'), new DomainError('venue_not_executable', 'venue cantex is not executable by a wallet through this service: venue_requires_account (see its execution block in the quote)'));
});

t.test('the v2 quote: v1\'s, each venue with its execution block; bestExecutable the first available executable venue, null without one', async (t) => {
  const v1 = quote([venue('temple', '15'), venue('tradecraft', '14.9'), venue('cantex', '14.8'), venue('nightly', null)]);
  const v2 = withExecution(v1);
  t.strictSame(v2.best, v1.best);
  t.strictSame(v2.bestExecutable, { venueId: 'tradecraft', gross: '14.9', net: '14.9' });
  t.strictSame(v2.venues.map((v) => v.execution.reason), ['venue_requires_credential', null, 'venue_requires_account', null]);
  t.notOk('appliedSchema' in v2, 'keyless: no applied schema');
  t.equal(withExecution(quote([venue('temple', '15'), venue('tradecraft', null)])).bestExecutable, null, 'the executable venue not quoting: none executable now');
  t.strictSame(withExecution(quote([venue('temple', '15'), venue('nightly', '14.95'), venue('tradecraft', '14.9')])).bestExecutable, { venueId: 'nightly', gross: '14.95', net: '14.95' }, 'Nightly ahead of tradecraft: it is the best executable');
  t.strictSame(withExecution({ ...v1, appliedSchema: { schemaId: 's', overrideId: null } }).appliedSchema, { schemaId: 's', overrideId: null }, 'keyed: kept');

  const bodies = new V2QuoteBodies(2);
  const text = JSON.stringify(v1);
  const first = bodies.body(text);
  t.strictSame(JSON.parse(first), v2);
  t.equal(bodies.body(text), first, 'the same v1 text, the same v2 text');
  bodies.body(JSON.stringify({ ...v1, amount: '1' }));
  bodies.body(JSON.stringify({ ...v1, amount: '2' }));
  t.equal(bodies.body(text), first, 'recomputed alike once dropped at its bound');
});

t.test('InstrumentRegistries: an instrument\'s admin and its registry, null where not configured', async (t) => {
  const admin = `dso::1220${'a'.repeat(64)}`;
  const registries = new InstrumentRegistries({ instrumentAdmins: { Amulet: admin, USDCx: `circle::1220${'b'.repeat(64)}`, CBTC: `bitsafe::1220${'c'.repeat(64)}` }, registries: { [admin]: 'https://registry.example' } });
  t.strictSame(registries.of(CC), { instrument: 'Amulet', admin, registryUrl: 'https://registry.example' });
  t.equal(registries.of(USDCX).registryUrl, null, 'an admin without a registry');
  t.strictSame(new InstrumentRegistries({ instrumentAdmins: null, registries: {} }).of(CC), { instrument: 'Amulet', admin: null, registryUrl: null });
});
