// A v2 plan's status from the server, as a partner and a keyless app read it: made through the
// SDK and executed by the sandbox wallet, each plan's status is followed on the ledger through
// every state it reaches (completed, slippage failed, expired, a split partly filled), agreeing
// with GET /api/v2/outcome and with the SDK's own result; read only by the key that made it or
// the keyless plan's capability; streamed as server-sent events, resumed with Last-Event-ID.
import t from 'tap';
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Decimal } from '../../../core/decimal.js';
import type { PlanStatus, PlanStatusEvent } from '../../../core/contract/v2.js';
import { COLLECTING, listen, testApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { movedBeforePrepare, sandboxControl } from '../../helpers/sandbox.js';

let takers = 0;
let clockShiftMs = 0;
const app = await testApp({
  env: { ...COLLECTING, QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200', PLAN_STATUS_POLL_MS: '50', SSE_HEARTBEAT_MS: '200' },
  overrides: { now: () => new Date(Date.now() + clockShiftMs) },
});
t.teardown(app.close);
const base = await listen(app.server);
const { key } = await issueKey(app.core.keyStore);
const keyless = createClientV2({ baseUrl: base });
const keyed = createClientV2({ baseUrl: base, apiKey: key });
const sandbox = app.sandbox!;

const control = (resource: string, body: unknown) => sandboxControl(sandbox, resource, body);

async function taker(amount: string) {
  const party = `status-${++takers}::1220${'7'.repeat(64)}`;
  await control('/sandbox/v1/fund', { party, token: 'CC', amount });
  await control('/sandbox/v1/fund', { party, token: 'USDCx', amount: '1000' });
  return { party, provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }) };
}

const statusUrl = (planId: string, token?: string) => `${base}/api/v2/plan/status?planId=${planId}${token ? `&token=${token}` : ''}`;

async function status(planId: string, init: { token?: string; key?: string } = {}): Promise<{ code: number; body: PlanStatus & { code?: string } }> {
  const response = await fetch(statusUrl(planId, init.token), { headers: init.key ? { 'x-api-key': init.key } : {} });
  return { code: response.status, body: (await response.json()) as PlanStatus & { code?: string } };
}

/** Reads the status until it is terminal (the follower polls every 50 ms here); never a fixed wait. */
async function terminal(planId: string, init: { token?: string; key?: string }): Promise<PlanStatus> {
  for (let i = 0; i < 600; i++) {
    const { code, body } = await status(planId, init);
    if (code !== 200) throw new Error(`status answered ${code}`);
    if (body.terminal) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the plan never reached a terminal state');
}

const states = (s: PlanStatus) => s.history.map((h) => h.state);

t.test('"a keyless plan carries a capability; its status is read with it, and nothing else reads it"', async (t) => {
  const { party } = await taker('100');
  const plan = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-read` })) as V2.AppPlan;
  t.match(plan.statusToken, /^st_[A-Za-z0-9_-]{43}$/, 'the plan carries statusToken');
  const read = await status(plan.planId, { token: plan.statusToken });
  t.equal(read.code, 200);
  t.match(read.body, { planId: plan.planId, state: 'planned', terminal: false, seq: 1, amount: '100', minReceive: plan.quoteRef.minReceive, received: null, legs: [{ leg: 0, venueId: 'tradecraft', state: 'planned', basis: 'ledger' }] });
  t.equal((await status(plan.planId)).code, 404, 'no token: 404');
  t.equal((await status(plan.planId, { token: `st_${'A'.repeat(43)}` })).body.code, 'plan_not_found', 'a wrong token: 404 plan_not_found');
  t.equal((await status(plan.planId, { key })).code, 404, 'a key does not read a keyless plan');
  const replay = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-read` })) as V2.AppPlan;
  t.equal(replay.statusToken, plan.statusToken, 'a replay carries the same capability');
  t.notOk(JSON.stringify(read.body).includes(party), 'the status never names the taker');
});

t.test('"a keyed plan is read by the key that made it only"', async (t) => {
  const { party } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-keyed` })) as V2.ExecutionPlan;
  t.equal(plan.statusToken, undefined, 'a keyed plan carries no capability');
  t.equal((await status(plan.planId, { key })).code, 200, 'its key reads it');
  const { key: other } = await issueKey(app.core.keyStore, { name: 'another partner' });
  t.equal((await status(plan.planId, { key: other })).code, 404, 'another key: 404');
  t.equal((await status(plan.planId, { token: `st_${'B'.repeat(43)}` })).code, 404, 'no key, any token: 404');
});

t.test('"completed: planned, deposit seen, completed, with the deposit and settlement updates and what was received, agreeing with the SDK and /api/v2/outcome"', async (t) => {
  const { party, provider } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-done` })) as V2.ExecutionPlan;
  const since = new Date().toISOString();
  const result = await execute(plan, { provider, client: keyed });
  t.equal(result.status, 'COMPLETED');
  const done = await terminal(plan.planId, { key });
  t.equal(done.state, 'completed');
  // A deposit answered within one read of the ledger is seen and completed in one event.
  t.strictSame(states(done).filter((s) => s !== 'deposit_seen'), ['planned', 'completed'], 'planned, then completed (deposit seen between, when read apart)');
  t.equal(done.received, result.received, "received: the SDK's own");
  t.ok(new Decimal(done.received!).gte(plan.quoteRef.minReceive), 'at least the floor');
  t.equal(done.legs[0]!.received, done.received, "the leg's received is the plan's");
  t.match(done.legs[0], { state: 'completed', depositUpdateId: /^[0-9a-f]+$/, settlementUpdateId: result.depositUpdateId });
  const outcome = await keyed.outcome({ party, since, deadline: plan.expiry });
  t.equal(outcome.status, 'completed', '/api/v2/outcome agrees');
  t.equal(outcome.depositUpdateId, done.legs[0]!.settlementUpdateId, 'the same settling update');
  t.equal(done.history.map((h) => h.seq).join(), done.history.map((_, i) => i + 1).join(), 'seq counts from 1 with no gap');
});

t.test('"slippage failed: the pool moved past the floor, the deposit returned"', async (t) => {
  const { party, provider } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-slip` })) as V2.ExecutionPlan;
  await control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 });
  t.teardown(() => control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: 300 }));
  const result = await execute(plan, { provider, client: keyed });
  t.equal(result.status, 'SLIPPAGE_FAILED');
  const done = await terminal(plan.planId, { key });
  t.equal(done.state, 'slippage_failed');
  t.equal(done.received, null, 'nothing received');
  t.equal(done.legs[0]!.settlementUpdateId, result.depositUpdateId, "the returning update, the SDK's");
});

t.test('"expired: no deposit by the expiry and the ledger\'s tolerance"', async (t) => {
  const { party } = await taker('100');
  const plan = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-exp` })) as V2.AppPlan;
  clockShiftMs = 91_000 + 61_000;
  t.teardown(() => void (clockShiftMs = 0));
  const done = await terminal(plan.planId, { token: plan.statusToken! });
  t.strictSame(states(done), ['planned', 'expired']);
  t.equal(done.legs[0]!.state, 'expired');
  clockShiftMs = 0;
});

t.test('"server-sent events: every event after Last-Event-ID, none repeated, closed after the terminal one"', async (t) => {
  const { party, provider } = await taker('100');
  const plan = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-sse` })) as V2.AppPlan;
  const url = `${base}/api/v2/plan/events?planId=${plan.planId}&token=${plan.statusToken}`;
  const streamed = fetch(url, { headers: { 'last-event-id': '0' } }).then(async (r) => ({ code: r.status, type: r.headers.get('content-type'), text: await r.text() }));
  await execute(plan, { provider, client: keyless });
  const { code, type, text } = await streamed;
  if (!text.includes('data:')) t.comment(JSON.stringify(text));
  t.equal(code, 200);
  t.match(type, /^text\/event-stream/);
  t.ok(text.startsWith('retry: 2000\n\n'), 'opens with its retry');
  const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as PlanStatusEvent);
  t.strictSame(events.map((e) => e.seq), events.map((_, i) => i + 1), 'every event from 1, in order');
  t.equal(events.at(-1)!.type, 'plan.completed', 'the last is terminal');
  const ids = [...text.matchAll(/^id: (.*)$/gm)].map((m) => Number(m[1]));
  t.strictSame(ids, events.map((e) => e.seq), 'id: is each event\'s seq');
  const resumed = await (await fetch(url, { headers: { 'last-event-id': '1' } })).text();
  const again = [...resumed.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as PlanStatusEvent).seq);
  t.strictSame(again, events.slice(1).map((e) => e.seq), 'resumed after 1: the rest, none repeated');
  const last = events.at(-1)!.seq;
  const after = await (await fetch(`${url}&lastEventId=${last}`)).text();
  t.equal(after, 'retry: 2000\n\n', 'resumed after the terminal event: nothing more, and the stream ends');
  const bad = await fetch(url, { headers: { 'last-event-id': 'x' } });
  t.equal(bad.status, 400, 'a malformed Last-Event-ID: 400');
  const denied = await fetch(`${base}/api/v2/plan/events?planId=${plan.planId}`);
  t.equal(denied.status, 404, 'without its capability: 404 before any stream');
  t.equal((await denied.json() as { code: string }).code, 'plan_not_found');
});

t.test('"an idle stream carries a heartbeat, so proxies keep it open"', async (t) => {
  const { party } = await taker('100');
  const plan = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-beat` })) as V2.AppPlan;
  const stop = new AbortController();
  const response = await fetch(`${base}/api/v2/plan/events?planId=${plan.planId}&token=${plan.statusToken}`, { signal: stop.signal });
  const reader = response.body!.getReader();
  let text = '';
  // The app's heartbeat is every 200 ms here; the stream is read until one arrives, however long that takes.
  while (!text.includes(': heartbeat\n\n')) text += new TextDecoder().decode((await reader.read()).value);
  stop.abort();
  t.match(text, /^retry: 2000\n\nevent: status\nid: 1\n/, 'the latest event first, without Last-Event-ID');
  t.ok(text.includes(': heartbeat\n\n'), 'then a heartbeat comment while nothing happens');
  for (let i = 0; i < 100 && app.core.planStatus.watched > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal(app.core.planStatus.watched, 0, 'a closed stream leaves no watch behind');
});

t.test('"a split partly filled: one leg paid, one returned: partially_completed with each leg\'s fate"', async (t) => {
  const amount = '1000000';
  const { party, provider } = await taker(amount);
  const quote = await keyed.quote({ from: 'CC', to: 'USDCx', amount });
  const legs = quote.split!.legs.map(({ venueId, amount }) => ({ venueId, amount }));
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount, legs, takerParty: party, idempotencyKey: `${party}-split` })) as V2.SplitPlan;
  const wallet = movedBeforePrepare(provider, () => control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 }));
  t.teardown(() => control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: 300 }));
  const result = await execute(plan, { provider: wallet, client: keyed });
  t.equal(result.status, 'PARTIALLY_COMPLETED');
  const done = await terminal(plan.planId, { key });
  t.equal(done.state, 'partially_completed');
  const byVenue = Object.fromEntries(done.legs.map((l) => [l.venueId, l]));
  t.equal(byVenue.tradecraft!.state, 'slippage_failed', 'the tradecraft leg returned');
  t.equal(byVenue.oneswap!.state, 'completed', 'the OneSwap leg paid (its venue status)');
  t.equal(byVenue.oneswap!.basis, 'venue');
  t.equal(done.received, result.received, "received: the paid leg's, the SDK's");
});

t.test('"an intent plan (OneSwap) awaits its signature, then is followed on OneSwap\'s own status: basis venue"', async (t) => {
  const { party, provider } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey: `${party}-oneswap` })) as V2.ExecutionPlan;
  const before = await status(plan.planId, { key });
  t.match(before.body, { state: 'awaiting_signature', legs: [{ leg: 0, venueId: 'oneswap', basis: 'venue', state: 'planned' }] }, 'awaiting its signature, its one leg named');
  const result = await execute(plan, { provider, client: keyed });
  t.equal(result.status, 'COMPLETED');
  const done = await terminal(plan.planId, { key });
  t.equal(done.state, 'completed');
  t.equal(states(done)[0], 'awaiting_signature');
  t.ok(states(done).includes('planned'), 'planned once signed');
  t.equal(done.received, result.received, "received: OneSwap's actual output, the SDK's");
});

t.test('"an intent plan never signed expires with its plan"', async (t) => {
  const { party } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey: `${party}-unsigned` })) as V2.ExecutionPlan;
  clockShiftMs = 91_000 + 61_000;
  t.teardown(() => void (clockShiftMs = 0));
  const done = await terminal(plan.planId, { key });
  t.strictSame(states(done), ['awaiting_signature', 'expired']);
  clockShiftMs = 0;
});

t.test('"a deposit the service cannot see (Nightly\'s swap address) reads the taker\'s view the SDK reports: basis taker"', async (t) => {
  const { party, provider } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'nightly', takerParty: party, idempotencyKey: `${party}-nightly` })) as V2.ExecutionPlan;
  const before = await status(plan.planId, { key });
  t.match(before.body, { state: 'planned', legs: [{ venueId: 'nightly', basis: 'unobserved', state: 'planned' }] }, 'not seen by the service: it says why');
  const result = await execute(plan, { provider, client: keyed });
  t.equal(result.status, 'COMPLETED', "the taker's own view: completed");
  const done = await terminal(plan.planId, { key });
  t.equal(done.state, 'completed');
  t.match(done.legs[0], { basis: 'taker', state: 'completed', received: result.received, settlementUpdateId: result.depositUpdateId }, "the wallet's view, as reported");
  const again = await fetch(`${base}/api/v2/plan/report`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ planId: plan.planId, legs: [{ leg: 0, outcome: 'slippage_failed', depositUpdateId: null, received: null }] }),
  });
  t.equal(again.status, 202, 'a later report is taken as a no-op');
  t.equal((await status(plan.planId, { key })).body.state, 'completed', 'the first report stands');
});

t.test('"a report is refused for a leg the service reads itself, a floor not met, or another caller"', async (t) => {
  const { party } = await taker('100');
  const tradecraft = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-report-tc` })) as V2.ExecutionPlan;
  const nightly = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'nightly', takerParty: party, idempotencyKey: `${party}-report-n` })) as V2.AppPlan;
  const report = (body: unknown, apiKey?: string) =>
    fetch(`${base}/api/v2/plan/report`, { method: 'POST', headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) }, body: JSON.stringify(body) }).then(async (r) => ({ code: r.status, body: (await r.json()) as { code?: string } }));
  const paid = { leg: 0, outcome: 'completed', depositUpdateId: '1220ab', received: '100' };
  t.match(await report({ planId: tradecraft.planId, legs: [paid] }, key), { code: 400, body: { code: 'bad_request' } }, 'a ledger leg');
  t.match(await report({ planId: nightly.planId, token: nightly.statusToken, legs: [{ ...paid, received: '0.0000000001' }] }), { code: 400 }, 'completed below its floor');
  t.match(await report({ planId: nightly.planId, legs: [paid] }), { code: 404, body: { code: 'plan_not_found' } }, 'a keyless plan without its token');
  t.match(await report({ planId: nightly.planId, token: nightly.statusToken, legs: [paid] }), { code: 202 }, 'its token');
});

t.test('"unreported past the expiry, a leg the service cannot see reads unobserved"', async (t) => {
  const { party } = await taker('100');
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'nightly', takerParty: party, idempotencyKey: `${party}-unreported` })) as V2.ExecutionPlan;
  clockShiftMs = 91_000 + 61_000;
  t.teardown(() => void (clockShiftMs = 0));
  const done = await terminal(plan.planId, { key });
  t.strictSame(states(done), ['planned', 'unobserved']);
  clockShiftMs = 0;
});

t.test('"never log a taker\'s party or a plan\'s capability": nothing the status reads leaves a trace in the log', async (t) => {
  const logs = app.rawLogs();
  t.ok(logs.length > 0, 'the service logged its requests');
  t.notOk(/st_[A-Za-z0-9_-]{43}/.test(logs), 'no statusToken in any line');
  t.notOk(logs.includes('::1220' + '7'.repeat(64)), "no taker's party in any line");
  t.notOk(logs.includes('/api/v2/plan/status?'), 'no status URL (its query holds the capability)');
});
