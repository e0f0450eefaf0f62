// The entry point: read the config, check that its ports can be listened on, build the app (which
// starts the sandbox in sandbox mode), listen (and serve the metrics on their own port, when
// METRICS_PORT is set), and shut down gracefully on SIGINT/SIGTERM.
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config } from '../core/config.js';
import { SandboxUnavailable } from '../core/sandbox-link/process.js';
import { buildApp, repoRoot } from './app.js';
import type { MetricsListener } from './http/metrics-listener.js';

/** The commit `make build` stamped into dist/build-info.json, or "dev". */
function buildStamp(): string {
  try {
    const info = JSON.parse(readFileSync(path.join(repoRoot(), 'dist', 'build-info.json'), 'utf8')) as { build?: unknown };
    return typeof info.build === 'string' && info.build !== '' ? info.build : 'dev';
  } catch {
    return 'dev';
  }
}

/**
 * Stops start-up on bad configuration (the environment, or a file it names), or on a sandbox that
 * cannot be started or reached, with its message.
 */
function configFailure(err: unknown): never {
  if (err instanceof ConfigError) console.error(`bestex: ${err.message}\nSee the configuration table in docs/operations.md.`);
  else if (err instanceof SandboxUnavailable) console.error(`bestex: ${err.message}`);
  else throw err;
  process.exit(1);
}

/** Why an address cannot be listened on, and which variable to set, in words (never a stack). */
function listenProblem(err: unknown, hostVar: string, portVar: string): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return `the port is already in use (EADDRINUSE); stop what listens there or set ${portVar}`;
    case 'EADDRNOTAVAIL':
      return `${hostVar} is not an address of this machine (EADDRNOTAVAIL); set ${hostVar}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${hostVar} does not resolve to an address (${code}); set ${hostVar}`;
    case 'EACCES':
      return `not permitted (EACCES): a port below 1024 needs privileges; set ${portVar}`;
    default:
      return `${err instanceof Error ? err.message : String(err)}; check ${hostVar} and ${portVar}`;
  }
}

/** One line on stderr, then the started sandbox, if any, is stopped (it would stop anyway once its stdin closes). */
async function cannotListen(line: string): Promise<never> {
  console.error(`bestex: ${line}`);
  await server?.close().catch(() => undefined);
  process.exit(1);
}

/**
 * Listens on host:port for a moment and lets go: an address taken (another instance's, say) or not
 * this machine's is known before anything is started, so a second `make run` starts no sandbox and
 * leaves the running instance's sandbox and its DATA_DIR/sandbox.json alone.
 */
function canListen(host: string, port: number): Promise<void> {
  const probe = createServer();
  return new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

let config: Config;
let server: FastifyInstance | undefined;
let metrics: MetricsListener | null;
let app: Awaited<ReturnType<typeof buildApp>>;
try {
  config = loadConfig(process.env, { serviceBuild: buildStamp() });
} catch (err) {
  configFailure(err);
}
if (config.metricsPort !== null) {
  await canListen(config.metricsHost, config.metricsPort).catch((err: unknown) =>
    cannotListen(`cannot listen for metrics on ${config.metricsHost}:${config.metricsPort}: ${listenProblem(err, 'METRICS_HOST', 'METRICS_PORT')}`),
  );
}
await canListen(config.host, config.port).catch((err: unknown) => cannotListen(`cannot listen on ${config.host}:${config.port}: ${listenProblem(err, 'HOST', 'PORT')}`));
try {
  app = await buildApp({ config });
  ({ server, metrics } = app);
} catch (err) {
  configFailure(err);
}
// Before the public port: a service that cannot serve its metrics does not start taking traffic.
if (metrics && config.metricsPort !== null) {
  try {
    app.logger.info({ url: await metrics.listen(config.metricsHost, config.metricsPort) }, 'metrics listening');
  } catch (err) {
    await cannotListen(`cannot listen for metrics on ${config.metricsHost}:${config.metricsPort}: ${listenProblem(err, 'METRICS_HOST', 'METRICS_PORT')}`);
  }
}
let url = '';
try {
  url = await server.listen({ host: config.host, port: config.port });
} catch (err) {
  await cannotListen(`cannot listen on ${config.host}:${config.port}: ${listenProblem(err, 'HOST', 'PORT')}`);
}
app.logger.info(`Server listening at ${url}`);
// For the person who ran it, plainly: the JSON log line says the same for machines.
console.error(`bestex: listening on ${url} (${url}/docs, ${url}/demo${config.portalEnabled ? `, ${url}/portal` : ''})${config.venuesMode === 'sandbox' ? `; sandbox at ${app.core.config.sandboxUrl}` : ''}`);

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    app.logger.info({ signal }, 'shutting down');
    // Closing stops new connections and closes the idle ones, but a keep-alive connection whose
    // request was in flight stays open once answered, and would hold the exit until the grace
    // ends: each connection is closed as soon as its last answer is sent. Subscribed only now,
    // so serving costs nothing before.
    subscribe('http.server.response.finish', () => setImmediate(() => server.server.closeIdleConnections()));
    setTimeout(() => {
      app.logger.error('graceful shutdown timed out');
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  });
}
