// Version 2 beside version 1: the header on every kind of v2 answer and `1` everywhere else, the
// windows and budgets both versions share, idempotency per version, the served document (one
// self-contained bundle, equal to the repository's spec bundled), the quote's execution block and
// its reason codes, a v2 plan for tradecraft and for Nightly (its deposit to the sandbox Nightly's
// swap address with a memo it issued for the taker), and the 409 refusal of a quote-only venue.
// The examples of openapi/v2.yaml are replayed with v1's by test/contract/spec-examples.test.ts.
import { connect } from 'node:net';
import t from 'tap';
import type { InjectOptions } from 'fastify';
import { parse } from 'yaml';
import { EXECUTABLE_VENUE_IDS, NOT_EXECUTABLE_REASONS, venueExecution } from '../../core/execution/venues.js';
import { SUPPORTED_VENUE_ID } from '../../core/services.js';
import { dec } from '../../core/decimal.js';
import { NIGHTLY_SWAP_ADDRESS, nightlyQuoteBook } from '../../sandbox/venues/nightly.js';
import { COLLECTING, FEE_PARTIES, listen, testApp, type TestApp } from '../helpers/app.js';
import { issueKey } from '../helpers/keys.js';
import { loadSpec, V2_SPEC_PATH } from '../helpers/spec.js';

const TAKER = `alice::1220${'b'.repeat(64)}`;
const planBody = (idempotencyKey: string, venueId = 'tradecraft') => ({ from: 'CC', to: 'USDCx', amount: '100', venueId, takerParty: TAKER, idempotencyKey });

async function app(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<TestApp> {
  const made = await testApp({ env });
  t.teardown(made.close);
  return made;
}

t.test('"every answer under /api/v2/ carries x-service-api-version: 2; every path outside keeps 1": successes, 400s, 404s, 405s, 409s, 429s', async (t) => {
  const own = await app(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '2' });
  const version = async (options: string | InjectOptions) => {
    const res = await own.server.inject(options);
    return `${res.statusCode} ${res.headers['x-service-api-version']}`;
  };
  t.equal(await version('/api/v2/status'), '200 2', 'a success');
  t.equal(await version('/api/v2/tokens'), '200 2', 'the token list');
  t.equal(await version('/api/v2/quote?from=CC&to=USDCx'), '400 2', 'a 400');
  t.equal(await version('/api/v2/nope'), '404 2', 'a 404 under /api/v2/');
  t.equal(await version('/api/v2'), '404 2', '/api/v2 itself');
  t.equal(await version({ method: 'DELETE', url: '/api/v2/quote' }), '405 2', 'a 405');
  t.equal(await version({ method: 'POST', url: '/api/v2/app/plan', payload: planBody('v2-header-409', 'cantex') }), '409 2', 'a 409');
  t.equal(await version({ method: 'POST', url: '/api/v2/app/plan', headers: { 'content-type': 'application/json' }, payload: '{"from":' }), '400 2', 'a body that is not JSON');
  t.equal(await version('/api/v2/quote?from=CC&to=USDCx&amount=1'), '429 2', 'a 429 (the IP\'s window of 2, shared with v1, used up: the 400 and the 409 counted in it)');
  t.equal(await version('/api/quote?from=CC&to=USDCx&amount=1'), '429 1', 'v1\'s 429 keeps 1');
  t.equal(await version('/api/status'), '200 1', 'v1 keeps 1');
  t.equal(await version('/api/v20/status'), '404 1', 'a path that only starts like v2 is no v2 path');
  t.equal(await version('/nope'), '404 1', 'a 404 outside');
  t.equal(await version('/openapi/v2.json'), '200 1', 'the served spec is no operation of v2');

  // Refused before routing: the raw answers keep the version of the path they name.
  const base = new URL(await listen(own.server));
  const raw = (target: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(Number(base.port), base.hostname, () => socket.end(`GET ${target} HTTP/1.1\r\nHost: x\r\nx-padding: ${'a'.repeat(20_000)}\r\n\r\n`));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  t.match(await raw('/api/v2/status'), /^HTTP\/1\.1 431 [^]*\r\nx-service-api-version: 2\r\n/, 'a head over the limit, for a v2 path: 2');
  t.match(await raw('/api/status'), /^HTTP\/1\.1 431 [^]*\r\nx-service-api-version: 1\r\n/, 'and for a v1 path: 1');
});

t.test('"v1 and v2 share each caller\'s rate-limit windows and the fresh-quote budget"', async (t) => {
  const windows = await app(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '2' });
  t.equal((await windows.server.inject('/api/liveness')).statusCode, 200);
  t.equal((await windows.server.inject('/api/v2/liveness')).statusCode, 200);
  t.equal((await windows.server.inject('/api/v2/liveness')).statusCode, 429, 'a v1 and a v2 request used the one window');
  t.equal((await windows.server.inject('/api/liveness')).statusCode, 429, 'and v1 is refused with it');

  const fresh = await app(t, { RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '1' });
  t.equal((await fresh.server.inject('/api/quote?from=CC&to=USDCx&amount=7')).statusCode, 200, 'a fresh v1 quote spends the budget');
  t.equal((await fresh.server.inject('/api/v2/quote?from=CC&to=USDCx&amount=7')).statusCode, 200, 'the same combination in v2 is the cached quote: no budget spent');
  const refused = await fresh.server.inject('/api/v2/quote?from=CC&to=USDCx&amount=8');
  t.equal(refused.statusCode, 429, 'a fresh v2 combination finds the budget spent by v1');
  t.equal(refused.json().code, 'rate_limited');

  const keyed = await app(t, { RATE_LIMIT_KEYED_PER_MINUTE: '2' });
  const { key } = await issueKey(keyed.core.keyStore);
  const headers = { 'x-api-key': key };
  t.equal((await keyed.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=100', headers })).headers['x-ratelimit-remaining'], '1');
  const second = await keyed.server.inject({ url: '/api/v2/quote?from=CC&to=USDCx&amount=100', headers });
  t.equal(second.headers['x-ratelimit-remaining'], '0', 'a key\'s window counts both versions');
  t.equal((await keyed.server.inject({ url: '/api/v2/quote?from=CC&to=USDCx&amount=100', headers })).statusCode, 429);
});

t.test('"idempotency records are per version": a v1 and a v2 plan under the same idempotencyKey never replay each other', async (t) => {
  const own = await app(t);
  const { key } = await issueKey(own.core.keyStore);
  for (const [route, v1Path, v2Path, headers] of [
    ['keyless', '/api/app/plan', '/api/v2/app/plan', {}],
    ['partner', '/api/execute/plan', '/api/v2/execute/plan', { 'x-api-key': key }],
  ] as const) {
    const plan = async (url: string) => {
      const res = await own.server.inject({ method: 'POST', url, headers, payload: planBody(`shared-key-${route}`) });
      t.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return { text: res.body, body: res.json() as Record<string, unknown> };
    };
    const v1 = await plan(v1Path);
    const v2 = await plan(v2Path);
    t.not(v2.body.planId, v1.body.planId, `${route}: each version has its own plan id`);
    t.ok('mode' in v1.body && !('mode' in v2.body), `${route}: each answer in its own version's shape`);
    t.equal((await plan(v1Path)).text, v1.text, `${route}: v1 replays v1's plan, byte for byte`);
    t.equal((await plan(v2Path)).text, v2.text, `${route}: v2 replays v2's plan, byte for byte`);
    const changed = await own.server.inject({ method: 'POST', url: v2Path, headers, payload: { ...planBody(`shared-key-${route}`), amount: '5' } });
    t.equal(changed.json().code, 'idempotency_conflict', `${route}: within v2, the key still guards its request`);
  }
});

t.test('the served v2 document is one self-contained bundle, equal to openapi/v2.yaml bundled, as YAML and as JSON', async (t) => {
  const own = await app(t);
  const bundled = loadSpec(V2_SPEC_PATH).document;
  const yaml = await own.server.inject('/openapi/v2.yaml');
  const json = await own.server.inject('/openapi/v2.json');
  t.equal(yaml.statusCode, 200);
  t.match(yaml.headers['content-type'], /^application\/yaml/);
  t.notMatch(yaml.body, /^#/, 'without the generated file\'s do-not-edit lines');
  t.strictSame(parse(yaml.body), bundled, 'the YAML is the repository spec bundled');
  t.strictSame(json.json(), bundled, 'the JSON too');
  t.notMatch(json.body, /"\$ref":"[^#]/, 'every reference is to the document itself');
  const refs = [...json.body.matchAll(/"\$ref":"#\/([^"]+)"/g)].map((m) => m[1]!);
  const document = json.json() as Record<string, unknown>;
  for (const ref of new Set(refs)) {
    const target = ref.split('/').reduce<unknown>((node, k) => (node as Record<string, unknown> | undefined)?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], document);
    t.ok(target !== undefined, `#/${ref} resolves within the document`);
  }
  t.equal((document.info as { version: string }).version, '2.4.0');
  t.equal((await own.server.inject('/openapi/v1.yaml')).statusCode, 200, 'v1 is served beside it');
});

t.test('the v2 quote: each venue\'s execution block from core/execution/venues.ts, bestExecutable beside best; the rest is v1\'s quote', async (t) => {
  const own = await app(t);
  const v1 = (await own.server.inject('/api/quote?from=CC&to=USDCx&amount=100')).json();
  const res = await own.server.inject('/api/v2/quote?from=CC&to=USDCx&amount=100');
  t.equal(res.statusCode, 200);
  t.equal(res.headers['cache-control'], 'public, s-maxage=10');
  const v2 = res.json();
  t.equal((await own.server.inject('/api/v2/quote?from=CC&to=USDCx&amount=100')).body, res.body, 'keyless: byte-identical again');
  t.strictSame(
    v2.venues.map(({ execution: _, priceImpact: __, ...rest }: Record<string, unknown>) => rest),
    v1.venues,
    'the venues, their order and numbers are v1\'s',
  );
  t.ok(v1.venues.every((v: Record<string, unknown>) => !('priceImpact' in v)), 'v1\'s entries have no price impact');
  for (const venue of v2.venues) t.ok(venue.available ? /^(0|0\.[0-9]{0,9}[1-9])$/.test(venue.priceImpact) : venue.priceImpact === null, `${venue.venueId}: its price impact, a fraction below 1 (${venue.priceImpact})`);
  t.strictSame(v2.best, v1.best, 'best stays the best net');
  for (const venue of v2.venues) t.strictSame(venue.execution, venueExecution(venue.venueId), `${venue.venueId}: its execution block`);
  const reasons = Object.fromEntries(v2.venues.map((v: { venueId: string; execution: { reason: string | null } }) => [v.venueId, v.execution.reason]));
  t.strictSame(reasons, { tradecraft: null, nightly: null, oneswap: null, cantex: 'venue_requires_account', temple: 'venue_requires_credential' });
  // Stable codes no venue of this build gives: a venue this build does not serve, and a signed challenge it now runs (OneSwap's plans in two calls).
  t.ok(NOT_EXECUTABLE_REASONS.every((r) => r === 'venue_execution_not_served' || r === 'venue_requires_signed_challenge' || Object.values(reasons).includes(r)));
  t.strictSame(EXECUTABLE_VENUE_IDS, ['tradecraft', 'nightly', 'oneswap'], 'tradecraft, Nightly and OneSwap are executable in this build');
  t.ok(EXECUTABLE_VENUE_IDS.includes(SUPPORTED_VENUE_ID), 'v1\'s venue is one of them: the plan service reads the same place');
  const executable = v2.venues.find((v: { available: boolean; execution: { executable: boolean } }) => v.available && v.execution.executable);
  t.strictSame(v2.bestExecutable, { venueId: executable.venueId, gross: executable.gross, net: executable.net }, 'bestExecutable: the best available executable venue');
  t.not(v2.best.venueId, v2.bestExecutable.venueId, 'in the sandbox\'s market the best net is a venue no wallet executes here');

  const { key } = await issueKey(own.core.keyStore);
  const keyed = await own.server.inject({ url: '/api/v2/quote?from=CC&to=USDCx&amount=100&feeBps=5&feeRecipient=' + encodeURIComponent(`integrator::1220${'c'.repeat(64)}`), headers: { 'x-api-key': key } });
  t.equal(keyed.statusCode, 200);
  t.equal(keyed.headers['cache-control'], 'private, no-store');
  const keyedBody = keyed.json();
  t.ok(keyedBody.appliedSchema, 'keyed: the applied schema');
  t.ok(keyedBody.venues.every((v: { available: boolean; clientFees?: unknown; execution?: unknown }) => v.execution && (!v.available || v.clientFees)), 'keyed: fee lines and execution on every available venue');
});

t.test('a v2 plan for tradecraft says what the wallet signs and where each registry is; a quote-only venue is refused 409 venue_not_executable with its reason', async (t) => {
  const own = await app(t);
  const res = await own.server.inject({ method: 'POST', url: '/api/v2/app/plan', payload: planBody('v2-plan-shape') });
  t.equal(res.statusCode, 200, res.body);
  const plan = res.json();
  const v1 = (await own.server.inject({ method: 'POST', url: '/api/app/plan', payload: planBody('v2-plan-shape-v1') })).json();
  t.equal(plan.settlement, 'memo-floor');
  t.equal(plan.steps.length, 1);
  const [deposit] = plan.steps;
  const admins = own.core.config.liveVenues.cantexInstrumentAdmins!;
  t.strictSame(deposit, {
    kind: 'venue-deposit',
    target: v1.steps[0].target,
    instrument: { id: 'Amulet', admin: admins.Amulet },
    amount: '100',
    memo: plan.quoteRef.minReceive,
    minOut: plan.quoteRef.minReceive,
    expiresAt: plan.expiry,
    settlement: 'memo-floor',
  });
  t.strictSame(plan.registries, [{ instrument: 'Amulet', admin: admins.Amulet, registryUrl: own.core.config.sandboxRegistries[admins.Amulet] }], 'the registry of the instrument moved, the sandbox\'s from its manifest');
  t.match(plan.registries[0].registryUrl, /^http:\/\/127\.0\.0\.1:[0-9]+/);
  t.equal(Date.parse(plan.expiry) - Date.now() <= 90_000, true, 'expires within 90 s');
  t.match(plan.planId, /^pl_[A-Za-z0-9_-]{22}$/);
  t.equal(plan.collectsFees, false);
  t.match(plan.trustWindow, /stay locked in a transfer offer in your own wallet/);

  for (const [venueId, reason] of [['cantex', 'venue_requires_account'], ['temple', 'venue_requires_credential']] as const) {
    const refused = await own.server.inject({ method: 'POST', url: '/api/v2/app/plan', payload: planBody(`v2-refused-${venueId}`, venueId) });
    t.equal(refused.statusCode, 409, venueId);
    t.match(refused.json(), { code: 'venue_not_executable', error: new RegExp(`venue ${venueId} is not executable .*: ${reason}`) });
    t.equal(refused.headers['x-service-api-version'], '2');
  }
  const v1Refused = await own.server.inject({ method: 'POST', url: '/api/app/plan', payload: planBody('v1-refused', 'cantex') });
  t.strictSame([v1Refused.statusCode, v1Refused.json().code], [409, 'venue_unavailable'], 'v1 answers as it always did');
  const v1Nightly = await own.server.inject({ method: 'POST', url: '/api/app/plan', payload: planBody('v1-nightly', 'nightly') });
  t.strictSame([v1Nightly.statusCode, v1Nightly.json().error], [409, 'venue nightly is not executable in v1: plans are built for tradecraft only'], 'v1 plans tradecraft alone');
});

/** The sandbox Nightly's quote under `memo`, used up by this read; null when it issued none. */
function issued(own: TestApp, memo: string) {
  const spec = own.sandbox!.market.find((v) => v.id === 'nightly')!.spec;
  const redeemed = nightlyQuoteBook(spec).redeem(memo);
  return 'quote' in redeemed ? redeemed.quote : null;
}

t.test('a v2 Nightly plan over HTTP: its deposit goes to the sandbox\'s swapAddress with a memo the sandbox issued for the taker, bound to at least minReceive', async (t) => {
  const own = await app(t);
  const quote = (await own.server.inject('/api/v2/quote?from=CC&to=USDCx&amount=100')).json();
  const quoted = quote.venues.find((v: { venueId: string }) => v.venueId === 'nightly');
  t.strictSame(quoted.execution, { executable: true, settlement: 'swap-address-memo', reason: null }, 'the quote calls Nightly executable');
  const res = await own.server.inject({ method: 'POST', url: '/api/v2/app/plan', payload: planBody('v2-nightly', 'nightly') });
  t.equal(res.statusCode, 200, res.body);
  t.equal(res.headers['x-service-api-version'], '2');
  const plan = res.json();
  t.equal(plan.settlement, 'swap-address-memo');
  t.equal(plan.quoteRef.net, quoted.net, 'the net the quote shows');
  t.equal(plan.quoteRef.minReceive, '14.8702319968', 'floor(14.9449567808 × 0.995)');
  const [deposit] = plan.steps;
  t.equal(deposit.target, NIGHTLY_SWAP_ADDRESS, "the sandbox's swapAddress");
  t.equal(deposit.amount, '100');
  t.equal(deposit.settlement, 'swap-address-memo');
  t.ok(dec(deposit.minOut).gte(dec(plan.quoteRef.minReceive)), `minOut ${deposit.minOut} >= minReceive ${plan.quoteRef.minReceive}`);
  const quoteOfMemo = issued(own, deposit.memo);
  t.ok(quoteOfMemo, 'the memo is one the sandbox Nightly issued');
  t.equal(quoteOfMemo?.recipient, TAKER, 'to the taker');
  t.equal(quoteOfMemo && quoteOfMemo.minOutAmount.toFixed(), deposit.minOut, 'and minOut is its minOutAmount');
  const replay = await own.server.inject({ method: 'POST', url: '/api/v2/app/plan', payload: planBody('v2-nightly', 'nightly') });
  t.equal(replay.body, res.body, 'replayed byte for byte');
});

t.test('a keyed v2 Nightly plan with fee legs: the service\'s and the integrator\'s, in the want instrument, as on tradecraft', async (t) => {
  const own = await app(t, COLLECTING);
  const { key } = await issueKey(own.core.keyStore);
  const recipient = `wallet-co::1220${'a'.repeat(64)}`;
  const res = await own.server.inject({ method: 'POST', url: '/api/v2/execute/plan', headers: { 'x-api-key': key }, payload: { ...planBody('v2-nightly-keyed', 'nightly'), feeBps: 5, feeRecipient: recipient } });
  t.equal(res.statusCode, 200, res.body);
  const plan = res.json();
  t.strictSame(plan.steps.map((s: { kind: string; target: string; instrument: { id: string }; amount: string; minOut: string | null }) => [s.kind, s.target, s.instrument.id, s.amount]), [
    ['venue-deposit', NIGHTLY_SWAP_ADDRESS, 'Amulet', '100'],
    ['fee-escrow-lock', FEE_PARTIES.SERVICE_FEE_PARTY, 'USDCx', plan.quoteRef.clientFees.service.amount],
    ['fee-transfer', recipient, 'USDCx', plan.quoteRef.clientFees.integrator.amount],
  ]);
  t.equal(plan.quoteRef.clientFees.service.amount, '0.0074724783', 'floor(net × 5/10000), as for any venue');
  t.equal(plan.collectsFees, true);
  t.ok(issued(own, plan.steps[0].memo), 'the memo is the sandbox Nightly\'s');
  t.ok(dec(plan.steps[0].minOut).gte(dec(plan.quoteRef.minReceive)));
});

t.test('v2 answers never speak of v1: a pair without CC, and a 404 under /api/v2/; v1\'s answers keep their words', async (t) => {
  const own = await app(t);
  const pair = { ...planBody('no-cc'), from: 'USDCx', to: 'CBTC' };
  t.equal((await own.server.inject({ method: 'POST', url: '/api/v2/app/plan', payload: pair })).json().error, 'the pair USDCx/CBTC is not executable: every swap has a CC leg');
  t.equal((await own.server.inject({ method: 'POST', url: '/api/app/plan', payload: pair })).json().error, 'the pair USDCx/CBTC is not executable: every v1 swap has a CC leg');
  t.equal((await own.server.inject('/api/v2/nope')).json().action, 'see /docs (or /openapi/v2.json, /openapi/v2.yaml) for the paths');
  t.equal((await own.server.inject('/api/nope')).json().action, 'see /docs (or /openapi/v1.json, /openapi/v1.yaml) for the paths');
});

t.test('GET /api/v2/tokens: every token, its registry name, admin party, decimals, registry and venue limits', async (t) => {
  const own = await app(t);
  const res = await own.server.inject('/api/v2/tokens');
  t.equal(res.statusCode, 200);
  const { tokens } = res.json();
  const admins = own.core.config.liveVenues.cantexInstrumentAdmins!;
  t.strictSame(tokens.map((token: { symbol: string; registryName: string }) => [token.symbol, token.registryName]), [['CC', 'Amulet'], ['USDCx', 'USDCx'], ['CBTC', 'CBTC']]);
  for (const token of tokens) {
    t.equal(token.decimals, 10);
    t.equal(token.instrumentAdmin, admins[token.registryName as keyof typeof admins]);
    t.equal(token.registryUrl, own.core.config.sandboxRegistries[token.instrumentAdmin]);
    t.strictSame(token.venueLimits.map((l: { venueId: string }) => l.venueId), own.core.health.venueIds, 'one entry per integrated venue');
  }
  t.strictSame(tokens[0].venueLimits.find((l: { venueId: string }) => l.venueId === 'temple'), { venueId: 'temple', min: '1', max: null }, 'Temple\'s minimum order in CC');
});
