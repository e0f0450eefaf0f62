// The API client, typed from the spec (src/generated/types.ts, written by `make generate`, named in
// contract/v1.ts) over openapi-fetch. Every answer outside 2xx becomes one BestexError; every
// answer must say `x-service-api-version: 1`, as the spec tells clients to check; nothing is
// retried, so a 4xx is never sent twice and a 429's Retry-After is the caller's to honour.
import createFetchClient from 'openapi-fetch';
import { BestexError } from './errors.js';
import type { Fetch } from './platform.js';
import type { paths } from './generated/types.js';
import type { AppPlan, ExecutionPlan, GetLivenessQuery, GetOutcomeQuery, GetQuoteQuery, Liveness, Outcome, PlanRequest, QuoteResponse, StatusSummary } from './contract/v1.js';

/** The API version this SDK speaks. */
export const API_VERSION = '1';

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

interface Answer<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

function errorOf(response: Response, body: unknown): BestexError {
  const shaped = typeof body === 'object' && body !== null ? (body as { error?: unknown; code?: unknown; action?: unknown }) : {};
  const retryAfter = response.headers.get('retry-after');
  const seconds = retryAfter !== null && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) : null;
  return new BestexError(typeof shaped.error === 'string' ? shaped.error : `the service answered HTTP ${response.status}`, {
    status: response.status,
    code: typeof shaped.code === 'string' ? shaped.code : 'unreadable_response',
    action: typeof shaped.action === 'string' ? shaped.action : null,
    retryAfterSeconds: seconds,
  });
}

async function settle<T>(call: () => Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call();
  } catch (err) {
    throw new BestexError(`the service could not be reached: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'network_error', cause: err });
  }
  const { response } = answer;
  const version = response.headers.get('x-service-api-version');
  if (version !== API_VERSION) {
    throw new BestexError(`the service speaks API version ${version ?? '(none said)'}; this SDK speaks ${API_VERSION}`, { status: response.status, code: 'unsupported_api_version' });
  }
  if (!response.ok) throw errorOf(response, answer.error);
  if (answer.data === undefined) throw new BestexError(`the service answered HTTP ${response.status} without a body`, { status: response.status, code: 'unreadable_response' });
  return answer.data;
}

export function createClient(options: ClientOptions): BestexClient {
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const key = options.apiKey;
  const keyed = key === undefined ? {} : { 'x-api-key': key };
  return {
    quote: (query) => settle(() => api.GET('/api/quote', { params: { query }, headers: keyed })),
    plan: (request) =>
      key === undefined
        ? settle(() => api.POST('/api/app/plan', { body: request }))
        : settle(() => api.POST('/api/execute/plan', { body: request, headers: keyed })),
    outcome: (query) => settle(() => api.GET('/api/outcome', { params: { query } })),
    liveness: (query) => settle(() => api.GET('/api/liveness', { params: { query: query ?? {} } })),
    status: () => settle(() => api.GET('/api/status')),
  };
}
