// The API clients, typed from the specs (src/generated/types.ts and v2-types.ts, written by `make
// generate`, named in contract/v1.ts and contract/v2.ts) over openapi-fetch: createClient speaks
// version 1, createClientV2 version 2. Every answer outside 2xx becomes one BestexError; every
// answer must say the version the client speaks in `x-service-api-version`, as the spec tells
// clients to check; nothing is retried, so a 4xx is never sent twice and a 429's Retry-After is
// the caller's to honour. Only a plan's event stream (`watch`, plan-status.ts) is opened again
// when it drops, from the last event it gave.
import createFetchClient from 'openapi-fetch';
import { answerError, BestexError, versionError } from './errors.js';
import type { Fetch } from './platform.js';
import { statusTarget, watchPlan, type PlanRef, type PlanStatusOptions, type PlanWatch, type WatchOptions } from './plan-status.js';
import type { paths } from './generated/types.js';
import type { paths as PathsV2 } from './generated/v2-types.js';
import type { AppPlan, ExecutionPlan, GetLivenessQuery, GetOutcomeQuery, GetQuoteQuery, Liveness, Outcome, PlanRequest, QuoteResponse, StatusSummary } from './contract/v1.js';
import type * as V2 from './contract/v2.js';

/** The API version createClient speaks. */
export const API_VERSION = '1';
/** The API version createClientV2 speaks. */
export const API_VERSION_2 = '2';

export interface ClientOptions {
  /** The service's origin, such as `https://api.bestex.example` or `http://127.0.0.1:8080`. */
  readonly baseUrl: string;
  /** A partner key: quotes then disclose fees, and plans go to POST /api/execute/plan. */
  readonly apiKey?: string | undefined;
  /** A fetch of your own (a proxy, a test double); the platform's by default. */
  readonly fetch?: Fetch | undefined;
}

export interface BestexClient {
  quote(query: GetQuoteQuery): Promise<QuoteResponse>;
  /** A plan: keyless (POST /api/app/plan) without an apiKey, a partner plan (POST /api/execute/plan) with one. */
  plan(request: PlanRequest): Promise<AppPlan | ExecutionPlan>;
  outcome(query: GetOutcomeQuery): Promise<Outcome>;
  liveness(query?: GetLivenessQuery): Promise<Liveness>;
  status(): Promise<StatusSummary>;
}

/** The version 2 client: every v1 operation's counterpart under /api/v2/, and the token list. */
export interface BestexClientV2 {
  /** Each venue with its execution block, and the best venue executable now. */
  quote(query: V2.GetQuoteQuery): Promise<V2.QuoteResponse>;
  /**
   * A plan on any executable venue: keyless (POST /api/v2/app/plan) without an apiKey, a partner
   * plan (POST /api/v2/execute/plan) with one. A request naming a venue (`venueId`) is answered a
   * single-venue plan; one naming a quote's split (`legs`) a split plan (`V2.SplitPlan`, told
   * apart by `isSplitPlan`).
   */
  plan(request: V2.PlanRequest & { readonly venueId: string; readonly legs?: undefined }): Promise<V2.AppPlan | V2.ExecutionPlan>;
  plan(request: V2.PlanRequest & { readonly legs: readonly V2.SplitLegRequest[] }): Promise<V2.SplitPlan>;
  plan(request: V2.PlanRequest): Promise<V2.AppPlan | V2.ExecutionPlan | V2.SplitPlan>;
  outcome(query: V2.GetOutcomeQuery): Promise<V2.Outcome>;
  liveness(query?: V2.GetLivenessQuery): Promise<V2.Liveness>;
  status(): Promise<V2.StatusSummary>;
  /** The tokens, each with its admin party, registry and each venue's limits. */
  tokens(): Promise<V2.TokenList>;
  /**
   * Completes a plan made with a sign-message step (OneSwap's) with the wallet's signature of its
   * message and the key it signed with (POST /api/v2/plan/signature): the complete plan, its
   * deposit to the venue's swap intent (a split plan's: the complete split plan, its OneSwap leg's
   * deposit to the intent). A plan made with a key is completed with the same key (this client's
   * apiKey); a replay answers the same plan.
   */
  signPlan(request: V2.SignPlanRequest): Promise<V2.AppPlan | V2.SplitPlan>;
  /**
   * A v2 plan's status now (GET /api/v2/plan/status), by its planId or the plan itself. A keyed
   * plan is read with this client's key; a keyless plan with its `statusToken` (the plan's own,
   * when the plan is given, or `token`).
   */
  getPlanStatus(plan: string | PlanRef, options?: PlanStatusOptions): Promise<V2.PlanStatus>;
  /**
   * A v2 plan's status as it changes (GET /api/v2/plan/events, server-sent events), each event
   * once and in order, through reconnections, until the plan's terminal event, the signal, or a
   * refusal: iterate it (`for await`), give `onStatus`, or await `done`. Read as getPlanStatus is.
   */
  watch(plan: string | PlanRef, options?: WatchOptions): PlanWatch;
  /**
   * Reports what the taker's wallet saw of legs the service cannot observe (Nightly's) (POST
   * /api/v2/plan/report), so the plan's status, its events and webhooks read it (`basis: taker`).
   * `execute()` does it itself, with this client. A keyed plan with this client's key; a keyless
   * plan with its `statusToken`.
   */
  reportPlanView(report: V2.PlanViewReport): Promise<V2.PlanViewReceipt>;
}

interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

async function settle<T>(version: string, call: () => Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call();
  } catch (err) {
    throw new BestexError(`the service could not be reached: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'network_error', cause: err });
  }
  const { response } = answer;
  const unsupported = versionError(response, version);
  if (unsupported) throw unsupported;
  if (!response.ok) throw answerError(response, answer.error);
  if (answer.data === undefined) throw new BestexError(`the service answered HTTP ${response.status} without a body`, { status: response.status, code: 'unreadable_response' });
  return answer.data;
}

const fetchOptions = (options: ClientOptions) => ({ baseUrl: options.baseUrl.replace(/\/+$/, ''), ...(options.fetch ? { fetch: options.fetch } : {}) });
const keyHeaders = (key: string | undefined): Record<string, string> => (key === undefined ? {} : { 'x-api-key': key });

export function createClient(options: ClientOptions): BestexClient {
  const api = createFetchClient<paths>(fetchOptions(options));
  const key = options.apiKey;
  const keyed = keyHeaders(key);
  return {
    quote: (query) => settle(API_VERSION, () => api.GET('/api/quote', { params: { query }, headers: keyed })),
    plan: (request) =>
      key === undefined
        ? settle(API_VERSION, () => api.POST('/api/app/plan', { body: request }))
        : settle(API_VERSION, () => api.POST('/api/execute/plan', { body: request, headers: keyed })),
    outcome: (query) => settle(API_VERSION, () => api.GET('/api/outcome', { params: { query } })),
    liveness: (query) => settle(API_VERSION, () => api.GET('/api/liveness', { params: { query: query ?? {} } })),
    status: () => settle(API_VERSION, () => api.GET('/api/status')),
  };
}

export function createClientV2(options: ClientOptions): BestexClientV2 {
  const api = createFetchClient<PathsV2>(fetchOptions(options));
  const key = options.apiKey;
  const keyed = keyHeaders(key);
  const v2 = <T>(call: () => Promise<Answer<T>>) => settle(API_VERSION_2, call);
  return {
    quote: (query) => v2(() => api.GET('/api/v2/quote', { params: { query }, headers: keyed })),
    plan: ((request: V2.PlanRequest) =>
      key === undefined ? v2(() => api.POST('/api/v2/app/plan', { body: request })) : v2(() => api.POST('/api/v2/execute/plan', { body: request, headers: keyed }))) as BestexClientV2['plan'],
    outcome: (query) => v2(() => api.GET('/api/v2/outcome', { params: { query } })),
    liveness: (query) => v2(() => api.GET('/api/v2/liveness', { params: { query: query ?? {} } })),
    status: () => v2(() => api.GET('/api/v2/status')),
    tokens: () => v2(() => api.GET('/api/v2/tokens')),
    signPlan: (request) => v2(() => api.POST('/api/v2/plan/signature', { body: request, headers: keyed })),
    getPlanStatus: (plan, options) => {
      const { planId, token } = statusTarget(plan, options);
      return v2(() => api.GET('/api/v2/plan/status', { params: { query: token === undefined ? { planId } : { planId, token } }, headers: keyed }));
    },
    watch: (plan, watchOptions) => watchPlan({ baseUrl: options.baseUrl, apiKey: key, fetch: options.fetch }, plan, watchOptions),
    reportPlanView: (report) => v2(() => api.POST('/api/v2/plan/report', { body: report, headers: keyed })),
  };
}
