// "No answer, however malformed the request, leaves the contract", for the key portal: the seeded,
// bounded fuzz of test/contract/robustness.test.ts (its machinery, test/helpers/fuzz.ts) run over every
// operation in openapi/portal.yaml. Valid requests from the spec's schemas reach each operation's
// 2xx: rotation and revocation use a key up, so each such request signs in with a fresh key of
// its own; creation is limited per client IP per hour, so each creation comes from an address of
// its own except a share from one address, which reach the documented 429. Then each field broken
// one way at a time, whole requests broken (bodies, content types, key headers: a missing,
// malformed, unknown, revoked or rotated-away key is 401 invalid_key), every method on every
// portal path and its neighbours, and raw bytes over a real port. The judge holds every answer to
// portal.yaml: documented status, schema and headers (no-store), the error envelope with the swap
// API's codes (the portal's Conventions), no Access-Control-Allow-Origin (the spec documents none),
// no key in any answer but creation's and rotation's 2xx, and (from the Conventions' prose) an x-request-id
// on each and the strict security headers on each to a /portal path.
//
// FUZZ_SEED as in test/contract/robustness.test.ts: the seed is in every test's name, to replay a failure.
import fc from 'fast-check';
import t from 'tap';
import { newKey } from '../../core/keys/partner-keys.js';
import { testApp } from '../helpers/app.js';
import { pathOf, type ContractJudge } from '../helpers/contract-answers.js';
import { ContractFuzz, Findings, fuzzSeed, type RequestParts } from '../helpers/fuzz.js';
import type { FuzzRequest } from '../helpers/request-arbitraries.js';
import { loadSpec, PORTAL_SPEC_PATH } from '../helpers/spec.js';

const SEED = fuzzSeed();
/** Valid requests generated per operation. */
const VALID_PER_OPERATION = 60;
/** PORTAL_KEYS_PER_IP_PER_HOUR the app runs with: small, so that one address's share reaches the 429. */
const KEYS_PER_IP_PER_HOUR = 3;
/** One valid creation in this many comes from the one shared address. */
const SHARED_ADDRESS_EVERY = 4;

const spec = loadSpec(PORTAL_SPEC_PATH);
/** The Conventions' "strict security headers", on every answer to a /portal path: no page may frame one, sniff its type or be sent a Referer from it. */
const SECURITY_HEADERS: Record<string, RegExp> = {
  'x-frame-options': /^DENY$/,
  'x-content-type-options': /^nosniff$/,
  'referrer-policy': /^no-referrer$/,
  'content-security-policy': /frame-ancestors 'none'/,
};
/** "Every response carries ... x-request-id, as the swap API's do" (the version headers the judge checks from the schemas). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const conventions: ContractJudge = (asked, answer) => [
  ...(REQUEST_ID.test(String(answer.headers['x-request-id'] ?? '')) ? [] : [`x-request-id ${JSON.stringify(answer.headers['x-request-id'])}`]),
  ...(!/^\/portal(\/|$)/.test(pathOf(asked.url)) ? [] : Object.entries(SECURITY_HEADERS).flatMap(([name, allowed]) => (allowed.test(String(answer.headers[name] ?? '')) ? [] : [`${name} ${JSON.stringify(answer.headers[name])}, not ${String(allowed)}`]))),
];
// "Errors are the swap API's shape, {error, code, action?}, with its codes": the portal's catalogue is v1's.
const fuzz = new ContractFuzz(spec, SEED, { keyGiven: 'portal-key', errorCodes: loadSpec().errorCodes, rules: conventions });
const { arbitraries, operations } = fuzz;

t.comment(`fuzz seed ${SEED}: replay with FUZZ_SEED=${SEED}`);

/** The operations that use up the key they are signed in with. */
const CONSUMING = new Set(['rotatePortalKey', 'revokePortalKey']);
const secured = new Set(operations.filter((op) => spec.statuses.get(op.operationId)!.includes(401)).map((op) => op.operationId));
/**
 * The operations on one webhook endpoint or delivery of the key's: a valid request names an id
 * generated at random, which the key has none of, so a 404 not_found is as far as it gets.
 */
const ON_AN_ENDPOINT = new Set(['updateWebhookEndpoint', 'deleteWebhookEndpoint', 'rotateWebhookSecret', 'replayWebhookDelivery']);
/** The status a valid request gets as far as: its 2xx, or for an operation on one endpoint, its 404. */
const farthestOf = (operationId: string) => (ON_AN_ENDPOINT.has(operationId) ? 404 : spec.statuses.get(operationId)!.find((s) => s >= 200 && s < 300)!);

/** Keys issued into the app's store once it runs (newKey only makes them): the shared one, then each fresh one. */
const issued: Array<ReturnType<typeof newKey>> = [];
const issue = (name: string) => {
  const made = newKey(name, 'partner-default');
  issued.push(made);
  return made.key;
};
const shared = issue('fuzz-portal');
let fresh = 0;
const freshKey = () => issue(`fuzz-portal-${(fresh += 1)}`);
/** The key a request to the operation signs in with: the shared one, or a fresh one where the request uses it up. */
const keyFor = (operationId: string) => (CONSUMING.has(operationId) ? freshKey() : shared);

let addresses = 0;
/** A client address no other request comes from, so creation's per-IP limit does not decide the answer. */
const ownAddress = () => `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${(addresses += 1) & 255}`;
const SHARED_ADDRESS = '203.0.113.7';
/** Creations from addresses of their own; the others from loopback, as inject sends them. */
const addressed = (request: FuzzRequest): FuzzRequest => (fuzz.where(request.method, request.url) === 'createPortalKey' ? { ...request, remoteAddress: ownAddress() } : request);

/** A request the spec's examples answer 2xx: the base each field is broken from. */
function baseOf(operationId: string): RequestParts {
  const example = spec.examples.find((ex) => ex.operationId === operationId && ex.status === farthestOf(operationId) && (ex.request.given ?? []).every((g) => g === 'portal-key'));
  return {
    query: { ...(example?.request.query ?? {}) } as Record<string, unknown>,
    body: example?.request.body === undefined ? null : (structuredClone(example.request.body) as Record<string, unknown>),
    headers: secured.has(operationId) ? { 'x-api-key': keyFor(operationId) } : {},
  };
}

// Generated before the app starts, as v1's are: the sandbox's venues share this process.
const validRequests = operations.flatMap((op, i) =>
  fc.sample(arbitraries.validRequest(op.operationId, { valid: shared }), { seed: fuzz.seeded(i), numRuns: VALID_PER_OPERATION }).map((parts, n) => {
    const headers = CONSUMING.has(op.operationId) ? Object.fromEntries(Object.entries(parts.headers).map(([h, v]) => [h, v.replace(shared, freshKey())])) : parts.headers;
    const request = fuzz.toRequest(op, { ...parts, body: parts.body as Record<string, unknown> | null, headers }, 'valid');
    if (op.operationId !== 'createPortalKey') return request;
    return { ...request, remoteAddress: n % SHARED_ADDRESS_EVERY === 0 ? SHARED_ADDRESS : ownAddress() };
  }),
);

// A key revoked and a key rotated away before the phases run: each is refused from then on.
const revoked = issue('fuzz-portal-revoked');
const rotatedAway = issue('fuzz-portal-rotated');
const unknown = newKey('never-issued', 'partner-default').key;

t.test(`"No answer, however malformed the request, leaves the contract": the key portal (FUZZ_SEED=${SEED})`, async (t) => {
  const app = await testApp({ probed: false, env: { PORTAL_ENABLED: 'true', PORTAL_KEYS_PER_IP_PER_HOUR: String(KEYS_PER_IP_PER_HOUR), PORTAL_KEYS_PER_DAY: '1000000' } });
  t.teardown(app.close);
  /** Adds the keys made since the last call to the store. */
  let added = 0;
  const addIssued = async () => {
    for (; added < issued.length; added += 1) await app.core.keyStore.add(issued[added]!.record);
  };
  await addIssued();
  const revokedId = issued.find((k) => k.key === revoked)!.record.id;
  await app.core.keyStore.revoke({ id: revokedId }, new Date());
  await app.core.keyStore.rotate(issued.find((k) => k.key === rotatedAway)!.record.id, newKey('replacement', 'partner-default').record.hash);

  t.test(`valid requests generated from each operation's schemas (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    await fuzz.send(app, findings, validRequests);
    t.equal(findings.sent, operations.length * VALID_PER_OPERATION, 'every generated request was answered and judged');
    t.comment([...findings.statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
    for (const op of operations) t.ok(findings.statuses.get(`${op.operationId} ${farthestOf(op.operationId)}`), `some valid ${op.operationId} requests got as far as a ${farthestOf(op.operationId)}`);
    t.ok(findings.statuses.get('createPortalKey 429'), `"creation is limited per client IP per hour": creations from one address past ${KEYS_PER_IP_PER_HOUR} got the 429`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`each field of each operation broken one way at a time (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const requests = fuzz.brokenFields(baseOf).map(addressed);
    await addIssued();
    await fuzz.send(app, findings, fuzz.shuffled(requests, 100));
    t.equal(findings.sent, requests.length, `${requests.length} broken-field requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`whole requests broken: parameters, bodies, content types, keys; "a malformed, unknown or revoked key is 401 invalid_key" (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const invalidKey = { status: 401, code: 'invalid_key' };
    const requests = operations.flatMap((op) => {
      const refused = (headers: Record<string, string>) => ({ headers, expect: secured.has(op.operationId) ? invalidKey : undefined });
      const headerSets: Array<{ headers: Record<string, string>; expect?: FuzzRequest['expect'] }> = [
        refused({ 'x-api-key': '' }),
        refused({ 'x-api-key': 'bx_' }),
        refused({ 'x-api-key': `${shared}x` }),
        refused({ 'x-api-key': shared.toUpperCase() }),
        refused({ 'x-api-key': 'bx_unknownunknownunknownunknownun' }),
        refused({ 'x-api-key': unknown }),
        refused({ 'x-api-key': revoked }),
        refused({ 'x-api-key': rotatedAway }),
        { headers: { authorization: `Bearer ${unknown} ${unknown}` } },
        { headers: { authorization: `Basic ${unknown}` } },
        { headers: { authorization: `Bearer ${revoked}` } },
        // The portal, the key holder's own page, takes the key from any origin.
        { headers: { origin: 'https://elsewhere.example' } },
        { headers: { 'sec-fetch-site': 'cross-site' } },
        { headers: { 'x-forwarded-for': '203.0.113.9, ::1' } },
        { headers: { accept: 'text/html' } },
      ];
      return fuzz.wholeBreaks(op, () => baseOf(op.operationId), headerSets).map(addressed);
    });
    await addIssued();
    await fuzz.send(app, findings, requests);
    t.equal(findings.sent, requests.length, `${requests.length} broken requests answered and judged`);
    t.ok(findings.statuses.get('getPortalKey 401'), 'some were refused with the 401');
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`every method on every defined path, and undefined paths (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const neighbours = [
      '/portal/api',
      '/portal/api/',
      '/portal/api/keys/',
      '/portal/api/key/',
      '/PORTAL/API/KEY',
      '/portal/api/key/x',
      '/portal/api/key.json',
      '/portal/api//key',
      '/portal/api/keys/1',
      '/portal/api/key/rotate/x',
      '/portal/api/key/origins/',
      '/portal/apikey',
      '/portal/assets/none.js',
    ];
    const requests = fuzz.methodsAndPaths('/portal/api', neighbours).map(addressed);
    await fuzz.send(app, findings, requests);
    t.equal(findings.sent, requests.length, `${requests.length} requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });

  t.test(`raw bytes: methods, targets and heads no client sends, over a real port (FUZZ_SEED=${SEED})`, async (t) => {
    const findings = new Findings();
    const cases = fuzz.rawCases(
      [
        ['/%', 'target'],
        ['/portal/api/key?%', undefined],
        ['/portal/api/key?_=123', undefined],
        ['/portal/api/key?', undefined],
        ['/portal/api/key#fragment', 'target'],
        ['//portal/api/key', undefined],
        ['/portal/api/./key', undefined],
        ['/portal/api/../api/key', undefined],
        ['/portal/api/%2e%2e/api/key', undefined],
        ['/portal/api/key%00', undefined],
        ['/portal/api/k%65y', undefined],
        ['http://127.0.0.1/portal/api/key', undefined],
        ['portal/api/key', 'head'],
        ['/portal/api/k ey', 'head'],
        [`/portal/api/key?pad=${'a'.repeat(20_000)}`, 'head'],
      ],
      { get: '/portal/api/key', post: '/portal/api/keys' },
    );
    await fuzz.sendRaw(app, findings, cases);
    t.equal(findings.sent, cases.length, `${cases.length} raw requests answered and judged`);
    t.strictSame(findings.report(), [], 'no answer outside the contract');
  });
});
