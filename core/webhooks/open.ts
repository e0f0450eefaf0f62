// Partner webhooks wired from the configuration: the Redis store (BullMQ) with REDIS_URL, else the
// embedded SQLite store in DATA_DIR; secrets sealed under IDEMPOTENCY_SECRET, or, without it (one
// embedded instance), under a random key the embedded store keeps in DATA_DIR/webhooks.key (0600)
// so its endpoints' secrets outlive a restart.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import type { CoreLog } from '../log.js';
import type { Resolver } from './address-guard.js';
import { WebhookDispatcher } from './dispatcher.js';
import { EmbeddedWebhookStore } from './embedded-store.js';
import { WebhookEndpoints } from './endpoints.js';
import { SecretBox } from './secrets.js';
import { WebhookSender } from './sender.js';
import type { WebhookStore } from './store.js';

export interface WebhookOptions {
  readonly now?: () => Date;
  /** How endpoint host names are resolved (tests); the system's resolver by default. */
  readonly resolve?: Resolver;
  /** The Redis keys' prefix (tests give each its own); `bestex` by default. */
  readonly prefix?: string;
}

export const SEAL_KEY_FILE = 'webhooks.key';

/** How often a delivery waiting for an earlier one of its plan checks again, should the earlier one's end not move it up. */
const ORDER_CHECK_MS = 60_000;

export async function openWebhooks(config: Config, log: CoreLog, options: WebhookOptions = {}): Promise<WebhookDispatcher> {
  const { webhooks } = config;
  const now = options.now ?? (() => new Date());
  let store: WebhookStore;
  if (config.redisUrl !== null) {
    // Loaded only with Redis: BullMQ takes a tenth of a second to load.
    const { RedisWebhookStore } = await import('./redis-store.js');
    store = new RedisWebhookStore({ url: config.redisUrl, prefix: options.prefix ?? 'bestex', concurrency: webhooks.concurrency, firstRetryMs: webhooks.firstRetryMs, orderCheckMs: Math.min(webhooks.maxAttemptIntervalMs, ORDER_CHECK_MS), log });
  } else {
    store = new EmbeddedWebhookStore({ dataDir: config.dataDir, concurrency: webhooks.concurrency, firstRetryMs: webhooks.firstRetryMs, log, now: () => now().getTime() });
  }
  const { idempotencySecret } = config;
  const box = new SecretBox(() => idempotencySecret ?? embeddedSealKey(config.dataDir));
  const endpoints = new WebhookEndpoints({ store, box, allowPrivate: webhooks.allowPrivate, now, log });
  const sender = new WebhookSender({ allowPrivate: webhooks.allowPrivate, timeoutMs: webhooks.timeoutMs, resolve: options.resolve });
  const dispatcher = new WebhookDispatcher({ store, endpoints, sender, policy: webhooks, now, log });
  store.start(dispatcher);
  return dispatcher;
}

/** The embedded store's own sealing key: read, or made once (only its owner may read it). */
function embeddedSealKey(dataDir: string): string {
  const file = path.join(dataDir, SEAL_KEY_FILE);
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  // `wx`: if another process made it meanwhile, its key is the one.
  try {
    writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return readFileSync(file, 'utf8').trim();
  }
}
