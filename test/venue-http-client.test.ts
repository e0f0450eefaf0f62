// nodeFetch (core/http-client.ts): the part of fetch the venue and ledger adapters use, over node:http
// with kept-alive connections, against a real server on loopback.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { nodeFetch } from '../core/http-client.js';
import { VenueHttp, VenueTimeout } from '../core/venues/venue-http.js';

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

t.test('nodeFetch sends the method, headers and body, and answers the status and the text', async (t) => {
  const { url } = await serve(t, (request, body, response) => {
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ method: request.method, key: request.headers['x-api-key'], length: request.headers['content-length'], body }));
  });
  const answer = await nodeFetch(`${url}/quote?x=1`, { method: 'POST', headers: { 'x-api-key': 'k' }, body: '{"amount":"1.5"}', signal: never });
  t.equal(answer.status, 201);
  t.strictSame(JSON.parse(await answer.text()), { method: 'POST', key: 'k', length: '16', body: '{"amount":"1.5"}' });
});

t.test('nodeFetch keeps connections alive: many requests, one socket', async (t) => {
  const { url, sockets } = await serve(t, (_request, _body, response) => response.end('{}'));
  for (let i = 0; i < 20; i++) await (await nodeFetch(url, { method: 'GET', headers: {}, signal: never })).text();
  t.equal(sockets(), 1);
});

t.test('nodeFetch follows no redirect: a 3xx is the answer, so no credential goes to another host', async (t) => {
  let asked = 0;
  const { url } = await serve(t, (_request, _body, response) => {
    asked += 1;
    response.writeHead(302, { location: '/elsewhere' });
    response.end();
  });
  t.equal((await nodeFetch(url, { method: 'GET', headers: { authorization: 'Bearer secret' }, signal: never })).status, 302);
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
  await t.rejects(http.getJson('/slow', never), VenueTimeout, 'no answer within the venue\'s timeout');
  await t.rejects(new VenueHttp({ baseUrl: url, timeoutMs: 5000 }).getJson('/big', never), { name: 'VenueUnreadable', message: /ERR_RESPONSE_TOO_LARGE/ }, 'a JSON answer over 1 MiB is not read to its end');
  await t.rejects(new VenueHttp({ baseUrl: url, timeoutMs: 5000 }).getJson('/moved', never), { name: 'VenueHttpError', status: 301 }, 'a 3xx is an error, whatever its body says');
  await t.rejects(new VenueHttp({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 5000 }).getJson('/x', never), { name: 'VenueUnreadable', message: /ECONNREFUSED/ }, 'the error names its code, not the URL');
});
