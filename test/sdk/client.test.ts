// The SDK's API client (@bestex/sdk's createClient), used as a partner uses the package, against
// the real service on an ephemeral port: typed calls, every non-2xx one BestexError, the API
// version asserted, nothing retried.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { BestexError, createClient, type AppPlan, type ExecutionPlan } from '@bestex/sdk';
import { listen, testApp } from '../helpers/app.js';
import { issueKey } from '../helpers/keys.js';
import { plainChild } from '../helpers/plain-child.js';

const TAKER = `sdk-taker::1220${'b'.repeat(64)}`;

async function service(t: { teardown(fn: () => Promise<void>): void }, env: Record<string, string> = {}) {
  const app = await testApp({ env });
  t.teardown(app.close);
  return { app, baseUrl: await listen(app.server) };
}

t.test('createClient: quote, plan (keyless without a key, partner with one), outcome, liveness and status, typed from the spec', async (t) => {
  const { app, baseUrl } = await service(t);
  const client = createClient({ baseUrl });
  const quote = await client.quote({ from: 'CC', to: 'USDCx', amount: '100' });
  t.equal(quote.venues.length, 5);
  t.ok(quote.best, 'a best venue');
  const plan = (await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'sdk-client-1' })) as AppPlan;
  t.match(plan, { planId: /^pl_/, mode: 'managed-deposit', steps: [{ kind: 'venue-deposit', instrument: 'Amulet', amount: '100' }] });
  const { key } = await issueKey(app.core.keyStore);
  const keyed = createClient({ baseUrl, apiKey: key });
  const partnerPlan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'sdk-client-2' })) as ExecutionPlan;
  t.match(partnerPlan.quoteRef, { appliedSchema: { schemaId: 'partner-default' } }, 'with a key the plan is a partner plan');
  t.ok((await keyed.quote({ from: 'CC', to: 'USDCx', amount: '100' })).venues.find((v) => v.clientFees), 'and the quote discloses fees');
  const outcome = await client.outcome({ party: TAKER, since: '2026-11-20T10:00:00Z', deadline: '2026-11-20T10:01:30Z' });
  t.match(outcome, { status: String, depositUpdateId: null });
  t.match(await client.liveness(), { venue: 'tradecraft', state: 'live' });
  t.match(await client.liveness({ venue: 'oneswap', from: 'CC', to: 'CBTC' }), { venue: 'oneswap', state: 'dead' });
  t.match(await client.status(), { mode: String, state: String, components: Array });
});

t.test('"every non-2xx becomes one typed BestexError with status, code, action and retryAfterSeconds"', async (t) => {
  const { baseUrl } = await service(t, { RATE_LIMIT_KEYLESS_PER_MINUTE: '2' });
  const client = createClient({ baseUrl });
  const bad = await client.quote({ from: 'CC', to: 'ETH', amount: '100' }).catch((err: unknown) => err);
  t.ok(bad instanceof BestexError);
  t.match(bad, { name: 'BestexError', status: 400, code: 'unknown_token', action: String, retryAfterSeconds: null, message: /ETH/ });
  await client.quote({ from: 'CC', to: 'USDCx', amount: '100' }).catch(() => undefined);
  const limited = await client.quote({ from: 'CC', to: 'USDCx', amount: '100' }).catch((err: unknown) => err);
  t.match(limited, { status: 429, code: 'rate_limited', action: String });
  t.ok((limited as BestexError).retryAfterSeconds! > 0, 'Retry-After read as whole seconds');
});

t.test('"the client asserts x-service-api-version: 1", "never retries a 4xx", and says when the service cannot be reached', async (t) => {
  let calls = 0;
  const answer = (status: number, version: string | null, body: unknown) => async () => {
    calls += 1;
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...(version ? { 'x-service-api-version': version } : {}) } });
  };
  const v2 = createClient({ baseUrl: 'http://bestex.test', fetch: answer(200, '2', { venue: 'tradecraft', state: 'live' }) });
  await t.rejects(v2.liveness(), { name: 'BestexError', code: 'unsupported_api_version', message: /version 2; this client speaks 1/ });
  const unsaid = createClient({ baseUrl: 'http://bestex.test', fetch: answer(200, null, { venue: 'tradecraft', state: 'live' }) });
  await t.rejects(unsaid.liveness(), { code: 'unsupported_api_version' }, 'an answer without the header is not trusted either');
  calls = 0;
  const refusing = createClient({ baseUrl: 'http://bestex.test', fetch: answer(409, '1', { error: 'venue unavailable', code: 'venue_unavailable', action: 're-quote' }) });
  await t.rejects(refusing.plan({ from: 'CC', to: 'USDCx', amount: '1', venueId: 'tradecraft', takerParty: TAKER, idempotencyKey: 'k' }), { status: 409, code: 'venue_unavailable', action: 're-quote' });
  t.equal(calls, 1, 'sent once');
  const down = createClient({ baseUrl: 'http://127.0.0.1:1' });
  await t.rejects(down.status(), { name: 'BestexError', status: null, code: 'network_error' });
});

t.test('"importing it touches no window, document or storage, so server-side rendering never breaks"', async (t) => {
  const probe = `
    for (const name of ['window', 'document', 'localStorage', 'sessionStorage', 'navigator']) {
      Object.defineProperty(globalThis, name, { configurable: true, get() { throw new Error('touched ' + name); } });
    }
    const sdk = await import('@bestex/sdk');
    const sandbox = await import('@bestex/sdk/sandbox');
    const widget = await import('@bestex/sdk/widget');
    widget.defineBestexSwap();
    sdk.createClient({ baseUrl: 'http://127.0.0.1:1' });
    sdk.memoryStorage();
    sdk.localStorageStorage();
    sandbox.sandboxProvider({ ledgerUrl: 'http://127.0.0.1:1', token: 't', party: 'p::1220' + 'a'.repeat(64) });
    console.log(Object.keys(sdk).sort().join(','), typeof widget.BestexSwapElement);
  `;
  const run = spawnSync(...plainChild(process.execPath, ['--input-type=module', '-e', probe]), { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /BestexError.*createClient.*execute.*resume.*withdraw/, 'the public names are there');
});
