// A partner key's webhook endpoints (core/webhooks/endpoints.ts): an https URL (http and internal
// addresses only where the operator allows private addresses), the event types heard, at most 5
// per key, by the key's record id; the signing secret shown once, kept sealed under
// IDEMPOTENCY_SECRET and never logged; and a rotation that keeps the replaced secret signing for
// 24 hours, both signatures in the header, each verifying with the standardwebhooks library.
import path from 'node:path';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { DomainError } from '../../../core/errors.js';
import { checkedUrl, MAX_ENDPOINTS_PER_KEY, ROTATION_GRACE_MS } from '../../../core/webhooks/endpoints.js';
import { EMBEDDED_FILE } from '../../../core/webhooks/embedded-store.js';
import type { Delivery } from '../../../core/webhooks/store.js';
import { planEvent, planIdOf, startReceiver, testDispatcher } from '../../helpers/webhooks.js';

const PARTNER = 'key_0123456789ab';

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return `${err.code}: ${err.message}`;
    throw err;
  }
  return 'taken';
};

t.test('"an https URL (http only when the operator allows private addresses)": no credentials, no fragment, no internal address written in it', async (t) => {
  t.equal(checkedUrl('https://hooks.wallet.example/bestex?v=1', false), 'https://hooks.wallet.example/bestex?v=1');
  t.equal(checkedUrl('https://203.0.113.7:8443/x', false), 'https://203.0.113.7:8443/x', 'a public address');
  for (const [url, reason] of [
    ['http://hooks.wallet.example/bestex', /bad_request: url must be an https URL/],
    ['ftp://hooks.wallet.example/', /https URL/],
    ['hooks.wallet.example/bestex', /absolute https URL/],
    ['https://user:pass@hooks.wallet.example/', /user name or password/],
    ['https://hooks.wallet.example/#frag', /fragment/],
    ['https://127.0.0.1/', /internal address/],
    ['https://10.1.2.3/', /internal address/],
    ['https://169.254.169.254/latest/meta-data', /internal address/],
    ['https://[::1]/', /internal address/],
    ['https://[fd00::1]/', /internal address/],
    ['https://[::ffff:10.0.0.1]/', /internal address/],
    ['https://0.0.0.0/', /internal address/],
    ['https://224.0.0.1/', /internal address/],
    ['https://localhost/', /internal address/],
    ['https://api.localhost/', /internal address/],
    [`https://hooks.wallet.example/${'a'.repeat(2100)}`, /at most 2048/],
  ] as const) {
    t.match(refusal(() => checkedUrl(url, false)), reason, url.slice(0, 60));
  }
  t.equal(checkedUrl('http://127.0.0.1:9000/hook', true), 'http://127.0.0.1:9000/hook', 'allowed: plain http to this machine');
});

t.test(`endpoints by key record id: at most ${MAX_ENDPOINTS_PER_KEY}, each updated and deleted by its own key only; unknown ids are not_found`, async (t) => {
  const { dispatcher } = await testDispatcher(t, { WEBHOOK_ALLOW_PRIVATE: 'false' });
  const { endpoints } = dispatcher;
  const made = [];
  for (let i = 0; i < MAX_ENDPOINTS_PER_KEY; i++) made.push(await endpoints.create(PARTNER, { url: `https://hooks.wallet.example/${i}` }));
  await t.rejects(endpoints.create(PARTNER, { url: 'https://hooks.wallet.example/6' }), { code: 'bad_request', message: /at most 5 webhook endpoints/ });
  t.equal((await endpoints.list('key_00000000000b')).length, 0, 'another key has none');
  await t.rejects(endpoints.create(PARTNER, { url: 'https://x.example/', eventTypes: ['plan.exploded'] }), { code: 'bad_request', message: /not an event type/ });
  await t.rejects(endpoints.create(PARTNER, { url: 'https://x.example/', eventTypes: [] }), { code: 'bad_request', message: /at least one/ });

  const id = made[0]!.endpoint.id;
  t.match(id, /^we_[A-Za-z0-9_-]{20}$/);
  const updated = await endpoints.update(PARTNER, id, { url: 'https://hooks.wallet.example/new', eventTypes: ['plan.expired', 'plan.completed'], enabled: false });
  t.match(updated, { id, url: 'https://hooks.wallet.example/new', eventTypes: ['plan.completed', 'plan.expired'], enabled: false }, 'types in the order a plan reaches them');
  await t.rejects(endpoints.update('key_00000000000b', id, { enabled: true }), { code: 'not_found' }, 'another key cannot touch it');
  await t.rejects(endpoints.rotate('key_00000000000b', id), { code: 'not_found' });
  await t.rejects(endpoints.remove('key_00000000000b', id), { code: 'not_found' });
  await endpoints.remove(PARTNER, id);
  await t.rejects(endpoints.remove(PARTNER, id), { code: 'not_found', message: `this key has no webhook endpoint ${id}` });
  t.equal((await endpoints.list(PARTNER)).length, MAX_ENDPOINTS_PER_KEY - 1);
  await endpoints.create(PARTNER, { url: 'https://hooks.wallet.example/again' });
});

t.test('"rotation keeps the previous secret valid for a 24 h grace period": both signatures in webhook-signature, each verifying; after the grace period only the new one signs', async (t) => {
  const receiver = await startReceiver(t);
  const { dispatcher } = await testDispatcher(t);
  const created = await dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  t.equal(created.endpoint.previousSecretExpiresAt, null);
  const rotated = await dispatcher.endpoints.rotate(PARTNER, created.endpoint.id);
  t.not(rotated.secret, created.secret, 'a new secret');
  t.ok(Date.parse(rotated.endpoint.previousSecretExpiresAt!) - Date.now() > ROTATION_GRACE_MS - 60_000, 'the old one signs for 24 hours');

  await dispatcher.sink.accept({ event: planEvent(planIdOf(1), 1), partnerId: PARTNER });
  await receiver.until((r) => r.length === 1);
  const [request] = receiver.received;
  t.equal(request!.headers['webhook-signature']!.split(' ').length, 2, 'two signatures, space-separated');
  t.ok(new Webhook(created.secret).verify(request!.body, request!.headers), 'a receiver with the old secret verifies');
  t.ok(new Webhook(rotated.secret).verify(request!.body, request!.headers), 'a receiver with the new secret verifies');

  const stored = await dispatcher.endpoints.owned(PARTNER, created.endpoint.id);
  t.strictSame(dispatcher.endpoints.signingSecrets(stored, new Date(Date.now() + ROTATION_GRACE_MS + 1000)), [rotated.secret], 'after the grace period, the new secret alone');
  t.equal((await dispatcher.endpoints.list(PARTNER))[0]!.previousSecretExpiresAt, rotated.endpoint.previousSecretExpiresAt);
});

t.test('"secrets stored encrypted and never logged": the store holds neither secret; the log names ids only; another IDEMPOTENCY_SECRET cannot sign with them', async (t) => {
  const receiver = await startReceiver(t);
  const first = await testDispatcher(t);
  const created = await first.dispatcher.endpoints.create(PARTNER, { url: receiver.url });
  const rotated = await first.dispatcher.endpoints.rotate(PARTNER, created.endpoint.id);
  await first.close();
  const file = readFileSync(path.join(first.dataDir, EMBEDDED_FILE)).toString('latin1');
  for (const secret of [created.secret, rotated.secret]) {
    t.notOk(file.includes(secret.slice('whsec_'.length)), 'the file holds no secret');
    t.notOk(JSON.stringify(first.log.lines).includes(secret.slice('whsec_'.length)), 'no log line holds it');
  }
  t.notOk(JSON.stringify(first.log.lines).includes(receiver.url), 'nor the URL, which may hold a token of the partner\'s');
  t.ok(first.log.lines.some((l) => l.message === 'portal: webhook endpoint secret rotated' && l.fields.endpointId === created.endpoint.id && l.fields.keyId === PARTNER));

  const stranger = await testDispatcher(t, { DATA_DIR: first.dataDir, IDEMPOTENCY_SECRET: 'another-secret-0123456789abcdef-0123' });
  await stranger.dispatcher.sink.accept({ event: planEvent(planIdOf(2), 1), partnerId: PARTNER });
  let deliveries: Delivery[] = [];
  while (deliveries[0]?.attempts.length !== 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    deliveries = await stranger.dispatcher.deliveries(PARTNER, null);
  }
  t.match(deliveries[0]!.attempts[0], { status: null, error: 'secret_unreadable' }, 'nothing is sent unsigned');
  t.equal(receiver.received.length, 0);
  t.ok(stranger.log.lines.some((l) => l.level === 'warn' && /does not open under this IDEMPOTENCY_SECRET/.test(l.message)), 'the operator is told');
});
