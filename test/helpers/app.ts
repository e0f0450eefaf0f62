// Builds the real app for a test: default config (overridable), logs captured in memory, and
// either `inject` or a real listener on an ephemeral loopback port.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../core/config.js';
import type { CoreOverrides } from '../../core/services.js';
import { buildApp, type App } from '../../handlers/app.js';
import { createLogger } from '../../handlers/logger.js';

export interface TestApp extends App {
  readonly config: Config;
  readonly logs: () => Array<Record<string, unknown>>;
  readonly rawLogs: () => string;
  readonly close: () => Promise<void>;
}

export interface TestAppOptions {
  readonly env?: Record<string, string>;
  readonly overrides?: CoreOverrides;
  /** Wait for the first round of venue probes (default true). */
  readonly probed?: boolean;
}

/** The fee parties of a collecting service: collection needs at least the service's. */
export const FEE_PARTIES = {
  SERVICE_FEE_PARTY: `bestex-fees::1220${'e'.repeat(64)}`,
  B2C_FEE_PARTY: `bestex-app-fees::1220${'f'.repeat(64)}`,
} as const;

/** Environment of a service that collects fees, with its fee parties. */
export const COLLECTING: Record<string, string> = { FEE_COLLECTION_ENABLED: 'true', ...FEE_PARTIES };

/**
 * The default config, but with a private DATA_DIR, the sandbox ledger on any free port, and rate limits no test reaches unless it sets
 * them: tests from one loopback IP would otherwise share one keyless window.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'info',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'bestex-test-')),
    RATE_LIMIT_KEYLESS_PER_MINUTE: '1000000',
    RATE_LIMIT_KEYED_PER_MINUTE: '1000000',
    RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '1000000',
    // Tests run side by side: each sandbox ledger listens on a port of its own.
    LEDGER_URL: 'http://127.0.0.1:0',
    ...env,
  });
}

export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  let captured = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, callback) {
      captured += chunk.toString('utf8');
      callback();
    },
  });
  const config = testConfig(options.env);
  const app = await buildApp({ config, logger: createLogger(config.logLevel, sink), overrides: options.overrides, probes: false });
  await app.server.ready();
  if (options.probed !== false) await app.core.monitor.start();
  return {
    ...app,
    config,
    rawLogs: () => captured,
    logs: () =>
      captured
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    close: () => app.server.close(),
  };
}

/** Listens on an ephemeral loopback port and returns the base URL. */
export async function listen(server: FastifyInstance): Promise<string> {
  return server.listen({ host: '127.0.0.1', port: 0 });
}
