// A plan's status through the v2 client (createClientV2's getPlanStatus and watch), against a local
// HTTP server that speaks the spec's server-sent events: "each event once, in seq order, through
// reconnections" (a connection dropped mid-event, a stream gone silent, a gap, a repeat: read
// again from the last seq held, after the stream's retry delay), "ends at the terminal event, at
// the signal, or at a refusal" (404 plan_not_found thrown as the SDK's BestexError, a 4xx never
// sent twice; a failing service given up on after the bounded retries), "a keyless plan is read
// with its statusToken, a keyed one with its key", "what is not the plan's event ends the watch",
// and "nothing of window, document or storage is touched" while it runs in Node.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import t from 'tap';
import { BestexError, createClientV2, type V2 } from '@bestex/sdk';
import { sse, statusEvent as planEvent } from '../helpers/plan-status.js';

const PLAN_ID = 'pl_watchwatchwatchwatch01';
const TOKEN = `st_${'t'.repeat(43)}`;
const KEY = `bx_${'k'.repeat(38)}`;

const STATES: V2.PlanState[] = ['planned', 'deposit_seen', 'completed'];

/** The plan's status event `seq`: planned, deposit seen, completed. */
const statusEvent = (seq: number, planId = PLAN_ID) => planEvent(planId, STATES, seq);

interface Seen {
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingMessage['headers'];
  /** Resolves when the client closed this connection. */
  readonly closed: Promise<void>;
}

/** A local service whose plan-status answers `answer` gives; every request it saw, in order. */
async function service(t: { teardown(fn: () => unknown): void }, answer: (response: ServerResponse, seen: Seen, index: number) => void) {
  const requests: Seen[] = [];
  const server = createServer((request, response) => {
    const url = new URL(request.url!, 'http://service.test');
    const closed = new Promise<void>((resolve) => response.on('close', resolve));
    const seen = { query: url.searchParams, headers: request.headers, path: url.pathname, closed };
    requests.push(seen);
    answer(response, seen, requests.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** Opens the stream as the service does: its head, then `retry`. */
function open(response: ServerResponse, retryMs = 20): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'x-service-api-version': '2' });
  response.write(`retry: ${retryMs}\n\n`);
}

function refuse(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-service-api-version': '2', ...headers });
  response.end(JSON.stringify(body));
}

const NOT_FOUND = { error: 'no plan with this planId that this caller may read', code: 'plan_not_found', action: 'check the planId and send the plan\'s statusToken (keyless) or the key that made it' };

const seqs = (events: readonly V2.PlanStatusEvent[]) => events.map((e) => e.seq);

async function collect(watch: AsyncIterable<V2.PlanStatusEvent>): Promise<V2.PlanStatusEvent[]> {
  const events: V2.PlanStatusEvent[] = [];
  for await (const event of watch) events.push(event);
  return events;
}

t.test('"each event once, in order, until the terminal one": the iterator, onStatus and done agree; the watch ends at the terminal event though the stream stays open', async (t) => {
  const { baseUrl, requests } = await service(t, (response) => {
    open(response);
    response.write(`: heartbeat\n\n${sse(statusEvent(1))}: heartbeat\n\n${sse(statusEvent(2))}${sse(statusEvent(3))}`);
    // The stream is left open: the watch must end at the terminal event on its own.
  });
  const heard: number[] = [];
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID, { onStatus: (event) => void heard.push(event.seq) });
  const events = await collect(watch);
  t.strictSame(seqs(events), [1, 2, 3]);
  t.strictSame(events[2], statusEvent(3), 'each event as the service sent it, typed as the spec\'s PlanStatusEvent');
  t.strictSame(heard, [1, 2, 3], 'onStatus heard each once, in order');
  t.strictSame(await watch.done, statusEvent(3), 'done resolves with the terminal event');
  t.strictSame(seqs(await collect(watch)), [1, 2, 3], 'a second iteration goes over the same events from the first');
  await requests[0]!.closed;
  t.equal(requests.length, 1, 'one connection, closed by the watch');
  t.equal(requests[0]!.headers.accept, 'text/event-stream');
  t.equal(requests[0]!.query.get('lastEventId'), null, 'without lastEventId the stream starts with the latest state');
  t.equal(requests[0]!.query.get('planId'), PLAN_ID);
});

t.test('"a dropped connection is read again from the last seq held, after the stream\'s retry delay": no event missed, none repeated, the unfinished one dropped', async (t) => {
  const opened: number[] = [];
  const { baseUrl, requests } = await service(t, (response, _seen, index) => {
    opened.push(Date.now());
    open(response, 50);
    if (index === 0) {
      // Two events, then half of the third, then the connection is cut.
      response.write(sse(statusEvent(1)) + sse(statusEvent(2)) + sse(statusEvent(3)).slice(0, 40));
      setTimeout(() => response.socket?.destroy(), 20);
      return;
    }
    // Again from the event the client says it holds, repeating it (a careless service): it is not handed on twice.
    response.end(sse(statusEvent(2)) + sse(statusEvent(3)));
  });
  const heard: number[] = [];
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID, { onStatus: (event) => void heard.push(event.seq) });
  t.strictSame(seqs(await collect(watch)), [1, 2, 3]);
  t.strictSame(heard, [1, 2, 3]);
  t.equal(requests.length, 2, 'opened again once');
  t.equal(requests[1]!.query.get('lastEventId'), '2', 'from the last seq received');
  t.ok(opened[1]! - opened[0]! >= 50, `after the stream's retry (50 ms): ${opened[1]! - opened[0]!} ms`);
});

t.test('lastEventId given: the stream starts after it, and the next event must follow it', async (t) => {
  const { baseUrl, requests } = await service(t, (response, seen) => {
    open(response);
    const after = Number(seen.query.get('lastEventId') ?? 0);
    response.end([1, 2, 3].filter((seq) => seq > after).map((seq) => sse(statusEvent(seq))).join(''));
  });
  t.strictSame(seqs(await collect(createClientV2({ baseUrl }).watch(PLAN_ID, { lastEventId: 1 }))), [2, 3]);
  t.equal(requests[0]!.query.get('lastEventId'), '1');
  t.strictSame(seqs(await collect(createClientV2({ baseUrl }).watch(PLAN_ID, { lastEventId: 0 }))), [1, 2, 3], 'lastEventId 0: every event from the first');
  t.throws(() => createClientV2({ baseUrl }).watch(PLAN_ID, { lastEventId: -1 }), RangeError);
});

t.test('"never skips a seq": an event past a gap is not handed on; the stream is read again from the last seq held', async (t) => {
  const { baseUrl, requests } = await service(t, (response, seen) => {
    open(response);
    if (seen.query.get('lastEventId') === null) response.end(sse(statusEvent(1)) + sse(statusEvent(3)));
    else response.end(sse(statusEvent(2)) + sse(statusEvent(3)));
  });
  t.strictSame(seqs(await collect(createClientV2({ baseUrl }).watch(PLAN_ID))), [1, 2, 3]);
  t.equal(requests[1]!.query.get('lastEventId'), '1');
});

t.test('a stream silent past idleTimeoutMs (no event, no heartbeat) is taken for dropped and read again', async (t) => {
  const { baseUrl, requests } = await service(t, (response, seen) => {
    open(response);
    if (seen.query.get('lastEventId') === null) response.write(sse(statusEvent(1)));
    else response.end(sse(statusEvent(2)) + sse(statusEvent(3)));
  });
  t.strictSame(seqs(await collect(createClientV2({ baseUrl }).watch(PLAN_ID, { idleTimeoutMs: 150 }))), [1, 2, 3]);
  t.equal(requests.length, 2);
  await requests[0]!.closed;
  t.pass('the silent connection was closed');
});

t.test('"a 4xx ends the watch as the spec\'s error": 404 plan_not_found is a BestexError with its code and action, asked once', async (t) => {
  const { baseUrl, requests } = await service(t, (response) => refuse(response, 404, NOT_FOUND));
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID, { token: TOKEN });
  await t.rejects(watch.done, { name: 'BestexError', status: 404, code: 'plan_not_found', action: NOT_FOUND.action, message: NOT_FOUND.error });
  await t.rejects(collect(watch), { code: 'plan_not_found' }, 'the iterator throws it too');
  t.ok((await watch.done.catch((err: unknown) => err)) instanceof BestexError);
  t.equal(requests.length, 1, 'never sent twice');
});

t.test('a refusal after events: the events stay, then the iterator throws the refusal; a 429 is not waited on', async (t) => {
  const { baseUrl } = await service(t, (response, _seen, index) => {
    if (index === 0) {
      open(response);
      response.end(sse(statusEvent(1)));
    } else refuse(response, 429, { error: 'rate limited', code: 'rate_limited', action: 'retry after Retry-After' }, { 'retry-after': '30' });
  });
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID);
  const events: number[] = [];
  const thrown = await (async () => {
    for await (const event of watch) events.push(event.seq);
  })().catch((err: unknown) => err);
  t.strictSame(events, [1]);
  t.match(thrown, { name: 'BestexError', status: 429, code: 'rate_limited', retryAfterSeconds: 30 });
});

t.test('"bounded attempts with backoff": a dropped stream whose service then keeps failing (503) is tried maxRetries times in a row, each wait doubling, then its error is thrown', async (t) => {
  const opened: number[] = [];
  const { baseUrl, requests } = await service(t, (response, _seen, index) => {
    opened.push(Date.now());
    if (index > 0) return refuse(response, 503, { error: 'at capacity', code: 'at_capacity', action: 'retry after Retry-After' });
    open(response, 20);
    response.end(sse(statusEvent(1)));
  });
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID, { maxRetries: 3 });
  await t.rejects(watch.done, { status: 503, code: 'at_capacity' });
  t.equal(requests.length, 4, 'the stream that dropped, then three tries that failed');
  const waits = opened.slice(1).map((at, i) => at - opened[i]!);
  t.ok(waits[0]! >= 20 && waits[1]! >= 40 && waits[2]! >= 80, `the stream's retry (20 ms), then doubling: ${waits.join(', ')} ms`);
});

t.test('"the signal ends the watch": the iterator ends, done resolves with the last event, the connection is closed', async (t) => {
  const { baseUrl, requests } = await service(t, (response) => {
    open(response);
    response.write(sse(statusEvent(1)));
    const beat = setInterval(() => response.write(': heartbeat\n\n'), 10);
    response.on('close', () => clearInterval(beat));
  });
  const controller = new AbortController();
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID, { signal: controller.signal, onStatus: () => controller.abort() });
  t.strictSame(seqs(await collect(watch)), [1]);
  t.strictSame(await watch.done, statusEvent(1));
  await requests[0]!.closed;
  t.equal(requests.length, 1);
  const before = new AbortController();
  before.abort();
  t.equal(await createClientV2({ baseUrl }).watch(PLAN_ID, { signal: before.signal }).done, null, 'a signal aborted before: nothing asked, nothing received');
  t.equal(requests.length, 1);
});

t.test('leaving an iteration early (break) ends the watch and closes its connection', async (t) => {
  const { baseUrl, requests } = await service(t, (response) => {
    open(response);
    response.write(sse(statusEvent(1)));
  });
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID);
  for await (const event of watch) if (event.seq === 1) break;
  t.equal((await watch.done)?.seq, 1, 'done: the last event received before it ended');
  await requests[0]!.closed;
  t.pass('closed');
});

t.test('"a keyless plan is read with its statusToken, a keyed one with its key": the plan given, its token is sent; a token given wins', async (t) => {
  const { baseUrl, requests } = await service(t, (response, seen) => {
    if (seen.path === '/api/v2/plan/status') {
      response.writeHead(200, { 'content-type': 'application/json', 'x-service-api-version': '2' });
      response.end(JSON.stringify(statusEvent(2).status));
      return;
    }
    open(response);
    response.end(sse(statusEvent(3)));
  });
  const plan = { planId: PLAN_ID, statusToken: TOKEN };
  const keyless = createClientV2({ baseUrl });
  await keyless.watch(plan).done;
  t.equal(requests[0]!.query.get('token'), TOKEN, 'the plan\'s statusToken');
  t.equal(requests[0]!.headers['x-api-key'], undefined, 'no key');
  const other = `st_${'o'.repeat(43)}`;
  await keyless.watch(plan, { token: other }).done;
  t.equal(requests[1]!.query.get('token'), other, 'the token given wins');
  const keyed = createClientV2({ baseUrl, apiKey: KEY });
  await keyed.watch(PLAN_ID).done;
  t.equal(requests[2]!.headers['x-api-key'], KEY, 'a keyed plan: the client\'s key, in x-api-key');
  t.equal(requests[2]!.query.get('token'), null, 'and no token');
  t.strictSame(await keyless.getPlanStatus(plan), statusEvent(2).status, 'getPlanStatus: the plan\'s status now');
  t.equal(requests[3]!.query.get('token'), TOKEN, 'read with the plan\'s statusToken');
  await keyed.getPlanStatus(PLAN_ID);
  t.equal(requests[4]!.headers['x-api-key'], KEY, 'a keyed plan read with the key');
});

t.test('getPlanStatus: 404 is plan_not_found as a BestexError, asked once', async (t) => {
  const { baseUrl, requests } = await service(t, (response) => refuse(response, 404, NOT_FOUND));
  await t.rejects(createClientV2({ baseUrl }).getPlanStatus(PLAN_ID, { token: TOKEN }), { name: 'BestexError', status: 404, code: 'plan_not_found' });
  t.equal(requests.length, 1);
});

t.test('"what is not the plan\'s event ends the watch": another plan\'s event, data that is not JSON, an id that is not its seq, an answer without the API version or not an event stream', async (t) => {
  const cases: Array<[string, (response: ServerResponse) => void, string]> = [
    ['another plan\'s event', (r) => (open(r), r.end(sse(statusEvent(1, 'pl_anotheranotheranothe')))), 'unreadable_response'],
    ['data that is not JSON', (r) => (open(r), r.end('event: status\nid: 1\ndata: {"planId":\n\n')), 'unreadable_response'],
    ['an id that is not its seq', (r) => (open(r), r.end(`event: status\nid: 9\ndata: ${JSON.stringify(statusEvent(1))}\n\n`)), 'unreadable_response'],
    ['a status that is not the plan\'s', (r) => (open(r), r.end(`event: status\nid: 1\ndata: ${JSON.stringify({ ...statusEvent(1), status: null })}\n\n`)), 'unreadable_response'],
    ['no x-service-api-version', (r) => (r.writeHead(200, { 'content-type': 'text/event-stream' }), r.end(sse(statusEvent(1)))), 'unsupported_api_version'],
    ['not text/event-stream', (r) => (r.writeHead(200, { 'content-type': 'text/html', 'x-service-api-version': '2' }), r.end('<html></html>')), 'unreadable_response'],
  ];
  for (const [name, answer, code] of cases) {
    const { baseUrl, requests } = await service(t, answer);
    const watch = createClientV2({ baseUrl }).watch(PLAN_ID);
    await t.rejects(watch.done, { name: 'BestexError', code }, name);
    t.equal(requests.length, 1, `${name}: not asked again`);
  }
  const { baseUrl } = await service(t, (r) => (open(r), r.end('event: other\ndata: hello\n\ndata: a message\n\n' + sse(statusEvent(3)))));
  t.strictSame(seqs(await collect(createClientV2({ baseUrl }).watch(PLAN_ID))), [3], 'events of another type are passed over');
});

t.test('"a hook that throws, or rejects, never breaks the watch"', async (t) => {
  const { baseUrl } = await service(t, (response) => (open(response), response.end(sse(statusEvent(1)) + sse(statusEvent(2)) + sse(statusEvent(3)))));
  let calls = 0;
  const watch = createClientV2({ baseUrl }).watch(PLAN_ID, {
    onStatus: (event) => {
      calls += 1;
      if (event.seq === 1) throw new Error('the host\'s bug');
      if (event.seq === 2) return Promise.reject(new Error('the host\'s async bug')) as unknown as void;
    },
  });
  t.equal((await watch.done)?.seq, 3);
  t.equal(calls, 3);
});

t.test('"nothing of window, document or storage is touched": watch runs to the terminal event in Node with those globals throwing', async (t) => {
  const { baseUrl } = await service(t, (response) => (open(response), response.end(sse(statusEvent(1)) + sse(statusEvent(2)) + sse(statusEvent(3)))));
  const probe = `
    for (const name of ['window', 'document', 'localStorage', 'sessionStorage', 'navigator', 'EventSource']) {
      Object.defineProperty(globalThis, name, { configurable: true, get() { throw new Error('touched ' + name); } });
    }
    const { createClientV2 } = await import('@bestex/sdk');
    const seqs = [];
    for await (const event of createClientV2({ baseUrl: ${JSON.stringify(baseUrl)} }).watch(${JSON.stringify(PLAN_ID)})) seqs.push(event.seq);
    console.log(seqs.join(','));
  `;
  // Not spawnSync: the service answering it runs in this process.
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8', timeout: 15_000 });
  t.equal(stdout.trim(), '1,2,3');
});
