// "No answer, however malformed the request, leaves the contract": a seeded, bounded fuzz of every
// operation in openapi/v1.yaml. Requests are generated from the spec's schemas (valid ones, then
// each field broken one way at a time, then whole requests broken: parameters, bodies, content
// types, keys), sent through inject; methods, paths, targets and heads no HTTP client would send
// go as raw bytes to a real ephemeral port. Every answer is judged by test/helpers/contract-answers.ts
// (status documented for the operation, body valid against its schema, headers, never a 5xx or a
// stack) and every violation is collected, never thrown away, then reported by kind.
//
// The seed is FUZZ_SEED when set, else taken from the clock, so each run explores other requests;
// it is in every test's name, so a failure anywhere (CI included) replays with FUZZ_SEED=<seed>.
import fc from 'fast-check';
import t from 'tap';
import { newKey } from '../core/keys/partner-keys.js';
import { listen, testApp, type TestApp } from './helpers/app.js';
import { contractJudge, type Answer, type Asked } from './helpers/contract-answers.js';
import { rawExchange } from './helpers/raw-http.js';
import { RequestArbitraries, type FuzzRequest } from './helpers/request-arbitraries.js';
import { loadSpec } from './helpers/spec.js';

const SEED = process.env.FUZZ_SEED !== undefined && process.env.FUZZ_SEED !== '' ? Number(process.env.FUZZ_SEED) : Date.now() % 0x7fffffff;
if (!Number.isSafeInteger(SEED)) throw new Error(`FUZZ_SEED must be an integer, not ${process.env.FUZZ_SEED}`);
/** Valid requests generated per operation. */
const VALID_PER_OPERATION = 180;
/** Requests in flight at once through inject. */
const CONCURRENCY = 8;

const spec = loadSpec();
const judge = contractJudge(spec);
const arbitraries = new RequestArbitraries(spec);
const operations = arbitraries.operations();
const seeded = (n: number) => SEED + n;

t.comment(`fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED}`);

/** Violations by kind: each kind once, with how many answers showed it and the first request that did. */
class Findings {
  private readonly kinds = new Map<string, { count: number; example: string }>();
  /** Answers by where they went and their status: `getQuote 200` -> count. */
  readonly statuses = new Map<string, number>();
  sent = 0;

  record(where: string, request: { label: string; method: string; url: string; payload?: string }, violations: readonly string[], status?: number): void {
    this.sent += 1;
    if (status !== undefined) this.statuses.set(`${where} ${status}`, (this.statuses.get(`${where} ${status}`) ?? 0) + 1);
    for (const violation of violations) {
      const kind = `${where}: ${violation.replace(/: ".*$/s, '')}`;
      const seen = this.kinds.get(kind);
      if (seen) seen.count += 1;
      else this.kinds.set(kind, { count: 1, example: `${request.label}: ${request.method} ${request.url.slice(0, 200)}${request.payload === undefined ? '' : ` ${request.payload.slice(0, 300)}`} -> ${violation.slice(0, 300)}` });
    }
  }

  report(): string[] {
    return [...this.kinds].map(([kind, { count, example }]) => `${kind} (×${count}; first: ${example})`).sort();
  }
}

async function inBatches<T>(items: readonly T[], each: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) await Promise.all(items.slice(i, i + CONCURRENCY).map(each));
}

async function injected(app: TestApp, request: FuzzRequest): Promise<Answer> {
  const res = await app.server.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, payload: request.payload });
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]));
  return { status: res.statusCode, headers, body: res.body };
}

/** The operation's label for a finding: its operationId, or what the path is. */
function where(method: string, url: string): string {
  const pathname = url.split('?')[0];
  const op = operations.find((o) => o.path === pathname && (o.method === method || (o.method === 'GET' && method === 'HEAD')));
  if (op) return op.operationId;
  return operations.some((o) => o.path === pathname) ? `${method} on a defined path` : `${method} elsewhere`;
}

async function sendAll(app: TestApp, findings: Findings, requests: readonly FuzzRequest[]): Promise<void> {
  await inBatches(requests, async (request) => {
    const answer = await injected(app, request);
    const asked: Asked = { method: request.method, url: request.url, headers: request.headers };
    findings.record(where(request.method, request.url), request, judge(asked, answer), answer.status);
  });
}

function toRequest(op: { method: string; path: string }, parts: { query: Record<string, unknown>; body: unknown; headers: Record<string, string> }, label: string): FuzzRequest {
  const headers = { ...parts.headers };
  let payload: string | undefined;
  if (op.method !== 'GET' && parts.body !== null && parts.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    payload = JSON.stringify(parts.body);
  }
  return { method: op.method, url: RequestArbitraries.target(op.path, parts.query), headers, payload, label };
}

/** A request the spec's examples answer 200: the base each field is broken from. */
function baseOf(operationId: string, key: string) {
  const example = spec.examples.find((ex) => ex.operationId === operationId && ex.status === 200 && (ex.request.given ?? []).every((g) => g === 'partner-key'));
  const needsKey = example?.request.given?.includes('partner-key') ?? false;
  return {
    query: { ...(example?.request.query ?? {}) } as Record<string, unknown>,
    body: example?.request.body === undefined ? null : (structuredClone(example.request.body) as Record<string, unknown>),
    headers: needsKey ? { 'x-api-key': key } : ({} as Record<string, string>),
  };
}

let fresh = 0;
/** A body's idempotencyKey made unique, so a broken request is not judged as a reuse of another's. */
function unique<T extends { body: Record<string, unknown> | null }>(parts: T): T {
  if (parts.body && typeof parts.body.idempotencyKey === 'string') parts.body.idempotencyKey = `fuzz-${SEED}-${(fresh += 1)}`;
  return parts;
}

// The partner key the keyed requests send, issued into the app's store once it runs.
const partner = newKey('fuzz-partner', 'partner-default');
const key = partner.key;

// Generated before the app starts: generation is synchronous, and the sandbox's venues share this
// process, so seconds of it with the app running would starve the venues' kept-alive connections.
const validRequests = operations.flatMap((op, i) =>
  fc
    .sample(arbitraries.validRequest(op.operationId, { valid: key }), { seed: seeded(i), numRuns: VALID_PER_OPERATION })
    // Half keep the idempotencyKey they were given (replays and conflicts), half get a new one (new plans).
    .map((parts, n) => toRequest(op, n % 2 === 0 ? unique(parts) : parts, 'valid')),
);

t.test(`"No answer, however malformed the request, leaves the contract" (FUZZ_SEED=${SEED})`, async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  await app.core.keyStore.add(partner.record);

  t.test(`valid requests generated from each operation's schemas (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    await sendAll(app, findings, validRequests);
    t.equal(findings.sent, operations.length * VALID_PER_OPERATION, 'every generated request was answered and judged');
    t.comment([...findings.statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
    for (const op of operations) t.ok(findings.statuses.get(`${op.operationId} 200`), `some valid ${op.operationId} requests got as far as a 200`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`each field of each operation broken one way at a time (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const requests: FuzzRequest[] = [];
    for (const op of operations) {
      for (const part of ['query', 'body'] as const) {
        const base = baseOf(op.operationId, key);
        for (const field of arbitraries.fieldNames(op.operationId, part)) {
          const schema = arbitraries.fieldSchema(op.operationId, part, field)!;
          const breaks: Array<[string, unknown]> = [['missing', undefined], ...arbitraries.broken(schema).map((v): [string, unknown] => [`${JSON.stringify(v).slice(0, 40)}`, v])];
          if (part === 'query') breaks.push(['given twice', ['CC', 'USDCx']]);
          for (const [how, value] of breaks) {
            const parts = unique(structuredClone(base));
            const target = part === 'query' ? parts.query : (parts.body ??= {});
            if (value === undefined) delete target[field];
            else target[field] = value;
            requests.push(toRequest(op, parts, `${part} field ${field} broken: ${how}`));
          }
        }
      }
    }
    // The order the breaks go in is the seed's: shared state (caches, windows) meets them in another order each run.
    const order = fc.sample(fc.shuffledSubarray(requests.map((_, i) => i), { minLength: requests.length }), { seed: seeded(100), numRuns: 1 })[0]!;
    await sendAll(app, findings, order.map((i) => requests[i]!));
    t.equal(findings.sent, requests.length, `${requests.length} broken-field requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`whole requests broken: parameters, bodies, content types, keys (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const requests: FuzzRequest[] = [];
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    for (const op of operations) {
      const base = () => unique(baseOf(op.operationId, key));
      const plain = toRequest(op, base(), '');
      const withQuery = (extra: string, label: string): FuzzRequest => ({ ...toRequest(op, base(), label), url: `${plain.url}${plain.url.includes('?') ? '&' : '?'}${extra}` });
      for (const extra of ['x=1', '__proto__=1', 'constructor=1', 'toString=1', 'hasOwnProperty=1', '__proto__[x]=1', 'a[b]=1', '=', '&&&', 'from', 'amount=', '_=123', `${'p'.repeat(300)}=1`, `q=${'v'.repeat(8000)}`]) {
        requests.push(withQuery(extra, `query with ${extra.slice(0, 40)}`));
      }
      const bodies: Array<[string, string | undefined, Record<string, string>]> = [
        ['an array body', '[]', { 'content-type': 'application/json' }],
        ['a null body', 'null', { 'content-type': 'application/json' }],
        ['a number body', '5', { 'content-type': 'application/json' }],
        ['a string body', '"plan"', { 'content-type': 'application/json' }],
        ['invalid JSON', '{"from": ', { 'content-type': 'application/json' }],
        ['an empty JSON body', '', { 'content-type': 'application/json' }],
        ['a __proto__ key', '{"__proto__": {"admin": true}, "from": "CC"}', { 'content-type': 'application/json' }],
        ['a constructor key', '{"constructor": {"prototype": {}}}', { 'content-type': 'application/json' }],
        ['a duplicated key', '{"amount": "100", "amount": "0"}', { 'content-type': 'application/json' }],
        ['deep nesting', nested(5000), { 'content-type': 'application/json' }],
        ['a body over 16 KiB', JSON.stringify({ pad: 'x'.repeat(20_000) }), { 'content-type': 'application/json' }],
        ['text/plain', '{"from":"CC"}', { 'content-type': 'text/plain' }],
        ['a form', 'from=CC&to=USDCx', { 'content-type': 'application/x-www-form-urlencoded' }],
        ['a charset', '{}', { 'content-type': 'application/json; charset=latin1' }],
        ['a bogus content type', '{}', { 'content-type': '\u00e9/\u00e9' }],
        ['no content type', '{}', {}],
        ['a lone surrogate', '{"from":"\\ud800"}', { 'content-type': 'application/json' }],
      ];
      for (const [label, payload, headers] of bodies) {
        const parts = base();
        requests.push({ method: op.method, url: plain.url, headers: { ...parts.headers, ...headers }, payload, label: `body: ${label}` });
      }
      if (op.method !== 'GET') {
        const parts = base();
        for (const [name, value] of Object.entries(parts.body ?? {})) {
          requests.push({ ...toRequest(op, { ...parts, body: { ...parts.body, [`${name}X`]: value } }, `body with an unknown field ${name}X`) });
        }
      }
      const keyHeaders: Array<Record<string, string>> = [
        { 'x-api-key': '' },
        { 'x-api-key': 'bx_' },
        { 'x-api-key': `${key}x` },
        { 'x-api-key': key.toUpperCase() },
        { authorization: `Basic ${key}` },
        { authorization: `Bearer ${key} ${key}` },
        { authorization: 'Bearer bx_unknownunknownunknownunknownun' },
        { 'x-api-key': key, authorization: 'Bearer bx_unknownunknownunknownunknownun' },
        { 'x-api-key': key, origin: 'https://elsewhere.example' },
        { 'x-api-key': key, 'sec-fetch-site': 'same-origin' },
        { 'x-forwarded-for': '203.0.113.9, ::1' },
        { accept: 'text/html' },
      ];
      for (const headers of keyHeaders) {
        const parts = base();
        requests.push(toRequest(op, { ...parts, headers: { ...parts.headers, ...headers } }, `headers ${JSON.stringify(headers).slice(0, 60)}`));
      }
    }
    await sendAll(app, findings, requests);
    t.equal(findings.sent, requests.length, `${requests.length} broken requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`every method on every defined path, and undefined paths (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const requests: FuzzRequest[] = [];
    const paths = [...new Set(operations.map((o) => o.path))];
    for (const path of paths) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        requests.push({ method, url: path, headers: {}, label: 'a method' });
      }
      requests.push({ method: 'OPTIONS', url: path, headers: { origin: 'https://wallet.example', 'access-control-request-method': 'POST' }, label: 'a preflight' });
    }
    const unknown = fc.sample(fc.tuple(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'), fc.webPath({ size: 'small' })), { seed: seeded(200), numRuns: 60 });
    for (const [method, path] of unknown) requests.push({ method, url: path === '' ? '/' : path, headers: {}, label: 'an undefined path' });
    for (const path of ['/', '/api', '/api/', '/api/quote/', '/API/QUOTE', '/api/quote/x', '/api/quote.json', '/api//quote', '/api/outcome/1', '/api/status/']) {
      requests.push({ method: 'GET', url: path, headers: {}, label: 'a neighbouring path' });
    }
    await sendAll(app, findings, requests);
    t.equal(findings.sent, requests.length, `${requests.length} requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`raw bytes: methods, targets and heads no client sends, over a real port (FUZZ_SEED=${SEED})`, async (t) => {
    const port = Number(new URL(await listen(app.server)).port);
    const findings = new Findings();
    const paths = [...new Set(operations.map((o) => o.path))];
    type Raw = { label: string; method: string; url: string; bytes: string | Buffer; malformed?: 'head' | 'target'; headers?: Record<string, string> };
    const cases: Raw[] = [];
    const request = (method: string, url: string, head = 'Host: 127.0.0.1\r\nConnection: close\r\n') => `${method} ${url} HTTP/1.1\r\n${head}\r\n`;
    // Methods the HTTP parser knows but the contract does not use: on a defined path, 405 with Allow.
    for (const method of ['TRACE', 'PROPFIND', 'SEARCH', 'LOCK', 'PURGE', 'MKCOL', 'COPY', 'QUERY', 'REPORT', 'NOTIFY']) {
      for (const url of [...paths, '/nowhere']) cases.push({ label: `method ${method}`, method, url, bytes: request(method, url) });
    }
    // Method tokens the parser refuses.
    for (const method of ['FOO', 'get', 'G3T', 'GET\u0000', 'BREW']) {
      for (const url of [paths[0]!, '/nowhere']) cases.push({ label: `method ${JSON.stringify(method)}`, method, url, bytes: request(method, url), malformed: 'head' });
    }
    // Targets.
    // Targets: well-formed ones are judged as any request to their path; malformed ones may be refused.
    const targets: Array<[string, 'head' | 'target' | undefined]> = [
      ['/%', 'target'],
      ['/%zz', 'target'],
      ['/api/quote?%', undefined],
      ['/api/quote?from=%zz&to=USDCx&amount=1', undefined],
      ['/api/status?_=123', undefined],
      ['/api/status?', undefined],
      ['/api/status#fragment', 'target'],
      ['//api/status', undefined],
      ['/api/./status', undefined],
      ['/api/../api/status', undefined],
      ['/api/%2e%2e/api/status', undefined],
      ['/api/status%00', undefined],
      ['/api/st%61tus', undefined],
      ['http://127.0.0.1/api/status', undefined],
      ['*', 'target'],
      ['api/status', 'head'],
      ['/api/st atus', 'head'],
      [`/api/quote?from=CC&to=USDCx&amount=1&pad=${'a'.repeat(20_000)}`, 'head'],
    ];
    for (const [url, malformed] of targets) cases.push({ label: `target ${url.slice(0, 40)}`, method: 'GET', url, bytes: request('GET', url), malformed });
    cases.push({ label: 'a non-ASCII target', method: 'GET', url: '/api/st\u00e4tus', malformed: 'head', bytes: Buffer.concat([Buffer.from('GET /api/st'), Buffer.from([0xe4, 0xff]), Buffer.from('tus HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')]) });
    // Heads.
    const heads: Array<[string, string]> = [
      ['a header line without a colon', 'Host: 127.0.0.1\r\nnot a header\r\n'],
      ['a header name with a space', 'Host: 127.0.0.1\r\nBad Name: 1\r\n'],
      ['a header over the size limit', `Host: 127.0.0.1\r\nX-Pad: ${'p'.repeat(20_000)}\r\n`],
      ['many headers', `Host: 127.0.0.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-H${i}: ${i}\r\n`).join('')}`],
      ['no Host (HTTP/1.1 requires one)', ''],
      ['two Hosts', 'Host: a\r\nHost: b\r\n'],
      ['a folded header', 'Host: 127.0.0.1\r\nX-Folded: a\r\n b\r\n'],
      ['a bare LF', 'Host: 127.0.0.1\nX-A: 1\r\n'],
      ['two Content-Lengths', 'Host: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n'],
      ['Content-Length and chunked', 'Host: 127.0.0.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n'],
      ['a negative Content-Length', 'Host: 127.0.0.1\r\nContent-Length: -1\r\n'],
      ['a control character in a value', 'Host: 127.0.0.1\r\nX-A: a\u0001b\r\n'],
    ];
    for (const [label, head] of heads) cases.push({ label, method: 'GET', url: paths[0]!, bytes: `GET ${paths[0]} HTTP/1.1\r\n${head}Connection: close\r\n\r\n`, malformed: 'head' });
    cases.push({ label: 'HTTP/1.0 without Host', method: 'GET', url: '/api/status', bytes: 'GET /api/status HTTP/1.0\r\n\r\n' });
    cases.push({ label: 'an unknown HTTP version', method: 'GET', url: '/api/status', bytes: 'GET /api/status HTTP/9.9\r\nHost: x\r\n\r\n', malformed: 'head' });
    cases.push({ label: 'a request line without a version', method: 'GET', url: '/api/status', bytes: 'GET /api/status\r\nHost: x\r\n\r\n', malformed: 'head' });
    cases.push({ label: 'a broken chunked body', method: 'POST', url: '/api/app/plan', bytes: 'POST /api/app/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', malformed: 'head' });
    cases.push({ label: 'a body shorter than its Content-Length, then closed', method: 'POST', url: '/api/app/plan', bytes: 'POST /api/app/plan HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}' });
    for (const c of cases) {
      const answer = await rawExchange(port, c.bytes, { headOnly: c.method === 'HEAD' });
      const violations = answer.status === 0 ? [`no answer: the connection closed with ${JSON.stringify(answer.body.slice(0, 80))}`] : judge({ method: c.method, url: c.url, malformed: c.malformed }, answer);
      findings.record(`raw ${c.label}`, c, violations);
    }
    t.equal(findings.sent, cases.length, `${cases.length} raw requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });
});
