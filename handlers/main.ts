// The entry point: read the config, listen (and serve the metrics on their own port, when
// METRICS_PORT is set), and shut down gracefully on SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
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
  if (err instanceof ConfigError) console.error(`bestex: ${err.message}\nSee the configuration table in README.md.`);
  else if (err instanceof SandboxUnavailable) console.error(`bestex: ${err.message}`);
  else throw err;
  process.exit(1);
}

/** Why HOST:PORT cannot be listened on, and what to set, in words (never a stack). */
function listenProblem(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return 'the port is already in use (EADDRINUSE); stop what listens there or set PORT';
    case 'EADDRNOTAVAIL':
      return 'HOST is not an address of this machine (EADDRNOTAVAIL); set HOST';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST does not resolve to an address (${code}); set HOST`;
    case 'EACCES':
      return 'not permitted (EACCES): a port below 1024 needs privileges; set PORT';
    default:
      return `${err instanceof Error ? err.message : String(err)}; check HOST and PORT`;
  }
}

let config: Config;
let server: FastifyInstance;
let metrics: MetricsListener | null;
try {
  config = loadConfig(process.env, { serviceBuild: buildStamp() });
  ({ server, metrics } = await buildApp({ config }));
} catch (err) {
  configFailure(err);
}
// Before the public port: a service that cannot serve its metrics does not start taking traffic.
if (metrics && config.metricsPort !== null) {
  try {
    server.log.info({ url: await metrics.listen(config.metricsHost, config.metricsPort) }, 'metrics listening');
  } catch (err) {
    server.log.fatal({ err }, `cannot listen for metrics on ${config.metricsHost}:${config.metricsPort} (METRICS_HOST, METRICS_PORT)`);
    process.exit(1);
  }
}
try {
  await server.listen({ host: config.host, port: config.port });
} catch (err) {
  console.error(`bestex: cannot listen on ${config.host}:${config.port}: ${listenProblem(err)}`);
  // Stops a started sandbox before exiting; it would stop anyway once its stdin closes.
  await server.close().catch(() => undefined);
  process.exit(1);
}

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      server.log.error('graceful shutdown timed out');
      process.exit(1);
    }, config.shutdownGraceMs).unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server.log.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  });
}
