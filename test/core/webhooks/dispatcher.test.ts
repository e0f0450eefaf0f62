// Partner webhooks' dispatcher (core/webhooks/dispatcher.ts) on the embedded store, against a
// receiver in the test: each event of a keyed plan is delivered to every enabled endpoint of its
// partner that hears its type, signed as Standard Webhooks specify (verified with the
// `standardwebhooks` library, as a partner would), retried after a failing status or a time-out,
// given up after WEBHOOK_RETRY_FOR_MS, and per plan in seq order. Waits are the receiver's
// requests and the deliveries' states, never a time.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import type { WebhookDispatcher } from '../../../core/webhooks/dispatcher.js';
import type { Delivery } from '../../../core/webhooks/store.js';
import { planEvent, planIdOf, startReceiver, testDispatcher, type Received } from '../../helpers/webhooks.js';

const PARTNER = 'key_0123456789ab';

/** Polls the partner's deliveries until `check` holds of them (a delivery's state is written after its answer). */
async function deliveriesWhen(dispatcher: WebhookDispatcher, check: (deliveries: Delivery[]) => boolean, partnerId = PARTNER): Promise<Delivery[]> {
  for (;;) {
    const deliveries = await dispatcher.deliveries(partnerId, null);
    if (check(deliveries)) return deliveries;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const seqOf = (r: Received) => Number(/_([0-9]+)$/.exec(r.headers['webhook-id']!)![1]);

t.test('"signed as Standard Webhooks specify": webhook-id msg_<planId>_<seq>, the PlanWebhook envelope as the body, a signature the standardwebhooks library verifies; a keyless plan\'s event goes nowhere', async (t) => {
  const receiver = await startReceiver(t);
  const { dispatcher } = await testDispatcher(t);
  const { endpoint, secret } = await dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and 32 bytes in base64');

  const planId = planIdOf(1);
  await dispatcher.sink.accept({ event: planEvent(planIdOf(2), 1), partnerId: null });
  const event = planEvent(planId, 1);
  await dispatcher.sink.accept({ event, partnerId: PARTNER });
  await receiver.until((r) => r.length === 1);
  const [request] = receiver.received;
  t.equal(request!.path, '/hooks/bestex');
  t.equal(request!.headers['webhook-id'], `msg_${planId}_1`);
  t.match(request!.headers['webhook-timestamp'], /^[0-9]{10}$/);
  t.equal(request!.headers['content-type'], 'application/json');
  t.strictSame(JSON.parse(request!.body), { type: 'plan.planned', timestamp: event.at, data: event }, 'the envelope of the event');
  t.strictSame(new Webhook(secret).verify(request!.body, request!.headers), { type: 'plan.planned', timestamp: event.at, data: event }, 'verified with the endpoint\'s secret');
  t.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(request!.body, request!.headers), /No matching signature/, 'and with no other');

  const [delivery] = await deliveriesWhen(dispatcher, (d) => d[0]?.state === 'delivered');
  t.match(delivery, { endpointId: endpoint.id, planId, seq: 1, type: 'plan.planned', state: 'delivered', nextAttemptAt: null });
  t.match(delivery!.attempts, [{ status: 200, error: null }]);
  t.equal(receiver.received.length, 1, 'the keyless plan\'s event was sent nowhere');
});

t.test('"2xx within the time-out = delivered; everything else retried with backoff": two 500s, then a 200, under the same webhook-id; a time-out is retried too', async (t) => {
  const receiver = await startReceiver(t, (_r, i) => (i < 2 ? 500 : 200));
  const { dispatcher } = await testDispatcher(t);
  await dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  await dispatcher.sink.accept({ event: planEvent(planIdOf(3), 1), partnerId: PARTNER });
  const [delivery] = await deliveriesWhen(dispatcher, (d) => d[0]?.state === 'delivered');
  t.strictSame(delivery!.attempts.map((a) => a.status), [500, 500, 200]);
  t.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1, 'every attempt carries the same webhook-id');
  const [a, b, c] = delivery!.attempts;
  t.ok(b!.at - a!.at >= 20 && c!.at - b!.at >= 40, `each wait at least the doubled first retry (${b!.at - a!.at} ms, ${c!.at - b!.at} ms)`);

  const slow = await startReceiver(t, (_r, i) => (i === 0 ? 'hang' : 204));
  const short = await testDispatcher(t, { WEBHOOK_TIMEOUT_MS: '300' });
  await short.dispatcher.endpoints.create(PARTNER, { url: slow.url });
  await short.dispatcher.sink.accept({ event: planEvent(planIdOf(4), 1), partnerId: PARTNER });
  const [timedOut] = await deliveriesWhen(short.dispatcher, (d) => d[0]?.state === 'delivered');
  t.match(timedOut!.attempts[0], { status: null, error: 'timeout' }, 'an answer not given in WEBHOOK_TIMEOUT_MS is a failed attempt');
  t.match(timedOut!.attempts.at(-1), { status: 204, error: null }, 'and retried until answered');
});

t.test('"given up after 24 h" (WEBHOOK_RETRY_FOR_MS): an endpoint that always fails ends failed, logged, and the plan\'s next event is delivered after it', async (t) => {
  const receiver = await startReceiver(t, (r) => (seqOf(r) === 1 ? 503 : 200));
  const { dispatcher, log } = await testDispatcher(t, { WEBHOOK_RETRY_FOR_MS: '300', WEBHOOK_MAX_ATTEMPT_INTERVAL_MS: '80' });
  await dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  const planId = planIdOf(5);
  await dispatcher.sink.accept({ event: planEvent(planId, 1), partnerId: PARTNER });
  await dispatcher.sink.accept({ event: planEvent(planId, 2, 'deposit_seen'), partnerId: PARTNER });
  const deliveries = await deliveriesWhen(dispatcher, (d) => d.length === 2 && d.every((x) => x.state !== 'pending'));
  const first = deliveries.find((d) => d.seq === 1)!;
  t.equal(first.state, 'failed');
  t.ok(first.attempts.length >= 3 && first.attempts.every((a) => a.status === 503), `${first.attempts.length} attempts, each 503`);
  t.equal(deliveries.find((d) => d.seq === 2)!.state, 'delivered');
  t.ok(log.lines.some((l) => l.level === 'warn' && l.message === 'webhook delivery given up' && l.fields.webhookId === `msg_${planId}_1`), 'the give-up is logged with its webhook-id');
});

t.test('"per (endpoint, plan) in seq order": a later event waits for an earlier undelivered one of its plan; another plan does not wait', async (t) => {
  const planA = planIdOf(6);
  const planB = planIdOf(7);
  let failuresLeft = 3;
  const receiver = await startReceiver(t, (r) => (r.headers['webhook-id'] === `msg_${planA}_1` && failuresLeft-- > 0 ? 500 : 200));
  const { dispatcher } = await testDispatcher(t);
  await dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  for (const [seq, state] of [[1, 'planned'], [2, 'deposit_seen'], [3, 'completed']] as const) await dispatcher.sink.accept({ event: planEvent(planA, seq, state), partnerId: PARTNER });
  await dispatcher.sink.accept({ event: planEvent(planB, 1), partnerId: PARTNER });
  await receiver.until((r) => r.filter((x) => x.headers['webhook-id']!.includes(planA)).length === 6);
  const ofA = receiver.received.filter((r) => r.headers['webhook-id']!.includes(planA)).map(seqOf);
  t.strictSame(ofA, [1, 1, 1, 1, 2, 3], 'seq 2 and 3 only once seq 1 is delivered, in order');
  const bAt = receiver.received.findIndex((r) => r.headers['webhook-id'] === `msg_${planB}_1`);
  const aDeliveredAt = receiver.received.findIndex((r, i) => r.headers['webhook-id'] === `msg_${planA}_1` && i >= 3);
  t.ok(bAt >= 0 && bAt < aDeliveredAt, 'the other plan\'s event went while the first plan\'s seq 1 was retried');
});

t.test('only the endpoints that hear the event\'s type and are enabled get it; a disabled endpoint\'s queued deliveries end unsent', async (t) => {
  const receiver = await startReceiver(t);
  const { dispatcher } = await testDispatcher(t);
  const completedOnly = await dispatcher.endpoints.create(PARTNER, { url: `${receiver.url}?only=completed`, eventTypes: ['plan.completed'] });
  const disabled = await dispatcher.endpoints.create(PARTNER, { url: `${receiver.url}?disabled`, enabled: false });
  const all = await dispatcher.endpoints.create(PARTNER, { url: `${receiver.url}?all` });
  t.strictSame(completedOnly.endpoint.eventTypes, ['plan.completed']);
  t.equal(all.endpoint.eventTypes.length, 10, 'every type by default');
  const planId = planIdOf(8);
  await dispatcher.sink.accept({ event: planEvent(planId, 1), partnerId: PARTNER });
  await dispatcher.sink.accept({ event: planEvent(planId, 2, 'completed'), partnerId: PARTNER });
  await receiver.until((r) => r.length === 3);
  await deliveriesWhen(dispatcher, (d) => d.length === 3 && d.every((x) => x.state === 'delivered'));
  t.strictSame(
    receiver.received.map((r) => `${r.path} ${seqOf(r)}`).sort(),
    ['/hooks/bestex?all 1', '/hooks/bestex?all 2', '/hooks/bestex?only=completed 2'],
  );
  t.notOk(receiver.received.some((r) => r.path.includes('disabled')), 'the disabled endpoint got nothing');
  t.equal(disabled.endpoint.enabled, false);
});
