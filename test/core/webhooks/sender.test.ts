// An attempt's request (core/webhooks/sender.ts, core/webhooks/address-guard.ts): "resolve the host
// at connect time and refuse private, loopback, link-local, unique-local, multicast, unspecified
// and IPv4-mapped-private addresses unless WEBHOOK_ALLOW_PRIVATE"; "no redirects followed (3xx =
// failed attempt); 10 s time-out; read at most 64 KB of the answer". Host names are resolved by a
// resolver the test gives, standing for DNS.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { isRefusedAddress, type Resolver } from '../../../core/webhooks/address-guard.js';
import { MAX_ANSWER_BYTES, WebhookSender } from '../../../core/webhooks/sender.js';
import { planEvent, planIdOf, startReceiver, testDispatcher } from '../../helpers/webhooks.js';

const open = new AbortController().signal;

/** A resolver that knows only `names`. */
const resolver = (names: Record<string, Array<[string, 4 | 6]>>): Resolver => (hostname, callback) => {
  const found = names[hostname];
  if (!found) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
  callback(null, found.map(([address, family]) => ({ address, family })));
};

async function serve(t: { teardown(fn: () => unknown): void }, handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

t.test('the refused addresses: private, loopback, link-local, unique-local, multicast, unspecified, IPv4-mapped private; public ones pass', async (t) => {
  for (const address of ['10.0.0.1', '172.16.5.4', '192.168.1.1', '127.0.0.1', '127.9.9.9', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.251', '255.255.255.255', '::', '::1', '[::1]', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.1.2.3', '::ffff:a01:203']) {
    t.ok(isRefusedAddress(address), `${address} refused`);
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '203.0.113.7', '2606:4700::1111', '::ffff:93.184.216.34', 'hooks.wallet.example']) {
    t.notOk(isRefusedAddress(address), `${address} passes`);
  }
});

t.test('"a hostname resolving to 10.x" is refused when the connection is made, unless allowed; so is a name with one internal address among public ones, and a literal 127.0.0.1', async (t) => {
  const receiver = await startReceiver(t);
  const names = resolver({
    'hooks.partner.example': [['10.1.2.3', 4]],
    'mixed.partner.example': [['93.184.216.34', 4], ['10.0.0.9', 4]],
    'mapped.partner.example': [['::ffff:127.0.0.1', 6]],
  });
  const guarded = new WebhookSender({ allowPrivate: false, timeoutMs: 2000, resolve: names });
  t.teardown(() => guarded.close());
  for (const url of ['https://hooks.partner.example/x', 'https://mixed.partner.example/x', 'https://mapped.partner.example/x', receiver.url]) {
    t.match(await guarded.send(url, {}, '{}', open), { status: null, error: 'refused_address' }, url);
  }
  t.match(await guarded.send('https://unknown.partner.example/', {}, '{}', open), { status: null, error: 'dns_failed' });
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');

  const allowed = new WebhookSender({ allowPrivate: true, timeoutMs: 2000 });
  t.teardown(() => allowed.close());
  t.match(await allowed.send(receiver.url, { 'webhook-id': 'msg_x' }, '{"a":1}', open), { status: 200, error: null }, 'allowed: sent');
  t.equal(receiver.received[0]!.body, '{"a":1}');
});

t.test('"refused ... unless allowed", through the dispatcher: the delivery\'s attempt says refused_address, and it is retried like any failure', async (t) => {
  const { dispatcher } = await testDispatcher(t, { WEBHOOK_ALLOW_PRIVATE: 'false' }, { resolve: resolver({ 'internal.partner.example': [['10.20.30.40', 4]] }) });
  await dispatcher.endpoints.create('key_0123456789ab', { url: 'https://internal.partner.example/bestex' });
  await dispatcher.sink.accept({ event: planEvent(planIdOf(1), 1), partnerId: 'key_0123456789ab' });
  let attempts: readonly unknown[] = [];
  while (attempts.length < 2) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    attempts = (await dispatcher.deliveries('key_0123456789ab', null))[0]?.attempts ?? [];
  }
  t.match(attempts, [{ status: null, error: 'refused_address' }, { status: null, error: 'refused_address' }]);
});

t.test('"no redirects followed (3xx = failed attempt)": a 302 is the attempt\'s status, and its Location is never asked for', async (t) => {
  const paths: string[] = [];
  const { url } = await serve(t, (request, response) => {
    paths.push(request.url ?? '');
    response.writeHead(302, { location: '/elsewhere' }).end();
  });
  const sender = new WebhookSender({ allowPrivate: true, timeoutMs: 2000 });
  t.teardown(() => sender.close());
  t.match(await sender.send(`${url}/hook`, {}, '{}', open), { status: 302, error: null });
  t.strictSame(paths, ['/hook']);
});

t.test('"read at most 64 KB of the answer": a receiver answering 50 MB is cut off after 64 KB; the status counts', async (t) => {
  let written = 0;
  let finished = false;
  const { url } = await serve(t, (request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'application/octet-stream' });
    const chunk = Buffer.alloc(64 * 1024, 120);
    const more = () => {
      while (written < 50 * 1024 * 1024) {
        written += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', more);
      }
      finished = true;
      response.end();
    };
    response.on('close', () => response.removeAllListeners('drain'));
    more();
  });
  const sender = new WebhookSender({ allowPrivate: true, timeoutMs: 5000 });
  t.teardown(() => sender.close());
  t.match(await sender.send(url, {}, '{}', open), { status: 200, error: null });
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.notOk(finished, `the answer was not read to its end (${written} bytes written into the connection before it closed, of 50 MB; ${MAX_ANSWER_BYTES} read)`);
});

t.test('"10 s time-out" (WEBHOOK_TIMEOUT_MS): a receiver that never answers is a timed-out attempt', async (t) => {
  const { url } = await serve(t, () => undefined);
  const sender = new WebhookSender({ allowPrivate: true, timeoutMs: 200 });
  t.teardown(() => sender.close());
  t.match(await sender.send(url, {}, '{}', open), { status: null, error: 'timeout' });
});

t.test('a refused connection is connection_failed', async (t) => {
  const { server, url } = await serve(t, () => undefined);
  await new Promise((resolve) => server.close(resolve));
  const sender = new WebhookSender({ allowPrivate: true, timeoutMs: 2000 });
  t.teardown(() => sender.close());
  t.match(await sender.send(url, {}, '{}', open), { status: null, error: 'connection_failed' });
});
