// Partner webhooks end to end: a partner's keyed v2 plan made through the SDK and executed by the
// sandbox wallet; the plan status follower derives its states from the ledger and hands each to
// core.webhooks.sink, and the partner's endpoint (a receiver in the test, registered through the
// portal) gets them signed, in seq order, the last one the completed status the API answers.
import t from 'tap';
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Webhook } from 'standardwebhooks';
import type { PlanStatus, PlanWebhook } from '../../../core/contract/v2.js';
import { listen, testApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { fund } from '../../helpers/sandbox.js';
import { FAST_RETRIES, startReceiver } from '../../helpers/webhooks.js';

t.test('a keyed plan executed to completed: its events reach the partner\'s endpoint signed, in seq order, the last the status the API answers; a keyless plan\'s reach no one', async (t) => {
  const receiver = await startReceiver(t);
  const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1', PLAN_STATUS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true', ...FAST_RETRIES } });
  t.teardown(app.close);
  const base = await listen(app.server);
  const { key } = await issueKey(app.core.keyStore, { name: 'webhook partner' });
  const registered = await fetch(`${base}/portal/api/key/webhooks`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url }) });
  t.equal(registered.status, 201);
  const { secret } = (await registered.json()) as { secret: string };

  const sandbox = app.sandbox!;
  const party = `webhook-taker::1220${'7'.repeat(64)}`;
  await fund(sandbox, party, { CC: '200' });
  const provider = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party });
  const keyed = createClientV2({ baseUrl: base, apiKey: key });
  const keyless = createClientV2({ baseUrl: base });

  const other = (await keyless.plan({ from: 'CC', to: 'USDCx', amount: '50', venueId: 'tradecraft', takerParty: party, idempotencyKey: 'keyless-webhooks' })) as V2.AppPlan;
  await execute(other, { provider, client: keyless });
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: 'keyed-webhooks' })) as V2.ExecutionPlan;
  const result = await execute(plan, { provider, client: keyed });
  t.equal(result.status, 'COMPLETED');

  await receiver.until((r) => r.some((x) => (JSON.parse(x.body) as PlanWebhook).data.status.terminal));
  const envelopes = receiver.received.map((r) => {
    t.ok(new Webhook(secret).verify(r.body, r.headers), `${r.headers['webhook-id']} verifies`);
    return JSON.parse(r.body) as PlanWebhook;
  });
  t.ok(envelopes.every((e) => e.data.planId === plan.planId), 'only the keyed plan\'s events: the keyless plan\'s reach no endpoint');
  const seqs = envelopes.map((e) => e.data.seq);
  t.strictSame(seqs, seqs.map((_, i) => i + 1), `every event from the first, in seq order (${seqs.join(', ')})`);
  t.equal(envelopes[0]!.type, 'plan.planned', 'the plan made is the first event delivered');
  t.strictSame(receiver.received.map((r) => r.headers['webhook-id']), seqs.map((seq) => `msg_${plan.planId}_${seq}`));
  const last = envelopes.at(-1)!;
  t.match(last, { type: 'plan.completed', data: { type: 'plan.completed', status: { state: 'completed', terminal: true, received: result.received } } });
  t.equal(last.timestamp, last.data.at, 'the envelope\'s timestamp is the event\'s');
  const answered = (await (await fetch(`${base}/api/v2/plan/status?planId=${plan.planId}`, { headers: { 'x-api-key': key } })).json()) as PlanStatus;
  t.strictSame(last.data.status, answered, 'the status the API answers');
});

t.test('"a partner\'s intent plan is first awaiting its signature": an endpoint that hears only plan.planned gets the plan\'s planned once signed (seq 2), never a seq 1 it did not have', async (t) => {
  const receiver = await startReceiver(t);
  const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1', PLAN_STATUS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: 'true', ...FAST_RETRIES } });
  t.teardown(app.close);
  const base = await listen(app.server);
  const { key } = await issueKey(app.core.keyStore, { name: 'intent partner' });
  const registered = await fetch(`${base}/portal/api/key/webhooks`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url, eventTypes: ['plan.planned'] }) });
  t.equal(registered.status, 201);
  const sandbox = app.sandbox!;
  const party = `intent-taker::1220${'6'.repeat(64)}`;
  await fund(sandbox, party, { CC: '200' });
  const keyed = createClientV2({ baseUrl: base, apiKey: key });
  const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey: 'intent-webhooks' })) as V2.ExecutionPlan;
  const result = await execute(plan, { provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }), client: keyed });
  t.equal(result.status, 'COMPLETED');
  await receiver.until((r) => r.length > 0);
  const answered = (await (await fetch(`${base}/api/v2/plan/status?planId=${plan.planId}`, { headers: { 'x-api-key': key } })).json()) as PlanStatus;
  t.strictSame(answered.history.slice(0, 2).map((h) => [h.seq, h.state]), [[1, 'awaiting_signature'], [2, 'planned']]);
  t.strictSame(receiver.received.map((r) => [(JSON.parse(r.body) as PlanWebhook).data.seq, (JSON.parse(r.body) as PlanWebhook).type]), [[2, 'plan.planned']], 'the planned it heard is the one the status shows');
});
