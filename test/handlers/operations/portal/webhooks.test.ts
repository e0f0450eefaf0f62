// The key portal's webhook operations over HTTP (openapi/portal.yaml, tag webhooks), signed in by
// the key: an endpoint registered answers its secret once and no later answer carries it, nor the
// log; a rotation through the API signs with both secrets; an endpoint is the key's alone; its
// deliveries are listed with their attempts; "replay from the portal API delivers again with the
// same webhook-id"; a disabled endpoint's delivery is not replayed.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import type * as Portal from '../../../../core/contract/portal.js';
import { testApp, type TestApp } from '../../../helpers/app.js';
import { issueKey } from '../../../helpers/keys.js';
import { FAST_RETRIES, planEvent, planIdOf, startReceiver } from '../../../helpers/webhooks.js';

const app = await testApp({ probed: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true', ...FAST_RETRIES } });
t.teardown(app.close);

const call = (key: string, method: 'GET' | 'POST', url: string, payload?: object) =>
  app.server.inject({ method, url, headers: { 'x-api-key': key }, ...(payload ? { payload } : {}) });

/** A new key and its record id. */
const partner = async (name: string) => {
  const { key, record } = await issueKey(app.core.keyStore, { name });
  return { key, id: record.id };
};

/** The key's deliveries once `check` holds of them. */
async function deliveriesWhen(key: string, check: (d: Portal.WebhookDelivery[]) => boolean, endpointId?: string): Promise<Portal.WebhookDelivery[]> {
  for (;;) {
    const res = await call(key, 'GET', `/portal/api/key/webhooks/deliveries${endpointId ? `?endpointId=${endpointId}` : ''}`);
    const { deliveries } = res.json<Portal.WebhookDeliveries>();
    if (check(deliveries)) return deliveries;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

t.test('"shown ONCE at creation": the 201 carries the secret; listing, updating and the log never do', async (t) => {
  const receiver = await startReceiver(t);
  const { key, id } = await partner('secret-once');
  const created = await call(key, 'POST', '/portal/api/key/webhooks', { url: receiver.url, eventTypes: ['plan.completed', 'plan.planned'] });
  t.equal(created.statusCode, 201, created.body);
  t.equal(created.headers['cache-control'], 'no-store');
  const { endpoint, secret } = created.json<Portal.IssuedWebhookSecret>();
  t.match(endpoint, { url: receiver.url, eventTypes: ['plan.planned', 'plan.completed'], enabled: true, previousSecretExpiresAt: null });
  const body = secret.slice('whsec_'.length);
  const later = [
    await call(key, 'GET', '/portal/api/key/webhooks'),
    await call(key, 'POST', '/portal/api/key/webhooks/update', { id: endpoint.id, enabled: false }),
    await call(key, 'POST', '/portal/api/key/webhooks/update', { id: endpoint.id, enabled: true }),
    await call(key, 'GET', '/portal/api/key/webhooks/deliveries'),
  ];
  for (const res of later) {
    t.equal(res.statusCode, 200, res.body);
    t.notOk(res.body.includes(body), 'no later answer carries the secret');
  }
  t.strictSame(later[0]!.json(), { endpoints: [{ ...endpoint }], maxEndpoints: 5 });
  t.match(later[1]!.json(), { id: endpoint.id, enabled: false });
  await app.untilLogged((lines) => lines.some((l) => l.route === '/portal/api/key/webhooks/update'));
  t.notOk(app.rawLogs().includes(body), 'the log never has the secret');
  t.ok(app.logs().some((l) => l.route === '/portal/api/key/webhooks' && l.keyId === id && l.portalAction === 'webhook-created' && l.status === 201), 'the access line names the key id and the action');
});

t.test('"replay from the portal API delivers again with the same webhook-id": delivered once, replayed, delivered again, verified; the attempts listed', async (t) => {
  const receiver = await startReceiver(t);
  const { key, id } = await partner('replays');
  const { endpoint, secret } = (await call(key, 'POST', '/portal/api/key/webhooks', { url: receiver.url })).json<Portal.IssuedWebhookSecret>();
  const planId = planIdOf(11);
  await app.core.webhooks.sink.accept({ event: planEvent(planId, 1), partnerId: id });
  const [first] = await deliveriesWhen(key, (d) => d[0]?.state === 'delivered', endpoint.id);
  t.match(first, { endpointId: endpoint.id, webhookId: `msg_${planId}_1`, type: 'plan.planned', planId, seq: 1, state: 'delivered', nextAttemptAt: null });
  t.match(first!.attempts, [{ status: 200, error: null }]);

  const replayed = await call(key, 'POST', '/portal/api/key/webhooks/replay', { endpointId: endpoint.id, webhookId: `msg_${planId}_1` });
  t.equal(replayed.statusCode, 200, replayed.body);
  t.match(replayed.json(), { webhookId: `msg_${planId}_1`, state: 'pending' });
  await receiver.until((r) => r.length === 2);
  t.strictSame(receiver.received.map((r) => r.headers['webhook-id']), [`msg_${planId}_1`, `msg_${planId}_1`], 'the same webhook-id');
  t.equal(receiver.received[1]!.body, receiver.received[0]!.body, 'the same body');
  t.ok(new Webhook(secret).verify(receiver.received[1]!.body, receiver.received[1]!.headers), 'signed');
  const [again] = await deliveriesWhen(key, (d) => d[0]?.state === 'delivered' && d[0].attempts.length === 2);
  t.strictSame(again!.attempts.map((a) => a.status), [200, 200], 'both attempts listed');
  t.ok(app.logs().some((l) => l.route === '/portal/api/key/webhooks/replay' && l.keyId === id && l.portalAction === 'webhook-replayed'));
});

t.test('rotation through the API: the new secret once, both signatures verify during the grace period', async (t) => {
  const receiver = await startReceiver(t);
  const { key, id } = await partner('rotates');
  const created = (await call(key, 'POST', '/portal/api/key/webhooks', { url: receiver.url })).json<Portal.IssuedWebhookSecret>();
  const res = await call(key, 'POST', '/portal/api/key/webhooks/rotate', { id: created.endpoint.id });
  t.equal(res.statusCode, 200, res.body);
  const rotated = res.json<Portal.IssuedWebhookSecret>();
  t.not(rotated.secret, created.secret);
  t.ok(rotated.endpoint.previousSecretExpiresAt !== null, 'the old secret\'s end is said');
  await app.core.webhooks.sink.accept({ event: planEvent(planIdOf(12), 1), partnerId: id });
  await receiver.until((r) => r.length === 1);
  const [request] = receiver.received;
  for (const secret of [created.secret, rotated.secret]) t.ok(new Webhook(secret).verify(request!.body, request!.headers));
});

t.test('an endpoint is its key\'s alone: another key gets 404 not_found for it, lists none of its deliveries and cannot replay them; a disabled endpoint\'s delivery is refused 400', async (t) => {
  const receiver = await startReceiver(t);
  const owner = await partner('owner');
  const other = await partner('other');
  const { endpoint } = (await call(owner.key, 'POST', '/portal/api/key/webhooks', { url: receiver.url })).json<Portal.IssuedWebhookSecret>();
  const planId = planIdOf(13);
  await app.core.webhooks.sink.accept({ event: planEvent(planId, 1), partnerId: owner.id });
  await deliveriesWhen(owner.key, (d) => d[0]?.state === 'delivered');
  const webhookId = `msg_${planId}_1`;
  for (const [method, url, payload] of [
    ['POST', '/portal/api/key/webhooks/update', { id: endpoint.id, enabled: false }],
    ['POST', '/portal/api/key/webhooks/rotate', { id: endpoint.id }],
    ['POST', '/portal/api/key/webhooks/delete', { id: endpoint.id }],
    ['POST', '/portal/api/key/webhooks/replay', { endpointId: endpoint.id, webhookId }],
    ['GET', `/portal/api/key/webhooks/deliveries?endpointId=${endpoint.id}`, undefined],
  ] as const) {
    const res = await call(other.key, method, url, payload);
    t.equal(res.statusCode, 404, `${url}: 404`);
    t.match(res.json(), { code: 'not_found', error: `this key has no webhook endpoint ${endpoint.id}` });
  }
  t.strictSame((await call(other.key, 'GET', '/portal/api/key/webhooks/deliveries')).json(), { deliveries: [] });
  t.strictSame((await call(other.key, 'GET', '/portal/api/key/webhooks')).json(), { endpoints: [], maxEndpoints: 5 });

  const unknown = await call(owner.key, 'POST', '/portal/api/key/webhooks/replay', { endpointId: endpoint.id, webhookId: `msg_${planIdOf(99)}_1` });
  t.equal(unknown.statusCode, 404);
  t.match(unknown.json(), { code: 'not_found', error: /no delivery msg_pl_A+99_1 kept/ });

  await call(owner.key, 'POST', '/portal/api/key/webhooks/update', { id: endpoint.id, enabled: false });
  const refused = await call(owner.key, 'POST', '/portal/api/key/webhooks/replay', { endpointId: endpoint.id, webhookId });
  t.equal(refused.statusCode, 400);
  t.match(refused.json(), { code: 'bad_request', error: /enable it before replaying/ });

  const deleted = await call(owner.key, 'POST', '/portal/api/key/webhooks/delete', { id: endpoint.id });
  t.strictSame(deleted.json(), { id: endpoint.id, deleted: true });
  t.strictSame((await call(owner.key, 'GET', '/portal/api/key/webhooks/deliveries')).json(), { deliveries: [] }, 'its deliveries went with it');
  t.equal(receiver.received.length, 1);
});

t.test('"http only when the operator allows private addresses": a service that does not refuses an http or loopback URL with a message that says why', async (t) => {
  const strict: TestApp = await testApp({ probed: false });
  t.teardown(strict.close);
  const { key } = await issueKey(strict.core.keyStore, { name: 'strict' });
  for (const [url, error] of [
    ['http://hooks.wallet.example/bestex', 'url must be an https URL: webhooks are sent over TLS only'],
    ['https://127.0.0.1:8443/bestex', 'url must not name a private, loopback, link-local or otherwise internal address'],
  ] as const) {
    const res = await strict.server.inject({ method: 'POST', url: '/portal/api/key/webhooks', headers: { 'x-api-key': key }, payload: { url } });
    t.equal(res.statusCode, 400, url);
    t.match(res.json(), { code: 'bad_request', error });
  }
});
