// Wires the core from configuration: the embedded defaults (in-process shared state, keys in a file
// under DATA_DIR), or Redis for the shared state and keys when REDIS_URL is set; any port can be
// replaced by an override (tests).
import type { Config } from './config.js';
import { loadFeeSchemas } from './fee-schemas.js';
import { openKeyStore } from './key-store.js';
import { PartnerKeys, type KeyRecord, type KeyStore, type KeyVerifier } from './keys.js';
import { LivenessMonitor } from './liveness.js';
import type { HealthOptions } from './health.js';
import { PartnerQuotes } from './partner-quote.js';
import { QuoteService } from './quote-service.js';
import { ComponentHealth, type HealthLog } from './component-health.js';
import { RateWindows } from './rate-windows.js';
import { GuardedSharedState } from './shared-state-guard.js';
import { IdempotencyRecords } from './idempotency.js';
import { PlanService } from './plans.js';
import { createSandboxVenues } from './sandbox/market.js';
import { createLiveVenues } from './venues/live-venues.js';
import { startSandboxVenueServer } from './sandbox/venue-server.js';
import { InProcessSharedState, type SharedState } from './shared-state.js';
import { RedisSharedState } from './shared-state-redis.js';
import type { Venue } from './venue.js';

/**
 * How long a shared-state command may take before it counts as unanswered: Redis answers a
 * healthy command in well under a millisecond, and a request waits this long at most once per
 * second while it is stalled (core/shared-state-guard.ts).
 */
const SHARED_STATE_TIMEOUT_MS = 300;

/** The v1 execution venue. */
export const SUPPORTED_VENUE_ID = 'tradecraft';

/** Core's view of a logger: pino-compatible, and nothing else of it. */
export interface CoreLog extends HealthLog {
  error(fields: Record<string, unknown>, message: string): void;
}

export interface CoreOverrides {
  readonly venues?: readonly Venue[];
  readonly sharedState?: SharedState;
  readonly keyStore?: KeyStore;
  readonly keys?: KeyVerifier;
  readonly now?: () => Date;
}

export interface CoreServices {
  readonly quotes: QuoteService;
  readonly partnerQuotes: PartnerQuotes;
  readonly plans: PlanService;
  readonly monitor: LivenessMonitor;
  readonly health: HealthOptions;
  readonly keys: KeyVerifier;
  /** Where partner keys are kept (the CLI writes the same store). */
  readonly keyStore: KeyStore;
  readonly rateWindows: RateWindows;
  /**
   * Warns of every active key whose fee schema is not configured (the CLI checks its own
   * configuration, which may differ from the service's): such a key's requests answer 500.
   */
  auditKeys(): Promise<void>;
  /** Releases what the services hold open (the Redis connection). */
  close(): Promise<void>;
}

/**
 * The venues quotes go to: the real venues' adapters (`VENUES=live`), or, for the embedded
 * sandbox, the same adapters pointed at the sandbox venues' server on loopback.
 */
async function openVenues(config: Config, log: CoreLog): Promise<{ venues: readonly Venue[]; close: () => Promise<void> }> {
  if (config.venuesMode === 'live') return { venues: createLiveVenues(config.liveVenues), close: async () => {} };
  const server = await startSandboxVenueServer(createSandboxVenues(), { host: '127.0.0.1', port: config.sandboxVenuesPort, timeoutMs: config.venueTimeoutMs });
  log.info({ url: server.url }, 'sandbox venues listening');
  return server;
}

export async function createServices(config: Config, log: CoreLog, overrides: CoreOverrides = {}): Promise<CoreServices> {
  const schemas = loadFeeSchemas(config);
  const opened = overrides.venues ? { venues: overrides.venues, close: async () => {} } : await openVenues(config, log);
  const { venues } = opened;
  // From here on a failure must close the venues just opened (the sandbox's listening port).
  try {
    const sharedHealth = new ComponentHealth('shared-state', log, {
      down: 'shared state unreachable: rate limits are counted per instance until it is back; keyed requests get 503',
      up: 'shared state reachable again: rate limits are counted across instances',
    });
    const keyStoreHealth = new ComponentHealth('key-store', log, {
      down: 'key store unreadable: keyed requests get 503 key_verification_unavailable',
      up: 'key store readable again',
    });
    const store: SharedState =
      overrides.sharedState ??
      (config.redisUrl === null
        ? new InProcessSharedState()
        : new RedisSharedState(config.redisUrl, {
            commandTimeoutMs: SHARED_STATE_TIMEOUT_MS,
            onConnectionChange: (up, err) => (up ? sharedHealth.up() : sharedHealth.down(err)),
          }));
    // This process's memory always answers; only a store shared over the network needs watching.
    const sharedState = store.shared ? new GuardedSharedState(store, sharedHealth) : store;
    const keyStore = overrides.keyStore ?? openKeyStore(config, sharedState);
    const monitor = new LivenessMonitor(venues, {
      intervalMs: config.livenessProbeIntervalMs,
      probeTimeoutMs: config.venueTimeoutMs,
      onProbeError: (venueId, err) => log.warn({ venueId, err }, 'venue probe failed'),
    });
    const quotes = new QuoteService({
      venues,
      venueTimeoutMs: config.venueTimeoutMs,
      cacheTtlMs: config.quoteCacheTtlMs,
      cacheMaxEntries: config.quoteCacheMaxEntries,
      sharedCache: sharedState.shared ? sharedState : undefined,
      isVenueDown: (venueId) => monitor.isDown(venueId),
      onVenueError: (venueId, err) => log.warn({ venueId, err }, 'venue quote failed'),
      now: overrides.now ?? (() => new Date()),
    });
    const venueIds = venues.map((v) => v.id);
    const plans = new PlanService({
      quotes,
      schemas,
      collecting: config.feeCollectionEnabled,
      supportedVenueId: SUPPORTED_VENUE_ID,
      venueIds,
      poolParties: config.poolParties,
      serviceFeeParty: config.serviceFeeParty,
      b2cFeeParty: config.b2cFeeParty,
      records: new IdempotencyRecords(sharedState),
      log,
      now: overrides.now ?? (() => new Date()),
    });
    const health: HealthOptions = {
      monitor,
      venueIds,
      supportedVenueId: SUPPORTED_VENUE_ID,
      // Plans need their idempotency records: none is made while the shared state is unreachable.
      plansServed: () => !sharedState.shared || sharedHealth.isUp,
      sharedState: () => (!sharedState.shared ? 'in-process' : sharedHealth.isUp ? 'shared' : 'unreachable'),
      keyStore: () => (keyStoreHealth.isUp ? 'ok' : 'unreadable'),
    };
    return {
      quotes,
      partnerQuotes: new PartnerQuotes(quotes, schemas, config.feeCollectionEnabled),
      plans,
      monitor,
      health,
      keys: overrides.keys ?? new PartnerKeys(keyStore, keyStoreHealth),
      keyStore,
      rateWindows: new RateWindows(sharedState),
      auditKeys: async () => {
        let records: KeyRecord[];
        try {
          records = await keyStore.list();
        } catch (err) {
          log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'could not read the key store to check its keys\' fee schemas');
          return;
        }
        for (const record of records) {
          if (record.status === 'active' && !schemas.has(record.schemaId)) {
            log.warn({ keyId: record.id, schemaId: record.schemaId }, 'key names a fee schema that is not configured: its requests answer 500 until FEE_SCHEMAS_FILE defines it');
          }
        }
      },
      close: async () => {
        await Promise.all([sharedState.close(), opened.close()]);
      },
    };
  } catch (err) {
    await opened.close();
    throw err;
  }
}
