// The embedded webhook store (core/webhooks/embedded-store.ts): a SQLite file in DATA_DIR, made on
// the first endpoint's registration; a delivery is kept before the sink's promise settles; and
// "delivery resumed after a restart": a dispatcher closed while a delivery waits between retries,
// a new one opened on the same DATA_DIR delivers it, signed with the same secret (without
// IDEMPOTENCY_SECRET, under the key the store keeps in DATA_DIR).
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import pkg from 'node-sqlite3-wasm';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { EMBEDDED_FILE } from '../../../core/webhooks/embedded-store.js';
import { SEAL_KEY_FILE } from '../../../core/webhooks/open.js';
import { planEvent, planIdOf, startReceiver, testDispatcher } from '../../helpers/webhooks.js';

const { Database } = pkg;
const PARTNER = 'key_0123456789ab';

t.test('"made on first use": a service with no endpoint opens no file; the first registration makes it', async (t) => {
  const { dispatcher, dataDir } = await testDispatcher(t);
  await dispatcher.sink.accept({ event: planEvent(planIdOf(1), 1), partnerId: PARTNER });
  t.strictSame(await dispatcher.endpoints.list(PARTNER), []);
  t.notOk(existsSync(path.join(dataDir, EMBEDDED_FILE)), 'no file yet');
  await dispatcher.endpoints.create(PARTNER, { url: 'https://hooks.wallet.example/bestex' });
  t.ok(existsSync(path.join(dataDir, EMBEDDED_FILE)), 'the file is made');
});

t.test('"kept durably before the sink\'s promise settles": once accept resolves, the delivery is in the file, read by another connection', async (t) => {
  const { dispatcher, dataDir } = await testDispatcher(t);
  const { endpoint } = await dispatcher.endpoints.create(PARTNER, { url: 'https://hooks.wallet.example/bestex' });
  const planId = planIdOf(2);
  await Promise.all([1, 2, 3].map((seq) => dispatcher.sink.accept({ event: planEvent(planId, seq), partnerId: PARTNER })));
  const reader = new Database(path.join(dataDir, EMBEDDED_FILE), { readOnly: true });
  t.teardown(() => reader.close());
  t.strictSame(
    reader.all('SELECT endpoint_id, plan_id, seq FROM deliveries ORDER BY seq'),
    [1, 2, 3].map((seq) => ({ endpoint_id: endpoint.id, plan_id: planId, seq })),
  );
  await dispatcher.sink.accept({ event: planEvent(planId, 1), partnerId: PARTNER });
  t.equal(reader.get('SELECT COUNT(*) AS n FROM deliveries')?.n, 3, 'an event accepted again is queued once');
});

t.test('"delivery resumed after a restart": closed while retrying, a new dispatcher on the same DATA_DIR delivers it with the same webhook-id, signed with the same secret', async (t) => {
  let up = false;
  const receiver = await startReceiver(t, () => (up ? 200 : 500));
  // No IDEMPOTENCY_SECRET: the secrets are sealed under the store's own key in DATA_DIR.
  const first = await testDispatcher(t, { IDEMPOTENCY_SECRET: '' });
  const { secret } = await first.dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  const planId = planIdOf(3);
  await first.dispatcher.sink.accept({ event: planEvent(planId, 1), partnerId: PARTNER });
  while (((await first.dispatcher.deliveries(PARTNER, null))[0]?.attempts.length ?? 0) < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  // An attempt in flight now is cut short: not kept, and sent again after the restart.
  await first.close();
  const receivedBefore = receiver.received.length;
  t.equal((statSync(path.join(first.dataDir, SEAL_KEY_FILE)).mode & 0o777).toString(8), '600', 'the sealing key is readable by its owner only');

  up = true;
  const second = await testDispatcher(t, { IDEMPOTENCY_SECRET: '', DATA_DIR: first.dataDir });
  await receiver.until((r) => r.length > receivedBefore);
  const delivered = receiver.received.at(-1)!;
  t.equal(delivered.headers['webhook-id'], `msg_${planId}_1`, 'the same webhook-id');
  t.ok(new Webhook(secret).verify(delivered.body, delivered.headers), 'signed with the secret shown at creation');
  let deliveries = await second.dispatcher.deliveries(PARTNER, null);
  while (deliveries[0]?.state !== 'delivered') {
    await new Promise((resolve) => setTimeout(resolve, 10));
    deliveries = await second.dispatcher.deliveries(PARTNER, null);
  }
  const statuses = deliveries[0]!.attempts.map((a) => a.status);
  t.ok(statuses.length >= 3 && statuses.slice(0, -1).every((s) => s === 500) && statuses.at(-1) === 200, `the attempts before the restart kept, then the delivery (${statuses.join(', ')})`);
});
