// originFetch and fetchWithin (core/http-client.ts): the part of fetch the venue and ledger adapters
// use, over an undici pool of kept-alive connections, against a real server on loopback.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { fetchWithin, originFetch } from '../../core/http-client.js';
import { VenueHttp, VenueTimeout } from '../../core/venues/venue-http.js';
import { untilAborted } from '../../core/venues/venue.js';

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

async function serve(t: { teardown: (fn: () => void) => void }, handler: Handler): Promise<{ url: string; sockets: () => number }> {
  const sockets = new Set<unknown>();
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => handler(request, body, response));
  });
  server.on('connection', (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets: () => sockets.size };
}

const never = new AbortController().signal;
const noDeadline = untilAborted(never);

t.test('the client sends the method, headers and body, and answers the status and the text', async (t) => {
  const { url } = await serve(t, (request, body, response) => {
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ method: request.method, key: request.headers['x-api-key'], length: request.headers['content-length'], body }));
  });
  const answer = await originFetch(url)(`${url}/quote?x=1`, { method: 'POST', headers: { 'x-api-key': 'k' }, body: '{"amount":"1.5"}', signal: never });
  t.equal(answer.status, 201);
  t.strictSame(JSON.parse(await answer.text()), { method: 'POST', key: 'k', length: '16', body: '{"amount":"1.5"}' });
});

t.test('the client keeps a base URL\'s path, and refuses a URL not under it', async (t) => {
  const { url } = await serve(t, (request, _body, response) => response.end(JSON.stringify({ path: request.url })));
  const fetch = originFetch(`${url}/venue/v1`);
  t.strictSame(JSON.parse(await (await fetch(`${url}/venue/v1/quote?a=1`, { method: 'GET', headers: {}, signal: never })).text()), { path: '/venue/v1/quote?a=1' });
  await t.rejects(fetch(`${url}/other`, { method: 'GET', headers: {}, signal: never }), TypeError, 'the same origin outside the base path');
  await t.rejects(fetch('http://127.0.0.2:1/x', { method: 'GET', headers: {}, signal: never }), TypeError, 'another origin');
});

t.test('the client keeps connections alive: many requests, not a socket each', async (t) => {
  const { url, sockets } = await serve(t, (_request, _body, response) => response.end('{}'));
  const fetch = originFetch(url);
  for (let i = 0; i < 20; i++) await (await fetch(url, { method: 'GET', headers: {}, signal: never })).text();
  // undici's pool may open a second connection while the first is still being released.
  t.ok(sockets() <= 2, `20 requests in turn over ${sockets()} connection(s)`);
});

t.test('the client follows no redirect: a 3xx is the answer, so no credential goes to another host', async (t) => {
  let asked = 0;
  const { url } = await serve(t, (_request, _body, response) => {
    asked += 1;
    response.writeHead(302, { location: '/elsewhere' });
    response.end();
  });
  t.equal((await originFetch(url)(url, { method: 'GET', headers: { authorization: 'Bearer secret' }, signal: never })).status, 302);
  t.equal(asked, 1);
});

t.test('through VenueHttp: an abort is a timeout, a refused connection and an oversized answer are unreadable', async (t) => {
  const { url } = await serve(t, (request, _body, response) => {
    if (request.url === '/big') return void response.end(`{"padding":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    if (request.url === '/moved') {
      response.writeHead(301, { location: '/elsewhere', 'content-type': 'application/json' });
      return void response.end('{"user_gets":5}');
    }
    // /slow never answers.
  });
  const http = new VenueHttp({ baseUrl: url, timeoutMs: 50 });
  await t.rejects(http.getJson('/slow', noDeadline), VenueTimeout, 'no answer within the venue\'s timeout');
  await t.rejects(new VenueHttp({ baseUrl: url, timeoutMs: 5000 }).getJson('/big', noDeadline), { name: 'VenueUnreadable', message: /ERR_RESPONSE_TOO_LARGE/ }, 'a JSON answer over 1 MiB is not read to its end');
  await t.rejects(new VenueHttp({ baseUrl: url, timeoutMs: 5000 }).getJson('/moved', noDeadline), { name: 'VenueHttpError', status: 301 }, 'a 3xx is an error, whatever its body says');
  await t.rejects(new VenueHttp({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 5000 }).getJson('/x', noDeadline), { name: 'VenueUnreadable', message: /ECONNREFUSED/ }, 'the error names its code, not the URL');
});

t.test('one deadline per quote: a request the deadline ends first takes its signal and no timer; a shorter timeout still has its own', async (t) => {
  const { url } = await serve(t, () => {
    // Never answers.
  });
  const fetch = originFetch(url);
  const seen: AbortSignal[] = [];
  const recording: typeof fetch = (target, init) => {
    seen.push(init.signal);
    return fetch(target, init);
  };
  const deadline = new AbortController();
  const endsAt = Date.now() + 60_000;
  const shared = fetchWithin(recording, `${url}/a`, { method: 'GET', headers: {} }, 60_000, deadline.signal, endsAt);
  const shorter = fetchWithin(recording, `${url}/b`, { method: 'GET', headers: {} }, 30, deadline.signal, endsAt);
  t.equal(seen[0], deadline.signal, 'the deadline ends no later than the timeout: its own signal is the request\'s');
  t.not(seen[1], deadline.signal, 'a venue timeout shorter than the deadline gets a signal of its own');
  await t.rejects(shorter, { name: 'FetchFailed', timedOut: true, byDeadline: false }, 'the shorter timeout ends its request alone');
  t.equal(seen[0]!.aborted, false, 'and not the deadline\'s other requests');
  deadline.abort();
  await t.rejects(shared, { name: 'FetchFailed', timedOut: true, byDeadline: true }, 'the deadline ends the requests that share it');
});
