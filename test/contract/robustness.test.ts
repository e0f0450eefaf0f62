// "No answer, however malformed the request, leaves the contract": a seeded, bounded fuzz of every
// operation in openapi/v1.yaml and in openapi/v2.yaml (as served: bundled), each version's answers
// judged against its own contract (v2's under /api/v2/, its `x-service-api-version: 2`, its error
// codes). Requests are generated from the spec's schemas (valid ones, then
// each field broken one way at a time, then whole requests broken: parameters, bodies, content
// types, keys), sent through inject; methods, paths, targets and heads no HTTP client would send
// go as raw bytes to a real ephemeral port. Every answer is judged by test/helpers/contract-answers.ts
// (status documented for the operation, body valid against its schema, headers, never a 5xx or a
// stack) and every violation is collected, never thrown away, then reported by kind. The machinery
// is test/helpers/fuzz.ts, which the key portal's fuzz (test/contract/portal-robustness.test.ts) shares.
//
// A last phase sends valid requests to an app whose ports (shared state, key store, venues,
// ledger) fail as a bug would, at seeded points: the answers that come of it, 5xx ones included,
// are judged as strictly, and the phase fails unless some did come back 5xx.
//
// The seed is FUZZ_SEED when set, else taken from the clock, so each run explores other requests;
// it is in every test's name, so a failure anywhere (CI included) replays with FUZZ_SEED=<seed>.
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { FileKeyStore } from '../../core/keys/file-store.js';
import { newKey } from '../../core/keys/partner-keys.js';
import { JsonApiLedger } from '../../core/ledger/json-api-ledger.js';
import { InProcessSharedState } from '../../core/state/in-process.js';
import { testApp } from '../helpers/app.js';
import type { Answer } from '../helpers/contract-answers.js';
import { FAULT_MARKER, Faults } from '../helpers/faults.js';
import { ContractFuzz, Findings, fuzzSeed, type RequestParts } from '../helpers/fuzz.js';
import type { FuzzRequest } from '../helpers/request-arbitraries.js';
import { loadSpec, V2_SPEC_PATH, type Spec } from '../helpers/spec.js';
import { tempDir } from '../helpers/temp.js';

const SEED = fuzzSeed();
/** Valid requests generated per operation. */
const VALID_PER_OPERATION = 180;
/** Valid requests per operation sent to the app whose ports fail. */
const FAULTED_PER_OPERATION = 60;
/** The share of port calls that fail there: most requests make several. */
const FAULT_RATE = 0.15;

t.comment(`fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED}`);

/** A request the spec's examples answer 200: the base each field is broken from. */
function baseOf(spec: Spec, operationId: string, key: string): RequestParts {
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

/**
 * One version's fuzz: its spec, and what only its test knows of it. `prefix`: where its paths
 * live (undefined paths are drawn under it: one outside would be the other version's, answered
 * with the other version's header); `neighbours`, `targets`: paths near its own and odd targets,
 * all within the prefix; `get`, `post`: a GET and a POST path of its own for the raw cases.
 */
interface Version {
  readonly name: string;
  readonly spec: Spec;
  readonly prefix: string;
  readonly neighbours: readonly string[];
  readonly targets: ReadonlyArray<[string, 'head' | 'target' | undefined]>;
  readonly get: string;
  readonly post: string;
}

const VERSIONS: Version[] = [
  {
    name: 'v1',
    spec: loadSpec(),
    prefix: '',
    neighbours: ['/', '/api', '/api/', '/api/quote/', '/API/QUOTE', '/api/quote/x', '/api/quote.json', '/api//quote', '/api/outcome/1', '/api/status/'],
    targets: [
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
    ],
    get: '/api/status',
    post: '/api/app/plan',
  },
  {
    name: 'v2',
    spec: loadSpec(V2_SPEC_PATH),
    prefix: '/api/v2',
    neighbours: ['/api/v2', '/api/v2/', '/api/v2/quote/', '/api/v2/QUOTE', '/api/v2/quote/x', '/api/v2/quote.json', '/api/v2//quote', '/api/v2/outcome/1', '/api/v2/status/', '/api/v2/tokens/x', '/api/v2/v2/quote', '/api/v2/api/quote'],
    targets: [
      ['/api/v2/%', 'target'],
      ['/api/v2/%zz', 'target'],
      ['/api/v2/quote?%', undefined],
      ['/api/v2/quote?from=%zz&to=USDCx&amount=1', undefined],
      ['/api/v2/status?_=123', undefined],
      ['/api/v2?', undefined],
      ['/api/v2/status#fragment', 'target'],
      ['/api/v2/./status', undefined],
      ['/api/v2/../v2/status', undefined],
      ['/api/v2/%2e%2e/v2/status', undefined],
      ['/api/v2/status%00', undefined],
      ['/api/v2/st%61tus', undefined],
      ['http://127.0.0.1/api/v2/status', undefined],
      ['/api/v2/st atus', 'head'],
      [`/api/v2/quote?from=CC&to=USDCx&amount=1&pad=${'a'.repeat(20_000)}`, 'head'],
    ],
    get: '/api/v2/status',
    post: '/api/v2/app/plan',
  },
];

// Generated before the app starts: generation is synchronous, and the sandbox's venues share this
// process, so seconds of it with the app running would starve the venues' kept-alive connections.
const FUZZES = VERSIONS.map((version) => {
  const fuzz = new ContractFuzz(version.spec, SEED);
  const { arbitraries, operations } = fuzz;
  const validRequests = operations.flatMap((op, i) =>
    fc
      .sample(arbitraries.validRequest(op.operationId, { valid: key }), { seed: fuzz.seeded(i), numRuns: VALID_PER_OPERATION })
      // Half keep the idempotencyKey they were given (replays and conflicts), half get a new one (new plans).
      .map((parts, n) => fuzz.toRequest(op, n % 2 === 0 ? unique(parts) : parts, 'valid')),
  );
  // The same operations' valid requests, drawn apart from the ones above, every one with a key of its own.
  const faultedRequests = operations.flatMap((op, i) =>
    fc
      .sample(arbitraries.validRequest(op.operationId, { valid: key }), { seed: fuzz.seeded(300 + i), numRuns: FAULTED_PER_OPERATION })
      .map((parts) => fuzz.toRequest(op, unique(parts), 'valid, with failing ports')),
  );
  return { version, fuzz, operations, validRequests, faultedRequests };
});

/** Whatever the schemas leave open about an answer to a failure: what a 5xx must carry, and what no answer may. */
function failureRules(_asked: unknown, answer: Answer): string[] {
  const out: string[] = [];
  const header = (name: string) => [answer.headers[name]].flat().join(', ');
  if (answer.body.includes(FAULT_MARKER)) out.push('the body carries the failure\'s message');
  if (Object.values(answer.headers).some((v) => String(v).includes(FAULT_MARKER))) out.push('a header carries the failure\'s message');
  if (answer.status >= 500) {
    if (header('cache-control') !== 'no-store') out.push(`a ${answer.status} without Cache-Control: no-store`);
    if (!/^application\/json\b/.test(header('content-type'))) out.push(`a ${answer.status} sent as ${JSON.stringify(header('content-type'))}, not JSON`);
  }
  return out;
}

/**
 * How far a request generated from its operation's schemas alone can get, where it is not a 200:
 * a plan's signature (signPlan) needs a plan made moments before and a signature of its message,
 * so a generated planId names no plan (404 plan_not_found); a plan's status and its events, the
 * same, as a report of the taker's view (and, for a keyless plan, its capability too).
 */
const FARTHEST_FROM_SCHEMAS: Readonly<Record<string, number>> = { signPlan: 404, getPlanStatus: 404, streamPlanStatus: 404, reportPlanView: 404 };

t.test(`"No answer, however malformed the request, leaves the contract" (FUZZ_SEED=${SEED})`, async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  await app.core.keyStore.add(partner.record);

  for (const { version, fuzz, operations, validRequests } of FUZZES) {
    const { name, spec } = version;
    t.test(`${name}: valid requests generated from each operation's schemas (FUZZ_SEED=${SEED})`, async (t) => {
      const findings = new Findings();
      await fuzz.send(app, findings, validRequests);
      t.equal(findings.sent, operations.length * VALID_PER_OPERATION, 'every generated request was answered and judged');
      t.comment([...findings.statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
      for (const op of operations) {
        const farthest = FARTHEST_FROM_SCHEMAS[op.operationId] ?? 200;
        t.ok(findings.statuses.get(`${op.operationId} ${farthest}`), `some valid ${op.operationId} requests got as far as a ${farthest}`);
      }
      t.strictSame(findings.report(), [], 'no answer outside the contract');
    });

    t.test(`${name}: each field of each operation broken one way at a time (FUZZ_SEED=${SEED})`, async (t) => {
      const findings = new Findings();
      const requests = fuzz.brokenFields((operationId) => unique(baseOf(spec, operationId, key)));
      // The order the breaks go in is the seed's: shared state (caches, windows) meets them in another order each run.
      await fuzz.send(app, findings, fuzz.shuffled(requests, 100));
      t.equal(findings.sent, requests.length, `${requests.length} broken-field requests answered and judged`);
      t.strictSame(findings.report(), [], 'no answer outside the contract');
    });

    t.test(`${name}: whole requests broken: parameters, bodies, content types, keys (FUZZ_SEED=${SEED})`, async (t) => {
      const findings = new Findings();
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
      const requests: FuzzRequest[] = operations.flatMap((op) =>
        fuzz.wholeBreaks(op, () => unique(baseOf(spec, op.operationId, key)), keyHeaders.map((headers) => ({ headers }))),
      );
      await fuzz.send(app, findings, requests);
      t.equal(findings.sent, requests.length, `${requests.length} broken requests answered and judged`);
      t.strictSame(findings.report(), [], 'no answer outside the contract');
    });

    t.test(`${name}: every method on every defined path, and undefined paths (FUZZ_SEED=${SEED})`, async (t) => {
      const findings = new Findings();
      const requests = fuzz.methodsAndPaths(version.prefix, version.neighbours);
      await fuzz.send(app, findings, requests);
      t.equal(findings.sent, requests.length, `${requests.length} requests answered and judged`);
      t.strictSame(findings.report(), [], 'no answer outside the contract');
    });

    t.test(`${name}: raw bytes: methods, targets and heads no client sends, over a real port (FUZZ_SEED=${SEED})`, async (t) => {
      const findings = new Findings();
      const cases = fuzz.rawCases(version.targets, { get: version.get, post: version.post, nowhere: `${version.prefix}/nowhere` });
      await fuzz.sendRaw(app, findings, cases);
      t.equal(findings.sent, cases.length, `${cases.length} raw requests answered and judged`);
      t.strictSame(findings.report(), [], 'no answer outside the contract');
    });
  }
});

t.test(`"unexpected server error; nothing was created": ports failing as a bug would answer 500 internal in the error envelope, never a stack or the failure's message (FUZZ_SEED=${SEED})`, async (t) => {
  const faults = new Faults(SEED, FAULT_RATE);
  const keysDir = tempDir(t, 'bestex-faults-');
  const app = await testApp({
    overrides: (sandbox) => ({
      sharedState: faults.wrap(new InProcessSharedState(), 'sharedState'),
      keyStore: faults.wrap(new FileKeyStore(path.join(keysDir, 'keys.json')), 'keyStore'),
      venues: sandbox.adapters().map((venue) => faults.wrap(venue, `venue ${venue.id}`)),
      ledger: faults.wrap(
        new JsonApiLedger({ baseUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, readAs: Object.values(sandbox.manifest.poolParties), timeoutMs: 5000, pageSize: 100 }),
        'ledger',
      ),
    }),
  });
  t.teardown(app.close);
  await app.core.keyStore.add(partner.record);

  const findings = new Findings();
  faults.enabled = true;
  for (const { version, faultedRequests } of FUZZES) {
    const faulted = new ContractFuzz(version.spec, SEED, { serverErrors: true, rules: failureRules });
    await faulted.send(app, findings, faultedRequests);
  }
  faults.enabled = false;
  const faultedRequests = FUZZES.flatMap((f) => f.faultedRequests);
  t.equal(findings.sent, faultedRequests.length, 'every request, v1\'s and v2\'s, was answered and judged');
  t.comment(`${faults.injected} port calls failed; ${[...findings.statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);
  const serverErrors = [...findings.statuses].filter(([k]) => Number(k.split(' ').at(-1)) >= 500).reduce((sum, [, n]) => sum + n, 0);
  t.ok(serverErrors > 0, `the failures reached the error handler: ${serverErrors} answers were 5xx`);
  t.strictSame(findings.report(), [], 'no answer outside the contract');
});
