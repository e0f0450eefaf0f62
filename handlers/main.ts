// The entry point: read the config, listen, and shut down gracefully on SIGINT/SIGTERM.
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig, type Config } from '../core/config.js';
import { SandboxUnavailable } from '../core/sandbox-link/process.js';
import { buildApp, repoRoot } from './app.js';

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

let config: Config;
let server: FastifyInstance;
try {
  config = loadConfig(process.env, { serviceBuild: buildStamp() });
  ({ server } = await buildApp({ config }));
} catch (err) {
  configFailure(err);
}
try {
  await server.listen({ host: config.host, port: config.port });
} catch (err) {
  server.log.fatal({ err }, `cannot listen on ${config.host}:${config.port}`);
  process.exit(1);
}

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down');
    // Closing stops new connections and closes the idle ones, but a keep-alive connection whose
    // request was in flight stays open once answered, and would hold the exit until the grace
    // ends: each connection is closed as soon as its last answer is sent. Subscribed only now,
    // so serving costs nothing before.
    subscribe('http.server.response.finish', () => setImmediate(() => server.server.closeIdleConnections()));
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
