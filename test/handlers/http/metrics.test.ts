// The operators' metrics: Prometheus text on a listener of its own (METRICS_PORT), read
// here as a scraper reads it. Each counter moves when its event happens, and no label holds a
// party, a key or a URL.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import type { InjectOptions } from 'fastify';
import { KeyStoreUnavailable, newKey, type KeyStore } from '../../../core/keys/partner-keys.js';
import { assemblePlan } from '../../../core/plans/assembly.js';
import { IdempotencyRecords } from '../../../core/plans/idempotency.js';
import { parsePlanRequest } from '../../../core/plans/params.js';
import { PlanService } from '../../../core/plans/service.js';
import { loadFeeSchemas } from '../../../core/quotes/fee-schemas.js';
import { QuoteService } from '../../../core/quotes/service.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { loadConfig } from '../../../core/config.js';
import { MetricsListener } from '../../../handlers/http/metrics-listener.js';
import { PrometheusMetrics } from '../../../handlers/http/prometheus-metrics.js';
import { SANDBOX_POOL_PARTIES } from '../../../sandbox/venues/market.js';
import { listen, testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import type { PlanStatus } from '../../../core/contract/v2.js';
import { fund, testSandbox } from '../../helpers/sandbox.js';

const COMPONENTS = ['plans', 'shared-state', 'key-store', 'rate-limits', 'ledger'];
const COMPONENT_STATES = ['live', 'dead', 'unverified', 'served', 'not_served', 'in-process', 'shared', 'unreachable', 'ok', 'unreadable', 'per-instance'];
const TAKER = `alice::1220${'b'.repeat(64)}`;
const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';

type Labels = Record<string, string>;
interface Sample {
  readonly name: string;
  readonly labels: Labels;
  readonly value: number;
}

/** Every sample of a Prometheus text exposition. */
function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels: Labels = {};
      for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[name!] = value!;
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The sample of `name` with exactly these labels (among others it may carry, none), or 0 when it is not there yet. */
function valueOf(all: readonly Sample[], name: string, labels: Labels = {}): number {
  const found = all.find((s) => s.name === name && Object.keys(labels).length === Object.keys(s.labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return found?.value ?? 0;
}

interface Scraped {
  readonly app: TestApp;
  readonly url: string;
  scrape(): Promise<Sample[]>;
  text(): Promise<string>;
}

/** An app with its metrics listener on an ephemeral port, closed with the test. */
async function withMetrics(t: { teardown(fn: () => unknown): void }, options: TestAppOptions = {}): Promise<Scraped> {
  const app = await testApp({ ...options, env: { METRICS_PORT: '0', ...options.env } });
  t.teardown(app.close);
  const url = await app.metrics!.listen('127.0.0.1', 0);
  const text = async () => {
    const res = await fetch(url);
    if (res.status !== 200) throw new Error(`metrics answered ${res.status}`);
    return res.text();
  };
  return { app, url, text, scrape: async () => samples(await text()) };
}

const inject = (app: TestApp, url: string, headers: Record<string, string> = {}) => app.server.inject({ url, headers });
const plan = (app: TestApp, payload: object, headers: Record<string, string> = {}) => app.server.inject({ method: 'POST', url: '/api/app/plan', payload, headers });

t.test('"Prometheus text on a listener of its own (METRICS_PORT), never on the public port"', async (t) => {
  const { app, url } = await withMetrics(t);
  const res = await fetch(url);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  t.match(await res.text(), /^# HELP bestex_http_request_duration_seconds /m);
  t.not(new URL(url).port, new URL(await listen(app.server)).port, 'another port than the public one');
  t.equal((await inject(app, '/metrics')).statusCode, 404, 'the public port has no /metrics');
  t.equal((await fetch(new URL('/api/quote', url))).status, 404, 'the metrics port serves nothing else');
  t.equal((await fetch(url, { method: 'POST' })).status, 405);

  const off = await testApp();
  t.teardown(off.close);
  t.equal(off.metrics, null, 'METRICS_PORT unset: no listener');
});

t.test('"request count and latency histograms per operationId, API version and status"', async (t) => {
  const { app, scrape } = await withMetrics(t);
  const before = await scrape();
  const count = (all: Sample[], operation: string, status: string, version = '1') => valueOf(all, 'bestex_http_request_duration_seconds_count', { operation, version, status });
  for (let i = 0; i < 3; i++) t.equal((await inject(app, QUOTE)).statusCode, 200);
  t.equal((await inject(app, '/api/quote?from=CC&to=USDCx&amount=-1')).statusCode, 400);
  t.equal((await inject(app, '/api/status')).statusCode, 200);
  t.equal((await inject(app, '/nowhere')).statusCode, 404);
  const notJson = await app.server.inject({ method: 'POST', url: '/api/app/plan', payload: '{', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.statusCode, 400);
  const after = await scrape();
  t.equal(count(after, 'getQuote', '200') - count(before, 'getQuote', '200'), 3);
  t.equal(count(after, 'getQuote', '400') - count(before, 'getQuote', '400'), 1);
  t.equal(count(after, 'getStatus', '200') - count(before, 'getStatus', '200'), 1);
  t.equal(count(after, 'none', '404') - count(before, 'none', '404'), 1, 'a request no operation answered');
  t.equal(count(after, 'createAppPlan', '400') - count(before, 'createAppPlan', '400'), 1, 'a body refused before the handler ran is still its operation\'s');
  t.equal(valueOf(after, 'bestex_http_request_duration_seconds_bucket', { operation: 'getQuote', version: '1', status: '200', le: '+Inf' }), 3, 'a latency histogram');
  t.ok(valueOf(after, 'bestex_http_request_duration_seconds_sum', { operation: 'getQuote', version: '1', status: '200' }) > 0, 'its latencies are summed');
  const buckets = after.filter((s) => s.name === 'bestex_http_request_duration_seconds_bucket' && s.labels.operation === 'getQuote' && s.labels.version === '1' && s.labels.status === '200');
  t.ok(buckets.length > 2 && buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1]!.value), 'cumulative buckets, +Inf last');
  t.equal(buckets.at(-1)!.labels.le, '+Inf');

  // Both versions name their operations alike: the version tells them apart.
  t.equal((await inject(app, QUOTE.replace('/api/', '/api/v2/'))).statusCode, 200);
  t.equal((await inject(app, '/api/v2/nowhere')).statusCode, 404);
  const v2 = await scrape();
  t.equal(count(v2, 'getQuote', '200', '2') - count(after, 'getQuote', '200', '2'), 1, 'a v2 quote: version 2');
  t.equal(count(v2, 'getQuote', '200') - count(after, 'getQuote', '200'), 0, 'not counted as v1\'s');
  t.equal(count(v2, 'none', '404', '2') - count(after, 'none', '404', '2'), 1, 'a 404 under /api/v2: the version of its path');
  t.ok(v2.filter((s) => s.name === 'bestex_http_request_duration_seconds_count').every((s) => s.labels.version === '1' || s.labels.version === '2'), 'version is 1 or 2, nothing else');
});

t.test('"quote cache hits and misses": the first request for a combination is a miss, the next ones hits', async (t) => {
  const { app, scrape } = await withMetrics(t);
  await inject(app, QUOTE);
  let all = await scrape();
  t.equal(valueOf(all, 'bestex_quote_cache_total', { result: 'miss' }), 1);
  t.equal(valueOf(all, 'bestex_quote_cache_total', { result: 'hit' }), 0);
  await inject(app, QUOTE);
  await inject(app, QUOTE);
  all = await scrape();
  t.equal(valueOf(all, 'bestex_quote_cache_total', { result: 'miss' }), 1);
  t.equal(valueOf(all, 'bestex_quote_cache_total', { result: 'hit' }), 2);
});

t.test('"per-venue quote latency and results by rejectionCode": each venue\'s part in a computed quote is counted as its entry reads', async (t) => {
  const { app, scrape } = await withMetrics(t);
  const res = await inject(app, '/api/quote?from=CC&to=CBTC&amount=100');
  const venues = res.json<{ venues: Array<{ venueId: string; available: boolean; rejectionCode: string | null }> }>().venues;
  t.ok(venues.some((v) => v.available) && venues.some((v) => !v.available), 'the quote has available and rejected venues');
  const all = await scrape();
  for (const venue of venues) {
    const result = venue.rejectionCode ?? 'available';
    t.equal(valueOf(all, 'bestex_venue_quotes_total', { venue: venue.venueId, result }), 1, `${venue.venueId}: ${result}`);
    t.equal(valueOf(all, 'bestex_venue_quote_duration_seconds_count', { venue: venue.venueId }), 1, `${venue.venueId}: its answer time`);
  }
  await inject(app, '/api/quote?from=CC&to=CBTC&amount=100');
  t.equal(valueOf(await scrape(), 'bestex_venue_quote_duration_seconds_count', { venue: venues[0]!.venueId }), 1, 'a cached quote asks no venue');
});

t.test('"429s by which limit refused them": the keyless window, the keyed window, the fresh-quote budget', async (t) => {
  const { app, scrape } = await withMetrics(t, { env: { RATE_LIMIT_KEYLESS_PER_MINUTE: '3', RATE_LIMIT_KEYED_PER_MINUTE: '1', RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '1' } });
  const limited = async (limit: string) => valueOf(await scrape(), 'bestex_rate_limited_total', { limit });
  t.equal((await inject(app, '/api/quote?from=CC&to=USDCx&amount=1')).statusCode, 200);
  t.equal((await inject(app, '/api/quote?from=CC&to=USDCx&amount=2')).statusCode, 429, 'a second fresh quote');
  t.equal(await limited('fresh-quote-budget'), 1);
  t.equal(await limited('keyless-window'), 0);
  t.equal((await inject(app, '/api/quote?from=CC&to=USDCx&amount=1')).statusCode, 200, 'the third keyless request, a cached quote');
  t.equal((await inject(app, '/api/quote?from=CC&to=USDCx&amount=1')).statusCode, 429, 'the fourth keyless request');
  t.equal(await limited('keyless-window'), 1);
  const { key } = await issueKey(app.core.keyStore);
  t.equal((await inject(app, QUOTE, { 'x-api-key': key })).statusCode, 200);
  t.equal((await inject(app, QUOTE, { 'x-api-key': key })).statusCode, 429);
  t.equal(await limited('keyed-window'), 1);
  t.equal(await limited('fresh-quote-budget'), 1);
  t.equal(await limited('keyless-window'), 1);
});

t.test('"plans created, replayed and refused as conflicts"', async (t) => {
  const { app, scrape } = await withMetrics(t);
  const plans = async (result: string) => valueOf(await scrape(), 'bestex_plans_total', { route: 'app', result });
  const body = { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'metrics-1' };
  t.equal((await plan(app, body)).statusCode, 200);
  t.equal(await plans('created'), 1);
  t.equal(await plans('replayed'), 0);
  t.equal((await plan(app, body)).statusCode, 200);
  t.equal(await plans('replayed'), 1);
  t.equal(await plans('created'), 1);
  t.equal((await plan(app, { ...body, amount: '101' })).statusCode, 409);
  t.equal(await plans('conflict'), 1);
  const { key } = await issueKey(app.core.keyStore);
  const keyed = await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: { ...body, idempotencyKey: 'metrics-2' }, headers: { 'x-api-key': key } });
  t.equal(keyed.statusCode, 200);
  t.equal(valueOf(await scrape(), 'bestex_plans_total', { route: 'partner', result: 'created' }), 1, 'by route');
});

t.test('"a plan refused at the state\'s memory cap" is counted when the cap refuses one, and a replay is not', async (t) => {
  const { app, scrape } = await withMetrics(t, { env: { STATE_MAX_PLAN_RECORDS: '1' } });
  const refused = async () => valueOf(await scrape(), 'bestex_plans_refused_state_cap_total');
  const body = { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'cap-1' };
  t.equal((await plan(app, body)).statusCode, 200, 'the one record the cap allows');
  t.equal(await refused(), 0);
  t.equal((await plan(app, { ...body, idempotencyKey: 'cap-2' })).statusCode, 503, 'a new plan at the cap');
  t.equal(await refused(), 1);
  t.equal((await plan(app, body)).statusCode, 200, 'the held plan replays');
  t.equal(await refused(), 1, 'a replay needs no record, so nothing is refused');
});

t.test('"guardrail trips": a plan the guardrail stops is counted, by route', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const metrics = new PrometheusMetrics();
  const listener = new MetricsListener(metrics.registry);
  t.teardown(() => listener.close());
  const url = await listener.listen('127.0.0.1', 0);
  const venues = sandbox.adapters();
  const now = () => new Date();
  const quotes = new QuoteService({ venues, venueTimeoutMs: 800, cacheTtlMs: 10_000, cacheMaxEntries: 100, isVenueDown: () => false, onVenueError: () => {}, now, metrics });
  const log = { info: () => {}, warn: () => {}, error: () => {} };
  // The tampering assembler sends the deposit back to the taker.
  const tampering = new PlanService({
    quotes,
    schemas: loadFeeSchemas(loadConfig({})),
    collecting: false,
    supportedVenueId: 'tradecraft',
    venueIds: venues.map((v) => v.id),
    poolParties: SANDBOX_POOL_PARTIES,
    serviceFeeParty: null,
    b2cFeeParty: null,
    records: new IdempotencyRecords(new InProcessSharedState(), randomBytes(32)),
    log,
    now,
    metrics,
    assemble: (inputs) => {
      const made = assemblePlan(inputs);
      made.steps[0] = { ...made.steps[0]!, target: inputs.params.takerParty };
      return made;
    },
  });
  const params = parsePlanRequest({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'trip' }, 'app');
  const trips = async () => valueOf(samples(await (await fetch(url)).text()), 'bestex_guardrail_trips_total', { route: 'app' });
  t.equal(await trips(), 0);
  await t.rejects(tampering.create(params, { route: 'app', ip: '127.0.0.1' }, null), { code: 'guardrail' });
  t.equal(await trips(), 1);
});

t.test('"key verifications by result": valid, invalid, wrong_origin, unavailable', async (t) => {
  let storeDown = false;
  const { app, scrape } = await withMetrics(t);
  const verifications = async (result: string) => valueOf(await scrape(), 'bestex_key_verifications_total', { result });
  const { key } = await issueKey(app.core.keyStore);
  t.equal((await inject(app, QUOTE, { 'x-api-key': key })).statusCode, 200);
  t.equal(await verifications('valid'), 1);
  // Its last character changed, whatever it was (a key ending in x stayed valid 1 time in 62).
  const altered = `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`;
  t.equal((await inject(app, QUOTE, { 'x-api-key': altered })).statusCode, 401);
  t.equal(await verifications('invalid'), 1);
  const browser = newKey('wallet', 'partner-default', new Date(), ['https://wallet.example']);
  await app.core.keyStore.add(browser.record);
  t.equal((await inject(app, QUOTE, { 'x-api-key': browser.key, origin: 'https://elsewhere.example' })).statusCode, 401);
  t.equal(await verifications('wrong_origin'), 1);
  t.equal(await verifications('valid'), 1, 'a verification has one result');

  const store = app.core.keyStore;
  const failing: KeyStore = {
    findByHash: (hash) => (storeDown ? Promise.reject(new KeyStoreUnavailable('store down')) : store.findByHash(hash)),
    add: (record) => store.add(record),
    revoke: (selector, at) => store.revoke(selector, at),
    list: () => store.list(),
    rotate: (id, hash) => store.rotate(id, hash),
    setOrigins: (id, origins) => store.setOrigins(id, origins),
  };
  const down = await withMetrics(t, { overrides: { keyStore: failing } });
  storeDown = true;
  t.equal((await inject(down.app, QUOTE, { 'x-api-key': key })).statusCode, 503);
  t.equal(valueOf(await down.scrape(), 'bestex_key_verifications_total', { result: 'unavailable' }), 1);
});

t.test('"the health of each status component as a gauge": one series per component at 1, labelled with its state', async (t) => {
  let storeDown = false;
  const failing = (store: KeyStore): KeyStore => ({
    findByHash: (hash) => (storeDown ? Promise.reject(new KeyStoreUnavailable('store down')) : store.findByHash(hash)),
    add: (record) => store.add(record),
    revoke: (selector, at) => store.revoke(selector, at),
    list: () => store.list(),
    rotate: (id, hash) => store.rotate(id, hash),
    setOrigins: (id, origins) => store.setOrigins(id, origins),
  });
  const plain = await withMetrics(t);
  const { app, scrape } = await withMetrics(t, { overrides: { keyStore: failing(plain.app.core.keyStore) } });
  const status = (await inject(app, '/api/status')).json<{ components: Array<{ component: string; state: string }> }>();
  let all = await scrape();
  for (const { component, state } of status.components) {
    t.equal(valueOf(all, 'bestex_status_component', { component, state }), 1, `${component}: ${state}`);
  }
  t.equal(all.filter((s) => s.name === 'bestex_status_component').length, status.components.length, 'one series per component');
  t.equal(valueOf(all, 'bestex_status_component', { component: 'key-store', state: 'ok' }), 1);
  storeDown = true;
  const { key } = await issueKey(plain.app.core.keyStore);
  t.equal((await inject(app, QUOTE, { 'x-api-key': key })).statusCode, 503);
  all = await scrape();
  t.equal(valueOf(all, 'bestex_status_component', { component: 'key-store', state: 'unreadable' }), 1, 'the gauge follows the component');
  t.equal(valueOf(all, 'bestex_status_component', { component: 'key-store', state: 'ok' }), 0);
});

t.test('"outcome statuses": each outcome answered is counted by its status', async (t) => {
  const { app, scrape } = await withMetrics(t);
  const res = await inject(app, `/api/outcome?party=${encodeURIComponent(TAKER)}&since=2026-11-20T10:00:00Z&deadline=2026-11-20T10:01:30Z`);
  t.equal(res.statusCode, 200);
  const { status } = res.json<{ status: string }>();
  t.equal(valueOf(await scrape(), 'bestex_outcomes_total', { status }), 1, `status ${status}`);
});

t.test('"event-loop delay" is exported', async (t) => {
  const { scrape } = await withMetrics(t);
  const all = await scrape();
  t.ok(all.some((s) => s.name === 'nodejs_eventloop_lag_seconds'), 'nodejs_eventloop_lag_seconds');
  t.ok(all.some((s) => s.name === 'nodejs_eventloop_lag_p99_seconds'), 'its percentiles');
});

t.test('"no label can hold a party, a key or a URL": after traffic carrying them, none is in the text, and every label value is from a closed set', async (t) => {
  const { app, text } = await withMetrics(t);
  const { key } = await issueKey(app.core.keyStore);
  const recipient = `wallet-co::1220${'a'.repeat(64)}`;
  const guessed = `zz_${'q'.repeat(40)}`;
  const requests: InjectOptions[] = [
    { url: `${QUOTE}&ref=evil-ref`, headers: { 'x-api-key': key, origin: 'https://evil.example' } },
    { url: `${QUOTE}&feeBps=5&feeRecipient=${encodeURIComponent(recipient)}`, headers: { authorization: `Bearer ${key}` } },
    { url: QUOTE, headers: { 'x-api-key': guessed } },
    { url: `/api/outcome?party=${encodeURIComponent(TAKER)}&since=2026-11-20T10:00:00Z&deadline=2026-11-20T10:01:30Z` },
    { url: `/api/outcome?party=${encodeURIComponent(recipient)}` },
    { url: '/http://evil.example/steal?next=https://evil.example' },
    { url: `/api/liveness?venue=${encodeURIComponent('https://evil.example')}` },
    { url: `/api/quote?from=${encodeURIComponent(TAKER)}&to=USDCx&amount=1` },
    { method: 'POST', url: '/api/app/plan', payload: { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'no-leak' } },
    { method: 'POST', url: '/api/execute/plan', payload: { from: 'CC', to: 'USDCx', amount: '100', venueId: 'https://evil.example', takerParty: recipient, idempotencyKey: 'x' }, headers: { 'x-api-key': key } },
    { method: 'DELETE', url: `/api/quote?party=${encodeURIComponent(TAKER)}` },
  ];
  for (const request of requests) await app.server.inject(request);
  const exposition = await text();
  // The samples, not the HELP lines (which name /api/status).
  const sampleLines = exposition.split('\n').filter((line) => !line.startsWith('#')).join('\n');
  for (const secret of [TAKER, recipient, 'alice::', 'wallet-co', key, key.slice(0, 16), guessed, 'evil', 'http://', 'https://', '/api/', 'no-leak']) {
    t.notOk(sampleLines.includes(secret), `the text does not hold ${secret.slice(0, 24)}`);
  }
  const venueIds = app.core.health.venueIds;
  const closed = new Set([
    'getQuote', 'createAppPlan', 'createExecutePlan', 'getOutcome', 'getLiveness', 'getStatus', 'none',
    'available', 'no_pool', 'below_minimum', 'above_maximum', 'insufficient_liquidity', 'timeout', 'venue_error', 'maintenance', 'venue_down',
    'hit', 'miss', 'keyless-window', 'keyed-window', 'fresh-quote-budget', 'app', 'partner', 'created', 'replayed', 'conflict',
    'valid', 'invalid', 'wrong_origin', 'unavailable',
    'pending', 'completed', 'slippage_failed', 'withdrawn', 'expired', 'not_found', 'ambiguous',
    ...venueIds,
  ]);
  const shape = /^(?:[0-9]{3}|\+Inf|[0-9.e+-]+)$/;
  for (const sample of samples(exposition).filter((s) => s.name.startsWith('bestex_'))) {
    for (const [label, value] of Object.entries(sample.labels)) {
      if (label === 'le' || label === 'status' && shape.test(value)) continue;
      if (label === 'version') {
        t.ok(value === '1' || value === '2', `${sample.name} version=${value} is 1 or 2`);
        continue;
      }
      if (sample.name === 'bestex_status_component') {
        const allowed = label === 'state' ? COMPONENT_STATES : [...COMPONENTS, ...venueIds.map((v) => `venue:${v}`)];
        t.ok(allowed.includes(value), `${sample.name} ${label}=${value} is from a closed set`);
        continue;
      }
      t.ok(closed.has(value), `${sample.name} ${label}=${value} is from a closed set`);
    }
  }
});

t.test('"swaps by outcome, venue and volume": each v2 plan counted once as it ends, its paid legs\' volume per token, no label naming a party, a key or a plan', async (t) => {
  let clockShiftMs = 0;
  const { app, scrape, text } = await withMetrics(t, { env: { PLAN_STATUS_POLL_MS: '50' }, overrides: { now: () => new Date(Date.now() + clockShiftMs) } });
  const base = await listen(app.server);
  const sandbox = app.sandbox!;
  const party = `metrics-swap::1220${'4'.repeat(64)}`;
  await fund(sandbox, party, { CC: '200' });
  const client = createClientV2({ baseUrl: base });
  const status = async (plan: V2.AppPlan) => (await (await fetch(`${base}/api/v2/plan/status?planId=${plan.planId}&token=${plan.statusToken}`)).json()) as PlanStatus;
  const until = async (plan: V2.AppPlan, state: string) => {
    for (let i = 0; i < 600; i++) {
      const read = await status(plan);
      if (read.state === state) return read;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`never ${state}`);
  };
  const paid = (await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: 'metrics-paid' })) as V2.AppPlan;
  t.equal((await execute(paid, { provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }), client })).status, 'COMPLETED');
  const completed = await until(paid, 'completed');
  const unfunded = (await client.plan({ from: 'CC', to: 'USDCx', amount: '50', venueId: 'tradecraft', takerParty: party, idempotencyKey: 'metrics-unfunded' })) as V2.AppPlan;
  clockShiftMs = 91_000 + 61_000;
  await until(unfunded, 'expired');
  clockShiftMs = 0;
  const all = await scrape();
  t.equal(valueOf(all, 'bestex_swaps_total', { outcome: 'completed' }), 1, 'one completed');
  t.equal(valueOf(all, 'bestex_swaps_total', { outcome: 'expired' }), 1, 'one expired');
  t.equal(valueOf(all, 'bestex_swap_legs_total', { venue: 'tradecraft', outcome: 'completed' }), 1);
  t.equal(valueOf(all, 'bestex_swap_legs_total', { venue: 'tradecraft', outcome: 'expired' }), 1);
  t.equal(valueOf(all, 'bestex_swap_volume_total', { token: 'Amulet', side: 'given' }), 100, 'given: the paid leg only');
  t.equal(valueOf(all, 'bestex_swap_volume_total', { token: 'USDCx', side: 'received' }), Number(completed.received), 'received: what the plan status reads');
  const exposition = await text();
  for (const secret of [party, paid.planId, paid.statusToken!]) t.notOk(exposition.includes(secret), 'no party, plan or capability in the text');
});
