// Builds native fastify routes from a spec (the swap API's, the key portal's) once, at start-up:
// openapi-backend lists the operations and holds the operationId -> handler registry; each route
// runs the spec's generated validators and calls its handler directly. Routing through openapi-backend's handleRequest on
// every request would cost ~65 µs of parsing and cloning that the hot path cannot afford.
import { METHODS } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ValidateFunction } from 'ajv';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import * as v1BodyValidators from '../../generated/v1/body-validators.js';
import * as v1QueryValidators from '../../generated/v1/query-validators.js';
import type { KeyCheck, KeyVerifier, Partner } from '../../core/keys/partner-keys.js';
import type { QuoteCounts } from '../../core/quotes/service.js';
import type { Metrics } from '../../core/metrics.js';
import { DomainError } from '../../core/errors.js';
import { ANY_ORIGIN, countsInNoWindow, keptKey, presentedKey, verifyKey, type KeyRequirement } from './credentials.js';
import { errorReply, sendError } from './error-reply.js';
import type { AccessLogFields } from './access-log.js';
import { clientIp, type RateLimiter } from './rate-limits.js';
import { ValidatedQueries, type Query } from './validated-queries.js';
import { validationError } from './validation-error.js';
import { NOT_IMPLEMENTED, type HandlerMap, type OperationContext, type OperationHandler, type OperationResult } from './operation.js';

type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | void;

/** Every method a request can be routed with (the app routes all HTTP defines; CONNECT is no request for a path). */
const ALL_METHODS = METHODS.filter((m) => m !== 'CONNECT');

const validators = (module: Record<string, unknown>, operationId: string) => module[operationId] as ValidateFunction | undefined;

function keyRequirement(security: ReadonlyArray<Record<string, unknown>> | undefined): KeyRequirement {
  if (!security || security.length === 0) return 'none';
  return security.some((s) => Object.keys(s).length === 0) ? 'optional' : 'required';
}

/** What every operation route checks before its handler: the caller's key, and its rate limits. */
export interface Gatekeeping {
  readonly keys: KeyVerifier;
  /** The rate-limit windows an operation documenting a 429 is counted in; null: none is (the portal limits creation itself). */
  readonly limits: RateLimiter | null;
  /** Hears each key verification's result. */
  readonly metrics?: Metrics;
  /**
   * How a presented key is taken. `api` (default): held to its allowed origins, a required key
   * that is absent is 400 missing_key, and the access line names it as `partnerId` (attributed,
   * billable traffic). `portal`: the key holder manages it from the portal's own page, so any
   * origin; an absent key is 401 invalid_key like any key that does not sign in; the access
   * line names it as `keyId`, which is not API traffic.
   */
  readonly keyUse?: 'api' | 'portal';
}

/** A spec's generated validators, by operationId. */
export interface Validators {
  readonly query: Record<string, unknown>;
  readonly body: Record<string, unknown>;
}

const V1_VALIDATORS: Validators = { query: v1QueryValidators, body: v1BodyValidators };

export async function registerOperations(
  app: FastifyInstance,
  definition: Document,
  handlers: HandlerMap,
  gates: Gatekeeping,
  { query: queryValidators, body: bodyValidators }: Validators = V1_VALIDATORS,
): Promise<void> {
  const api = new OpenAPIBackend({ definition, quick: true, validate: false, strict: true });
  await api.init();
  for (const [operationId, handler] of Object.entries(handlers)) {
    const operation = api.getOperation(operationId);
    if (!operation) throw new Error(`handler for ${operationId}, which the spec does not define`);
    api.register(
      operationId,
      handler === NOT_IMPLEMENTED
        ? notImplemented(operationId)
        : operationRoute(
            handler,
            keyRequirement(operation.security ?? definition.security),
            // An operation is rate-limited exactly when the contract documents a 429 for it.
            gates.limits !== null && operation.responses?.['429'] !== undefined,
            gates,
            validators(queryValidators, operationId),
            validators(bodyValidators, operationId),
          ),
    );
  }

  // Every method HTTP defines is routed, so one a path does not support is a 405 there, not a 404.
  // Only POST carries a body in the contract: any other method is routed without reading one, so
  // a PUT with a text body is the 405 it is, not a complaint about its body.
  for (const method of ALL_METHODS) {
    if (method !== 'POST') app.addHttpMethod(method, { hasBody: false, overrideExisting: true });
  }
  const methodsByPath = new Map<string, string[]>();
  for (const operation of api.getOperations()) {
    const { operationId, method, path } = operation;
    const route = operationId ? (api.handlers[operationId] as RouteHandler | undefined) : undefined;
    if (!route || !operationId) throw new Error(`no handler for ${method.toUpperCase()} ${path} (${operationId ?? 'no operationId'})`);
    const url = path.replace(/\{([^}]+)\}/g, ':$1');
    methodsByPath.set(url, [...(methodsByPath.get(url) ?? []), method.toUpperCase()]);
    // An operation that takes no body (the portal's rotation and revocation) reads none: whatever
    // is sent, a JSON content type with nothing after it included, is discarded unread, so the
    // operation's answer never depends on it. Content-type parsers are per scope, hence one of its own.
    const add = (scope: FastifyInstance) => scope.route({
      method: method.toUpperCase() as 'GET',
      url,
      // Read by the metrics only for a request refused before its handler ran.
      config: { operationId },
      handler: (request, reply) => {
        request.routeUrl = url;
        request.operationId = operationId;
        return route(request, reply);
      },
    });
    if (operation.requestBody === undefined && method.toUpperCase() === 'POST') await app.register(async (scope) => add(discardingBodies(scope)));
    else add(app);
  }
  for (const [url, methods] of methodsByPath) {
    const allowed = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    const others = ALL_METHODS.filter((m) => !allowed.includes(m));
    if (others.length === 0) continue;
    app.route({
      method: others,
      url,
      handler: async (request, reply) =>
        sendError(reply, errorReply('method_not_allowed', `${request.method} is not supported on ${url}`, { allow: allowed.join(', ') })),
    });
  }
}

/** `scope`, its only body parser made one that reads a body to its end and discards it, whatever its Content-Type says. */
function discardingBodies(scope: FastifyInstance): FastifyInstance {
  // A Content-Type names how to read a body this scope does not read: one fastify cannot parse
  // (`\u00e9/\u00e9`) would otherwise be refused before the parser below is asked.
  scope.addHook('onRequest', (request, _reply, done) => {
    delete request.headers['content-type'];
    done();
  });
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request, payload, done) => {
    payload.once('error', (err) => done(err, undefined));
    payload.once('end', () => done(null, undefined));
    payload.resume();
  });
  return scope;
}

function notImplemented(operationId: string): RouteHandler {
  return async (_request: FastifyRequest, reply: FastifyReply) =>
    sendError(reply, errorReply('not_implemented', `${operationId} is specified but not served by this build`));
}

function operationRoute(
  handler: OperationHandler<never, never>,
  requirement: KeyRequirement,
  rateLimited: boolean,
  { keys, limits, metrics, keyUse = 'api' }: Gatekeeping,
  validateQuery: ValidateFunction | undefined,
  validateBody: ValidateFunction | undefined,
): RouteHandler {
  // Not async: an operation without rate limits or a key (the status) is answered within this
  // call, with no promise to settle; fastify sends a synchronous throw, or a rejected promise from
  // the other paths, to the error handler.
  const { fieldCodes } = handler;
  const baseUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}`;
  const queries = validateQuery && handler.rememberQueries ? new ValidatedQueries(validateQuery, fieldCodes) : undefined;
  /** The handler's context, its guard run and its input validated: throws the request's 4xx. */
  const prepare = (request: FastifyRequest, reply: FastifyReply, partner: Partner | null, counts?: QuoteCounts): OperationContext<never, never> => {
    // Guards read the query as sent; the handler gets it validated (and coerced).
    const context: { -readonly [K in keyof OperationContext<Query>]: OperationContext<Query>[K] } = {
      query: request.query as Query,
      body: request.body,
      partner,
      clientIp: () => clientIp(request),
      baseUrl: () => baseUrl(request),
      header: (name) => {
        const value = request.headers[name];
        return typeof value === 'string' ? value : undefined;
      },
      annotate: (fields) => annotate(request, fields),
      spendFreshQuote: () => limits?.spendFreshQuote(request, reply),
      counts,
    };
    handler.guard?.(context);
    if (queries) context.query = queries.get(request.url, request.query as Record<string, unknown>);
    else if (validateQuery && !validateQuery(context.query)) throw validationError(validateQuery.errors, 'query', fieldCodes);
    if (validateBody && !validateBody(context.body)) throw validationError(validateBody.errors, 'body', fieldCodes);
    return context as OperationContext<never, never>;
  };
  const execute = (reply: FastifyReply, context: OperationContext<never, never>): Promise<void> | undefined => {
    const result = handler.handle(context);
    // Resolved with the reply, not undefined: fastify would otherwise answer again, empty, before a
    // stream's headers are written (the reply, returned, says the answer is on its way).
    if (result instanceof Promise) return result.then((r) => send(reply, r)) as Promise<unknown> as Promise<void>;
    send(reply, result);
    return undefined;
  };
  const run = (request: FastifyRequest, reply: FastifyReply, partner: Partner | null, counts?: QuoteCounts) => execute(reply, prepare(request, reply, partner, counts));
  // The key is verified first, so a keyed caller is counted in its key's window. An invalid key
  // counts in its IP's keyless window, so guessing keys is limited like any keyless traffic; a
  // key that could not be verified (503) or a fault (500) is answered as it is.
  const count = (request: FastifyRequest, reply: FastifyReply, partner: Partner | null) => limits?.admit(request, reply, partner);
  /** `next` once the request is counted: at once when it was (this process's own windows), else after. */
  const counted = (counting: void | Promise<void>, next: () => void | Promise<void>): void | Promise<void> => (counting === undefined ? next() : counting.then(next));
  // Where the windows are shared, a handler that counts the request itself makes its counts in the
  // round trip of its first shared-state read: one round trip where there would be two or three.
  // A key verified from a kept record (`check`) is confirmed in that same round trip.
  const pendingCounts = (request: FastifyRequest, reply: FastifyReply, partner: Partner | null, check?: KeyCheck): QuoteCounts | undefined => {
    const pending = (handler.countsWithReads && limits?.pending?.(request, reply, partner)) || undefined;
    return pending && check ? { ...pending, key: check } : pending;
  };
  /** `settle`'s outcome, once the request is counted: `pending`'s count, made by the handler, or else made here. */
  const countedOnce = (pending: QuoteCounts, request: FastifyRequest, reply: FastifyReply, partner: Partner | null, settle: () => void | Promise<void>): Promise<void> => {
    let settled: Promise<void>;
    try {
      settled = Promise.resolve(settle());
    } catch (err) {
      settled = Promise.reject(err);
    }
    return settled.catch((err: unknown) => (pending.window.counted || countsInNoWindow(err) ? Promise.reject(err) : counted(count(request, reply, partner), () => Promise.reject(err))));
  };
  // With a replay, the request is validated and looked up before it is counted: a replay is not
  // counted, while every other answer, a 4xx included, is counted as it would be without.
  const replayFirst = (request: FastifyRequest, reply: FastifyReply, partner: Partner | null, pending: QuoteCounts | undefined): Promise<void> => {
    let context: OperationContext<never, never>;
    try {
      context = prepare(request, reply, partner, pending);
    } catch (err) {
      return Promise.resolve(counted(count(request, reply, partner), () => Promise.reject(err)));
    }
    const countedAlready = () => pending?.window.counted === true;
    return handler.replay!(context).then(
      (stored) => (stored ? void send(reply, stored) : countedAlready() ? execute(reply, context) : counted(count(request, reply, partner), () => execute(reply, context))),
      (err: unknown) => (countedAlready() || countsInNoWindow(err) ? Promise.reject(err) : counted(count(request, reply, partner), () => Promise.reject(err))),
    );
  };
  const admitted = (request: FastifyRequest, reply: FastifyReply, partner: Partner | null, check?: KeyCheck): void | Promise<void> => {
    if (!rateLimited) return run(request, reply, partner);
    const pending = pendingCounts(request, reply, partner, check);
    // No round trip of the request's own to confirm a kept record in (this process's own windows): verified afresh first.
    if (check && !pending) return check.confirm(null).then(() => admitted(request, reply, partner), (err: unknown) => refused(request, reply, err));
    if (handler.replay) return replayFirst(request, reply, partner, pending);
    if (pending) return countedOnce(pending, request, reply, partner, () => run(request, reply, partner, pending));
    return counted(count(request, reply, partner), () => run(request, reply, partner));
  };
  const refused = (request: FastifyRequest, reply: FastifyReply, err: unknown): Promise<void> =>
    rateLimited && err instanceof DomainError && err.code === 'invalid_key'
      ? Promise.resolve(counted(count(request, reply, null), () => Promise.reject(err)))
      : Promise.reject(err);
  const portal = keyUse === 'portal';
  // A handler that counts with its reads makes a round trip of its own for every request, which
  // reads the key store's version too: its key may be verified from a record this instance kept.
  // Every other route reads the key store afresh.
  const keepsKeys = !portal && rateLimited && handler.countsWithReads === true && keys.kept !== undefined;
  return (request, reply) => {
    const key = requirement === 'none' ? null : portal ? portalKey(request) : presentedKey(request.headers);
    if (key === null && requirement === 'required') {
      if (portal) throw new DomainError('invalid_key', 'sign in with your key: send it as x-api-key or Authorization: Bearer <key>');
      throw new DomainError('missing_key', 'this endpoint requires a partner key');
    }
    if (key === null) return admitted(request, reply, null);
    if (keepsKeys) {
      const origin = requestOrigin(request);
      let kept: ReturnType<typeof keptKey>;
      try {
        kept = keptKey(key, keys, origin, metrics);
      } catch (err) {
        return refused(request, reply, err);
      }
      if (kept) {
        annotate(request, { partnerId: kept.partner.id });
        return admitted(request, reply, kept.partner, kept.check);
      }
    }
    return verifyKey(key, keys, portal ? ANY_ORIGIN : requestOrigin(request), metrics).then(
      (partner) => {
        annotate(request, portal ? { keyId: partner.id } : { partnerId: partner.id });
        return admitted(request, reply, partner);
      },
      (err: unknown) => refused(request, reply, err),
    );
  };
}

/** The key a portal request signs in with: two different keys sign in as no one (the portal's refusals are 401s). */
function portalKey(request: FastifyRequest): string | null {
  try {
    return presentedKey(request.headers);
  } catch (err) {
    if (err instanceof DomainError) throw new DomainError('invalid_key', `sign in with one key: ${err.message}`);
    throw err;
  }
}

/**
 * The origin of the page that sent the request, when a browser sent it: its Origin header, or, for
 * a same-origin GET (which carries none), the request's own origin when the browser says the
 * request is same-origin (Sec-Fetch-Site, which a page cannot set).
 */
function requestOrigin(request: FastifyRequest): string | undefined {
  if (request.headers.origin !== undefined) return request.headers.origin;
  return request.headers['sec-fetch-site'] === 'same-origin' ? `${request.protocol}://${request.host}` : undefined;
}

/** Adds fields to the request's access-log line. */
function annotate(request: FastifyRequest, fields: AccessLogFields): void {
  Object.assign((request.logFields ??= {}), fields);
}

/**
 * Sends the answer; returns the reply, which a route's promise resolves to: fastify then knows the
 * answer is on its way, where a stream's headers are not written yet when the promise settles.
 */
function send(reply: FastifyReply, result: OperationResult): FastifyReply {
  return reply.code(result.status).headers(result.headers).send(result.body);
}
