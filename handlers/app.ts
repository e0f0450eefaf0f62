// The app: one function builds the whole fastify instance from the spec, the core and the config.
// The entry point (main.ts) only listens and shuts down; tests build the same app.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { parse } from 'yaml';
import type { Document } from 'openapi-backend';
import type { Config } from '../core/config.js';
import { createServices, type CoreOverrides, type CoreServices } from '../core/services.js';
import { AccessLog } from './http/access-log.js';
import { MetricsListener } from './http/metrics-listener.js';
import { PrometheusMetrics } from './http/prometheus-metrics.js';
import { errorReply, internalErrorReply, replyForError, sendError } from './http/error-reply.js';
import { V2_NOT_FOUND_ACTION } from './http/error-catalogue.js';
import { answerCors } from './http/cors.js';
import { isPortalUrl, setPortalHeaders } from './http/portal-headers.js';
import { registerJsonBody } from './http/json-body.js';
import { registerRateLimits } from './http/rate-limits.js';
import { REQUEST_ID_HEADER, requestIdOf } from './http/request-id.js';
import { unroutedAnswers } from './http/unrouted-errors.js';
import { drainBody } from './http/body-drain.js';
import { usageCounting } from './http/usage-counting.js';
import { createLogger } from './http/logger.js';
import { registerOperations } from './http/operation-routes.js';
import { apiVersionOf } from './http/api-version.js';
import { v1OperationMap } from './operations/v1/operation-map.js';
import { v2OperationMap } from './operations/v2/operation-map.js';
import { portalOperationMap } from './operations/portal/operation-map.js';
import * as portalBodyValidators from '../generated/portal/body-validators.js';
import * as portalQueryValidators from '../generated/portal/query-validators.js';
import * as v2BodyValidators from '../generated/v2/body-validators.js';
import * as v2QueryValidators from '../generated/v2/query-validators.js';
import { registerDemo } from './pages/demo.js';
import { registerDocs, serveSpec } from './pages/docs.js';
import { registerPortalPage } from './pages/portal-page.js';
import { registerSdkBundles } from './pages/sdk-bundles.js';

/** The `x-service-api-version` of every answer outside /api/v2/ (there: `2`, handlers/http/api-version.ts). */
export const API_VERSION = '1';

/**
 * The swap API's v2 contract as served: the bundled document `make generate` writes from
 * openapi/v2.yaml and the v1 shapes it borrows (generated/v2/openapi.yaml), one self-contained
 * document a partner generates a client from, without its do-not-edit banner.
 */
export function servedV2Spec(root: string = repoRoot()): Buffer {
  const text = readFileSync(path.join(root, 'generated', 'v2', 'openapi.yaml'), 'utf8');
  return Buffer.from(text.replace(/^(#[^\n]*\n)+/, ''), 'utf8');
}

/** The repository root, found from this module whether it runs from handlers/ or dist/handlers/. */
export function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above handlers/');
    dir = parent;
  }
  return dir;
}

export interface AppOptions {
  readonly config: Config;
  /** Defaults to a pino logger at config.logLevel on stdout. */
  readonly logger?: Logger;
  readonly overrides?: CoreOverrides;
  /** Start the background venue probes when the app is ready (default true). */
  readonly probes?: boolean;
}

export interface App {
  readonly server: FastifyInstance;
  /** The app's logger: fastify has none (see buildApp), so whatever logs beside the app logs here. */
  readonly logger: Logger;
  readonly core: CoreServices;
  /** The metrics listener, for the entry point to start on METRICS_HOST:METRICS_PORT; null when METRICS_PORT is unset. Closed with the server. */
  readonly metrics: MetricsListener | null;
}

/**
 * The key portal's operations (openapi/portal.yaml), dispatched like the swap API's: no rate-limit
 * window (creation has limits of its own), keys taken from any origin. Its contract is served
 * beside the swap API's. Not called when the portal is off: then every /portal path is a 404.
 */
async function registerPortal(server: FastifyInstance, core: CoreServices): Promise<void> {
  const specText = readFileSync(path.join(repoRoot(), 'openapi', 'portal.yaml'));
  const definition = parse(specText.toString('utf8')) as Document;
  // Before openapi-backend changes the definition.
  serveSpec(server, 'portal', specText, JSON.stringify(definition));
  const { host, port } = core.config;
  await registerOperations(
    server,
    definition,
    portalOperationMap(core.portal, core.webhooks, core.trades, `http://${host.includes(':') ? `[${host}]` : host}:${port}`),
    { keys: core.keys, limits: null, metrics: core.metrics, keyUse: 'portal' },
    { query: portalQueryValidators, body: portalBodyValidators },
  );
}

export async function buildApp(options: AppOptions): Promise<App> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const specText = readFileSync(path.join(repoRoot(), 'openapi', 'v1.yaml'));
  // Counted only when they are served: without a listener, the core's events go nowhere.
  const prometheus = config.metricsPort === null ? null : new PrometheusMetrics();
  const definition = parse(specText.toString('utf8')) as Document;
  const v2SpecText = servedV2Spec();
  const v2Definition = parse(v2SpecText.toString('utf8')) as Document;
  const versionHeaders = {
    '1': Object.freeze({ 'x-service-api-version': '1', 'x-service-build': config.serviceBuild }),
    '2': Object.freeze({ 'x-service-api-version': '2', 'x-service-build': config.serviceBuild }),
  } as const;
  const unrouted = unroutedAnswers(logger, (target) => versionHeaders[apiVersionOf(target)]);
  // Before the server: its access log counts each keyed request's usage as it logs the request.
  const core = await createServices(config, logger, { ...options.overrides, metrics: options.overrides?.metrics ?? prometheus ?? undefined });

  // From here on a failure must close what the core opened (a started sandbox).
  let server: FastifyInstance;
  let metrics: MetricsListener | null;
  try {
    // No logger for fastify: given one, it listens for every response's end to log it, which cost
    // a cached quote ~4 % of its CPU. The access log is written by the onSend hook below, and the
    // app logs through `logger` itself (request.log and server.log log nothing).
    server = Fastify({
      genReqId: requestIdOf,
      clientErrorHandler: unrouted.clientError,
      frameworkErrors: unrouted.frameworkError,
      // A hop count, never `true`: fastify would then take X-Forwarded-For's leftmost address,
      // which the client writes. Hop 0 is the connection's own address, the innermost proxy.
      trustProxy: config.trustProxyHops > 0 ? (_address: string, hop: number) => hop < config.trustProxyHops : false,
      bodyLimit: 16 * 1024,
      // A request that reaches an open connection during shutdown is served like any other, within
      // the grace: fastify's own 503 has a body outside the contract, and no operation documents a
      // 503 for shutting down. The connection closes once answered (handlers/main.ts).
      return503OnClosing: false,
      // Node answers an HTTP/1.1 request without Host with a bare 400 of its own; the hook below
      // refuses it in the contract's terms instead.
      // node checks those times only every connectionsCheckingInterval (30 s by default): checked
      // often enough that a limit of a few seconds means what it says.
      http: { requireHostHeader: false, headersTimeout: config.headersTimeoutMs, connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs) },
      // A body that never arrives would hold its connection for ever (fastify's default is no limit).
      requestTimeout: config.requestTimeoutMs,
    });
    server.server.maxConnections = config.maxConnections;
    registerJsonBody(server);
    server.server.on('connect', unrouted.connect);
    prometheus?.watchHealth(core.health);
    metrics = prometheus && new MetricsListener(prometheus.registry);

    const accessLog = new AccessLog(logger, prometheus, usageCounting(core.usage, [definition, v2Definition]));
    // One hook for every answer's fixed headers: each hook fastify runs costs every request.
    server.addHook('onRequest', (request, reply, done) => {
      request.receivedAt = performance.now();
      reply.header('x-service-api-version', apiVersionOf(request.url));
      reply.header('x-service-build', config.serviceBuild);
      reply.header(REQUEST_ID_HEADER, request.id);
      if (isPortalUrl(request.url)) setPortalHeaders(reply);
      if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
        sendError(reply, errorReply('bad_request', 'an HTTP/1.1 request needs a Host header', { connection: 'close' }));
        return;
      }
      if (!answerCors(request, reply)) done();
    });
    // Every answer, whatever route or error made it, passes here once as it is handed over.
    server.addHook('onSend', (request, reply, payload, done) => {
      accessLog.answered(request, reply);
      done(null, payload);
    });
    // Declared before any request, so every request object has the same shape.
    server.decorateRequest('receivedAt', 0);
    server.decorateRequest('logFields', null);
    server.decorateRequest('routeUrl', null);
    server.decorateRequest('operationId', null);
    server.setErrorHandler(async (err, request, reply) => {
      let outcome: ReturnType<typeof replyForError>;
      try {
        outcome = replyForError(err);
      } catch (shapingError) {
        // Shaping must never fail into fastify's own error body, which would leak its message.
        logger.error({ err: shapingError, cause: err, reqId: request.id }, 'error while shaping an error reply');
        outcome = { reply: internalErrorReply(), unexpected: false };
      }
      if (outcome.unexpected) logger.error({ err, reqId: request.id, route: request.routeOptions.url }, 'unexpected error');
      if (outcome.reply.status === 413) await drainBody(request.raw);
      return sendError(reply, outcome.reply);
    });
    server.setNotFoundHandler(async (request, reply) => {
      const shaped = errorReply('not_found', `no such path: ${request.method} ${request.url.split('?')[0]}`);
      return sendError(reply, apiVersionOf(request.url) === '2' ? { ...shaped, body: { ...shaped.body, action: V2_NOT_FOUND_ACTION } } : shaped);
    });

    await registerDocs(server, { v1: { text: specText, definition }, v2: { text: v2SpecText, definition: v2Definition } }, { portal: config.portalEnabled });
    registerSdkBundles(server, path.join(repoRoot(), 'sdk', 'dist', 'bundle'));
    registerDemo(server, core);
    registerPortalPage(server, config.portalEnabled, path.join(repoRoot(), 'dist', 'portal'));
    const limits = await registerRateLimits(
      server,
      core.rateWindows,
      {
        keylessPerMinute: config.rateLimitKeylessPerMinute,
        keyedPerMinute: config.rateLimitKeyedPerMinute,
        freshQuotesPerMinute: config.rateLimitFreshQuotesPerMinute,
        keyedFreshQuotesPerMinute: config.rateLimitKeyedFreshQuotesPerMinute,
      },
      core.metrics,
    );
    // Both versions in the same windows and fresh-quote budgets: one caller, one share, whichever version it speaks.
    await registerOperations(server, definition, v1OperationMap(core), { keys: core.keys, limits, metrics: core.metrics });
    await registerOperations(server, v2Definition, v2OperationMap(core), { keys: core.keys, limits, metrics: core.metrics }, { query: v2QueryValidators, body: v2BodyValidators });
    if (config.portalEnabled) await registerPortal(server, core);

    // Not awaited by start-up, which a slow store must not hold; closing waits for it.
    let audit: Promise<void> = Promise.resolve();
    server.addHook('onReady', async () => {
      audit = core.auditKeys();
    });
    server.addHook('onReady', async () => core.planStatus.start());
    // Open streams end before the server waits for its connections to close.
    server.addHook('preClose', async () => core.planStatus.endWatches());
    if (options.probes !== false) {
      server.addHook('onReady', async () => {
        void core.monitor.start();
      });
    }
    server.addHook('onClose', async () => {
      core.monitor.stop();
      await audit;
      await Promise.all([core.close(), metrics?.close()]);
    });
  } catch (err) {
    await core.close();
    throw err;
  }
  return { server, logger, core, metrics };
}
