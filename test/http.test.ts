// Server-wide rules: every response is JSON in the error shape when it is an error, carries the
// version and build headers, and never leaks a stack or a framework message.
import { readFileSync } from 'node:fs';
import t from 'tap';
import type { ValidateFunction } from 'ajv';
import Fastify from 'fastify';
import type { Document } from 'openapi-backend';
import { parse } from 'yaml';
import type { KeyVerifier } from '../core/keys/partner-keys.js';
import { getQuote } from '../generated/query-validators.js';
import { ValidatedQueries } from '../handlers/http/validated-queries.js';
import { NOT_IMPLEMENTED, type HandlerMap, type OperationHandler } from '../handlers/operation.js';
import { registerOperations } from '../handlers/routes.js';
import { testApp } from './helpers/app.js';
import { SPEC_PATH } from './helpers/spec.js';

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
    for (const path of ['/api/status', '/api/quote?from=CC&to=USDCx&amount=1&', '/api/liveness']) {
      const sep = path.includes('?') ? '' : '?';
      const res = await app.server.inject(`${path}${sep}${name}=1`);
      t.equal(res.statusCode, 400, `${path} ${name}`);
      t.match(res.json(), { code: 'bad_request', error: `unknown query parameter '${name}'` }, `${path} ${name}`);
    }
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
