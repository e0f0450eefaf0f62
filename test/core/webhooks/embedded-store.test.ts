// The embedded webhook store (core/webhooks/embedded-store.ts): a SQLite file in DATA_DIR, made on
// the first endpoint's registration; a delivery is kept before the sink's promise settles, so a
// process killed then loses nothing and the next takes its store over; one process per file; and
// "delivery resumed after a restart": a dispatcher closed while a delivery waits between retries,
// a new one opened on the same DATA_DIR delivers it, signed with the same secret (without
// IDEMPOTENCY_SECRET, under the key the store keeps in DATA_DIR).
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { EMBEDDED_FILE } from '../../../core/webhooks/embedded-store.js';
import { SEAL_KEY_FILE } from '../../../core/webhooks/open.js';
import { TEST_IDEMPOTENCY_SECRET } from '../../helpers/app.js';
import { tempDir } from '../../helpers/temp.js';
import { FAST_RETRIES, planEvent, planIdOf, startReceiver, testDispatcher } from '../../helpers/webhooks.js';

const PARTNER = 'key_0123456789ab';

t.test('"made on first use": a service with no endpoint opens no file; the first registration makes it', async (t) => {
  const { dispatcher, dataDir } = await testDispatcher(t);
  await dispatcher.sink.accept({ event: planEvent(planIdOf(1), 1), partnerId: PARTNER });
  t.strictSame(await dispatcher.endpoints.list(PARTNER), []);
  t.notOk(existsSync(path.join(dataDir, EMBEDDED_FILE)), 'no file yet');
  await dispatcher.endpoints.create(PARTNER, { url: 'https://hooks.wallet.example/bestex' });
  t.ok(existsSync(path.join(dataDir, EMBEDDED_FILE)), 'the file is made');
});

t.test('"kept durably before the sink\'s promise settles": a process killed the moment accept resolves loses nothing; the next one takes its store over (and the lock it left) and delivers', async (t) => {
  let up = false;
  const receiver = await startReceiver(t, () => (up ? 200 : 503));
  const dataDir = tempDir(t, 'bestex-webhooks-crash-');
  const env = { DATA_DIR: dataDir, IDEMPOTENCY_SECRET: TEST_IDEMPOTENCY_SECRET, WEBHOOK_ALLOW_PRIVATE: 'true', ...FAST_RETRIES };
  const planId = planIdOf(2);
  // A process of its own: it registers an endpoint, has an event accepted, prints the secret and kills itself.
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', `
    const { openWebhooks } = await import(${JSON.stringify(new URL('../../../core/webhooks/open.js', import.meta.url).href)});
    const { loadConfig } = await import(${JSON.stringify(new URL('../../../core/config.js', import.meta.url).href)});
    const quiet = { info() {}, warn() {}, error() {} };
    const dispatcher = await openWebhooks(loadConfig(${JSON.stringify(env)}), quiet);
    const { secret } = await dispatcher.endpoints.create(${JSON.stringify(PARTNER)}, { url: ${JSON.stringify(receiver.url)} });
    await dispatcher.sink.accept({ event: ${JSON.stringify(planEvent(planId, 1))}, partnerId: ${JSON.stringify(PARTNER)} });
    process.stdout.write(secret);
    process.kill(process.pid, 'SIGKILL');
  `], { encoding: 'utf8', timeout: 20_000 });
  t.equal(child.signal, 'SIGKILL', `the process was killed (${child.stderr})`);
  const secret = child.stdout;
  t.ok(existsSync(path.join(dataDir, `${EMBEDDED_FILE}.owner`)), 'it left its owner file behind');

  up = true;
  const before = receiver.received.length;
  const { dispatcher } = await testDispatcher(t, { DATA_DIR: dataDir });
  await receiver.until((r) => r.length > before);
  const delivered = receiver.received.at(-1)!;
  t.equal(delivered.headers['webhook-id'], `msg_${planId}_1`, 'the event accepted before the kill is delivered after it');
  t.ok(new Webhook(secret).verify(delivered.body, delivered.headers), 'signed with the secret the killed process showed');
  t.equal((await dispatcher.endpoints.list(PARTNER)).length, 1);
});

t.test('"one instance per DATA_DIR": a second store on the same file in a live process is refused, naming the process', async (t) => {
  const first = await testDispatcher(t);
  await first.dispatcher.endpoints.create(PARTNER, { url: 'https://hooks.wallet.example/bestex' });
  const second = await testDispatcher(t, { DATA_DIR: first.dataDir });
  await t.rejects(second.dispatcher.endpoints.list(PARTNER), { message: /is open already in this process/ });
  await first.close();
  await second.close();
  const third = await testDispatcher(t, { DATA_DIR: first.dataDir });
  t.equal((await third.dispatcher.endpoints.list(PARTNER)).length, 1, 'once closed, the next store opens it');
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
