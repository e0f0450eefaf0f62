// The one-instance section's baselines, copying the service's own answers: a sample of its cached
// quote and of a keyless plan is taken, and each baseline started on it is checked to answer the
// same bytes and headers (the plan floor: as many bytes, its plan having its own id). The v2
// quote and plan are sampled too, for their sizes: the v2 pairs are set against v1's baselines.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PLAN_RECORDS, startBaseline, type RunningSandbox, type Server } from './deployment.js';
import { CACHED_PATH, CACHED_PATH_V2, FRESH_PATH_PREFIX, PLAN_PATH, PLAN_PATH_V2 } from './load.js';
import { keyPrefix, PLAN_BODY } from './measure.js';
import type { BaselineKey } from './pairs.js';
import { get, type Fetched } from './processes.js';

/** Headers node or fastify writes for any answer; every other header of the service's answer is copied. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** The service's answers the baselines copy, the headers they copy, and the files holding the bytes. */
export interface Samples {
  readonly quote: Fetched;
  readonly quoteHeaders: Record<string, string>;
  readonly quoteFile: string;
  readonly plan: Fetched;
  readonly planHeaders: Record<string, string>;
  readonly planFile: string;
  /** The plan's request, which the plan baselines answer when they are started. */
  readonly planRequest: RequestInit;
  /** The same quote and a plan for the same request in v2. */
  readonly quoteV2: Fetched;
  readonly planV2: Fetched;
}

/** The service's cached quote and a keyless plan of its, written under `root`. */
export async function takeSamples(service: Server, root: string): Promise<Samples> {
  const quote = await get(`${service.url}${CACHED_PATH}`);
  if (quote.status !== 200) throw new Error(`GET ${CACHED_PATH} answered ${quote.status}: ${quote.body.toString('utf8').slice(0, 500)}`);
  const quoteHeaders = copiedHeaders(quote.headers);
  const quoteFile = path.join(root, 'quote-body.json');
  writeFileSync(quoteFile, quote.body);
  const planRequest = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...PLAN_BODY, idempotencyKey: `${keyPrefix}-sample` }) };
  const plan = await get(`${service.url}${PLAN_PATH}`, planRequest);
  if (plan.status !== 200) throw new Error(`POST ${PLAN_PATH} answered ${plan.status}: ${plan.body.toString('utf8').slice(0, 500)}`);
  const planHeaders = copiedHeaders(plan.headers);
  const planFile = path.join(root, 'plan-body.json');
  writeFileSync(planFile, plan.body);
  const quoteV2 = await get(`${service.url}${CACHED_PATH_V2}`);
  if (quoteV2.status !== 200) throw new Error(`GET ${CACHED_PATH_V2} answered ${quoteV2.status}: ${quoteV2.body.toString('utf8').slice(0, 500)}`);
  const planV2 = await get(`${service.url}${PLAN_PATH_V2}`, planRequest);
  if (planV2.status !== 200) throw new Error(`POST ${PLAN_PATH_V2} answered ${planV2.status}: ${planV2.body.toString('utf8').slice(0, 500)}`);
  return { quote, quoteHeaders, quoteFile, plan, planHeaders, planFile, planRequest, quoteV2, planV2 };
}

/** Each kind of load's baseline, and the plan's earlier one, each checked against the samples. */
export async function startBaselines({ quote, quoteHeaders, quoteFile, plan, planHeaders, planFile, planRequest }: Samples, sandbox: RunningSandbox): Promise<Readonly<Record<BaselineKey, Server>>> {
  const cachedBaseline = await startBaseline('the cached-quote baseline', './baseline.js', { BENCH_BASELINE_BODY_FILE: quoteFile, BENCH_BASELINE_HEADERS: JSON.stringify(quoteHeaders) }, { path: CACHED_PATH });
  sameAnswer('the cached-quote baseline', await get(`${cachedBaseline.url}${CACHED_PATH}`), quote, quoteHeaders);
  const fanOut = await startBaseline('the bare fan-out', './fan-out-baseline.js', { BENCH_SANDBOX_MANIFEST: JSON.stringify(sandbox.announcement) }, { path: `${FRESH_PATH_PREFIX}100` });
  const planBaseline = await startBaseline('the plan baseline', './plan-baseline.js', { BENCH_BASELINE_BODY_FILE: planFile, BENCH_BASELINE_HEADERS: JSON.stringify(planHeaders) }, { path: PLAN_PATH, init: planRequest });
  sameAnswer('the plan baseline', await get(`${planBaseline.url}${PLAN_PATH}`, planRequest), plan, planHeaders);
  const planFloor = await startBaseline(
    'the plan floor',
    './plan-floor.js',
    { BENCH_BASELINE_BODY_FILE: planFile, BENCH_BASELINE_HEADERS: JSON.stringify(planHeaders), BENCH_BASELINE_MAX_RECORDS: PLAN_RECORDS },
    { path: PLAN_PATH, init: planRequest },
  );
  sameShape('the plan floor', await get(`${planFloor.url}${PLAN_PATH}`, planRequest), plan, planHeaders);
  return { cached: cachedBaseline, fresh: fanOut, plan: planFloor, planBytes: planBaseline };
}

/** The answer's headers a baseline copies: all but those node writes for any answer. */
function copiedHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !TRANSPORT_HEADERS.has(name)));
}

/** A plan of the floor's: its own id, so not the same bytes, but as many, and the same headers. */
function sameShape(name: string, copy: { status: number; body: Buffer; headers: Headers }, original: { body: Buffer }, headers: Record<string, string>): void {
  if (copy.status !== 200 || copy.body.length !== original.body.length) throw new Error(`${name} answers ${copy.status} with ${copy.body.length} bytes, not a plan of ${original.body.length}`);
  sameAnswer(name, { body: original.body, headers: copy.headers }, original, headers);
}

function sameAnswer(name: string, copy: { body: Buffer; headers: Headers }, original: { body: Buffer }, headers: Record<string, string>): void {
  if (!copy.body.equals(original.body)) throw new Error(`${name} does not answer the service's bytes`);
  for (const [header, value] of Object.entries(headers)) {
    if (copy.headers.get(header) !== value) throw new Error(`${name}'s ${header} header is ${JSON.stringify(copy.headers.get(header))}, not ${JSON.stringify(value)}`);
  }
}
