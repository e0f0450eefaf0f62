// Contract tests: start the real server on an ephemeral port and replay every response example
// of openapi/v1.yaml, of openapi/v2.yaml (as served: bundled) and of the key portal's openapi/portal.yaml, discovered from the specs themselves (adding an example adds a test). Each
// example's status, body schema, headers and — except its x-volatile values — its exact body are
// checked. Examples the server cannot answer yet are reported as pending by name on every run:
// operations that answer 501, and examples needing a condition (`given`) the harness cannot set
// up. Every operation is also sent as /docs "Try it out" sends it unedited (its parameters' and
// its request body's examples), each of which must succeed: the reference's examples are tried
// by integrators before any code is written.
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FileKeyStore } from '../../core/keys/file-store.js';
import { PLAN_VALIDITY_MS } from '../../core/plan-validity.js';
import { RECORD_TIME_TOLERANCE_MS } from '../../core/outcomes/outcomes.js';
import { InProcessSharedState } from '../../core/state/in-process.js';
import { JsonApiLedger } from '../../core/ledger/json-api-ledger.js';
import type { CoreOverrides } from '../../core/services.js';
import { listOperations, type OpenApiDocument, type ParameterObject } from '../../codegen/request-schemas.js';
import type { Venue } from '../../core/venues/venue.js';
import { getQuote as validateGetQuote } from '../../generated/v1/query-validators.js';
import { ERROR_CATALOGUE, V2_ONLY_ERROR_CODES } from '../../handlers/http/error-catalogue.js';
import { apiVersionOf } from '../../handlers/http/api-version.js';
import { COLLECTING, FEE_PARTIES, listen, testApp, type TestApp } from '../helpers/app.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { issueKey } from '../helpers/keys.js';
import { csvRecords, parseCsv } from '../helpers/csv.js';
import { loadSpec, pointerExists, PORTAL_SPEC_PATH, sseFrames, V2_SPEC_PATH, withoutPointers, type Spec, type SpecExample } from '../helpers/spec.js';
import { tempDir } from '../helpers/temp.js';
import { planEvent } from '../helpers/webhooks.js';

const spec = loadSpec();
const v2Spec = loadSpec(V2_SPEC_PATH);
const portalSpec = loadSpec(PORTAL_SPEC_PATH);
const SPECS = [spec, v2Spec, portalSpec];

interface Outgoing {
  readonly url: URL;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

interface Observed {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/**
 * A condition the harness can put the server in before an example's request (`given`): the
 * configuration its app is built with, and what is done to that app and the request first.
 * Examples that name conditions each get an app of their own; an example naming a condition not
 * listed here is pending.
 */
interface Condition {
  readonly env?: Record<string, string>;
  readonly overrides?: (sandbox: TestSandbox) => CoreOverrides;
  prepare?(app: TestApp, request: Outgoing): Promise<void>;
}

/** An in-process state whose record reads fail as a bug would, not as an outage. */
class RecordsFailing extends InProcessSharedState {
  override async getValues(): Promise<Array<string | null>> {
    throw new TypeError('the store answered something that is not a record');
  }
}

const sendRaw = async (request: Outgoing): Promise<Observed> => {
  const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
  return { status: response.status, headers: response.headers, text: await response.text() };
};

/** The sandbox's venues through the service's adapters, with tradecraft answering every quote with an error (its probe still live). */
function tradecraftFailing(sandbox: TestSandbox): Venue[] {
  return sandbox.adapters().map((venue): Venue =>
    venue.id !== 'tradecraft'
      ? venue
      : { id: venue.id, settlementMode: venue.settlementMode, probe: (signal) => venue.probe(signal), quote: () => Promise.reject(new Error('upstream answered 500')) },
  );
}

/**
 * The same request under another idempotencyKey, when it has one: sent first, it is counted in the
 * window like the example, where the example's own request would make a plan the example then
 * replays (and a replay is not counted).
 */
function another(request: Outgoing): Outgoing {
  const body = request.body === undefined ? undefined : (JSON.parse(request.body) as Record<string, unknown>);
  if (typeof body?.idempotencyKey !== 'string') return request;
  return { ...request, body: JSON.stringify({ ...body, idempotencyKey: `${body.idempotencyKey}-first` }) };
}

/** A call to the app's sandbox's control API (its faucet, its price mover). */
async function sandboxControl(app: TestApp, path: string, body: unknown): Promise<void> {
  const sandbox = app.sandbox!;
  const answer = await fetch(new URL(path, sandbox.manifest.ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${await answer.text()}`);
}

/** The taker of the OneSwap examples: hosted by the sandbox's participant (funded from its faucet), as OneSwap signs in only parties it finds. */
const ONESWAP_TAKER = `alice::1220${'b'.repeat(64)}`;
const hostTaker = (app: TestApp) => sandboxControl(app, '/sandbox/v1/fund', { party: ONESWAP_TAKER, token: 'CC', amount: '1000' });

/**
 * createAppPlan's oneswapPlan example's request, made by the example's caller under
 * `idempotencyKey`: the plan, its message signed by a key of the (local) taker's own, and the
 * signature and key in base64 as OneSwap takes them.
 */
async function signedOneSwapPlan(request: Outgoing, idempotencyKey: string): Promise<{ planId: string; signature: string; publicKey: string }> {
  const made = await sendRaw({
    url: new URL('/api/v2/app/plan', request.url),
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: ONESWAP_TAKER, idempotencyKey }),
  });
  if (made.status !== 200) throw new Error(`the OneSwap plan answered ${made.status}: ${made.text}`);
  const plan = JSON.parse(made.text) as { planId: string; steps: Array<{ message: string }> };
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    planId: plan.planId,
    signature: sign(null, Buffer.from(plan.steps[0]!.message, 'utf8'), privateKey).toString('base64'),
    // The raw 32-byte key: the end of its SPKI encoding.
    publicKey: publicKey.export({ format: 'der', type: 'spki' }).subarray(-32).toString('base64'),
  };
}

/** `fields` put in the example's request: its body's, or for a GET its query's. */
function putInRequest(request: Outgoing, fields: Record<string, string>): void {
  if (request.method === 'GET') {
    for (const [k, v] of Object.entries(fields)) request.url.searchParams.set(k, v);
    return;
  }
  (request as { body: string | undefined }).body = JSON.stringify({ ...(JSON.parse(request.body ?? '{}') as object), ...fields });
}

/** createAppPlan's first v2 example's plan (on `venueId`, when given), made with the example's own caller; its id and capability put in the request. */
async function appPlanFor(request: Outgoing, venueId?: string): Promise<{ planId: string; statusToken: string }> {
  const example = v2Spec.examples.find((e) => e.operationId === 'createAppPlan' && e.status === 200)!;
  const body = { ...(example.request.body as object), ...(venueId ? { venueId, idempotencyKey: `app-example-${venueId}` } : {}) };
  const made = await sendRaw({ url: new URL('/api/v2/app/plan', request.url), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (made.status !== 200) throw new Error(`the plan answered ${made.status}: ${made.text}`);
  const plan = JSON.parse(made.text) as { planId: string; statusToken: string };
  putInRequest(request, { planId: plan.planId, token: plan.statusToken });
  return plan;
}

/** The OneSwap plan of an example, made (and signed, when `signed`) with the example's own caller. */
async function oneswapPlanFor(app: TestApp, request: Outgoing, signed: boolean): Promise<{ planId: string; signature: string; publicKey: string }> {
  await hostTaker(app);
  const plan = await signedOneSwapPlan(request, 'app-example-17');
  putInRequest(request, signed ? plan : { planId: plan.planId });
  return plan;
}

/** The plan of the webhook examples' deliveries. */
const EXAMPLE_PLAN_ID = 'pl_0123456789abcdefghijkl';

/** Registers a webhook endpoint for the request's key and puts its id in the request; resolves with the id. */
async function webhookEndpointFor(request: Outgoing): Promise<string> {
  const made = await sendRaw({
    url: new URL('/portal/api/key/webhooks', request.url),
    method: 'POST',
    headers: { 'x-api-key': request.headers['x-api-key']!, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'https://hooks.wallet.example/bestex' }),
  });
  if (made.status !== 201) throw new Error(`the webhook endpoint answered ${made.status}: ${made.text}`);
  const { id } = (JSON.parse(made.text) as { endpoint: { id: string } }).endpoint;
  const named = request.method === 'GET' || 'endpointId' in (JSON.parse(request.body ?? '{}') as object);
  putInRequest(request, named ? { endpointId: id } : { id });
  return id;
}

/** How far the service's (and its sandbox's) clock runs ahead of the machine's, for the example running now. */
let clockShiftMs = 0;
/** The clock the key store of the example running now measures its refresh interval on. */
let keyStoreClockMs = 0;

const CONDITIONS: Record<string, Condition> = {
  // A partner key issued into the app's key store, sent as x-api-key unless the example sends its own.
  'partner-key': {
    prepare: async (app, request) => {
      request.headers['x-api-key'] ??= (await issueKey(app.core.keyStore, { name: 'contract-partner' })).key;
    },
  },
  // A one-request window, used up by sending the example's request once.
  'keyless-window-exhausted': {
    env: { RATE_LIMIT_KEYLESS_PER_MINUTE: '1' },
    prepare: async (_app, request) => void (await sendRaw(another(request))),
  },
  'keyed-window-exhausted': {
    env: { RATE_LIMIT_KEYED_PER_MINUTE: '1' },
    prepare: async (_app, request) => void (await sendRaw(another(request))),
  },
  // A key whose record names a fee schema the configuration does not define.
  'partner-key-retired-schema': {
    prepare: async (app, request) => {
      request.headers['x-api-key'] ??= (await issueKey(app.core.keyStore, { name: 'retired-partner', schemaId: 'retired-2025' })).key;
    },
  },
  'fees-collected': { env: COLLECTING },
  'fees-collected-without-b2c-party': { env: { FEE_COLLECTION_ENABLED: 'true', SERVICE_FEE_PARTY: FEE_PARTIES.SERVICE_FEE_PARTY } },
  // The example's idempotencyKey, used a moment before by the same caller for another amount.
  'idempotency-key-used': {
    prepare: async (_app, request) => {
      const first = await sendRaw({ ...request, body: JSON.stringify({ ...(JSON.parse(request.body ?? '{}') as object), amount: '1' }) });
      if (first.status !== 200) throw new Error(`the first use of the idempotencyKey answered ${first.status}: ${first.text}`);
    },
  },
  // Shared state in a Redis that is not there (nothing listens on port 1).
  'shared-state-unreachable': { env: { REDIS_URL: 'redis://127.0.0.1:1' } },
  // The in-process state, failing to read its records with an error that is no outage (a bug).
  'shared-state-failing': { overrides: () => ({ sharedState: new RecordsFailing() }) },
  // The example's body padded past the 16 KB limit (20,000 bytes of JSON).
  'body-over-limit': {
    prepare: async (_app, request) => {
      (request as { body: string | undefined }).body = JSON.stringify({ ...(JSON.parse(request.body ?? '{}') as object), padding: 'x'.repeat(20_000) });
      request.headers['content-type'] ??= 'application/json';
    },
  },
  'tradecraft-failing': { overrides: (sandbox) => ({ venues: tradecraftFailing(sandbox) }) },
  // The example's pair quoted (the quote cached for a minute), then the sandbox Nightly's pool for
  // it moved 3 % against the give token through the sandbox's control API: the plan's floor comes
  // from the cached quote, and Nightly's quote for the taker, made at plan time, pays less.
  'nightly-moved-after-quote': {
    env: { QUOTE_CACHE_TTL_MS: '60000' },
    prepare: async (app, request) => {
      const { from, to, amount } = JSON.parse(request.body ?? '{}') as Record<string, string>;
      const quoted = await sendRaw({ url: new URL(`/api/v2/quote?${new URLSearchParams({ from: from!, to: to!, amount: amount! }).toString()}`, request.url), method: 'GET', headers: {}, body: undefined });
      if (quoted.status !== 200) throw new Error(`the quote answered ${quoted.status}: ${quoted.text}`);
      const sandbox = app.sandbox!;
      const moved = await fetch(new URL('/sandbox/v1/move', sandbox.manifest.ledger), {
        method: 'POST',
        headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ venue: 'nightly', pair: `${from}/${to}`, bps: -300 }),
      });
      if (moved.status !== 200) throw new Error(`the move answered ${moved.status}: ${await moved.text()}`);
    },
  },
  // A key issued into the app's key store, signed in with at the portal unless the example sends its
  // own; the window its view shows is the default one (the test apps raise it otherwise).
  'portal-key': {
    env: { RATE_LIMIT_KEYED_PER_MINUTE: '1200' },
    prepare: async (app, request) => {
      request.headers['x-api-key'] ??= (await issueKey(app.core.keyStore, { name: 'contract-portal' })).key;
    },
  },
  // A webhook endpoint of the example's key (https://hooks.wallet.example/bestex, every event
  // type), registered through the portal; its id put in the request (`endpointId` where the
  // request names one, else `id`). With `webhook-delivery`, a keyed plan's first event queued for
  // it (its host does not resolve: it is being retried), its webhook-id put in too.
  // createExecutePlan's v2 tradecraft example made with the example's key: a partner plan, planned, in its trade ledger.
  'partner-plan-made': {
    prepare: async (_app, request) => {
      const example = v2Spec.examples.find((e) => e.operationId === 'createExecutePlan' && e.status === 200 && e.name === 'partnerPlan')!;
      const made = await sendRaw({
        url: new URL('/api/v2/execute/plan', request.url),
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': request.headers['x-api-key']! },
        body: JSON.stringify(example.request.body),
      });
      if (made.status !== 200) throw new Error(`the partner plan answered ${made.status}: ${made.text}`);
    },
  },
  'webhook-endpoint': { prepare: async (_app, request) => void (await webhookEndpointFor(request)) },
  'webhook-delivery': {
    prepare: async (app, request) => {
      const endpointId = await webhookEndpointFor(request);
      const view = await sendRaw({ url: new URL('/portal/api/key', request.url), method: 'GET', headers: { 'x-api-key': request.headers['x-api-key']! }, body: undefined });
      await app.core.webhooks.sink.accept({ event: planEvent(EXAMPLE_PLAN_ID, 1), partnerId: (JSON.parse(view.text) as { id: string }).id });
      putInRequest(request, request.method === 'GET' ? { endpointId } : { endpointId, webhookId: `msg_${EXAMPLE_PLAN_ID}_1` });
    },
  },
  // The client IP's hourly allowance of one key, used by sending the example's creation once.
  'creation-limit-reached': {
    env: { PORTAL_KEYS_PER_IP_PER_HOUR: '1' },
    prepare: async (_app, request) => {
      const first = await sendRaw(request);
      if (first.status !== 201) throw new Error(`the first creation answered ${first.status}: ${first.text}`);
    },
  },
  // OneSwap's examples: the taker hosted by the sandbox's participant; createAppPlan's oneswapPlan
  // made by the example's caller, its id put in the request (`-made`), with its message signed by
  // a key of the taker's and the signature and key put in too (`-signed`), then completed with
  // POST /api/v2/plan/signature (`-completed`); the service's clock past the plan's expiry after
  // it is signed (`-expired`); another OneSwap plan of the taker completed first, its intent
  // awaiting its deposit (`oneswap-intent-active`); the sandbox OneSwap's CC/USDCx pool moved 3 %
  // against CC after the plan (`oneswap-moved-after-plan`).
  // createAppPlan's tradecraftPlan example made by the example's caller (on Nightly: `nightly-plan-made`),
  // its planId and statusToken put in the request (`app-plan-made`); then the service's clock moved past its expiry and the
  // ledger's record-time tolerance, unfunded, until its status reads expired (`app-plan-expired`).
  'app-plan-made': { prepare: async (_app, request) => void (await appPlanFor(request)) },
  'nightly-plan-made': { prepare: async (_app, request) => void (await appPlanFor(request, 'nightly')) },
  'app-plan-expired': {
    overrides: () => {
      clockShiftMs = 0;
      return { now: () => new Date(Date.now() + clockShiftMs) };
    },
    env: { PLAN_STATUS_POLL_MS: '50' },
    prepare: async (_app, request) => {
      const made = await appPlanFor(request);
      clockShiftMs = PLAN_VALIDITY_MS + RECORD_TIME_TOLERANCE_MS + 1000;
      const status = new URL('/api/v2/plan/status', request.url);
      status.search = new URLSearchParams({ planId: made.planId, token: made.statusToken }).toString();
      for (let read = 0; read < 200; read++) {
        const answer = (await (await fetch(status)).json()) as { state?: string };
        if (answer.state === 'expired') return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error('the plan never read expired');
    },
  },
  'taker-hosted': { prepare: (app) => hostTaker(app) },
  'oneswap-plan-made': { prepare: async (app, request) => void (await oneswapPlanFor(app, request, false)) },
  'oneswap-plan-signed': { prepare: async (app, request) => void (await oneswapPlanFor(app, request, true)) },
  'oneswap-plan-completed': {
    prepare: async (app, request) => {
      await hostTaker(app);
      const plan = await signedOneSwapPlan(request, 'app-example-17');
      const completed = await sendRaw({ url: new URL('/api/v2/plan/signature', request.url), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(plan) });
      if (completed.status !== 200) throw new Error(`the signature answered ${completed.status}: ${completed.text}`);
      putInRequest(request, { planId: plan.planId });
    },
  },
  'oneswap-plan-expired': {
    overrides: () => {
      clockShiftMs = 0;
      return { now: () => new Date(Date.now() + clockShiftMs) };
    },
    prepare: async (app, request) => {
      await oneswapPlanFor(app, request, true);
      clockShiftMs = PLAN_VALIDITY_MS + 1000;
    },
  },
  'oneswap-intent-active': {
    prepare: async (app, request) => {
      await hostTaker(app);
      const first = await signedOneSwapPlan(request, 'app-example-17-first');
      const completed = await sendRaw({ url: new URL('/api/v2/plan/signature', request.url), method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(first) });
      if (completed.status !== 200) throw new Error(`the first plan's signature answered ${completed.status}: ${completed.text}`);
    },
  },
  'oneswap-moved-after-plan': { prepare: (app) => sandboxControl(app, '/sandbox/v1/move', { venue: 'oneswap', pair: 'CC/USDCx', bps: -300 }) },
  // Outcomes read from a participant that is not there (nothing listens on port 1).
  'ledger-unreachable': {
    overrides: (sandbox) => ({ ledger: new JsonApiLedger({ baseUrl: 'http://127.0.0.1:1', token: null, readAs: Object.values(sandbox.manifest.poolParties), timeoutMs: 2000, pageSize: 100 }) }),
  },
  // keys.json overwritten with something that is not a key file, once the service has read it.
  'key-store-unreadable': {
    // A store of its own whose refresh interval runs on a clock the harness moves, not the wall's.
    overrides: () => {
      keyStoreClockMs = 0;
      return { keyStore: new FileKeyStore(path.join(tempDir(t, 'bestex-keys-'), 'keys.json'), { now: () => keyStoreClockMs }) };
    },
    prepare: async (app) => {
      const store = app.core.keyStore as FileKeyStore;
      await store.list();
      writeFileSync(store.file, '{"version":1,"keys":[{"truncated');
      // Past its refresh interval: the next read looks at the file again.
      keyStoreClockMs += 60_000;
      if (await store.list().then(() => true, () => false)) throw new Error('the key store still reads the damaged file');
    },
  },
};

function outgoing(base: string, example: SpecExample): Outgoing {
  const url = new URL(example.path, base);
  for (const [k, v] of Object.entries(example.request.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...example.request.headers };
  let body: string | undefined;
  if (example.request.rawBody !== undefined) body = example.request.rawBody;
  else if (example.request.body !== undefined) {
    body = JSON.stringify(example.request.body);
    headers['content-type'] ??= 'application/json';
  }
  return { url, method: example.method, headers, body };
}

type Run = { example: SpecExample; pending: string | null; observed: Observed | null };

type Node = Record<string, unknown>;

function resolved<T>(document: OpenApiDocument, node: unknown): T {
  if (node && typeof node === 'object' && '$ref' in node) {
    const keys = String((node as { $ref: string }).$ref).replace(/^#\//, '').split('/');
    return resolved<T>(document, keys.reduce<unknown>((n, key) => (n as Node)[key], document));
  }
  return node as T;
}

/**
 * A media type's examples by name: its `examples`, or its single `example` as `example`; each with
 * the conditions its `x-request.given` names (a request that cannot succeed unedited, such as a
 * signature of a message the service gave moments before, says what is put in it first).
 */
function mediaExamples(media: Node): Array<[string, unknown, readonly string[]]> {
  if (media.example !== undefined) return [['example', media.example, []]];
  return Object.entries((media.examples as Record<string, { value?: unknown; 'x-request'?: { given?: string[] } }> | undefined) ?? {}).map(([name, e]) => [name, e.value, e['x-request']?.given ?? []]);
}

/**
 * The value Swagger UI's "Try it out" fills a parameter with (swagger-ui's parameter row): the
 * parameter's first example, its `example`, its schema's `example`, then its schema's `default`.
 * A parameter left empty is not sent.
 */
function triedValue(document: OpenApiDocument, parameter: ParameterObject & Node): unknown {
  const first = Object.values((parameter.examples as Record<string, { value?: unknown }> | undefined) ?? {})[0]?.value;
  const schema = resolved<Node | undefined>(document, parameter.schema) ?? {};
  return first ?? parameter.example ?? schema.example ?? schema.default;
}

interface Tried {
  readonly operationId: string;
  readonly name: string;
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
  /** Only keyed (no `{}` among its security requirements): sent with a key of its own, as after "Authorize". */
  readonly keyed: boolean;
  /** The conditions the example's `x-request.given` names, set up first. */
  readonly given: readonly string[];
}

/** Each operation of `document` as "Try it out" sends it unedited: one request per request-body example, or one without a body when it takes none. */
function triedRequests(document: OpenApiDocument): Tried[] {
  const tried: Tried[] = [];
  for (const { operationId, method, path: p, operation } of listOperations(document)) {
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const ref of operation.parameters ?? []) {
      const parameter = resolved<ParameterObject & Node>(document, ref);
      const value = triedValue(document, parameter);
      if (value === undefined) continue;
      if (parameter.in === 'query') query.set(parameter.name, String(value));
      else if (parameter.in === 'header') headers[parameter.name] = String(value);
    }
    const url = query.toString() === '' ? p : `${p}?${query.toString()}`;
    const security = (operation as Node).security as Array<Record<string, unknown>> | undefined;
    const keyed = security !== undefined && security.length > 0 && security.every((requirement) => Object.keys(requirement).length > 0);
    const body = resolved<{ content?: Record<string, Node> } | undefined>(document, operation.requestBody);
    const examples = Object.entries(body?.content ?? {}).flatMap(([type, media]) => mediaExamples(media).map(([name, value, given]) => ({ type, name, value, given })));
    // A body without an example is not tried: the test that every body has one fails instead.
    const tryGiven = ((operation as Node)['x-try-given'] ?? []) as string[];
    if (body === undefined) tried.push({ operationId, name: 'no body', method: method.toUpperCase(), url, headers, body: undefined, keyed, given: tryGiven });
    for (const { type, name, value, given } of examples) {
      tried.push({ operationId, name, method: method.toUpperCase(), url, headers: { ...headers, 'content-type': type }, body: value, keyed, given });
    }
  }
  return tried;
}

type TriedRun = { tried: Tried; spec: Spec; status: number; body: unknown };

function outcome(example: SpecExample, observed: Observed): Run {
  const notServed = observed.status === 501 && example.status !== 501;
  return { example, pending: notServed ? `${example.operationId} answers 501: not served by this build` : null, observed };
}

// Replay every runnable example first, then declare the tests: tap ends the root test as soon as
// its queue drains, so no await may sit between test declarations.
const runs: Run[] = [];
const app = await testApp();
const base = await listen(app.server);
for (const example of SPECS.flatMap((s) => s.examples)) {
  const given = example.request.given ?? [];
  const missing = given.filter((g) => !(g in CONDITIONS));
  if (missing.length > 0) {
    runs.push({ example, pending: `needs the condition ${missing.join(', ')}, which the harness cannot set up yet`, observed: null });
  } else if (given.length === 0) {
    runs.push(outcome(example, await sendRaw(outgoing(base, example))));
  } else {
    const conditions = given.map((g) => CONDITIONS[g]!);
    const own = await testApp({
      env: Object.assign({}, ...conditions.map((c) => c.env)) as Record<string, string>,
      overrides: (sandbox) => Object.assign({}, ...conditions.map((c) => c.overrides?.(sandbox))) as CoreOverrides,
    });
    const request = outgoing(await listen(own.server), example);
    for (const condition of conditions) await condition.prepare?.(own, request);
    runs.push(outcome(example, await sendRaw(request)));
    await own.close();
  }
}
await app.close();

// One app for every tried request, as one sandbox serves /docs; a key of its own for each keyed
// one, so revoking or rotating one leaves the others theirs.
const triedRuns: TriedRun[] = [];
const tryingApp = await testApp();
for (const s of SPECS) {
  for (const tried of triedRequests(s.document)) {
    if (tried.given.length > 0) {
      triedRuns.push({ tried, spec: s, ...(await triedGiven(tried)) });
      continue;
    }
    const headers = { ...tried.headers, ...(tried.keyed ? { 'x-api-key': (await issueKey(tryingApp.core.keyStore, { name: 'docs-try-out' })).key } : {}) };
    const response = await tryingApp.server.inject({ method: tried.method as 'GET', url: tried.url, headers, ...(tried.body === undefined ? {} : { payload: JSON.stringify(tried.body) }) });
    let body: unknown = response.body;
    try {
      body = response.json();
    } catch {
      // Not JSON: compared as text, and the schema refuses it.
    }
    triedRuns.push({ tried, spec: s, status: response.statusCode, body });
  }
}
await tryingApp.close();

/** A tried request whose example names conditions: on an app of its own, put in them first. */
async function triedGiven(tried: Tried): Promise<{ status: number; body: unknown }> {
  const conditions = tried.given.map((g) => {
    const condition = CONDITIONS[g];
    if (!condition) throw new Error(`${tried.operationId}'s request example names the condition ${g}, which the harness cannot set up`);
    return condition;
  });
  const own = await testApp({
    env: Object.assign({}, ...conditions.map((c) => c.env)) as Record<string, string>,
    overrides: (sandbox) => Object.assign({}, ...conditions.map((c) => c.overrides?.(sandbox))) as CoreOverrides,
  });
  try {
    const headers = { ...tried.headers, ...(tried.keyed ? { 'x-api-key': (await issueKey(own.core.keyStore, { name: 'docs-try-out' })).key } : {}) };
    const request: Outgoing = { url: new URL(tried.url, await listen(own.server)), method: tried.method, headers, body: tried.body === undefined ? undefined : JSON.stringify(tried.body) };
    for (const condition of conditions) await condition.prepare?.(own, request);
    const observed = await sendRaw(request);
    let body: unknown = observed.text;
    try {
      body = JSON.parse(observed.text);
    } catch {
      // Not JSON: compared as text, and the schema refuses it.
    }
    return { status: observed.status, body };
  } finally {
    await own.close();
  }
}

t.test('"every request body in every spec has an example", as has every required parameter: /docs "Try it out" starts from them', async (t) => {
  for (const { document } of SPECS) {
    for (const { operationId, operation } of listOperations(document)) {
      const body = resolved<{ content?: Record<string, Node> } | undefined>(document, operation.requestBody);
      for (const [type, media] of Object.entries(body?.content ?? {})) {
        t.ok(mediaExamples(media).length > 0, `${operationId}: its ${type} request body has an example`);
      }
      for (const ref of operation.parameters ?? []) {
        const parameter = resolved<ParameterObject & Node>(document, ref);
        if (parameter.required === true) t.not(triedValue(document, parameter), undefined, `${operationId}: its required ${parameter.in} parameter ${parameter.name} has an example`);
      }
    }
  }
});

for (const { tried, spec: s, status, body } of triedRuns) {
  t.test(`"every request example succeeds against the sandbox": ${tried.operationId} tried from /docs as documented (${tried.name})`, async (t) => {
    t.ok(status >= 200 && status < 300, `${tried.method} ${tried.url} answered ${status}: ${JSON.stringify(body)}`);
    const streamed = s.examples.find((e) => e.operationId === tried.operationId && e.status === status && e.mediaType === 'text/event-stream');
    if (streamed && typeof body === 'string') {
      const events = sseFrames(body).filter((f) => f.data !== undefined);
      t.ok(events.length > 0, 'the stream sent its events');
      for (const { data } of events) t.ok(streamed.schema(JSON.parse(data!)), 'each event matches its schema', { errors: streamed.schema.errors });
      return;
    }
    const file = s.examples.find((e) => e.operationId === tried.operationId && e.status === status && e.mediaType === 'text/csv');
    if (file && typeof body === 'string') {
      t.strictSame(parseCsv(body)[0], parseCsv(String(file.value))[0], 'the file has the documented header');
      return;
    }
    const documented = s.responses.get(tried.operationId)?.get(status);
    t.ok(documented?.schema, `${status} is a documented answer with a JSON body`);
    if (documented?.schema) t.ok(documented.schema(body), 'the body matches its response schema', { errors: documented.schema.errors });
  });
}

t.test('every operation, the swap API\'s (v1 and v2) and the portal\'s, has a success example and one example for each documented 4xx status', async (t) => {
  for (const { statuses: byOperation, examples } of SPECS) {
    for (const [operationId, statuses] of byOperation) {
      const exampled = new Set(examples.filter((e) => e.operationId === operationId).map((e) => e.status));
      t.ok([...exampled].some((s) => s >= 200 && s < 300), `${operationId} has a 2xx example`);
      for (const status of statuses.filter((s) => s >= 400 && s < 500)) {
        t.ok(exampled.has(status), `${operationId} has a ${status} example`);
      }
    }
  }
});

t.test('the portal: "errors are the swap API\'s shape, with its codes": every code portal.yaml names is in the error catalogue', async (t) => {
  const schemas = portalSpec.document.components?.schemas as Record<string, { properties: Record<string, { enum?: string[] }> }>;
  const documented = schemas.Error!.properties.code!.enum ?? [];
  t.ok(documented.length > 0);
  for (const code of documented) t.ok(code in ERROR_CATALOGUE, `${code} is in the catalogue`);
});

t.test('"Error.code is an enum of every code the service sends": v2\'s enum equals the error catalogue, both ways; v1\'s, frozen, all of it but the codes v2 added', async (t) => {
  for (const [s, expected] of [
    [v2Spec, Object.keys(ERROR_CATALOGUE)],
    [spec, Object.keys(ERROR_CATALOGUE).filter((code) => !V2_ONLY_ERROR_CODES.includes(code as never))],
  ] as const) {
    const schemas = s.document.components?.schemas as Record<string, { properties: Record<string, { enum?: string[] }> }>;
    const documented = schemas.Error!.properties.code!.enum ?? [];
    t.strictSame([...documented].sort(), [...expected].sort());
    const table = [...String((s.document.info as { description: string }).description).matchAll(/^\| ([a-z_]+) \| [0-9]/gm)].map((m) => m[1]);
    t.strictSame(table.sort(), [...documented].sort(), 'the introduction\'s table lists the same codes');
  }
});

t.test('"Amount carries its maximum and positivity in the schema": what the schema accepts is what the service accepts', async (t) => {
  const own = await testApp();
  t.teardown(own.close);
  const accepted = ['1', '0.0000000001', '999999999.9999999999', '1000000000', '1000000000.0000000000', '0100'];
  const refused = ['0', '0.0', '00.0000000000', '1000000000.0000000001', '1000000001', '9999999999', '1.00000000001', '-1', '1e3', ''];
  for (const amount of [...accepted, ...refused]) {
    const ok = accepted.includes(amount);
    t.equal(validateGetQuote({ from: 'CC', to: 'USDCx', amount }), ok, `the schema ${ok ? 'accepts' : 'refuses'} ${JSON.stringify(amount)}`);
    const quote = await own.server.inject({ url: `/api/quote?from=CC&to=USDCx&amount=${encodeURIComponent(amount)}` });
    t.equal(quote.statusCode, ok ? 200 : 400, `the quote ${ok ? 'takes' : 'refuses'} ${JSON.stringify(amount)}`);
    if (!ok) t.match(quote.json(), { code: 'bad_request', error: /'amount' must be a positive decimal/ });
  }
  const plan = (amount: string, idempotencyKey: string) =>
    own.server.inject({ method: 'POST', url: '/api/app/plan', payload: { from: 'CC', to: 'USDCx', amount, venueId: 'tradecraft', takerParty: `alice::1220${'b'.repeat(64)}`, idempotencyKey } });
  t.equal((await plan('1000000000.0000000001', 'amount-over')).statusCode, 400, 'a plan over the maximum is refused');
  t.equal((await plan('0.0', 'amount-zero')).statusCode, 400, 'a plan for zero is refused');
  const outcome = (params: Record<string, string>) =>
    own.server.inject({ url: `/api/outcome?${new URLSearchParams({ party: `alice::1220${'b'.repeat(64)}`, since: '2026-01-01T00:00:00Z', deadline: '2026-01-01T00:01:30Z', ...params }).toString()}` });
  t.equal((await outcome({ minReceive: '0' })).statusCode, 400, 'an outcome\'s floor must be positive');
  t.equal((await outcome({ minReceive: '5000000000' })).statusCode, 200, 'a floor in the want token may exceed the give maximum');
  t.equal((await outcome({ since: `2026-01-01T00:00:00.${'0'.repeat(50)}Z` })).statusCode, 400, 'a date-time over its maxLength (64) is refused');
  t.equal((await outcome({ since: '2026-01-01T00:00:00.000000000Z' })).statusCode, 200, 'a date-time within it is taken');
});

t.test('plans: "the contract examples cover every plan status code", in v1 and in v2', async (t) => {
  for (const s of [spec, v2Spec]) {
    for (const operationId of ['createAppPlan', 'createExecutePlan']) {
      const exampled = new Set(s.examples.filter((e) => e.operationId === operationId).map((e) => e.status));
      for (const status of s.statuses.get(operationId) ?? []) t.ok(exampled.has(status), `${operationId} has a ${status} example`);
    }
  }
});

for (const { example, pending, observed } of runs) {
  const name = `${example.path.startsWith('/api/v2/') ? 'v2 ' : ''}${example.operationId} ${example.status} ${example.name}`;
  if (pending !== null || observed === null) {
    t.test(name, { todo: pending ?? 'not run' }, () => {});
    continue;
  }
  t.test(name, async (t) => {
    t.equal(observed.status, example.status, 'status');
    t.equal(observed.headers.get('x-service-api-version'), apiVersionOf(example.path), 'x-service-api-version');
    t.match(observed.headers.get('content-type') ?? '', new RegExp(`^${example.mediaType.replace('/', '\\/')}`), 'content-type');
    for (const [header, { required, validate }] of Object.entries(example.headers)) {
      const value = observed.headers.get(header);
      if (value === null) {
        t.notOk(required, `required header ${header} is present`);
        continue;
      }
      t.ok(validate(value), `header ${header}: ${JSON.stringify(value)} matches the spec`, { errors: validate.errors });
    }
    if (example.mediaType === 'text/event-stream') {
      const frames = sseFrames(observed.text);
      const expected = sseFrames(String(example.value));
      t.strictSame(frames.map((f) => Object.keys(f)), expected.map((f) => Object.keys(f)), 'the same events, field by field');
      for (const [i, frame] of frames.entries()) {
        const { data, ...fields } = frame;
        const { data: expectedData, ...expectedFields } = expected[i] ?? {};
        t.strictSame(fields, expectedFields, `event ${i}: its fields but data`);
        if (data === undefined) continue;
        const event = JSON.parse(data) as unknown;
        t.ok(example.schema(event), `event ${i}: its data matches the event schema`, { errors: example.schema.errors });
        t.strictSame(withoutPointers(event, example.volatile), withoutPointers(JSON.parse(expectedData ?? 'null'), example.volatile), `event ${i}: its data equals the example's`);
      }
      return;
    }
    if (example.mediaType === 'text/csv') {
      t.ok(example.schema(observed.text), 'the file matches the response schema', { errors: example.schema.errors });
      t.strictSame(parseCsv(observed.text)[0], parseCsv(String(example.value))[0], 'the same header');
      const records = csvRecords(observed.text);
      for (const pointer of example.volatile) t.ok(pointerExists(records, pointer), `volatile ${pointer} is present`);
      t.strictSame(withoutPointers(records, example.volatile), withoutPointers(csvRecords(String(example.value)), example.volatile), 'the rows equal the example\'s');
      return;
    }
    const body = JSON.parse(observed.text) as unknown;
    t.ok(example.schema(body), 'body matches the response schema', { errors: example.schema.errors });
    for (const pointer of example.volatile) t.ok(pointerExists(body, pointer), `volatile ${pointer} is present`);
    t.strictSame(withoutPointers(body, example.volatile), withoutPointers(example.value, example.volatile), 'body equals the example');
  });
}
