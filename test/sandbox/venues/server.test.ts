// The sandbox venues on loopback (sandbox/venues/venue-server.ts): "the sandbox serves each venue's
// documented wire shape on loopback, backed by the sandbox market, and the embedded default
// routes every quote through the real adapters". Each venue's wire is tested on its own in
// test/sandbox/venues/<venue>.test.ts; this is the server, and the wiring.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import { startSandboxVenueServer } from '../../../sandbox/venues/venue-server.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { CantexVenue } from '../../../core/venues/cantex.js';
import { NightlyVenue } from '../../../core/venues/nightly.js';
import { OneSwapVenue } from '../../../core/venues/oneswap.js';
import { TempleVenue } from '../../../core/venues/temple.js';
import { TradecraftVenue } from '../../../core/venues/tradecraft.js';
import type { QuoteResponse } from '../../../core/contract/v1.js';
import { readManifest } from '../../../core/sandbox-link/manifest.js';
import { testApp } from '../../helpers/app.js';
import { testSandbox } from '../../helpers/sandbox.js';

const deadline = { signal: new AbortController().signal, endsAt: Number.POSITIVE_INFINITY };

t.test('every sandbox venue answers its documented API over real HTTP on loopback, each under its own prefix', async (t) => {
  const server = await startSandboxVenueServer(createSandboxVenues(), { host: '127.0.0.1', port: 0 });
  t.teardown(server.close);
  t.match(server.url, /^http:\/\/127\.0\.0\.1:[0-9]+$/);
  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url + path, { headers });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  t.match(await get('/tradecraft/v1/quoteForFixedInput/CC/USDCx?givingAmount=100'), { status: 200, body: { user_gets: Number } });
  t.match(await get('/oneswap/api/v1/quote?from=Amulet&to=USDCx&amount=100', { 'x-api-key': 'sandbox-venue-key' }), { status: 200, body: { outputAmount: String } });
  t.match(await get('/oneswap/api/v1/quote?from=Amulet&to=USDCx&amount=100'), { status: 401 }, 'a keyed venue refuses a request without its key');
  t.match(await get('/temple/api/v1/market/orderbook?symbol=Amulet/USDCx&levels=1', { 'x-api-key': 'sandbox-venue-key' }), { status: 200, body: { bids: [{ price: '0.15' }] } });
  t.match(await get('/nightly/nswap/tokens'), { status: 200, body: { tokens: Array } });
  t.match(await get('/elsewhere/x'), { status: 404, body: { error: String } }, 'an unknown prefix is a JSON 404');
  t.match(await get('/tradecraftx/v1/pools'), { status: 404 }, 'a prefix matches whole path segments only');
  const big = await fetch(`${server.url}/cantex/v2/pools/quote`, { method: 'POST', body: 'x'.repeat(20_000), headers: { authorization: 'Bearer sandbox-venue-key' } });
  t.equal(big.status, 413, 'a body over 16 KiB is refused');
});

t.test('the service\'s adapters, pointed at the sandbox by its manifest, are the real ones, with the sandbox\'s credentials, and quote the market', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const venues = sandbox.adapters();
  t.strictSame(
    venues.map((v) => v.constructor),
    [TradecraftVenue, CantexVenue, OneSwapVenue, NightlyVenue, TempleVenue],
  );
  for (const venue of venues) {
    t.match(await venue.probe(deadline.signal), { live: true }, `${venue.id} probes live`);
    const quote = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, deadline);
    t.equal(quote.available, true, `${venue.id} quotes 100 CC for USDCx through its key and wire`);
  }
  // The server answers from the market's pools as they are: moving one moves the next quote.
  const tradecraft = venues[0]!;
  const before = await tradecraft.quote({ give: CC, want: USDCX, amount: dec('100') }, deadline);
  const pricing = sandbox.market[0]!.spec.pricing;
  if (pricing.kind !== 'amm') throw new Error('tradecraft is an AMM');
  pricing.pools[0]!.quoteReserve = pricing.pools[0]!.quoteReserve.times(dec('0.97'));
  const after = await tradecraft.quote({ give: CC, want: USDCX, amount: dec('100') }, deadline);
  t.ok(before.available && after.available && after.gross.lt(before.gross), 'a 3 % smaller USDCx reserve pays less');
});

t.test('GET /sandbox/v1/manifest: where each venue and the ledger listen, the parties and keys, never the ledger\'s token; the service reads it as it is', async (t) => {
  const sandbox = await testSandbox({ ledgerToken: 'hunter2-ledger' });
  t.teardown(sandbox.close);
  const res = await fetch(`${sandbox.manifest.sandbox}/sandbox/v1/manifest`);
  t.equal(res.status, 200);
  const text = await res.text();
  t.notMatch(text, /hunter2/, 'the token is only in the announced line and the owner-only file');
  t.strictSame(JSON.parse(text), sandbox.manifest);
  t.strictSame(readManifest(JSON.parse(text)), sandbox.manifest, 'the service\'s reader takes the manifest whole');
  t.match(sandbox.manifest, { venues: { tradecraft: `${sandbox.manifest.sandbox}/tradecraft/v1`, temple: `${sandbox.manifest.sandbox}/temple` }, venueKeys: { cantex: String, oneswap: String, temple: String } });
  t.equal((await fetch(`${sandbox.manifest.sandbox}/sandbox/v1/manifest`, { method: 'POST' })).status, 404, 'GET only');
});

t.test('the service\'s reader refuses a manifest it cannot use, naming the field', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const good = JSON.parse(JSON.stringify(sandbox.manifest)) as Record<string, Record<string, unknown>>;
  const cases: Array<[(m: Record<string, Record<string, unknown>>) => void, RegExp]> = [
    [(m) => void (m.venues!.cantex = 'ftp://x'), /venues\.cantex is not an http\(s\) URL/],
    [(m) => void (m.poolParties = { 'USDCx/CBTC': m.poolParties!['CC/USDCx'] }), /poolParties names a pair without a CC leg/],
    [(m) => void (m.poolParties = {}), /poolParties names no pool/],
    [(m) => void (m.instrumentAdmins!.CBTC = 'nobody'), /instrumentAdmins\.CBTC is not a ledger party id/],
    [(m) => void (m.venueKeys!.temple = 'has space'), /venueKeys\.temple is not printable ASCII/],
    [(m) => void (m.venues!.temple = 'http://temple.example/temple'), /venues\.temple is plain http off this machine/],
    [(m) => void (m.registries = { nobody: 'http://127.0.0.1:1/amulet' }), /registries is not a ledger party id/],
    [(m) => void (m.registries![Object.keys(m.registries!)[0]!] = 'http://registry.example/amulet'), /registries\.[^ ]+ is plain http off this machine/],
    [(m) => void ((m as Record<string, unknown>).batchingUtility = 'yes'), /batchingUtility is not true or false/],
  ];
  for (const [spoil, message] of cases) {
    const copy = JSON.parse(JSON.stringify(good)) as Record<string, Record<string, unknown>>;
    spoil(copy);
    t.throws(() => readManifest(copy), { name: 'ManifestError', message }, String(message));
  }
  const older = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
  delete older.batchingUtility;
  t.equal(good.batchingUtility as unknown, true, 'this sandbox\'s participant has the package');
  t.equal(readManifest(older).batchingUtility, false, 'a manifest written by a sandbox older than the batching utility (no batchingUtility field) is read, its participant without the package');
});

t.test('the embedded default: "routes every quote through the real adapters", so make run runs the code a real deployment runs', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  t.equal(app.config.liveVenues.venues.oneswap.baseUrl, app.sandbox!.manifest.venues.oneswap, 'the service is configured with the sandbox\'s venues');
  const body = (await app.server.inject('/api/quote?from=CC&to=USDCx&amount=100')).json<QuoteResponse>();
  t.strictSame(body.venues.map((v) => v.venueId).sort(), ['cantex', 'nightly', 'oneswap', 'temple', 'tradecraft']);
  t.ok(body.venues.every((v) => v.available), 'every venue quotes through its adapter');
});

t.test('GET / on the sandbox\'s URL: an index a person can read, naming where each venue and the ledger answer and where the manifest is', async (t) => {
  const sandbox = await testSandbox({ ledgerToken: 'hunter2-ledger' });
  t.teardown(sandbox.close);
  const res = await fetch(`${sandbox.manifest.sandbox}/`);
  t.equal(res.status, 200);
  const text = await res.text();
  t.notMatch(text, /hunter2/, 'never the ledger\'s token');
  t.strictSame(JSON.parse(text), {
    venues: sandbox.manifest.venues,
    ledger: sandbox.manifest.ledger,
    manifest: `${sandbox.manifest.sandbox}/sandbox/v1/manifest`,
  });
  t.equal((await fetch(`${sandbox.manifest.sandbox}/`, { method: 'POST' })).status, 404, 'GET only');
});
