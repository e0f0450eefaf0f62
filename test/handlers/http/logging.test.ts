// Logs are pino JSON lines; request lines carry method, route, status and latency; no secret, API
// key or party id ever reaches a line.
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import pino from 'pino';
import t from 'tap';
import { directLineWriter, jsonString, latencyText, REQUEST_COMPLETED } from '../../../handlers/http/access-log.js';
import { createLogger, LineBatch } from '../../../handlers/http/logger.js';
import { testApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';

const PARTY = 'alice::1220bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const KEY = 'bx_supersecretkeyvalue0123456789';

t.test('each request logs one pino JSON line with method, route, status and latency', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  await app.server.inject('/api/quote?from=CC&to=USDCx&amount=1');
  await app.server.inject('/api/quote?from=CC&to=USDCx&amount=1');
  await app.server.inject('/does-not-exist');
  const lines = app.logs().filter((l) => l.msg === 'request completed');
  t.equal(lines.length, 3);
  t.match(lines[0], { method: 'GET', route: '/api/quote', status: 200, latencyMs: Number, quoteCache: 'miss' });
  t.match(lines[1], { method: 'GET', route: '/api/quote', status: 200, latencyMs: Number, quoteCache: 'hit' }, 'a cached quote, answered without a promise, logs the same line');
  t.match(lines[2], { method: 'GET', route: '(none)', status: 404 });
});

t.test('"one request completed line per request", whatever answers it (a handler, an error, a preflight, a HEAD, a file), with a latencyMs from routing to the answer that never exceeds what the caller waited', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const requests: InjectOptions[] = [
    { url: '/api/quote?from=CC&to=USDCx&amount=1' },
    { url: '/api/quote?from=CC' },
    { method: 'OPTIONS', url: '/api/quote', headers: { origin: 'https://wallet.example', 'access-control-request-method': 'GET' } },
    { method: 'HEAD', url: '/api/status' },
    { url: '/openapi/v1.yaml' },
    { method: 'POST', url: '/api/app/plan', headers: { 'content-type': 'text/plain' }, payload: 'x' },
  ];
  for (const request of requests) {
    const before = app.logs().filter((l) => l.msg === REQUEST_COMPLETED).length;
    const started = performance.now();
    const res = await app.server.inject(request);
    const waitedMs = performance.now() - started;
    const lines = app.logs().filter((l) => l.msg === REQUEST_COMPLETED).slice(before);
    const what = `${request.method ?? 'GET'} ${request.url}`;
    t.equal(lines.length, 1, `${what}: one line`);
    t.match(lines[0], { reqId: res.headers['x-request-id'], method: request.method ?? 'GET', status: res.statusCode }, `${what}: its id, method and status`);
    const latency = lines[0]?.latencyMs as number;
    t.ok(latency >= 0 && latency <= waitedMs, `${what}: latencyMs ${latency} within the ${waitedMs.toFixed(3)} ms the caller waited`);
  }
});

t.test('no API key or party id reaches the logs, from headers, query strings or bodies', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  await app.server.inject({ url: `/api/quote?from=CC&to=USDCx&amount=1&feeBps=5&feeRecipient=${PARTY}`, headers: { 'x-api-key': KEY } });
  await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=1', headers: { authorization: `Bearer ${KEY}` } });
  await app.server.inject(`/api/outcome?party=${encodeURIComponent(PARTY)}&since=2026-01-01T00:00:00Z&deadline=2026-01-01T00:01:00Z`);
  await app.server.inject(`/nowhere?party=${PARTY}`);
  await app.server.inject({ method: 'POST', url: '/api/execute/plan', headers: { 'x-api-key': KEY }, payload: { takerParty: PARTY } });
  await app.server.inject({ url: '/api/status', headers: { 'x-request-id': KEY } });
  await app.server.inject({ url: '/api/status', headers: { 'x-request-id': PARTY } });
  const raw = app.rawLogs();
  t.ok(raw.length > 0, 'something was logged');
  t.notMatch(raw, KEY, 'no API key');
  t.notMatch(raw, PARTY, 'no party id');
  t.notMatch(raw, '1220bbbb', 'no party fingerprint');
});

t.test('pino redaction censors keys and parties passed to a log call', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  app.logger.info(
    {
      takerParty: PARTY,
      party: PARTY,
      feeRecipient: PARTY,
      sender: PARTY,
      owner: PARTY,
      apiKey: KEY,
      token: KEY,
      ledgerToken: KEY,
      headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY },
      req: { headers: { authorization: `Bearer ${KEY}`, 'x-api-key': KEY } },
      query: { party: PARTY },
      body: { takerParty: PARTY },
    },
    'redaction probe',
  );
  const line = app.logs().find((l) => l.msg === 'redaction probe');
  t.ok(line);
  const text = JSON.stringify(line);
  t.notMatch(text, KEY);
  t.notMatch(text, PARTY);
  t.match(line, { takerParty: '[redacted]', party: '[redacted]', sender: '[redacted]', owner: '[redacted]', apiKey: '[redacted]', token: '[redacted]', ledgerToken: '[redacted]', query: { party: '[redacted]' } });
});

t.test('stdout log lines are gathered and handed on whole, in order, in batches of a set size; flush() hands on the rest', async (t) => {
  const written: string[] = [];
  const batch = new LineBatch({ write: (chunk: string) => written.push(chunk) }, 100);
  const line = (i: number) => `{"n":${i},"pad":"${'x'.repeat(30)}"}\n`;
  for (let i = 0; i < 7; i++) batch.write(line(i));
  t.equal(written.length, 2, 'two batches once 100 characters gathered twice');
  t.ok(written.every((chunk) => chunk.length >= 100 && chunk.endsWith('\n')), 'each batch holds whole lines');
  batch.flush();
  t.equal(written.join(''), Array.from({ length: 7 }, (_, i) => line(i)).join(''), 'every line, once, in order');
  batch.flush();
  t.equal(written.length, 3, 'an empty flush writes nothing');
});

/** A logger on an in-memory sink, and the lines it has written with their times made equal. */
function captured(options: pino.LoggerOptions | null = null) {
  const lines: string[] = [];
  const sink = { write: (line: string) => void lines.push(line) };
  const logger = options ? pino(options, sink) : createLogger('info', sink);
  return { logger, lines: () => lines.map((l) => l.replace(/"time":\d+/, '"time":0')) };
}

t.test('the access-log line is the line pino writes for the same fields, byte for byte', async (t) => {
  const samples = [
    { reqId: 'req-1', method: 'GET', route: '/api/quote', status: 200, latencyMs: 0.123, quoteCache: 'hit' },
    { reqId: 'req-2', method: 'GET', route: '(none)', status: 404, latencyMs: 12 },
    { reqId: 'a"b\\c', method: 'GET', route: '/x', status: 400, latencyMs: 0, ref: 'caf\u00e9 \u2603 \u0001 \ud800 "q"' },
  ];
  const direct = captured();
  const write = directLineWriter(direct.logger);
  if (!write) return t.fail('the service logger takes the direct path');
  const viaPino = captured();
  for (const { reqId, method, route, status, latencyMs, ...annotated } of samples) {
    const extra = Object.entries(annotated).map(([k, v]) => `,"${k}":${jsonString(v)}`).join('');
    write(`,"reqId":${jsonString(reqId)},"method":${jsonString(method)},"route":${jsonString(route)},"status":${status},"latencyMs":${latencyMs}${extra}`);
    viaPino.logger.info({ reqId, method, route, status, latencyMs, ...annotated }, REQUEST_COMPLETED);
  }
  t.strictSame(direct.lines(), viaPino.lines());
  t.equal(direct.lines().length, samples.length);
});

t.test('a served request logs the line pino would have written for it', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  await app.server.inject('/api/quote?from=CC&to=USDCx&amount=1&ref=partner-site');
  const raw = app.rawLogs().split('\n').find((l) => l.includes(REQUEST_COMPLETED))!;
  const { level: _level, time: _time, pid: _pid, hostname: _hostname, service: _service, msg: _msg, ...fields } = JSON.parse(raw) as Record<string, unknown>;
  t.match(fields, { route: '/api/quote', status: 200, ref: 'partner-site', quoteCache: 'miss' });
  const viaPino = captured();
  viaPino.logger.info(fields, REQUEST_COMPLETED);
  t.equal(raw.replace(/"time":\d+/, '"time":0') + '\n', viaPino.lines()[0]);
});

t.test('the access-log line is written only while info is enabled', async (t) => {
  const { logger, lines } = captured();
  const write = directLineWriter(logger)!;
  logger.level = 'warn';
  write(',"status":200');
  t.equal(lines().length, 0, 'nothing at warn');
  logger.level = 'info';
  write(',"status":200');
  t.equal(lines().length, 1);
});

t.test('a logger that reshapes its lines gets its access-log line from pino itself', async (t) => {
  t.equal(directLineWriter(captured({ mixin: () => ({ extra: 1 }) }).logger), null, 'a mixin');
  t.equal(directLineWriter(captured({ formatters: { log: (o) => o } }).logger), null, 'a log formatter');
  t.equal(directLineWriter(captured({ msgPrefix: '[x] ' }).logger), null, 'a message prefix');
  t.equal(directLineWriter(captured({ hooks: { streamWrite: (s) => s } }).logger), null, 'a stream-write hook');
  t.equal(directLineWriter(pino({}, pino.multistream([{ stream: { write: () => undefined } }]))), null, 'a stream that routes by level');
  t.not(directLineWriter(captured({}).logger), null, 'a plain pino logger takes the direct path');
});

t.test('latencyMs is written as JSON writes the latency rounded to the microsecond, from whole microseconds', async (t) => {
  const written = (ms: number) => String(Math.round(ms * 1000) / 1000);
  for (const ms of [0, 0.0004, 0.0005, 0.001, 0.01, 0.1, 0.123, 0.12, 0.1204, 1, 1.5, 2.0005, 10.01, 99.999, 100, 123.4567, 1_000_000.001]) t.equal(latencyText(ms), written(ms), String(ms));
  fc.assert(fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), (ms) => latencyText(ms) === written(ms)), { numRuns: 20_000 });
  fc.assert(fc.property(fc.integer({ min: 0, max: 1e9 }), (us) => latencyText(us / 1000) === written(us / 1000)), { numRuns: 20_000 });
});

t.test('"every 4xx and 429 access line carries its error code", and a 429\'s which limit refused it: keyless window, keyed window or fresh-quote budget', async (t) => {
  const app = await testApp({ env: { RATE_LIMIT_KEYLESS_PER_MINUTE: '3', RATE_LIMIT_KEYED_PER_MINUTE: '1', RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '1' } });
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  const lastLine = () => app.logs().filter((l) => l.msg === 'request completed').at(-1);
  const expect = async (request: string | InjectOptions, fields: Record<string, unknown>, name: string) => {
    const res = await app.server.inject(request);
    t.equal(res.statusCode, fields.status, name);
    t.match(lastLine(), fields, name);
    if (fields.code === undefined) t.notOk('code' in lastLine()!, `${name}: no code on a success`);
    if (fields.status !== 429) t.notOk('rateLimit' in lastLine()!, `${name}: no limit named`);
  };
  await expect('/api/status', { status: 200 }, 'a success');
  await expect('/nowhere', { status: 404, code: 'not_found' }, 'an unknown path');
  await expect({ method: 'PUT', url: '/api/quote' }, { status: 405, code: 'method_not_allowed' }, 'a method a path does not support');
  await expect({ url: '/api/quote?from=CC&to=USDCx&amount=1', headers: { 'x-api-key': 'bx_nope' } }, { status: 401, code: 'invalid_key' }, 'a bad key (counted in the keyless window: 1 of 3)');
  await expect('/api/quote?from=CC&to=USDCx&amount=1', { status: 200 }, 'a fresh quote (2 of 3, and the one fresh quote)');
  await expect('/api/quote?from=CC&to=USDCx&amount=1', { status: 200 }, 'a cached quote (3 of 3)');
  await expect({ url: '/api/quote?from=CC&to=USDCx&amount=1', remoteAddress: '10.0.0.2' }, { status: 200 }, 'a cached quote from another IP (1 of 3 in its window)');
  await expect({ url: '/api/quote?from=CC&to=USDCx&amount=2', remoteAddress: '10.0.0.2' }, { status: 200 }, 'its one fresh quote');
  await expect({ url: '/api/quote?from=CC&to=USDCx&amount=3', remoteAddress: '10.0.0.2' }, { status: 429, code: 'rate_limited', rateLimit: 'fresh-quote-budget' }, 'a fresh quote over its IP\'s budget');
  await expect('/api/quote?from=CC&to=USDCx&amount=1', { status: 429, code: 'rate_limited', rateLimit: 'keyless-window' }, 'a keyless request over its IP\'s window');
  await expect({ url: '/api/quote?from=CC&to=USDCx&amount=1', headers: { 'x-api-key': key } }, { status: 200 }, 'a keyed request (1 of 1)');
  await expect({ url: '/api/quote?from=CC&to=USDCx&amount=1', headers: { 'x-api-key': key } }, { status: 429, code: 'rate_limited', rateLimit: 'keyed-window' }, 'a keyed request over its key\'s window');
  await expect({ url: '/api/quote?from=ETH&to=USDCx&amount=1', remoteAddress: '10.0.0.3' }, { status: 400, code: 'unknown_token' }, 'a 400 with a code of its own');
});
