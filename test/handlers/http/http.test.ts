// Server-wide rules: every response is JSON in the error shape when it is an error, carries the
// version and build headers, and never leaks a stack or a framework message.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import net from 'node:net';
import t from 'tap';
import type { ValidateFunction } from 'ajv';
import Fastify from 'fastify';
import type { Document } from 'openapi-backend';
import { parse } from 'yaml';
import type { KeyVerifier } from '../../../core/keys/partner-keys.js';
import { getQuote } from '../../../generated/v1/query-validators.js';
import { MAX_BODY_DEPTH, MAX_BODY_KEYS, structureProblem } from '../../../handlers/http/json-limits.js';
import { newRequestId } from '../../../handlers/http/request-id.js';
import { ValidatedQueries } from '../../../handlers/http/validated-queries.js';
import { NOT_IMPLEMENTED, type HandlerMap, type OperationHandler } from '../../../handlers/http/operation.js';
import { registerOperations } from '../../../handlers/http/operation-routes.js';
import { listen, testApp } from '../../helpers/app.js';
import { SPEC_PATH } from '../../helpers/spec.js';

const ERROR_SHAPE = { error: String, code: String, action: String };

t.test('every response carries x-service-api-version: 1 and x-service-build', async (t) => {
  const app = await testApp({ env: { SERVICE_BUILD: 'abc1234' } });
  t.teardown(app.close);
  const requests = [
    { method: 'GET' as const, url: '/api/quote?from=CC&to=USDCx&amount=1' },
    { method: 'GET' as const, url: '/api/quote?from=CC' },
    { method: 'GET' as const, url: '/nope' },
    { method: 'DELETE' as const, url: '/api/status' },
    { method: 'POST' as const, url: '/api/app/plan', payload: 'not json', headers: { 'content-type': 'application/json' } },
    { method: 'GET' as const, url: '/api/status' },
    { method: 'GET' as const, url: '/openapi/v1.yaml' },
  ];
  for (const request of requests) {
    const res = await app.server.inject(request);
    t.equal(res.headers['x-service-api-version'], '1', `${request.method} ${request.url}`);
    t.equal(res.headers['x-service-build'], 'abc1234', `${request.method} ${request.url}`);
  }
});

t.test('x-service-build is "dev" when the build carries no commit', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  t.equal((await app.server.inject('/api/status')).headers['x-service-build'], 'dev');
});

t.test('an unknown route is a JSON 404 not_found in the error shape, no-store', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject('/api/nothing-here?party=x');
  t.equal(res.statusCode, 404);
  t.match(res.json(), { ...ERROR_SHAPE, code: 'not_found' });
  t.equal(res.headers['cache-control'], 'no-store');
  t.notMatch(res.body, /party=x/, 'the query string is not echoed');
});

t.test('a defined path with an unsupported method is a JSON 405 with Allow', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject({ method: 'PUT', url: '/api/quote' });
  t.equal(res.statusCode, 405);
  t.match(res.json(), { ...ERROR_SHAPE, code: 'method_not_allowed' });
  t.equal(res.headers.allow, 'GET, HEAD');
  const post = await app.server.inject({ method: 'GET', url: '/api/app/plan' });
  t.equal(post.statusCode, 405);
  t.equal(post.headers.allow, 'POST');
});

t.test('a body that is not JSON is a 400 bad_request, whatever its content type', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const [contentType, payload, message] of [
    ['application/json', '{"from":', /not valid JSON/],
    ['text/plain', 'hello', /must be JSON/],
    ['application/x-www-form-urlencoded', 'from=CC', /must be JSON/],
  ] as const) {
    const res = await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload, headers: { 'content-type': contentType } });
    t.equal(res.statusCode, 400, contentType);
    t.match(res.json(), { ...ERROR_SHAPE, code: 'bad_request', error: message }, contentType);
    t.notMatch(res.body, /FST_|SyntaxError|Unexpected|at .*\.js/, `${contentType}: no framework message or stack`);
  }
});

t.test('an internal failure is a 500 internal that leaks no stack or detail, and is logged with its stack', async (t) => {
  const exploding: KeyVerifier = {
    verify: async () => {
      throw new Error('secret-detail: connection string postgres://admin:hunter2@db');
    },
  };
  const app = await testApp({ overrides: { keys: exploding } });
  t.teardown(app.close);
  const res = await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=1', headers: { 'x-api-key': 'bx_k' } });
  t.equal(res.statusCode, 500);
  t.strictSame(res.json(), { error: 'internal error; nothing was created', code: 'internal', action: 'retry' });
  t.equal(res.headers['cache-control'], 'no-store');
  t.notMatch(res.body, /secret-detail|hunter2|stack/);
  const logged = app.logs().find((l) => l.msg === 'unexpected error');
  t.ok(logged, 'the error is logged');
  t.match(JSON.stringify(logged), /secret-detail/, 'with its detail, server-side only');
});

t.test('an operation a build registers as not implemented answers 501 not_implemented in the error shape', async (t) => {
  // Every operation of the spec is served; a new one can land in the spec before its handler.
  const definition = parse(readFileSync(SPEC_PATH, 'utf8')) as Document;
  const app = Fastify();
  t.teardown(() => app.close());
  const served: OperationHandler = { handle: () => ({ status: 200, headers: {}, body: {} }) };
  const handlers: HandlerMap = { getQuote: served, getLiveness: served, createAppPlan: served, createExecutePlan: served, getStatus: served, getOutcome: NOT_IMPLEMENTED };
  await registerOperations(app, definition, handlers, { keys: { verify: async () => null }, limits: { admit: async () => {}, spendFreshQuote: async () => {} } });
  const res = await app.inject('/api/outcome?party=x');
  t.equal(res.statusCode, 501);
  t.match(res.json(), { ...ERROR_SHAPE, code: 'not_implemented', error: 'getOutcome is specified but not served by this build' });
});

t.test('GET /openapi/v1.yaml serves the spec file byte for byte', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject('/openapi/v1.yaml');
  t.equal(res.statusCode, 200);
  t.ok(res.rawPayload.equals(readFileSync(SPEC_PATH)), 'identical bytes');
  t.match(res.headers['content-type'], /^application\/yaml/);
});

t.test('parameter names that are Object.prototype properties are unknown parameters, never a crash', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    for (const path of ['/api/quote?from=CC&to=USDCx&amount=1&', '/api/liveness']) {
      const sep = path.includes('?') ? '' : '?';
      const res = await app.server.inject(`${path}${sep}${name}=1`);
      t.equal(res.statusCode, 400, `${path} ${name}`);
      t.match(res.json(), { code: 'bad_request', error: `unknown query parameter '${name}'` }, `${path} ${name}`);
    }
    t.equal((await app.server.inject(`/api/status?${name}=1`)).statusCode, 200, `the status, which ignores its query: ${name}`);
  }
});

t.test('an error that breaks the error shaping itself still gets the plain 500 internal body, and is logged', async (t) => {
  const hostile = {
    get code(): string {
      throw new Error('secret-detail from a broken error object');
    },
  };
  const app = await testApp({
    overrides: {
      keys: {
        verify: async () => {
          throw hostile;
        },
      },
    },
  });
  t.teardown(app.close);
  const res = await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=1', headers: { 'x-api-key': 'bx_k' } });
  t.equal(res.statusCode, 500);
  t.strictSame(res.json(), { error: 'internal error; nothing was created', code: 'internal', action: 'retry' });
  t.notMatch(res.body, /secret-detail/);
  t.ok(app.logs().find((l) => l.msg === 'error while shaping an error reply'), 'logged server-side');
});

t.test('a repeated URL\'s query is validated once: later requests share the first, coerced and frozen', async (t) => {
  let calls = 0;
  const counted = Object.assign((data: unknown) => {
    calls += 1;
    return (getQuote as ValidateFunction)(data);
  }, { errors: null }) as unknown as ValidateFunction;
  const queries = new ValidatedQueries(counted);
  const url = '/api/quote?from=CC&to=USDCx&amount=1&slippageBps=25';
  const first = queries.get(url, { from: 'CC', to: 'USDCx', amount: '1', slippageBps: '25' });
  t.equal(first.slippageBps, 25, 'coerced by the schema');
  t.ok(Object.isFrozen(first), 'frozen, since requests share it');
  const again = queries.get(url, { from: 'CC', to: 'USDCx', amount: '1', slippageBps: '25' });
  t.equal(again, first, 'the very same object');
  t.equal(calls, 1, 'validated once');
  t.not(queries.get(`${url}&ref=x`, { from: 'CC', to: 'USDCx', amount: '1', slippageBps: '25', ref: 'x' }), first, 'another URL is its own query');
});

t.test('a query that fails validation is refused every time and never remembered', async (t) => {
  const queries = new ValidatedQueries(getQuote as ValidateFunction);
  const url = '/api/quote?from=CC&to=USDCx&amount=1&slippageBps=x';
  for (let i = 0; i < 2; i++) {
    t.throws(() => queries.get(url, { from: 'CC', to: 'USDCx', amount: '1', slippageBps: 'x' }), { code: 'bad_request', message: /slippageBps/ });
  }
});

t.test('validated queries: past its bound the memo starts over and still answers correctly', async (t) => {
  const queries = new ValidatedQueries(getQuote as ValidateFunction, undefined, 2);
  const query = (amount: string) => ({ from: 'CC', to: 'USDCx', amount });
  const first = queries.get('/q?1', query('1'));
  queries.get('/q?2', query('2'));
  queries.get('/q?3', query('3'));
  const again = queries.get('/q?1', query('1'));
  t.not(again, first, 'forgotten once the memo was full');
  t.strictSame(again, first, 'and validated to the same query');
});

t.test('the same URL answers the same through the remembered query, success and failure alike', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const url of ['/api/quote?from=CC&to=USDCx&amount=5&slippageBps=25', '/api/quote?from=CC&to=USDCx&amount=5&slippageBps=9999']) {
    const first = await app.server.inject(url);
    const second = await app.server.inject(url);
    t.equal(second.statusCode, first.statusCode, url);
    t.equal(second.body, first.body, url);
  }
});

t.test('only operations that opt in have their queries kept by URL; the others are validated on every request', async (t) => {
  const definition = parse(readFileSync(SPEC_PATH, 'utf8')) as Document;
  const seen: Record<string, unknown[]> = { remembered: [], fresh: [] };
  const handler = (name: string, rememberQueries: boolean): OperationHandler => ({
    rememberQueries,
    handle: ({ query }) => {
      seen[name]!.push(query);
      return { status: 200, headers: { 'cache-control': 'no-store' }, body: {} };
    },
  });
  const handlers: HandlerMap = {
    getQuote: handler('remembered', true),
    getLiveness: handler('fresh', false),
    createAppPlan: NOT_IMPLEMENTED,
    createExecutePlan: NOT_IMPLEMENTED,
    getOutcome: NOT_IMPLEMENTED,
    getStatus: NOT_IMPLEMENTED,
  };
  const app = Fastify();
  t.teardown(() => app.close());
  const gates = { keys: { verify: async () => null }, limits: { admit: async () => {}, spendFreshQuote: async () => {} } };
  await registerOperations(app, definition, handlers, gates);
  for (let i = 0; i < 2; i++) {
    t.equal((await app.inject('/api/quote?from=CC&to=USDCx&amount=1')).statusCode, 200);
    t.equal((await app.inject('/api/liveness?venue=tradecraft')).statusCode, 200);
  }
  t.equal(seen.remembered![0], seen.remembered![1], 'an opted-in operation gets the same query object');
  t.not(seen.fresh![0], seen.fresh![1], 'the others get each request\'s own');
  // This bare app has no error mapping: the validation error surfaces as fastify's own 500.
  const invalid = await app.inject('/api/liveness?venue=tradecraft&unknown=1');
  t.match(invalid.json(), { code: 'bad_request', message: "unknown query parameter 'unknown'" }, 'and are still validated');
  t.equal(seen.fresh!.length, 2, 'an invalid query never reaches the handler');
});

t.test('"every response carries x-request-id": the caller\'s when well-formed (1 to 128 letters, digits, . _ -, no bx_), else the service\'s own, and the access line carries the same id', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const kept = ['abc-123', 'A.b_C-9', '7f3e2a10-58c1-4c39-9d0e-3c7a4f1e2b6d', 'x'.repeat(128)];
  const replaced = ['', 'x'.repeat(129), 'has space', 'alice::1220abc', 'quote"d', 'caf\u00e9', 'bx_supersecretkeyvalue0123456789', 'trace-BX_1'];
  for (const id of [...kept, ...replaced]) {
    for (const url of ['/api/status', '/api/quote?from=CC', '/nowhere']) {
      const res = await app.server.inject({ url, headers: { 'x-request-id': id } });
      const answered = res.headers['x-request-id'];
      if (kept.includes(id)) t.equal(answered, id, `${url}: ${id.slice(0, 20)} kept`);
      else {
        t.not(answered, id, `${url}: ${JSON.stringify(id.slice(0, 20))} replaced`);
        t.match(answered, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'by a UUID');
      }
      const line = app.logs().filter((l) => l.msg === 'request completed').at(-1);
      t.equal(line?.reqId, answered, `${url}: the access line carries the answered id`);
    }
  }
  const [a, b] = await Promise.all([app.server.inject('/api/status'), app.server.inject('/api/status')]);
  t.not(a.headers['x-request-id'], b.headers['x-request-id'], 'the service\'s own ids differ request to request');
});

t.test('"an id the service chose": a random version-4 UUID, none repeated across many fills of its random pool', async (t) => {
  const ids = Array.from({ length: 5000 }, newRequestId);
  const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  t.equal(ids.filter((id) => !v4.test(id)).length, 0, 'every id is a version-4 UUID (version nibble 4, variant 10)');
  t.equal(new Set(ids).size, ids.length, 'no id repeats');
  // Random digits, not a pattern: a random digit takes all 16 values in 5,000 ids.
  const hex = ids.map((id) => id.replaceAll('-', ''));
  for (const position of [0, 13, 17, 31]) {
    t.equal(new Set(hex.map((h) => h[position])).size, 16, `hex digit ${position} takes every value`);
  }
});

t.test('"TRACE and other methods on a defined path": like PUT, 405 method_not_allowed with Allow, whatever body they carry', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const method of ['TRACE', 'PUT', 'PATCH', 'DELETE', 'QUERY', 'PROPFIND', 'SEARCH', 'LOCK', 'PURGE'] as const) {
    for (const [url, allow] of [['/api/quote', 'GET, HEAD'], ['/api/status', 'GET, HEAD'], ['/api/app/plan', 'POST']] as const) {
      const res = await app.server.inject({ method: method as 'GET', url, payload: 'plain text', headers: { 'content-type': 'text/plain' } });
      t.equal(res.statusCode, 405, `${method} ${url}`);
      t.equal(res.headers.allow, allow, `${method} ${url}`);
      t.match(res.json(), { ...ERROR_SHAPE, code: 'method_not_allowed', error: `${method} is not supported on ${url}` }, `${method} ${url}`);
      t.equal(res.headers['cache-control'], 'no-store');
    }
  }
  const unknown = await app.server.inject({ method: 'TRACE', url: '/nowhere' });
  t.equal(unknown.statusCode, 404, 'an undefined path is still 404, whatever the method');
});

t.test('messages in plain words: a JSON array body "must be a JSON object", and no prose description is pasted into a sentence', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const plan = (body: unknown) => app.server.inject({ method: 'POST', url: '/api/app/plan', payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const valid = { from: 'CC', to: 'USDCx', amount: '1', venueId: 'tradecraft', takerParty: `alice::1220${'a'.repeat(64)}`, idempotencyKey: 'k1' };
  for (const body of [[], [valid], 'text', 5, null]) t.match((await plan(body)).json(), { code: 'bad_request', error: 'the request body must be a JSON object' }, JSON.stringify(body));
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ ...valid, idempotencyKey: 5 }, "body field 'idempotencyKey' must be a string"],
    [{ ...valid, idempotencyKey: 'a b' }, "body field 'idempotencyKey' must be printable ASCII characters, without spaces"],
    [{ ...valid, idempotencyKey: '' }, "body field 'idempotencyKey' must not be empty"],
    [{ ...valid, takerParty: 5 }, "body field 'takerParty' must be a string"],
    [{ ...valid, venueId: ['tradecraft'] }, "body field 'venueId' must be a string"],
    [{ ...valid, venueId: '' }, "body field 'venueId' must not be empty"],
    [{ ...valid, quoteRef: 'x' }, "body field 'quoteRef' must be an object"],
    [{ ...valid, quoteRef: {} }, "missing required body field 'quoteRef.venueId'"],
    [{ ...valid, amount: ['1'] }, /^body field 'amount' must be a positive decimal string/],
    [{ ...valid, slippageBps: 'abc' }, /^body field 'slippageBps' must be an integer from 0 to 5000/],
  ] as never;
  for (const [body, message] of cases) {
    const res = await plan(body);
    t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 80));
    t.match(res.json(), { code: 'bad_request', error: message }, JSON.stringify(body).slice(0, 80));
    t.notMatch(res.json().error, /must be [A-Z]|given once|must be a [aeiou]/, 'no prose description, no query wording, no "a object"');
  }
  const twice = await app.server.inject('/api/quote?from=CC&from=USDCx&to=USDCx&amount=1');
  t.match(twice.json(), { error: "query parameter 'from' must be given once" }, 'a query parameter sent twice is still "given once"');
});

t.test('a body with a __proto__ key (or a constructor.prototype) is refused for that, naming it, not called invalid JSON', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const [payload, key] of [
    ['{"__proto__":{"admin":true},"from":"CC"}', '__proto__'],
    ['{"from":"CC","quoteRef":{"venueId":"tradecraft","__proto__":null}}', 'quoteRef.__proto__'],
    ['{"constructor":{"prototype":{"x":1}}}', 'constructor.prototype'],
  ] as const) {
    const res = await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload, headers: { 'content-type': 'application/json' } });
    t.equal(res.statusCode, 400, payload);
    t.match(res.json(), { ...ERROR_SHAPE, code: 'bad_request', error: `the request body has a '${key}' key, which is refused (it could alter object prototypes)` }, payload);
  }
  const broken = await app.server.inject({ method: 'POST', url: '/api/execute/plan', payload: '{"__proto__":', headers: { 'content-type': 'application/json' } });
  t.match(broken.json(), { code: 'bad_request', error: 'the request body is not valid JSON' }, 'JSON that does not parse is still invalid JSON');
});

t.test('"JSON bodies are parsed with limits that hold in time as well as size": depth and key count read off the text in one pass', async (t) => {
  const nested = (levels: number) => `${'['.repeat(levels - 1)}{}${']'.repeat(levels - 1)}`;
  t.equal(structureProblem(nested(MAX_BODY_DEPTH)), null, 'at the depth limit');
  t.match(structureProblem(nested(MAX_BODY_DEPTH + 1)), new RegExp(`more than ${MAX_BODY_DEPTH} levels deep`), 'one level past it');
  const keyed = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":1`).join(',')}}`;
  t.equal(structureProblem(keyed(MAX_BODY_KEYS)), null, 'at the key limit');
  t.match(structureProblem(keyed(MAX_BODY_KEYS + 1)), new RegExp(`more than ${MAX_BODY_KEYS} keys`), 'one key past it');
  const text = `{"memo":"${'[{:'.repeat(100)}\\\"${'{'.repeat(40)}"}`;
  t.equal(structureProblem(text), null, 'brackets, colons and escaped quotes inside a string are text, not structure');
});

t.test('a body nested thousands of levels deep (with a __proto__ key at the bottom) is refused for its depth, and the service answers others meanwhile', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const base = await listen(app.server);
  // 16 KB, the body limit: what once blocked the event loop for most of a second, and past a few
  // thousand levels was called invalid JSON.
  const levels = 8_000;
  const worst = `${'['.repeat(levels)}{"__proto__":{"admin":true}}${']'.repeat(levels)}`;
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const post = () => fetch(`${base}/api/execute/plan`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'bx_unused' }, body: worst });
  const [answers, quote] = await Promise.all([Promise.all([post(), post(), post(), post()]), fetch(`${base}/api/status`)]);
  delay.disable();
  for (const answer of answers) {
    t.equal(answer.status, 400);
    t.match(await answer.json(), { ...ERROR_SHAPE, code: 'bad_request', error: `the request body nests objects or lists more than ${MAX_BODY_DEPTH} levels deep` });
  }
  t.equal(quote.status, 200, 'another caller is answered meanwhile');
  t.comment(`longest event-loop block while refusing four such bodies: ${(delay.max / 1e6).toFixed(1)} ms`);
});

t.test('"a POST whose body never arrives" is answered and closed once REQUEST_TIMEOUT_MS passes; past MAX_CONNECTIONS a new connection is closed at once', async (t) => {
  const app = await testApp({ env: { REQUEST_TIMEOUT_MS: '300', HEADERS_TIMEOUT_MS: '200', MAX_CONNECTIONS: '2' } });
  t.teardown(app.close);
  const base = await listen(app.server);
  const { host } = new URL(base);
  const stalled = await rawExchange(base, `POST /api/app/plan HTTP/1.1\r\nHost: ${host}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"from":`);
  t.equal(stalled.answers[0]?.status, 408, 'answered, not left open');
  t.match(JSON.parse(stalled.answers[0]?.body ?? '{}'), { ...ERROR_SHAPE, code: 'request_timeout', error: 'the request did not arrive in time' });
  t.ok(stalled.ended, 'and the connection closed in order');
  // Its own app: the held connections must outlive the short timeouts above.
  const capped = await testApp({ env: { MAX_CONNECTIONS: '2' } });
  t.teardown(capped.close);
  const cappedBase = await listen(capped.server);
  const { port } = new URL(cappedBase);
  const held = await Promise.all([0, 1].map(() => new Promise<net.Socket>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => resolve(socket));
  })));
  t.teardown(() => held.forEach((s) => s.destroy()));
  const third = await rawExchange(cappedBase, `GET /api/status HTTP/1.1\r\nHost: ${new URL(cappedBase).host}\r\n\r\n`);
  t.strictSame(third.answers, [], 'the connection over the cap is closed without an answer');
  held.forEach((s) => s.destroy());
});

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Sends `bytes` on one keep-alive connection, as a client pipelining its requests would, and
 * reads every answer until the server closes the connection: how it closed it (an orderly end, or
 * the error the client saw) and the answers, parsed.
 */
function rawExchange(base: string, bytes: string | Buffer): Promise<{ answers: RawAnswer[]; ended: boolean; error: string | null }> {
  const { port } = new URL(base);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    let ended = false;
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      ended = true;
      socket.end();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('close', () => {
      const answers: RawAnswer[] = [];
      let rest = Buffer.concat(chunks).toString('latin1');
      while (rest.length > 0) {
        const headEnd = rest.indexOf('\r\n\r\n');
        if (headEnd < 0) break;
        const [statusLine, ...lines] = rest.slice(0, headEnd).split('\r\n');
        const headers: Record<string, string> = {};
        for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
        const length = Number(headers['content-length'] ?? 0);
        answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.slice(headEnd + 4, headEnd + 4 + length) });
        rest = rest.slice(headEnd + 4 + length);
      }
      resolve({ answers, ended, error });
    });
    socket.write(bytes);
  });
}

const NEXT_REQUEST = 'GET /api/status HTTP/1.1\r\nHost: localhost\r\n\r\n';

t.test('"answers outside the contract": a head over the limit (414 for its URL, 431 for its headers), an unparsable URL, an unknown method (501) and CONNECT are each the error envelope with the version headers and no-store (and, for an API path, Access-Control-Allow-Origin), logged, and close the connection in order', async (t) => {
  const app = await testApp({ env: { SERVICE_BUILD: 'abc1234' } });
  t.teardown(app.close);
  const base = await listen(app.server);
  const cases = [
    ['headers over the limit', `GET /api/status HTTP/1.1\r\nHost: localhost\r\nx-padding: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large', /^the request's headers are over the 16 KB limit$/, true],
    ['a URL over the limit', `GET /api/quote?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 414, 'uri_too_long', /^the request line \(its URL\) is over the 16 KB limit$/, true],
    ['a URL over the limit, off the API', `GET /portal/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 414, 'uri_too_long', /URL\) is over the 16 KB limit$/, false],
    ['an unparsable URL', 'GET /% HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'bad_request', /^the request URL is malformed$/, false],
    ['an unparsable URL on an API path', 'GET /api/%zz HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'bad_request', /^the request URL is malformed$/, true],
    ['an unknown method', 'FOO /api/status HTTP/1.1\r\nHost: localhost\r\n\r\n', 501, 'not_implemented', /^the request method is not one HTTP defines$/, true],
    ['a malformed header line', 'GET /api/status HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n', 400, 'bad_request', /^the request is not valid HTTP\/1.1$/, true],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 400, 'bad_request', /^CONNECT is not supported: this service is not a proxy$/, false],
  ] as const;
  for (const [name, request, status, code, message, crossOrigin] of cases) {
    // The next request is pipelined behind the bad one, as a keep-alive client may send it.
    const { answers, ended, error } = await rawExchange(base, request + NEXT_REQUEST);
    t.equal(answers.length, 1, `${name}: one answer, then the connection is closed`);
    const [answer] = answers;
    t.equal(answer?.status, status, name);
    t.match(JSON.parse(answer?.body ?? '{}'), { error: message, code }, name);
    t.match(answer?.headers, { 'x-service-api-version': '1', 'x-service-build': 'abc1234', 'cache-control': 'no-store', connection: 'close' }, name);
    t.equal(answer?.headers['access-control-allow-origin'], crossOrigin ? '*' : undefined, `${name}: ${crossOrigin ? 'readable by any page, as every API answer is' : 'no CORS header off the API'}`);
    t.match(answer?.headers['content-type'], /^application\/json/, name);
    t.match(answer?.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${name}: a request id`);
    t.ok(ended, `${name}: the server ended the connection in order`);
    t.equal(error, null, `${name}: the client saw no ECONNRESET`);
    const line = app.logs().find((l) => l.msg === 'request completed' && l.reqId === answer?.headers['x-request-id']);
    t.match(line, { route: '(none)', status, code }, `${name}: logged with its code under its request id`);
  }
  const head = app.logs().find((l) => l.clientError === 'HPE_HEADER_OVERFLOW');
  t.ok(head, 'the parser\'s error is on the line');
  t.notMatch(app.rawLogs(), 'aaaaaaaaaaaaaaaa', 'the refused head is never logged');
});

t.test('"a head or a body that does not arrive in time" is 408 request_timeout in the error envelope, and the connection closes', async (t) => {
  const app = await testApp({ env: { HEADERS_TIMEOUT_MS: '200', REQUEST_TIMEOUT_MS: '400' } });
  t.teardown(app.close);
  const base = await listen(app.server);
  for (const [name, request] of [
    ['a head that stops', 'GET /api/status HTTP/1.1\r\nHost: localhost\r\n'],
    ['a body that stops', 'POST /api/app/plan HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{'],
  ] as const) {
    const { answers, ended } = await rawExchange(base, request);
    t.equal(answers[0]?.status, 408, name);
    t.match(JSON.parse(answers[0]?.body ?? '{}'), { code: 'request_timeout', error: 'the request did not arrive in time', action: 'send the whole request promptly' }, name);
    t.equal(answers[0]?.headers.connection, 'close', name);
    t.ok(ended, `${name}: closed in order`);
  }
});

t.test('"a body over 16 KB is 413 payload_too_large, answered once the body has arrived so the client reads it": 5 MB written whole, without EPIPE or a reset, then the connection closes', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const base = await listen(app.server);
  for (const size of [20_000, 5_000_000]) {
    const head = `POST /api/app/plan HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;
    const { answers, ended, error } = await rawExchange(base, Buffer.concat([Buffer.from(head), Buffer.alloc(size, 0x20)]));
    t.equal(error, null, `${size} bytes: the whole body was taken (no EPIPE, no reset)`);
    t.equal(answers[0]?.status, 413, `${size} bytes: 413`);
    t.match(JSON.parse(answers[0]?.body ?? '{}'), { code: 'payload_too_large', error: /over the 16 KB limit/, action: 'send a smaller body' });
    t.match(answers[0]?.headers, { 'access-control-allow-origin': '*', 'x-service-api-version': '1', 'cache-control': 'no-store', connection: 'close' });
    t.ok(ended, `${size} bytes: closed in order`);
  }
  const fetched = await fetch(`${base}/api/execute/plan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(1_000_000, 0x20) });
  t.equal(fetched.status, 413, 'fetch reads it too');
});

t.test('"a keep-alive client\'s next request does not die with ECONNRESET" after an answer outside the contract', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const base = await listen(app.server);
  for (const [name, init, url] of [
    ['a head over the limit', { headers: { 'x-padding': 'a'.repeat(20_000) } }, '/api/status'],
    ['an unparsable URL', {}, '/%'],
  ] as const) {
    t.equal((await fetch(`${base}/api/status`)).status, 200, `${name}: before`);
    const refused = await fetch(`${base}${url}`, init);
    t.equal(refused.status, name === 'a head over the limit' ? 431 : 400, name);
    t.equal(refused.headers.get('connection'), 'close', name);
    t.match(await refused.json(), { code: name === 'a head over the limit' ? 'headers_too_large' : 'bad_request' }, name);
    t.equal((await fetch(`${base}/api/status`)).status, 200, `${name}: the next request on the same client is answered`);
  }
});

t.test('an error message is "cut to 1000 characters" (Error.error\'s maxLength), however long the request it quotes', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const url of [`/${'x'.repeat(5000)}`, `/api/liveness?${'y'.repeat(3000)}=1`]) {
    const res = await app.server.inject({ url });
    const body = res.json<{ error: string }>();
    t.ok(res.statusCode >= 400 && res.statusCode < 500, url.slice(0, 20));
    t.ok(body.error.length <= 1000, `a message of ${body.error.length} characters`);
    t.match(body.error, /\.\.\.$/, 'marked as cut');
  }
});
