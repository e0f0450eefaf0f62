// GET /api/liveness and GET /api/status over the background venue probes.
import t from 'tap';
import type { Venue } from '../../../../core/venues/venue.js';
import type { QuoteResponse } from '../../../../core/contract/v1.js';
import { testApp } from '../../../helpers/app.js';

const deadProbe = (venue: Venue): Venue => ({
  id: venue.id,
  settlementMode: venue.settlementMode,
  quote: (r, s) => venue.quote(r, s),
  probe: async () => {
    throw new Error('connection refused');
  },
});

t.test('liveness is unverified before the first probe completes, live after', async (t) => {
  const app = await testApp({ probed: false });
  t.teardown(app.close);
  t.strictSame((await app.server.inject('/api/liveness')).json(), { venue: 'tradecraft', state: 'unverified' });
  t.equal((await app.server.inject('/api/status')).json().state, 'starting');
  await app.core.monitor.probeAll();
  t.strictSame((await app.server.inject('/api/liveness')).json(), { venue: 'tradecraft', state: 'live' });
});

t.test('liveness defaults to the supported venue, takes any integrated venue, and reads a pair without a pool as dead', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject('/api/liveness');
  t.equal(res.headers['cache-control'], 'no-store');
  t.strictSame(res.json(), { venue: 'tradecraft', state: 'live' });
  t.strictSame((await app.server.inject('/api/liveness?venue=temple&from=USDCx&to=CC')).json(), { venue: 'temple', state: 'live' });
  t.strictSame((await app.server.inject('/api/liveness?venue=oneswap&from=CBTC&to=CC')).json(), { venue: 'oneswap', state: 'dead' });
});

t.test('liveness rejects an unknown venue, a lone from or to, and unknown tokens', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const cases: Array<[string, string, RegExp]> = [
    ['venue=nope', 'bad_request', /unknown venue 'nope': integrated venues are cantex, nightly, oneswap, temple, tradecraft/],
    ['to=CC', 'bad_request', /'from' and 'to' must be sent together/],
    ['from=CC&to=XRP', 'unknown_token', /known symbols are CC, USDCx, CBTC/],
    ['from=CC&to=cc', 'bad_request', /must be different/],
    ['venue=', 'bad_request', /query parameter 'venue' must not be empty/],
  ];
  for (const [query, code, error] of cases) {
    const res = await app.server.inject(`/api/liveness?${query}`);
    t.equal(res.statusCode, 400, query);
    t.match(res.json(), { code, error }, query);
  }
});

t.test('a venue whose probe fails reads dead, is not asked for quotes (venue_down), and degrades the status', async (t) => {
  let asked = 0;
  const app = await testApp({
    overrides: (sandbox) => {
      const [first, ...rest] = sandbox.adapters();
      const dead = deadProbe(first!);
      const counting: Venue = { id: dead.id, settlementMode: dead.settlementMode, probe: (s) => dead.probe(s), quote: (r, s) => ((asked += 1), dead.quote(r, s)) };
      return { venues: [counting, ...rest] };
    },
  });
  t.teardown(app.close);
  t.strictSame((await app.server.inject('/api/liveness')).json(), { venue: 'tradecraft', state: 'dead' });
  const quote = (await app.server.inject('/api/quote?from=CC&to=USDCx&amount=100')).json<QuoteResponse>();
  t.equal(quote.venues.find((v) => v.venueId === 'tradecraft')?.rejectionCode, 'venue_down');
  t.equal(asked, 0);
  t.match((await app.server.inject('/api/status')).json(), { state: 'degraded', mode: 'monitor' });
  t.match(app.logs().find((l) => l.msg === 'venue probe failed'), { venueId: 'tradecraft' });
});

t.test('status is down when no venue is live', async (t) => {
  const app = await testApp({ overrides: (sandbox) => ({ venues: sandbox.adapters().map(deadProbe) }) });
  t.teardown(app.close);
  t.equal((await app.server.inject('/api/status')).json().state, 'down');
});

t.test('status: "mode is live when the service can issue execution plans now (plans are served and the supported venue is live)", a component per venue, the shared state, key store, rate limits and ledger, edge-cached about 60 s', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject('/api/status');
  t.equal(res.headers['cache-control'], 'public, s-maxage=60');
  t.strictSame(res.json(), {
    mode: 'live',
    state: 'ok',
    components: [
      { component: 'venue:tradecraft', state: 'live' },
      { component: 'venue:cantex', state: 'live' },
      { component: 'venue:oneswap', state: 'live' },
      { component: 'venue:nightly', state: 'live' },
      { component: 'venue:temple', state: 'live' },
      { component: 'plans', state: 'served' },
      { component: 'shared-state', state: 'in-process' },
      { component: 'key-store', state: 'ok' },
      { component: 'rate-limits', state: 'per-instance' },
      { component: 'ledger', state: 'ok' },
    ],
  });
});

t.test('"GET /api/status?_=123 (a cache-buster)": the status, which documents only 200, ignores unknown query parameters', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const plain = await app.server.inject('/api/status');
  for (const query of ['_=123', '_=123&t=1', 'from=CC&nonsense', 'a=1&a=2']) {
    const res = await app.server.inject(`/api/status?${query}`);
    t.equal(res.statusCode, 200, query);
    t.strictSame(res.json(), plain.json(), `${query}: the same summary`);
    t.equal(res.headers['cache-control'], 'public, s-maxage=60', query);
  }
  t.equal((await app.server.inject('/api/liveness?_=123')).statusCode, 400, 'an operation that documents a 400 still refuses an unknown parameter');
});
