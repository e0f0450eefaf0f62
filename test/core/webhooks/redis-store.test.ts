// The Redis webhook store (core/webhooks/redis-store.ts, BullMQ) with two dispatchers on one Redis,
// as two instances: "one delivery per event" when both queue the same events and both run
// workers; each instance's retries and per-plan order hold across them; a registration is seen
// by both, and the bound on a key's endpoints holds when both add at once. A Redis of the test's
// own (test/helpers/redis.ts), database 7, and a key prefix of each test's own.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { MAX_ENDPOINTS_PER_KEY } from '../../../core/webhooks/endpoints.js';
import type { WebhookDispatcher } from '../../../core/webhooks/dispatcher.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { planEvent, planIdOf, startReceiver, testDispatcher } from '../../helpers/webhooks.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());
const skip = redisSkip(redis);
const PARTNER = 'key_0123456789ab';

/** Two dispatchers on the test's Redis under a prefix of their own, as two instances. */
async function twoInstances(t: { teardown(fn: () => unknown): void }): Promise<[WebhookDispatcher, WebhookDispatcher]> {
  const prefix = `test-${randomUUID()}`;
  const env = { REDIS_URL: `${redis!.url}/7` };
  const a = await testDispatcher(t, env, { prefix });
  const b = await testDispatcher(t, env, { prefix });
  return [a.dispatcher, b.dispatcher];
}

const seqOf = (id: string) => Number(/_([0-9]+)$/.exec(id)![1]);

t.test('"one delivery per event with two instances": both queue the same events and both run workers; each event reaches the endpoint once, verified', skip, async (t) => {
  const receiver = await startReceiver(t);
  const [a, b] = await twoInstances(t);
  const { secret } = await a.endpoints.create(PARTNER, { url: receiver.url });
  t.equal((await b.endpoints.list(PARTNER)).length, 1, 'the other instance sees the registration');
  const events = [1, 2, 3, 4].flatMap((plan) => [1, 2].map((seq) => planEvent(planIdOf(100 + plan), seq, seq === 1 ? 'planned' : 'completed')));
  await Promise.all(events.flatMap((event) => [a.sink.accept({ event, partnerId: PARTNER }), b.sink.accept({ event, partnerId: PARTNER })]));
  let deliveries = await b.deliveries(PARTNER, null);
  while (deliveries.length < events.length || deliveries.some((d) => d.state !== 'delivered')) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    deliveries = await b.deliveries(PARTNER, null);
  }
  t.equal(deliveries.length, events.length, 'one delivery per event, as either instance lists them');
  t.ok(deliveries.every((d) => d.attempts.length === 1 && d.attempts[0]!.status === 200), 'each delivered at its one attempt');
  const ids = receiver.received.map((r) => r.headers['webhook-id']!);
  t.equal(ids.length, events.length, 'one request per event');
  t.strictSame([...new Set(ids)].sort(), events.map((e) => `msg_${e.planId}_${e.seq}`).sort(), 'each event once');
  for (const r of receiver.received) t.ok(new Webhook(secret).verify(r.body, r.headers), `${r.headers['webhook-id']} verifies`);
});

t.test('retries with backoff and per-plan seq order hold across instances: seq 2 waits for seq 1, retried after 500s', skip, async (t) => {
  const planId = planIdOf(200);
  let failuresLeft = 2;
  const receiver = await startReceiver(t, (r) => (r.headers['webhook-id'] === `msg_${planId}_1` && failuresLeft-- > 0 ? 500 : 200));
  const [a, b] = await twoInstances(t);
  await a.endpoints.create(PARTNER, { url: receiver.url });
  await a.sink.accept({ event: planEvent(planId, 1), partnerId: PARTNER });
  await b.sink.accept({ event: planEvent(planId, 2, 'deposit_seen'), partnerId: PARTNER });
  await a.sink.accept({ event: planEvent(planId, 3, 'completed'), partnerId: PARTNER });
  await receiver.until((r) => r.length === 5);
  t.strictSame(receiver.received.map((r) => seqOf(r.headers['webhook-id']!)), [1, 1, 1, 2, 3]);
  let [first] = (await a.deliveries(PARTNER, null)).filter((d) => d.seq === 1);
  t.strictSame(first!.attempts.map((x) => x.status), [500, 500, 200]);
  first = (await b.deliveries(PARTNER, null)).find((d) => d.seq === 1);
  t.equal(first!.state, 'delivered', 'the other instance reads the same attempts');
});

t.test(`"max ${MAX_ENDPOINTS_PER_KEY} endpoints per key" holds when two instances register at once`, skip, async (t) => {
  const [a, b] = await twoInstances(t);
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).endpoints.create(PARTNER, { url: `https://hooks.wallet.example/${i}` })));
  t.equal(results.filter((r) => r.status === 'fulfilled').length, MAX_ENDPOINTS_PER_KEY);
  t.equal((await a.endpoints.list(PARTNER)).length, MAX_ENDPOINTS_PER_KEY);
});
