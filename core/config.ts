// The service's configuration: read once from the environment, validated, typed. Every variable
// is listed in the configuration table of docs/operations.md; a bad value stops start-up with a
// message that names it.
import { isPartyId } from './party.js';
import { CC, pairKey, resolveToken } from './tokens.js';
import { DEFAULT_BASE_URLS, KEYED_VENUES, LIVE_VENUE_IDS, missingLiveVenueConfig, type LiveVenueConfig, type LiveVenueId, type LiveVenuesConfig } from './venues/live-venues.js';

/** The host names a URL may use to stay on this machine (`URL.hostname` form). */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Where the Prometheus metrics listener serves GET /metrics: a port of its own, never `port`; null: no listener. */
  readonly metricsPort: number | null;
  readonly metricsHost: string;
  readonly logLevel: LogLevel;
  /** The short commit this build came from, or "dev". */
  readonly serviceBuild: string;
  readonly venueTimeoutMs: number;
  readonly quoteCacheTtlMs: number;
  readonly quoteCacheMaxEntries: number;
  readonly livenessProbeIntervalMs: number;
  /**
   * How many proxies of our own stand in front (0: none): the client IP is the address the
   * outermost of them saw, read from the right of X-Forwarded-For, so a client cannot forge it.
   */
  readonly trustProxyHops: number;
  /** How long a request may take to arrive whole, head and body; past it the connection is answered and closed. */
  readonly requestTimeoutMs: number;
  /** How long a request's head may take to arrive. */
  readonly headersTimeoutMs: number;
  /** Connections held open at once; past it a new one is closed at once. */
  readonly maxConnections: number;
  readonly shutdownGraceMs: number;
  /** Where the embedded stores keep their files (the key store: DATA_DIR/keys.json). */
  readonly dataDir: string;
  /** Shared state (keys, rate-limit windows, quote cache) in Redis; null for the embedded, in-process default. */
  readonly redisUrl: string | null;
  /**
   * The key of the HMAC that fingerprints callers and takers in idempotency records, the same on
   * every instance sharing REDIS_URL (required with it); null: a random secret of this process's
   * own, as its records are too.
   */
  readonly idempotencySecret: string | null;
  /** The most idempotency records the in-process shared state holds; at it, new plans are refused. */
  readonly stateMaxPlanRecords: number;
  /** The most rate-limit windows counted in this process's memory; at it, a caller without a window is refused (429). */
  readonly stateMaxRateWindows: number;
  /** How often each instance adds the usage it counted to the shared state. */
  readonly usageFlushMs: number;
  /** How often each instance reads the status of every swap intent it follows (OneSwap's, for their outcome and expiry). */
  readonly intentPollIntervalMs: number;
  /** The most swap intents one instance follows at once. */
  readonly intentFollowMax: number;
  /** How often the plan status follower reads the ledger's new updates. */
  readonly planStatusPollMs: number;
  /** How long a plan's status is kept after its last change. */
  readonly planStatusRetentionMs: number;
  /** How long a partner's plan is kept in its trade ledger after it was made. */
  readonly tradeLedgerRetentionMs: number;
  /** Between two heartbeats of an idle plan status stream. */
  readonly sseHeartbeatMs: number;
  /** While false, every disclosed fee line reads zero and no plan collects a fee. */
  readonly feeCollectionEnabled: boolean;
  /** A JSON file of fee schemas and partner overrides (docs/api.md, Fees); null for the built-in default schema. */
  readonly feeSchemasFile: string | null;
  readonly rateLimitKeylessPerMinute: number;
  readonly rateLimitKeyedPerMinute: number;
  readonly rateLimitFreshQuotesPerMinute: number;
  /** Fresh (uncached) quotes per partner key per minute: each asks every venue. */
  readonly rateLimitKeyedFreshQuotesPerMinute: number;
  /** New plans per client IP (its /64 for IPv6) and per partner key within a plan record's retention (5 minutes). */
  readonly planRecordsPerIp: number;
  readonly planRecordsPerKey: number;
  /** Whether the key portal (`/portal`) is served: by default with the sandbox's venues, not with the real ones. */
  readonly portalEnabled: boolean;
  /** Keys the portal creates per client IP per hour, every instance together. */
  readonly portalKeysPerIpPerHour: number;
  /** Keys the portal creates per client IP (its /64 for IPv6) per UTC day, every instance together. */
  readonly portalKeysPerIpPerDay: number;
  /** Keys the portal creates per UTC day, every client and instance together: the last guard. */
  readonly portalKeysPerDay: number;
  /** `sandbox`: the sandbox program's simulated network (sandbox/); `live`: the real venues' public APIs. */
  readonly venuesMode: 'sandbox' | 'live';
  /**
   * The venues' settings: the real venues' with `venuesMode: live`; in sandbox mode, once the
   * sandbox is reached, the sandbox's (core/sandbox-link/manifest.ts).
   */
  readonly liveVenues: LiveVenuesConfig;
  /** A running sandbox's URL (SANDBOX_URL), in sandbox mode; null: the service starts one. */
  readonly sandboxUrl: string | null;
  /** The loopback port a started sandbox's venues listen on (0: any free port), in sandbox mode. */
  readonly sandboxVenuesPort: number;
  /** The first wait before restarting a started sandbox that stopped; doubled after each failed start, to 30 s. */
  readonly sandboxRestartWaitMs: number;
  /** The sandbox's token registries by instrument admin, once it is reached (its manifest); empty otherwise. */
  readonly sandboxRegistries: Readonly<Record<string, string>>;
  /**
   * The real network's token registries by instrument admin party (TOKEN_REGISTRIES): the base URL
   * of each admin's token-standard registry, which v2 plans and the token list name so a wallet
   * needs no registry configuration of its own. Empty: none named (a v2 plan then names none).
   */
  readonly tokenRegistries: Readonly<Record<string, string>>;
  /**
   * The execution venue's pool party per pair (by pairKey): where a plan's deposit goes. In sandbox
   * mode, empty unless set until the sandbox is reached: then the sandbox's.
   */
  readonly poolParties: Readonly<Record<string, string>>;
  /** Receives the service's fee leg of a partner plan; required while fees are collected. */
  readonly serviceFeeParty: string | null;
  /** Receives the service's fee leg of a keyless plan; without it a collecting keyless plan is refused (503). */
  readonly b2cFeeParty: string | null;
  /**
   * Where outcomes are read: a participant's JSON Ledger API v2 (live). In sandbox mode, where a
   * started sandbox's ledger listens (port 0: any free port) until the sandbox is reached: then
   * where it does listen.
   */
  readonly ledgerUrl: string;
  /**
   * The bearer token sent to the ledger; null for a participant without auth. In sandbox mode,
   * null (unset) until a started sandbox says the token it chose.
   */
  readonly ledgerToken: string | null;
  /** The parties whose view outcomes are read from: the venue's pool parties (in sandbox mode, empty until they are known). */
  readonly ledgerReadAs: readonly string[];
  readonly ledgerTimeoutMs: number;
  /** Transactions asked for per request to the ledger. */
  readonly ledgerPageSize: number;
  /** How long one outcome may spend reading the ledger, every request together. */
  readonly outcomeTimeoutMs: number;
  /** Partner webhooks (core/webhooks/): how their deliveries are sent and retried. */
  readonly webhooks: WebhookConfig;
}

export interface WebhookConfig {
  /** Whether an endpoint may be plain http and resolve to a private, loopback or link-local address (tests, a private network). */
  readonly allowPrivate: boolean;
  /** The wait after a delivery's first failed attempt; doubled after each further one. */
  readonly firstRetryMs: number;
  /** The longest wait between two attempts of a delivery. */
  readonly maxAttemptIntervalMs: number;
  /** How long a delivery is retried before it is given up. */
  readonly retryForMs: number;
  /** How long an attempt may take, from connecting to the answer's status. */
  readonly timeoutMs: number;
  /** Attempts this instance sends at once. */
  readonly concurrency: number;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

type Reader = <T>(name: string, fallback: T, parse: (raw: string) => T | undefined, expected: string, secret?: boolean) => T;

/** The fewest characters IDEMPOTENCY_SECRET may have: 32 random hex digits hold 128 bits. */
export const MIN_IDEMPOTENCY_SECRET_CHARS = 32;

/**
 * `defaults.serviceBuild` is the build's own stamp, used when SERVICE_BUILD is not set;
 * `defaults.makesPlans: false` for a program that makes no plans (the keys CLI), which then needs
 * no IDEMPOTENCY_SECRET.
 */
export function loadConfig(env: Env, defaults: { serviceBuild: string; makesPlans?: boolean } = { serviceBuild: 'dev' }): Config {
  const problems: string[] = [];
  // `secret`: the value may hold a credential (a Redis password), so a problem never shows it.
  const read = <T>(name: string, fallback: T, parse: (raw: string) => T | undefined, expected: string, secret = false): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = parse(raw.trim());
    if (value === undefined) {
      problems.push(`${name} must be ${expected} (got ${secret ? 'a value that is not shown, as it may hold a password' : JSON.stringify(raw)})`);
      return fallback;
    }
    return value;
  };
  const int = (min: number, max: number) => (raw: string) => {
    if (!/^[0-9]+$/.test(raw)) return undefined;
    const n = Number(raw);
    return n >= min && n <= max ? n : undefined;
  };
  const boolean = (raw: string) => (raw === 'true' ? true : raw === 'false' ? false : undefined);
  const venueTimeoutMs = read('VENUE_TIMEOUT_MS', 800, int(1, 30_000), 'an integer from 1 to 30000');
  const venuesMode = read<'sandbox' | 'live'>('VENUES', 'sandbox', (raw) => (raw === 'sandbox' || raw === 'live' ? raw : undefined), '"sandbox" or "live"');
  // No credentials, query or fragment in a base URL (fetch would quote them in its errors), and
  // https for a venue that is sent a key, unless it is on this machine.
  const url = (needsTls: boolean) => (raw: string) => {
    let parsed: URL;
    try {
      parsed = new URL(raw);
    } catch {
      return undefined;
    }
    if (!['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.password || parsed.search || parsed.hash) return undefined;
    const loopback = LOOPBACK_HOSTS.includes(parsed.hostname);
    if (needsTls && parsed.protocol !== 'https:' && !loopback) return undefined;
    return raw.replace(/\/+$/, '');
  };
  const liveVenue = (id: LiveVenueId): LiveVenueConfig => {
    const name = id.toUpperCase();
    return {
      enabled: read(`${name}_ENABLED`, true, boolean, '"true" or "false"'),
      baseUrl: read(
        `${name}_URL`,
        DEFAULT_BASE_URLS[id],
        url(KEYED_VENUES.includes(id)),
        `an http(s):// URL without credentials, query or fragment${KEYED_VENUES.includes(id) ? ', https unless on this machine (it is sent a key)' : ''}`,
        true,
      ),
      apiKey: read<string | null>(`${name}_API_KEY`, null, (raw) => (/^[\x21-\x7e]+$/.test(raw) ? raw : undefined), 'printable ASCII without spaces', true),
      // The quote's shared deadline ends every venue's wait anyway; a longer one would mislead.
      timeoutMs: read(`${name}_TIMEOUT_MS`, venueTimeoutMs, int(1, venueTimeoutMs), `an integer from 1 to VENUE_TIMEOUT_MS (${venueTimeoutMs})`),
    };
  };
  const admins = (raw: string): LiveVenuesConfig['cantexInstrumentAdmins'] | undefined => {
    const entries = new Map(raw.split(',').map((pair) => pair.split('=').map((part) => part.trim()) as [string, string]));
    const [amulet, usdcx, cbtc] = ['Amulet', 'USDCx', 'CBTC'].map((id) => entries.get(id));
    if (entries.size !== 3 || ![amulet, usdcx, cbtc].every(isPartyId)) return undefined;
    return { Amulet: amulet!, USDCx: usdcx!, CBTC: cbtc! };
  };
  const liveVenues: LiveVenuesConfig = {
    venues: Object.fromEntries(LIVE_VENUE_IDS.map((id) => [id, liveVenue(id)])) as Record<LiveVenueId, LiveVenueConfig>,
    cantexInstrumentAdmins: read('CANTEX_INSTRUMENT_ADMINS', null, admins, '"Amulet=<party>,USDCx=<party>,CBTC=<party>", each a ledger party id'),
    nightlyRecipient: read<string | null>('NIGHTLY_RECIPIENT', null, (raw) => (isPartyId(raw) ? raw : undefined), 'a ledger party id <hint>::1220<64 hex>'),
  };
  if (venuesMode === 'live') problems.push(...missingLiveVenueConfig(liveVenues));
  const party = (raw: string) => (isPartyId(raw) ? raw : undefined);
  const poolParties = read<Record<string, string> | null>(
    'TRADECRAFT_POOL_PARTIES',
    // The sandbox's own, once it is reached.
    venuesMode === 'sandbox' ? {} : null,
    parsePoolParties,
    '"CC/USDCx=<party>,CC/CBTC=<party>": one or more pairs with a CC leg, each a ledger party id',
  );
  if (poolParties === null) problems.push('TRADECRAFT_POOL_PARTIES is required with VENUES=live: plans deposit to the pool party of their pair');
  const feeCollectionEnabled = read('FEE_COLLECTION_ENABLED', false, boolean, '"true" or "false"');
  const serviceFeeParty = read<string | null>('SERVICE_FEE_PARTY', null, party, 'a ledger party id <hint>::1220<64 hex>');
  const b2cFeeParty = read<string | null>('B2C_FEE_PARTY', null, party, 'a ledger party id <hint>::1220<64 hex>');
  if (feeCollectionEnabled && serviceFeeParty === null) problems.push('SERVICE_FEE_PARTY is required with FEE_COLLECTION_ENABLED=true: partner plans pay the service fee to it');
  problems.push(...feePartyProblems({ serviceFeeParty, b2cFeeParty, poolParties: poolParties ?? {} }));
  const tokenRegistries = read<Record<string, string>>(
    'TOKEN_REGISTRIES',
    {},
    (raw) => {
      const entries = raw.split(',').map((pair) => {
        const at = pair.indexOf('=');
        return at < 0 ? null : ([pair.slice(0, at).trim(), url(true)(pair.slice(at + 1).trim())] as const);
      });
      if (entries.some((e) => e === null || !isPartyId(e[0]) || e[1] === undefined)) return undefined;
      return Object.fromEntries(entries as Array<readonly [string, string]>);
    },
    '"<instrument admin party>=<registry URL>,...": each a ledger party id and an http(s):// URL without credentials, query or fragment, https unless on this machine',
  );
  const ledgerToken = read<string | null>('LEDGER_TOKEN', null, (raw) => (/^[\x21-\x7e]+$/.test(raw) ? raw : undefined), 'printable ASCII without spaces', true);
  // It is sent LEDGER_TOKEN's ledger's address: https unless on this machine, as any URL a token goes to.
  const sandboxUrl = read<string | null>('SANDBOX_URL', null, url(true), 'an http(s):// URL without credentials, query or fragment, https unless on this machine: a running sandbox\'s, as `make sandbox` prints it', true);
  if (sandboxUrl !== null && venuesMode !== 'sandbox') problems.push('SANDBOX_URL is for VENUES=sandbox: with VENUES=live the service uses the real venues');
  if (sandboxUrl !== null && ledgerToken === null) problems.push('LEDGER_TOKEN is required with SANDBOX_URL: the token that sandbox\'s ledger accepts (its ledgerToken, as `make sandbox` prints it)');
  const ledgerUrl = read<string | null>(
    'LEDGER_URL',
    venuesMode === 'sandbox' ? 'http://127.0.0.1:0' : null,
    venuesMode === 'sandbox' ? sandboxLedgerUrl : url(ledgerToken !== null),
    venuesMode === 'sandbox'
      ? 'an http:// URL on this machine (127.0.0.1, localhost or [::1]) with a port and no path: the sandbox ledger listens there (port 0: any free port)'
      : `an http(s):// URL without credentials, query or fragment${ledgerToken !== null ? ', https unless on this machine (it is sent LEDGER_TOKEN)' : ''}`,
    true,
  );
  if (ledgerUrl === null) problems.push('LEDGER_URL is required with VENUES=live: outcomes are read from a participant\'s JSON Ledger API v2');
  const ledgerReadAs = read<readonly string[] | null>('LEDGER_READ_AS', null, (raw) => {
    const parties = raw.split(',').map((p) => p.trim());
    return parties.length > 0 && parties.every(isPartyId) && new Set(parties).size === parties.length ? parties : undefined;
  }, 'one or more ledger party ids, comma-separated, each once');
  const hostName = (raw: string) => (/^[A-Za-z0-9.:\-[\]]+$/.test(raw) ? raw : undefined);
  const port = read('PORT', 8080, int(0, 65535), 'an integer from 0 to 65535');
  const requestTimeoutMs = read('REQUEST_TIMEOUT_MS', 30_000, int(100, 600_000), 'an integer from 100 to 600000');
  const metricsPort = read<number | null>('METRICS_PORT', null, int(0, 65535), 'an integer from 0 to 65535 (unset: no metrics listener)');
  if (metricsPort !== null && metricsPort !== 0 && metricsPort === port) problems.push('METRICS_PORT must differ from PORT: metrics are never served on the public port');
  const redisUrl = read<string | null>('REDIS_URL', null, (raw) => (/^rediss?:\/\/\S+$/.test(raw) ? raw : undefined), 'a redis:// or rediss:// URL', true);
  const idempotencySecret = read<string | null>(
    'IDEMPOTENCY_SECRET',
    null,
    (raw) => (raw.length >= MIN_IDEMPOTENCY_SECRET_CHARS && /^[\x21-\x7e]+$/.test(raw) ? raw : undefined),
    `at least ${MIN_IDEMPOTENCY_SECRET_CHARS} printable ASCII characters without spaces (openssl rand -hex 32 makes one)`,
    true,
  );
  if (redisUrl !== null && (env.IDEMPOTENCY_SECRET ?? '') === '' && defaults.makesPlans !== false) {
    problems.push(`IDEMPOTENCY_SECRET is required with REDIS_URL: one secret of at least ${MIN_IDEMPOTENCY_SECRET_CHARS} characters shared by every instance, so the plan records in Redis let no reader test a guessed taker or caller (openssl rand -hex 32 makes one)`);
  }
  const config: Config = {
    host: read('HOST', '127.0.0.1', hostName, 'a host name or IP address'),
    port,
    metricsPort,
    metricsHost: read('METRICS_HOST', '127.0.0.1', hostName, 'a host name or IP address'),
    logLevel: read('LOG_LEVEL', 'info', (raw) => LOG_LEVELS.find((l) => l === raw), `one of ${LOG_LEVELS.join(', ')}`),
    serviceBuild: read('SERVICE_BUILD', defaults.serviceBuild, (raw) => (/^([0-9a-f]{7,40}|dev)$/.test(raw) ? raw : undefined), 'a 7 to 40 digit lowercase hex commit id or "dev"'),
    venueTimeoutMs,
    quoteCacheTtlMs: read('QUOTE_CACHE_TTL_MS', 10_000, int(1, 60_000), 'an integer from 1 to 60000'),
    quoteCacheMaxEntries: read('QUOTE_CACHE_MAX_ENTRIES', 10_000, int(1, 1_000_000), 'an integer from 1 to 1000000'),
    livenessProbeIntervalMs: read('LIVENESS_PROBE_INTERVAL_MS', 15_000, int(100, 3_600_000), 'an integer from 100 to 3600000'),
    trustProxyHops: read('TRUST_PROXY', 0, (raw) => (raw === 'true' ? 1 : raw === 'false' ? 0 : int(1, 10)(raw)), '"false", "true" (one proxy) or the number of proxies in front, 1 to 10'),
    requestTimeoutMs,
    headersTimeoutMs: read('HEADERS_TIMEOUT_MS', Math.min(10_000, requestTimeoutMs), int(100, requestTimeoutMs), `an integer from 100 to REQUEST_TIMEOUT_MS (${requestTimeoutMs})`),
    maxConnections: read('MAX_CONNECTIONS', 4_096, int(1, 1_000_000), 'an integer from 1 to 1000000'),
    shutdownGraceMs: read('SHUTDOWN_GRACE_MS', 10_000, int(0, 600_000), 'an integer from 0 to 600000'),
    dataDir: read('DATA_DIR', './data', (raw) => raw, 'a directory path'),
    redisUrl,
    idempotencySecret,
    stateMaxPlanRecords: read('STATE_MAX_PLAN_RECORDS', 50_000, int(1, 10_000_000), 'an integer from 1 to 10000000'),
    stateMaxRateWindows: read('STATE_MAX_RATE_WINDOWS', 200_000, int(1, 10_000_000), 'an integer from 1 to 10000000'),
    usageFlushMs: read('USAGE_FLUSH_MS', 2_000, int(100, 600_000), 'an integer from 100 to 600000'),
    intentPollIntervalMs: read('INTENT_POLL_INTERVAL_MS', 5_000, int(100, 600_000), 'an integer from 100 to 600000'),
    intentFollowMax: read('INTENT_FOLLOW_MAX', 1_000, int(1, 100_000), 'an integer from 1 to 100000'),
    planStatusPollMs: read('PLAN_STATUS_POLL_MS', 250, int(20, 60_000), 'an integer from 20 to 60000'),
    planStatusRetentionMs: read('PLAN_STATUS_RETENTION_HOURS', 24, int(1, 720), 'an integer from 1 to 720') * 3_600_000,
    tradeLedgerRetentionMs: read('TRADE_LEDGER_RETENTION_DAYS', 90, int(1, 3650), 'an integer from 1 to 3650') * 86_400_000,
    sseHeartbeatMs: read('SSE_HEARTBEAT_MS', 15_000, int(100, 600_000), 'an integer from 100 to 600000'),
    feeCollectionEnabled,
    feeSchemasFile: read<string | null>('FEE_SCHEMAS_FILE', null, (raw) => raw, 'a file path'),
    rateLimitKeylessPerMinute: read('RATE_LIMIT_KEYLESS_PER_MINUTE', 120, int(1, 1_000_000_000), 'an integer from 1 to 1000000000'),
    rateLimitKeyedPerMinute: read('RATE_LIMIT_KEYED_PER_MINUTE', 1200, int(1, 1_000_000_000), 'an integer from 1 to 1000000000'),
    rateLimitFreshQuotesPerMinute: read('RATE_LIMIT_FRESH_QUOTES_PER_MINUTE', 30, int(1, 1_000_000_000), 'an integer from 1 to 1000000000'),
    rateLimitKeyedFreshQuotesPerMinute: read('RATE_LIMIT_KEYED_FRESH_QUOTES_PER_MINUTE', 120, int(1, 1_000_000_000), 'an integer from 1 to 1000000000'),
    planRecordsPerIp: read('PLAN_RECORDS_PER_IP', 100, int(1, 10_000_000), 'an integer from 1 to 10000000'),
    planRecordsPerKey: read('PLAN_RECORDS_PER_KEY', 2000, int(1, 10_000_000), 'an integer from 1 to 10000000'),
    // Off with the real venues until an operator turns it on: free keys for a live deployment are a decision.
    portalEnabled: read('PORTAL_ENABLED', venuesMode === 'sandbox', boolean, '"true" or "false"'),
    portalKeysPerIpPerHour: read('PORTAL_KEYS_PER_IP_PER_HOUR', 5, int(1, 1_000_000), 'an integer from 1 to 1000000'),
    portalKeysPerIpPerDay: read('PORTAL_KEYS_PER_IP_PER_DAY', 10, int(1, 1_000_000), 'an integer from 1 to 1000000'),
    portalKeysPerDay: read('PORTAL_KEYS_PER_DAY', 10_000, int(1, 1_000_000_000), 'an integer from 1 to 1000000000'),
    venuesMode,
    liveVenues,
    sandboxUrl,
    sandboxRegistries: {},
    tokenRegistries,
    sandboxVenuesPort: read('SANDBOX_VENUES_PORT', 0, int(0, 65535), 'an integer from 0 to 65535'),
    sandboxRestartWaitMs: read('SANDBOX_RESTART_WAIT_MS', 250, int(10, 600_000), 'an integer from 10 to 600000'),
    poolParties: poolParties ?? {},
    serviceFeeParty,
    b2cFeeParty,
    ledgerUrl: ledgerUrl ?? '',
    ledgerToken,
    // By default the pool parties plans deposit to: the receivers of every deposit offer.
    ledgerReadAs: ledgerReadAs ?? [...new Set(Object.values(poolParties ?? {}))],
    ledgerTimeoutMs: read('LEDGER_TIMEOUT_MS', 5_000, int(1, 120_000), 'an integer from 1 to 120000'),
    ledgerPageSize: read('LEDGER_PAGE_SIZE', 200, int(1, 10_000), 'an integer from 1 to 10000'),
    outcomeTimeoutMs: read('OUTCOME_TIMEOUT_MS', 10_000, int(1, 120_000), 'an integer from 1 to 120000'),
    webhooks: webhookConfig(read, int, boolean, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** WEBHOOK_*: a wait between attempts never longer than the time a delivery is retried for. */
function webhookConfig(read: Reader, int: (min: number, max: number) => (raw: string) => number | undefined, boolean: (raw: string) => boolean | undefined, problems: string[]): WebhookConfig {
  const webhooks: WebhookConfig = {
    allowPrivate: read('WEBHOOK_ALLOW_PRIVATE', false, boolean, '"true" or "false"'),
    firstRetryMs: read('WEBHOOK_FIRST_RETRY_MS', 5_000, int(10, 3_600_000), 'an integer from 10 to 3600000'),
    maxAttemptIntervalMs: read('WEBHOOK_MAX_ATTEMPT_INTERVAL_MS', 3_600_000, int(10, 86_400_000), 'an integer from 10 to 86400000'),
    retryForMs: read('WEBHOOK_RETRY_FOR_MS', 86_400_000, int(100, 604_800_000), 'an integer from 100 to 604800000'),
    timeoutMs: read('WEBHOOK_TIMEOUT_MS', 10_000, int(50, 60_000), 'an integer from 50 to 60000'),
    concurrency: read('WEBHOOK_CONCURRENCY', 8, int(1, 256), 'an integer from 1 to 256'),
  };
  if (webhooks.firstRetryMs > webhooks.maxAttemptIntervalMs) problems.push('WEBHOOK_FIRST_RETRY_MS must be at most WEBHOOK_MAX_ATTEMPT_INTERVAL_MS: the first wait is the shortest');
  if (webhooks.maxAttemptIntervalMs > webhooks.retryForMs) problems.push('WEBHOOK_MAX_ATTEMPT_INTERVAL_MS must be at most WEBHOOK_RETRY_FOR_MS: a delivery would be given up before its next attempt');
  return webhooks;
}

/** Every fee party that is also a pool party: a fee leg and a deposit must never share a receiver. */
export function feePartyProblems(config: Pick<Config, 'serviceFeeParty' | 'b2cFeeParty' | 'poolParties'>): string[] {
  const pools = Object.values(config.poolParties);
  return (
    [
      ['SERVICE_FEE_PARTY', config.serviceFeeParty],
      ['B2C_FEE_PARTY', config.b2cFeeParty],
    ] as const
  ).flatMap(([name, feeParty]) => (feeParty !== null && pools.includes(feeParty) ? [`${name} must not be a pool party: a fee leg and a deposit must never share a receiver`] : []));
}

/** The sandbox ledger's address: plain http on a loopback host, with a port, nothing after it. */
export function sandboxLedgerUrl(raw: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return undefined;
  }
  const loopback = LOOPBACK_HOSTS.includes(parsed.hostname);
  const bare = parsed.pathname === '/' && !parsed.search && !parsed.hash && !parsed.username && !parsed.password;
  // `new URL` drops a port that is the scheme's default; the sandbox needs it said, 0 included.
  if (parsed.protocol !== 'http:' || !loopback || !bare || !/:[0-9]{1,5}\/?$/.test(raw)) return undefined;
  return raw.replace(/\/+$/, '');
}

/** `CC/USDCx=<party>,...`: each pair has a CC leg and is named once; tokens as the API accepts them. */
export function parsePoolParties(raw: string): Record<string, string> | undefined {
  const parties: Record<string, string> = {};
  for (const entry of raw.split(',')) {
    const match = /^\s*([^/=\s]+)\s*\/\s*([^/=\s]+)\s*=\s*(\S+)\s*$/.exec(entry);
    if (!match) return undefined;
    let pair: string;
    try {
      const [a, b] = [resolveToken(match[1]!, 'TRADECRAFT_POOL_PARTIES'), resolveToken(match[2]!, 'TRADECRAFT_POOL_PARTIES')];
      if (a === b || (a !== CC && b !== CC)) return undefined;
      pair = pairKey(a, b);
    } catch {
      return undefined;
    }
    if (!isPartyId(match[3]) || pair in parties) return undefined;
    parties[pair] = match[3];
  }
  return parties;
}
