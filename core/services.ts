// Wires the core from configuration: the embedded defaults (in-process shared state, keys in a file
// under DATA_DIR), or Redis for the shared state and keys when REDIS_URL is set; any port can be
// replaced by an override (tests).
import { randomBytes } from 'node:crypto';
import type { Config } from './config.js';
import { loadFeeSchemas } from './quotes/fee-schemas.js';
import { openKeyStore } from './keys/open-store.js';
import { PartnerKeys, type KeyRecord, type KeyStore, type KeyVerifier } from './keys/partner-keys.js';
import { LivenessMonitor } from './health/liveness.js';
import type { HealthOptions } from './health/status.js';
import { PartnerQuotes } from './quotes/partner-quotes.js';
import { QuoteService } from './quotes/service.js';
import { ComponentHealth } from './health/component-health.js';
import type { CoreLog } from './log.js';
import { NO_METRICS, type Metrics } from './metrics.js';
import { RateWindows } from './state/rate-windows.js';
import { StateMarker } from './state/state-marker.js';
import { GuardedSharedState } from './state/guard.js';
import { StateCapacity } from './state/capacity.js';
import { IDEMPOTENCY_RETENTION_MS, IdempotencyRecords } from './plans/idempotency.js';
import { PlanQuota } from './plans/plan-quota.js';
import { PlanService } from './plans/service.js';
import { createLiveVenues } from './venues/live-venues.js';
import { linkSandbox } from './sandbox-link/process.js';
import { InProcessSharedState } from './state/in-process.js';
import type { SharedState } from './state/shared-state.js';
import { JsonApiLedger } from './ledger/json-api-ledger.js';
import type { Ledger } from './ledger/ledger.js';
import { OutcomeService, poolTokens } from './outcomes/outcomes.js';
import { RedisSharedState } from './state/redis.js';
import { KeyPortal } from './portal/portal.js';
import { isExecutableVenue, isIntentVenue, type Venue } from './venues/venue.js';
import { IntentPlans } from './plans/intent-plans.js';
import { IntentFollower } from './plans/intent-follower.js';
import { UsageCounter } from './usage/usage-counter.js';
import { V1_EXECUTION_VENUE_ID } from './execution/venues.js';
import { InstrumentRegistries, tokenList } from './execution/tokens.js';
import { V2Quotes } from './execution/quote.js';
import type { LimitsOf } from './execution/split.js';
import type { TokenList } from './contract/v2.js';
import { PlanSecrets } from './plan-status/status.js';
import { PlanFollower } from './plan-status/follower.js';
import { PlanStatusService } from './plan-status/service.js';
import { RedisPlanStore } from './plan-status/redis-store.js';
import { SqlitePlanStore } from './plan-status/sqlite-store.js';
import { TradeLedger } from './trades/ledger.js';
import type { PlanStatusStore } from './plan-status/store.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';
import { openWebhooks } from './webhooks/open.js';

/**
 * How long a shared-state command may take before it counts as unanswered: Redis answers a
 * healthy command in well under a millisecond, and a request waits this long at most once per
 * second while it is stalled (core/state/guard.ts).
 */
const SHARED_STATE_TIMEOUT_MS = 300;

const UNCONFIGURED_SCHEMA_MESSAGE =
  'key names a fee schema that is not configured: its quotes answer 503 key_verification_unavailable and its plans 500 internal until FEE_SCHEMAS_FILE defines it';

/** The venue v1 plans (core/execution/venues.ts, where every venue's execution is said). */
export const SUPPORTED_VENUE_ID = V1_EXECUTION_VENUE_ID;

export interface CoreOverrides {
  readonly venues?: readonly Venue[];
  readonly sharedState?: SharedState;
  readonly keyStore?: KeyStore;
  readonly keys?: KeyVerifier;
  /** The ledger outcomes are read from, instead of the configured one (LEDGER_URL's, or the sandbox's). */
  readonly ledger?: Ledger;
  /** Where plans' status is kept, instead of DATA_DIR's SQLite file or Redis. */
  readonly planStatusStore?: PlanStatusStore;
  readonly now?: () => Date;
  /** Where the core's events are counted (the edge's Prometheus adapter); by default nowhere. */
  readonly metrics?: Metrics;
}

export interface CoreServices {
  readonly quotes: QuoteService;
  readonly partnerQuotes: PartnerQuotes;
  readonly plans: PlanService;
  /** Intent plans (OneSwap) between their two calls, completed with the wallet's signature; the intents this instance follows. */
  readonly intentPlans: IntentPlans;
  readonly intentFollower: IntentFollower;
  readonly outcomes: OutcomeService;
  /** v2 plans' status: kept as each plan is made, followed on the ledger, read by the plan's key or capability. */
  readonly planStatus: PlanStatusService;
  readonly trades: TradeLedger;
  /** The v2 quote: the same quotes, with each venue's execution block. */
  readonly v2Quotes: V2Quotes;
  /** Each instrument's admin party and token registry, as configured (the sandbox's from its manifest). */
  readonly registries: InstrumentRegistries;
  /** The token list (GET /api/v2/tokens): every token, its registry and each venue's limits where known. */
  tokenList(): TokenList;
  /**
   * The configuration the services run with: the one given, with the sandbox's venues, ledger,
   * parties and credentials in sandbox mode.
   */
  readonly config: Config;
  readonly monitor: LivenessMonitor;
  readonly health: HealthOptions;
  readonly keys: KeyVerifier;
  /** Where partner keys are kept (the CLI writes the same store). */
  readonly keyStore: KeyStore;
  readonly rateWindows: RateWindows;
  /** The key portal's operations (served when config.portalEnabled). */
  readonly portal: KeyPortal;
  readonly metrics: Metrics;
  /** The in-process state's bounds, and its refusals at them (StateCapacity.refused counts each). */
  readonly stateCapacity: StateCapacity;
  /** Partner keys' usage: counted per request, summed over every instance in the shared state, flushed on close. */
  readonly usage: UsageCounter;
  /** Partner webhooks: the endpoints keys register (the portal's), and `sink`, the plan event sink that queues their deliveries. */
  readonly webhooks: WebhookDispatcher;
  /**
   * Warns of every active key whose fee schema is not configured (the CLI checks its own
   * configuration, which may differ from the service's), one line per key id: such a key's
   * quotes answer 503 and its plans 500.
   */
  auditKeys(): Promise<void>;
  /** Releases what the services hold open (the Redis connection). */
  close(): Promise<void>;
}

interface Opened {
  readonly config: Config;
  readonly venues: readonly Venue[];
  readonly ledger: Ledger;
  /** The started sandbox's state; null when the service runs none. */
  sandbox(): 'up' | 'restarting' | null;
  close(): Promise<void>;
}

/**
 * The venues quotes go to and the ledger outcomes are read from: the real venues' adapters and a
 * participant's JSON Ledger API, at the configured URLs (`VENUES=live`) or at the sandbox's
 * (`VENUES=sandbox`: the sandbox program, found at SANDBOX_URL or started as a child process),
 * so the embedded default runs the code a deployment runs.
 */
async function openEdges(given: Config, log: CoreLog, overrides: CoreOverrides): Promise<Opened> {
  const link = given.venuesMode === 'sandbox' ? await linkSandbox(given, log) : null;
  const config = link?.config ?? given;
  const ledger = new JsonApiLedger({ baseUrl: config.ledgerUrl, token: config.ledgerToken, readAs: config.ledgerReadAs, timeoutMs: config.ledgerTimeoutMs, pageSize: config.ledgerPageSize });
  return {
    config,
    venues: overrides.venues ?? createLiveVenues({ ...config.liveVenues, tradecraftPoolParties: config.poolParties }),
    ledger: overrides.ledger ?? ledger,
    sandbox: () => link?.state() ?? null,
    close: async () => link?.close(),
  };
}

export async function createServices(given: Config, log: CoreLog, overrides: CoreOverrides = {}): Promise<CoreServices> {
  const schemas = loadFeeSchemas(given);
  const now = overrides.now ?? (() => new Date());
  const metrics = overrides.metrics ?? NO_METRICS;
  const opened = await openEdges(given, log, overrides);
  const { venues, config } = opened;
  // From here on a failure must close what was just opened (a started sandbox).
  try {
    const sharedHealth = new ComponentHealth('shared-state', log, {
      down: 'shared state unreachable: rate limits are counted per instance until it is back; keyed requests get 503',
      up: 'shared state reachable again: rate limits are counted across instances',
    });
    const keyStoreHealth = new ComponentHealth('key-store', log, {
      down: 'key store unreadable: keyed requests get 503 key_verification_unavailable',
      up: 'key store readable again',
    });
    // Whatever holds state in this process's memory holds at most the configured bounds.
    const stateCapacity = new StateCapacity({ maxPlanRecords: config.stateMaxPlanRecords, maxRateWindows: config.stateMaxRateWindows }, log);
    const inProcess = new InProcessSharedState(Date.now, stateCapacity);
    const store: SharedState =
      overrides.sharedState ??
      (config.redisUrl === null
        ? inProcess
        : new RedisSharedState(config.redisUrl, {
            commandTimeoutMs: SHARED_STATE_TIMEOUT_MS,
            onConnectionChange: (up, err) => (up ? sharedHealth.up() : sharedHealth.down(err)),
          }));
    // This process's memory always answers; only a store shared over the network needs watching.
    const sharedState = store.shared ? new GuardedSharedState(store, sharedHealth) : store;
    // Only a store outside this process can lose its data while the process runs.
    const marker = sharedState.shared ? new StateMarker(sharedState, log) : null;
    await marker?.start(config.livenessProbeIntervalMs);
    const keyStore = overrides.keyStore ?? openKeyStore(config, sharedState);
    const monitor = new LivenessMonitor(venues, {
      intervalMs: config.livenessProbeIntervalMs,
      probeTimeoutMs: config.venueTimeoutMs,
      onProbeError: (venueId, err) => log.warn({ venueId, err }, 'venue probe failed'),
    });
    const rateWindows = new RateWindows(sharedState, inProcess, Date.now, () => marker === null || marker.confirmedRecently());
    const quotes = new QuoteService({
      venues,
      venueTimeoutMs: config.venueTimeoutMs,
      cacheTtlMs: config.quoteCacheTtlMs,
      cacheMaxEntries: config.quoteCacheMaxEntries,
      sharedCache: sharedState.shared ? sharedState : undefined,
      windows: rateWindows,
      isVenueDown: (venueId) => monitor.isDown(venueId),
      onVenueError: (venueId, err) => log.warn({ venueId, err }, 'venue quote failed'),
      now,
      metrics,
    });
    const venueIds = venues.map((v) => v.id);
    // The sandbox's registries from its manifest; a real network's from TOKEN_REGISTRIES.
    const registries = new InstrumentRegistries({
      instrumentAdmins: config.liveVenues.cantexInstrumentAdmins,
      registries: config.venuesMode === 'sandbox' ? config.sandboxRegistries : config.tokenRegistries,
    });
    // Keys already named in a warning: each is named once, at start or at its first request.
    const unconfiguredKeys = new Set<string>();
    // Without REDIS_URL no other instance reads the records: a secret of this process's own will do.
    const secret = config.idempotencySecret ?? randomBytes(32);
    const records = new IdempotencyRecords(sharedState, secret);
    // The intents this instance made, each with its wallet token in this memory alone.
    const intentFollower = new IntentFollower({
      intervalMs: config.intentPollIntervalMs,
      max: config.intentFollowMax,
      timeoutMs: config.venueTimeoutMs,
      now,
      record: (key, status) => intentPlans.recordFollowed(key, status),
      log,
    });
    // Every intent venue is reached over HTTP through its adapter, the sandbox's as a real one's.
    const intentVenues = Object.fromEntries(venues.filter(isIntentVenue).map((venue) => [venue.id, venue]));
    const intentPlans: IntentPlans = new IntentPlans({
      state: sharedState,
      secret,
      records,
      venues: intentVenues,
      assemble: (opened, intent) => plans.completedIntentPlan(opened, intent),
      follower: intentFollower,
      now,
      log,
      venueTimeoutMs: config.venueTimeoutMs,
    });
    // Plans' status: one follower of the ledger per instance; with a shared store, only the lease holder's reads.
    const statusStore: PlanStatusStore =
      overrides.planStatusStore ??
      (config.redisUrl === null
        ? new SqlitePlanStore(config.dataDir, config.planStatusRetentionMs, Date.now, config.tradeLedgerRetentionMs)
        : new RedisPlanStore(config.redisUrl, config.planStatusRetentionMs, config.tradeLedgerRetentionMs));
    // Partners' plans, recorded at each state in the same store.
    const trades = new TradeLedger(statusStore.trades, now, log);
    const planSecrets = new PlanSecrets(secret);
    // Partner webhooks hear each new event of a keyed plan before it is published.
    const webhooks = await openWebhooks(config, log, { now });
    const follower = new PlanFollower({
      store: statusStore,
      ledger: opened.ledger,
      pools: poolTokens(config.poolParties),
      secrets: planSecrets,
      intents: intentPlans,
      sink: webhooks.sink,
      recorder: trades,
      metrics,
      now,
      log,
      pollMs: config.planStatusPollMs,
      holder: `${process.pid}:${randomBytes(8).toString('hex')}`,
      pageSize: config.ledgerPageSize,
    });
    const planStatus = new PlanStatusService(statusStore, planSecrets, follower, now, webhooks.sink, trades);
    const limitsOf: LimitsOf = (venueId, give) => venues.find((venue) => venue.id === venueId)?.limits?.(give) ?? null;
    const plans = new PlanService({
      quotes,
      limitsOf,
      schemas,
      collecting: config.feeCollectionEnabled,
      supportedVenueId: SUPPORTED_VENUE_ID,
      venueIds,
      registries,
      executableVenues: Object.fromEntries(venues.filter(isExecutableVenue).map((venue) => [venue.id, venue])),
      intentVenues,
      intentPlans,
      tracking: planStatus,
      venueTimeoutMs: config.venueTimeoutMs,
      poolParties: config.poolParties,
      serviceFeeParty: config.serviceFeeParty,
      b2cFeeParty: config.b2cFeeParty,
      records,
      // Windows as long as a record is kept, apart from the minute-long ones (one lifetime per
      // in-process map), and no more of them than the records they stand for.
      quota: new PlanQuota(
        new RateWindows(sharedState.shared ? sharedState : new InProcessSharedState(Date.now, new StateCapacity({ maxPlanRecords: 1, maxRateWindows: config.stateMaxPlanRecords }))),
        { perIp: config.planRecordsPerIp, perKey: config.planRecordsPerKey, windowMs: IDEMPOTENCY_RETENTION_MS },
        metrics,
      ),
      log,
      now,
      metrics,
    });
    // A deposit offer is found only through a party that sees it: normally the pool party itself.
    const unread = Object.values(config.poolParties).filter((pool) => !config.ledgerReadAs.includes(pool));
    if (unread.length > 0) {
      log.warn({ pools: unread }, 'LEDGER_READ_AS leaves out pool parties: deposits to them are found only if a LEDGER_READ_AS party observes them, else their outcomes read not_found');
    }
    const ledgerHealth = new ComponentHealth('ledger', log, {
      down: 'ledger unreadable: outcomes answer 500 ledger_unavailable',
      up: 'ledger readable again',
    });
    const outcomes = new OutcomeService({ ledger: opened.ledger, pools: poolTokens(config.poolParties), budgetMs: config.outcomeTimeoutMs, pageSize: config.ledgerPageSize, health: ledgerHealth, now, metrics, intents: intentPlans });
    const health: HealthOptions = {
      monitor,
      venueIds,
      supportedVenueId: SUPPORTED_VENUE_ID,
      // Plans need their idempotency records: none is made while the shared state is unreachable,
      // nor while this instance's memory holds as many as it may.
      plans: () => (sharedState.shared && !sharedHealth.isUp ? 'not_served' : stateCapacity.isFull('plan-records') ? 'at_capacity' : 'served'),
      sharedState: () => (!sharedState.shared ? 'in-process' : marker?.lost ? 'lost' : sharedHealth.isUp ? 'shared' : 'unreachable'),
      keyStore: () => (keyStoreHealth.isUp ? 'ok' : 'unreadable'),
      ledger: () => (ledgerHealth.isUp ? 'ok' : 'unreadable'),
      sandbox: opened.sandbox,
    };
    // Date.now unless a clock is given: a Date per counted request would be an allocation on its path.
    const given = overrides.now;
    const usage = new UsageCounter({ state: sharedState, log, flushMs: config.usageFlushMs, now: given ? () => given().getTime() : Date.now });
    const portal = new KeyPortal({
      store: keyStore,
      schemas,
      windows: rateWindows,
      // Hour- and day-long windows, counted apart from the minute-long ones in this process's
      // memory: the bounded windows map drops expired entries from its front, which only works
      // while they all share one lifetime. In Redis they are keys like any other.
      creationWindows: new RateWindows(sharedState.shared ? sharedState : new InProcessSharedState()),
      usage,
      keyedPerMinute: config.rateLimitKeyedPerMinute,
      creation: { perIpPerHour: config.portalKeysPerIpPerHour, perIpPerDay: config.portalKeysPerIpPerDay, perDay: config.portalKeysPerDay },
      log,
      now,
    });
    const partnerQuotes = new PartnerQuotes(quotes, schemas, config.feeCollectionEnabled, (partner) => {
      if (unconfiguredKeys.has(partner.id)) return;
      unconfiguredKeys.add(partner.id);
      log.warn({ keyId: partner.id, schemaId: partner.schemaId }, UNCONFIGURED_SCHEMA_MESSAGE);
    });
    return {
      quotes,
      partnerQuotes,
      v2Quotes: new V2Quotes(quotes, partnerQuotes, config.quoteCacheMaxEntries, limitsOf),
      plans,
      intentPlans,
      intentFollower,
      outcomes,
      planStatus,
      trades,
      registries,
      tokenList: () => tokenList(registries, venues),
      config,
      monitor,
      health,
      keys: overrides.keys ?? new PartnerKeys(keyStore, keyStoreHealth),
      keyStore,
      rateWindows,
      portal,
      metrics,
      stateCapacity,
      usage,
      webhooks,
      auditKeys: async () => {
        let records: KeyRecord[];
        try {
          records = await keyStore.list();
        } catch (err) {
          log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'could not read the key store to check its keys\' fee schemas');
          return;
        }
        for (const record of records) {
          if (record.status === 'active' && !schemas.has(record.schemaId) && !unconfiguredKeys.has(record.id)) {
            unconfiguredKeys.add(record.id);
            log.warn({ keyId: record.id, schemaId: record.schemaId }, UNCONFIGURED_SCHEMA_MESSAGE);
          }
        }
      },
      close: async () => {
        // The last counts go before the connection they go over; followed intents' tokens are dropped.
        await usage.close();
        await intentFollower.close();
        trades.close();
        await planStatus.close();
        // After the follower, the one caller of its sink.
        await webhooks.close();
        await quotes.settled();
        await marker?.close();
        await Promise.all([sharedState.close(), opened.close()]);
      },
    };
  } catch (err) {
    await opened.close();
    throw err;
  }
}
