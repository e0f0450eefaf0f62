// Builds the real app for a test: default config (overridable), logs captured in memory, and
// either `inject` or a real listener on an ephemeral loopback port. In sandbox mode each app gets
// a sandbox of its own (test/helpers/sandbox.ts), reached at SANDBOX_URL.
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import t from 'tap';
import { loadConfig, parsePoolParties, type Config } from '../../core/config.js';
import type { CoreOverrides } from '../../core/services.js';
import { buildApp, type App } from '../../handlers/app.js';
import { createLogger } from '../../handlers/http/logger.js';
import type { SandboxOptions } from '../../sandbox/sandbox.js';
import { testSandbox, type TestSandbox } from './sandbox.js';
import { tempDir } from './temp.js';

export interface TestApp extends App {
  /** The configuration the app runs with (in sandbox mode, with the sandbox's settings). */
  readonly config: Config;
  /** The app's own sandbox; null with VENUES=live. */
  readonly sandbox: TestSandbox | null;
  readonly logs: () => Array<Record<string, unknown>>;
  readonly rawLogs: () => string;
  /** Resolves once `check` holds of the logs, checked as each line is written: a line written after the answer is waited for by its writing, not a time. */
  readonly untilLogged: (check: (logs: Array<Record<string, unknown>>) => boolean) => Promise<void>;
  readonly close: () => Promise<void>;
}

export interface TestAppOptions {
  readonly env?: Record<string, string>;
  /** Ports replaced; a function is given the app's sandbox (its adapters, say). */
  readonly overrides?: CoreOverrides | ((sandbox: TestSandbox) => CoreOverrides);
  /** Wait for the first round of venue probes (default true). */
  readonly probed?: boolean;
  /** The app's own sandbox started so (its participant without the batching package, say). */
  readonly sandbox?: Pick<Partial<SandboxOptions>, 'batchingUtility'>;
}

/** The fee parties of a collecting service: collection needs at least the service's. */
export const FEE_PARTIES = {
  SERVICE_FEE_PARTY: `bestex-fees::1220${'e'.repeat(64)}`,
  B2C_FEE_PARTY: `bestex-app-fees::1220${'f'.repeat(64)}`,
} as const;

/** The IDEMPOTENCY_SECRET test apps run with (required with REDIS_URL). */
export const TEST_IDEMPOTENCY_SECRET = 'test-idempotency-secret-0123456789abcdef';

/** Environment of a service that collects fees, with its fee parties. */
export const COLLECTING: Record<string, string> = { FEE_COLLECTION_ENABLED: 'true', ...FEE_PARTIES };

/**
 * The default config, but with a private DATA_DIR, a started sandbox's ledger on any free port, and
 * rate limits no test reaches unless it sets them: tests from one loopback IP would otherwise share
 * one keyless window. The DATA_DIR made here is removed when the test file's tests end, not when
 * its app closes: a test may start a second app on the first's (DATA_DIR: app.config.dataDir).
 */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    LOG_LEVEL: 'info',
    DATA_DIR: env.DATA_DIR ?? tempDir(t, 'bestex-test-'),
    RATE_LIMIT_KEYLESS_PER_MINUTE: '1000000',
    RATE_LIMIT_KEYED_PER_MINUTE: '1000000',
    RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '1000000',
    // Required with REDIS_URL; every test instance of a Redis test shares it, as instances must.
    IDEMPOTENCY_SECRET: TEST_IDEMPOTENCY_SECRET,
    ...env,
  });
}

export async function testApp(options: TestAppOptions = {}): Promise<TestApp> {
  let captured = '';
  const waiting = new Set<() => void>();
  const sink = new Writable({
    write(chunk: Buffer, _enc, callback) {
      captured += chunk.toString('utf8');
      for (const check of waiting) check();
      callback();
    },
  });
  const logs = () =>
    captured
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const env = options.env ?? {};
  let overrides: CoreOverrides | undefined = typeof options.overrides === 'function' ? undefined : options.overrides;
  let sandbox: TestSandbox | null = null;
  if ((env.VENUES ?? 'sandbox') === 'sandbox' && env.SANDBOX_URL === undefined) {
    // The service's and the sandbox ledger's clocks move together, as on one machine.
    sandbox = await testSandbox({
      now: () => (overrides?.now ?? (() => new Date()))(),
      ledgerToken: env.LEDGER_TOKEN,
      poolParties: env.TRADECRAFT_POOL_PARTIES ? parsePoolParties(env.TRADECRAFT_POOL_PARTIES) : undefined,
      ...options.sandbox,
    });
  }
  if (typeof options.overrides === 'function') {
    if (!sandbox) throw new Error('overrides given the sandbox need an app in sandbox mode');
    overrides = options.overrides(sandbox);
  }
  let app: App;
  try {
    const given = testConfig(sandbox ? { SANDBOX_URL: sandbox.manifest.sandbox, LEDGER_TOKEN: sandbox.ledgerToken, ...env } : env);
    app = await buildApp({ config: given, logger: createLogger(given.logLevel, sink), overrides, probes: false });
  } catch (err) {
    await sandbox?.close();
    throw err;
  }
  await app.server.ready();
  if (options.probed !== false) await app.core.monitor.start();
  return {
    ...app,
    config: app.core.config,
    sandbox,
    rawLogs: () => captured,
    logs,
    untilLogged: (check) =>
      new Promise<void>((resolve) => {
        const settle = () => {
          if (!check(logs())) return;
          waiting.delete(settle);
          resolve();
        };
        waiting.add(settle);
        settle();
      }),
    close: async () => {
      await app.server.close();
      await sandbox?.close();
    },
  };
}

/** Listens on an ephemeral loopback port and returns the base URL. */
export async function listen(server: FastifyInstance): Promise<string> {
  return server.listen({ host: '127.0.0.1', port: 0 });
}
