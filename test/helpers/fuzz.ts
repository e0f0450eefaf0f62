// The machinery of the seeded contract fuzz, shared by the swap API's
// (test/contract/robustness.test.ts) and the key portal's (test/contract/portal-robustness.test.ts):
// the seed, requests sent through inject in bounded batches or as raw bytes to a real port, every
// answer judged against the spec (test/helpers/contract-answers.ts) and every violation collected
// by kind, and the requests each phase is made of wherever they follow from the spec alone. What
// only a spec's own test knows (its keys, its example bases, its neighbouring paths and odd
// targets) is given by that test.
import fc from 'fast-check';
import { listen, type TestApp } from './app.js';
import { contractJudge, type Answer, type Asked, type ContractJudge, type JudgeOptions } from './contract-answers.js';
import { rawExchange } from './raw-http.js';
import { RequestArbitraries, type FuzzRequest } from './request-arbitraries.js';
import type { Spec } from './spec.js';

/** FUZZ_SEED when set, else one taken from the clock, so that each run explores other requests. */
export function fuzzSeed(): number {
  const given = process.env.FUZZ_SEED;
  const seed = given !== undefined && given !== '' ? Number(given) : Date.now() % 0x7fffffff;
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, not ${given}`);
  return seed;
}

/** Requests in flight at once through inject. */
const CONCURRENCY = 8;

/** Violations by kind: each kind once, with how many answers showed it and the first request that did. */
export class Findings {
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

/** A request's query, body and headers before it is made into one. */
export interface RequestParts {
  query: Record<string, unknown>;
  body: Record<string, unknown> | null;
  headers: Record<string, string>;
}

/** A request sent as bytes; `malformed` as in Asked. */
export interface RawCase {
  readonly label: string;
  readonly method: string;
  readonly url: string;
  readonly bytes: string | Buffer;
  readonly malformed?: 'head' | 'target';
}

/** One spec's fuzz: its operations, its generators and its judge, and the seed everything is drawn with. */
export class ContractFuzz {
  readonly judge: ContractJudge;
  readonly arbitraries: RequestArbitraries;
  readonly operations: ReturnType<RequestArbitraries['operations']>;
  /** Each path the spec defines, once. */
  readonly paths: string[];

  /**
   * `rules`: what the spec's prose asks of every well-formed request's answer beyond what its
   * schemas say (the portal's security headers), as violations.
   */
  constructor(
    readonly spec: Spec,
    readonly seed: number,
    options: JudgeOptions & { keyGiven?: string; rules?: ContractJudge } = {},
  ) {
    const judge = contractJudge(spec, options);
    const { rules } = options;
    this.judge = rules ? (asked, answer) => [...judge(asked, answer), ...(asked.malformed === undefined ? rules(asked, answer) : [])] : judge;
    this.arbitraries = new RequestArbitraries(spec, options.keyGiven);
    this.operations = this.arbitraries.operations();
    this.paths = [...new Set(this.operations.map((o) => o.path))];
  }

  /** The seed of the n-th draw. */
  seeded(n: number): number {
    return this.seed + n;
  }

  /** The operation's label for a finding: its operationId, or what the path is. */
  where(method: string, url: string): string {
    const pathname = url.split('?')[0];
    const op = this.operations.find((o) => o.path === pathname && (o.method === method || (o.method === 'GET' && method === 'HEAD')));
    if (op) return op.operationId;
    return this.operations.some((o) => o.path === pathname) ? `${method} on a defined path` : `${method} elsewhere`;
  }

  toRequest(op: { method: string; path: string }, parts: RequestParts, label: string): FuzzRequest {
    const headers = { ...parts.headers };
    let payload: string | undefined;
    if (op.method !== 'GET' && parts.body !== null && parts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      payload = JSON.stringify(parts.body);
    }
    return { method: op.method, url: RequestArbitraries.target(op.path, parts.query), headers, payload, label };
  }

  /** The requests in an order drawn from the seed's n-th draw: shared state meets them in another order each run. */
  shuffled<T>(requests: readonly T[], n: number): T[] {
    const order = fc.sample(fc.shuffledSubarray(requests.map((_, i) => i), { minLength: requests.length }), { seed: this.seeded(n), numRuns: 1 })[0]!;
    return order.map((i) => requests[i]!);
  }

  /** Sends each request through inject, CONCURRENCY at a time, and records the judge's verdict and any expectation it was sent with. */
  async send(app: TestApp, findings: Findings, requests: readonly FuzzRequest[]): Promise<void> {
    for (let i = 0; i < requests.length; i += CONCURRENCY) {
      await Promise.all(
        requests.slice(i, i + CONCURRENCY).map(async (request) => {
          const answer = await injected(app, request);
          const asked: Asked = { method: request.method, url: request.url, headers: request.headers };
          findings.record(this.where(request.method, request.url), request, [...this.judge(asked, answer), ...unexpected(request, answer)], answer.status);
        }),
      );
    }
  }

  /**
   * Each field of each operation's query and body broken one way at a time, from the base
   * `baseOf` gives for the operation (`baseOf` is called for each request: a base may hold what
   * one request uses up, such as a key).
   */
  brokenFields(baseOf: (operationId: string) => RequestParts): FuzzRequest[] {
    const requests: FuzzRequest[] = [];
    for (const op of this.operations) {
      for (const part of ['query', 'body'] as const) {
        for (const field of this.arbitraries.fieldNames(op.operationId, part)) {
          const schema = this.arbitraries.fieldSchema(op.operationId, part, field)!;
          const breaks: Array<[string, unknown]> = [['missing', undefined], ...this.arbitraries.broken(schema).map((v): [string, unknown] => [`${JSON.stringify(v).slice(0, 40)}`, v])];
          if (part === 'query') breaks.push(['given twice', ['CC', 'USDCx']]);
          for (const [how, value] of breaks) {
            const parts = baseOf(op.operationId);
            const target = part === 'query' ? parts.query : (parts.body ??= {});
            if (value === undefined) delete target[field];
            else target[field] = value;
            requests.push(this.toRequest(op, parts, `${part} field ${field} broken: ${how}`));
          }
        }
      }
    }
    return requests;
  }

  /**
   * One operation's request broken whole: odd query parameters, bodies and content types, a
   * known field renamed, and each of `headerSets` added to its headers (with `expect` when given
   * for that set).
   */
  wholeBreaks(op: { method: string; path: string }, base: () => RequestParts, headerSets: ReadonlyArray<{ headers: Record<string, string>; expect?: FuzzRequest['expect'] }>): FuzzRequest[] {
    const requests: FuzzRequest[] = [];
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const plain = this.toRequest(op, base(), '');
    const withQuery = (extra: string, label: string): FuzzRequest => ({ ...this.toRequest(op, base(), label), url: `${plain.url}${plain.url.includes('?') ? '&' : '?'}${extra}` });
    for (const extra of ['x=1', '__proto__=1', 'constructor=1', 'toString=1', 'hasOwnProperty=1', '__proto__[x]=1', 'a[b]=1', '=', '&&&', 'from', 'amount=', '_=123', `${'p'.repeat(300)}=1`, `q=${'v'.repeat(8000)}`]) {
      requests.push(withQuery(extra, `query with ${extra.slice(0, 40)}`));
    }
    const json = { 'content-type': 'application/json' };
    const bodies: Array<[string, string | undefined, Record<string, string>]> = [
      ['an array body', '[]', json],
      ['a null body', 'null', json],
      ['a number body', '5', json],
      ['a string body', '"plan"', json],
      ['invalid JSON', '{"from": ', json],
      ['an empty JSON body', '', json],
      ['a __proto__ key', '{"__proto__": {"admin": true}, "from": "CC"}', json],
      ['a constructor key', '{"constructor": {"prototype": {}}}', json],
      ['a duplicated key', '{"amount": "100", "amount": "0"}', json],
      ['deep nesting', nested(5000), json],
      ['a body over 16 KiB', JSON.stringify({ pad: 'x'.repeat(20_000) }), json],
      ['text/plain', '{"from":"CC"}', { 'content-type': 'text/plain' }],
      ['a form', 'from=CC&to=USDCx', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['a charset', '{}', { 'content-type': 'application/json; charset=latin1' }],
      ['a bogus content type', '{}', { 'content-type': '\u00e9/\u00e9' }],
      ['no content type', '{}', {}],
      ['a lone surrogate', '{"from":"\\ud800"}', json],
    ];
    for (const [label, payload, headers] of bodies) {
      const parts = base();
      requests.push({ method: op.method, url: plain.url, headers: { ...parts.headers, ...headers }, payload, label: `body: ${label}` });
    }
    if (op.method !== 'GET') {
      const parts = base();
      for (const [name, value] of Object.entries(parts.body ?? {})) {
        requests.push(this.toRequest(op, { ...base(), body: { ...parts.body, [`${name}X`]: value } }, `body with an unknown field ${name}X`));
      }
    }
    for (const { headers, expect } of headerSets) {
      const parts = base();
      requests.push({ ...this.toRequest(op, { ...parts, headers: { ...parts.headers, ...headers } }, `headers ${JSON.stringify(headers).slice(0, 60)}`), expect });
    }
    return requests;
  }

  /** Every method on every defined path, a preflight on each, undefined paths drawn under `prefix`, and the `neighbours` given. */
  methodsAndPaths(prefix: string, neighbours: readonly string[]): FuzzRequest[] {
    const requests: FuzzRequest[] = [];
    for (const path of this.paths) {
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        requests.push({ method, url: path, headers: {}, label: 'a method' });
      }
      requests.push({ method: 'OPTIONS', url: path, headers: { origin: 'https://wallet.example', 'access-control-request-method': 'POST' }, label: 'a preflight' });
    }
    const unknown = fc.sample(fc.tuple(fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH'), fc.webPath({ size: 'small' })), { seed: this.seeded(200), numRuns: 60 });
    for (const [method, path] of unknown) requests.push({ method, url: `${prefix}${path}` === '' ? '/' : `${prefix}${path}`, headers: {}, label: 'an undefined path' });
    for (const path of neighbours) requests.push({ method: 'GET', url: path, headers: {}, label: 'a neighbouring path' });
    return requests;
  }

  /**
   * Raw requests no HTTP client would send: methods the contract does not use, method tokens the
   * parser refuses, the `targets` given, and malformed heads; `get` is a GET path to send them
   * to, `post` a POST path for broken bodies, `nowhere` a path the spec does not define (within
   * the part of the service it covers: its version's prefix).
   */
  rawCases(targets: ReadonlyArray<[string, 'head' | 'target' | undefined]>, { get, post, nowhere = '/nowhere' }: { get: string; post: string; nowhere?: string }): RawCase[] {
    const cases: RawCase[] = [];
    const request = (method: string, url: string, head = 'Host: 127.0.0.1\r\nConnection: close\r\n') => `${method} ${url} HTTP/1.1\r\n${head}\r\n`;
    // Methods the HTTP parser knows but the contract does not use: on a defined path, 405 with Allow.
    for (const method of ['TRACE', 'PROPFIND', 'SEARCH', 'LOCK', 'PURGE', 'MKCOL', 'COPY', 'QUERY', 'REPORT', 'NOTIFY']) {
      for (const url of [...this.paths, nowhere]) cases.push({ label: `method ${method}`, method, url, bytes: request(method, url) });
    }
    // Method tokens the parser refuses.
    for (const method of ['FOO', 'get', 'G3T', 'GET\u0000', 'BREW']) {
      for (const url of [this.paths[0]!, nowhere]) cases.push({ label: `method ${JSON.stringify(method)}`, method, url, bytes: request(method, url), malformed: 'head' });
    }
    // Targets: well-formed ones are judged as any request to their path; malformed ones may be refused.
    for (const [url, malformed] of targets) cases.push({ label: `target ${url.slice(0, 40)}`, method: 'GET', url, bytes: request('GET', url), malformed });
    const [before, after] = [get.slice(0, -2), get.slice(-2)];
    cases.push({ label: 'a non-ASCII target', method: 'GET', url: `${before}\u00e4${after}`, malformed: 'head', bytes: Buffer.concat([Buffer.from(`GET ${before}`), Buffer.from([0xe4, 0xff]), Buffer.from(`${after} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)]) });
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
    for (const [label, head] of heads) cases.push({ label, method: 'GET', url: this.paths[0]!, bytes: `GET ${this.paths[0]} HTTP/1.1\r\n${head}Connection: close\r\n\r\n`, malformed: 'head' });
    cases.push({ label: 'HTTP/1.0 without Host', method: 'GET', url: get, bytes: `GET ${get} HTTP/1.0\r\n\r\n` });
    cases.push({ label: 'an unknown HTTP version', method: 'GET', url: get, bytes: `GET ${get} HTTP/9.9\r\nHost: x\r\n\r\n`, malformed: 'head' });
    cases.push({ label: 'a request line without a version', method: 'GET', url: get, bytes: `GET ${get}\r\nHost: x\r\n\r\n`, malformed: 'head' });
    cases.push({ label: 'a broken chunked body', method: 'POST', url: post, bytes: `POST ${post} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, malformed: 'head' });
    cases.push({ label: 'a body shorter than its Content-Length, then closed', method: 'POST', url: post, bytes: `POST ${post} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}` });
    return cases;
  }

  /** Sends each raw case, one at a time, to the app on a real ephemeral port, and records the verdicts. */
  async sendRaw(app: TestApp, findings: Findings, cases: readonly RawCase[]): Promise<void> {
    // Listening already when an earlier phase sent its raw cases to the same app.
    const address = app.server.server.address();
    const port = address !== null && typeof address === 'object' ? address.port : Number(new URL(await listen(app.server)).port);
    for (const c of cases) {
      const answer = await rawExchange(port, c.bytes, { headOnly: c.method === 'HEAD' });
      const violations = answer.status === 0 ? [`no answer: the connection closed with ${JSON.stringify(answer.body.slice(0, 80))}`] : this.judge({ method: c.method, url: c.url, malformed: c.malformed }, answer);
      findings.record(`raw ${c.label}`, c, violations);
    }
  }
}

async function injected(app: TestApp, request: FuzzRequest): Promise<Answer> {
  const res = await app.server.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: request.headers,
    payload: request.payload,
    ...(request.remoteAddress === undefined ? {} : { remoteAddress: request.remoteAddress }),
  });
  const headers = Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, typeof v === 'number' ? String(v) : v]));
  return { status: res.statusCode, headers, body: res.body };
}

/** The request's own expectation, where it was sent with one (the answer a rule names for it). */
function unexpected(request: FuzzRequest, answer: Answer): string[] {
  if (!request.expect) return [];
  const { status, code } = request.expect;
  let got: unknown;
  try {
    got = (JSON.parse(answer.body) as { code?: unknown }).code;
  } catch {
    got = undefined;
  }
  return answer.status === status && (code === undefined || got === code) ? [] : [`expected ${status}${code ? ` ${code}` : ''}, answered ${answer.status} ${String(got)}`];
}
