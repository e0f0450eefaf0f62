// loadConfig (core/config.ts). The quote query rules of core/quotes/params.ts are
// test/core/quotes/params.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig, type Config } from '../../core/config.js';
import { PARTY_ID } from '../../core/party.js';
import { readManifest, withSandbox } from '../../core/sandbox-link/manifest.js';
import { repoRoot } from '../../handlers/app.js';
import { testSandbox } from '../helpers/sandbox.js';

/** The sandbox's own pools (sandbox/venues/market.ts), as its manifest names them. */
const SANDBOX_POOLS: Readonly<Record<string, string>> = {
  'CC/USDCx': `tradecraft-pool-cc-usdcx::1220${'c'.repeat(64)}`,
  'CC/CBTC': `tradecraft-pool-cc-cbtc::1220${'d'.repeat(64)}`,
};

const DEFAULTS: Config = {
  host: '127.0.0.1',
  port: 8080,
  metricsPort: null,
  metricsHost: '127.0.0.1',
  logLevel: 'info',
  serviceBuild: 'dev',
  venueTimeoutMs: 800,
  quoteCacheTtlMs: 10_000,
  quoteCacheMaxEntries: 10_000,
  livenessProbeIntervalMs: 15_000,
  trustProxyHops: 0,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  maxConnections: 4_096,
  shutdownGraceMs: 10_000,
  dataDir: './data',
  redisUrl: null,
  idempotencySecret: null,
  stateMaxPlanRecords: 50_000,
  stateMaxRateWindows: 200_000,
  usageFlushMs: 2_000,
  intentPollIntervalMs: 5_000,
  intentFollowMax: 1_000,
  planStatusPollMs: 250,
  planStatusRetentionMs: 86_400_000,
  tradeLedgerRetentionMs: 90 * 86_400_000,
  sseHeartbeatMs: 15_000,
  feeCollectionEnabled: false,
  feeSchemasFile: null,
  rateLimitKeylessPerMinute: 120,
  rateLimitKeyedPerMinute: 1200,
  rateLimitFreshQuotesPerMinute: 30,
  rateLimitKeyedFreshQuotesPerMinute: 120,
  planRecordsPerIp: 100,
  planRecordsPerKey: 2000,
  portalEnabled: true,
  portalKeysPerIpPerHour: 5,
  portalKeysPerIpPerDay: 10,
  portalKeysPerDay: 10_000,
  venuesMode: 'sandbox',
  liveVenues: {
    venues: {
      tradecraft: { enabled: true, baseUrl: 'https://api.tradecraft.fi/v1', apiKey: null, timeoutMs: 800 },
      cantex: { enabled: true, baseUrl: 'https://api.cantex.io', apiKey: null, timeoutMs: 800 },
      oneswap: { enabled: true, baseUrl: 'https://api.oneswap.cc', apiKey: null, timeoutMs: 800 },
      nightly: { enabled: true, baseUrl: 'https://mainnet.rpc.canton.nightly.app', apiKey: null, timeoutMs: 800 },
      temple: { enabled: true, baseUrl: '', apiKey: null, timeoutMs: 800 },
    },
    cantexInstrumentAdmins: null,
    nightlyRecipient: null,
  },
  sandboxUrl: null,
  sandboxVenuesPort: 0,
  sandboxRestartWaitMs: 250,
  sandboxRegistries: {},
  tokenRegistries: {},
  // The sandbox's, once it is reached (core/sandbox-link/manifest.ts).
  poolParties: {},
  serviceFeeParty: null,
  b2cFeeParty: null,
  // A started sandbox's ledger on any free port, with the token it chooses.
  ledgerUrl: 'http://127.0.0.1:0',
  ledgerToken: null,
  ledgerReadAs: [],
  ledgerTimeoutMs: 5_000,
  ledgerPageSize: 200,
  outcomeTimeoutMs: 10_000,
  webhooks: { allowPrivate: false, firstRetryMs: 5_000, maxAttemptIntervalMs: 3_600_000, retryForMs: 86_400_000, timeoutMs: 10_000, concurrency: 8 },
};

/** The ConfigError loadConfig throws for `env`, or a test failure. */
function configError(t: { fail: (msg: string) => unknown }, env: Record<string, string>): ConfigError {
  try {
    const config = loadConfig(env);
    t.fail(`expected a ConfigError for ${JSON.stringify(env)}, got ${JSON.stringify(config)}`);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    t.fail(`expected a ConfigError, got ${String(err)}`);
  }
  return new ConfigError([]);
}

// ---------------------------------------------------------------------------------------------
t.test('loadConfig: an empty environment gives the documented defaults', async (t) => {
  t.strictSame(loadConfig({}), DEFAULTS);
});

t.test('loadConfig: "an empty value means the default"', async (t) => {
  t.strictSame(loadConfig({ HOST: '', PORT: '', LOG_LEVEL: '', TRUST_PROXY: '' }), DEFAULTS);
});

t.test('loadConfig: "`defaults.serviceBuild` is the build\'s own stamp, used when SERVICE_BUILD is not set"', async (t) => {
  t.equal(loadConfig({}, { serviceBuild: 'abc1234' }).serviceBuild, 'abc1234');
  t.equal(loadConfig({ SERVICE_BUILD: 'deadbeef' }, { serviceBuild: 'abc1234' }).serviceBuild, 'deadbeef', 'the variable wins');
});

t.test('loadConfig: valid overrides are read and typed', async (t) => {
  const config = loadConfig({
    HOST: '0.0.0.0',
    PORT: '9090',
    METRICS_PORT: '9464',
    METRICS_HOST: '10.0.0.5',
    LOG_LEVEL: 'debug',
    SERVICE_BUILD: '0123456789abcdef0123456789abcdef01234567',
    VENUE_TIMEOUT_MS: '1',
    QUOTE_CACHE_TTL_MS: '60000',
    QUOTE_CACHE_MAX_ENTRIES: '1000000',
    LIVENESS_PROBE_INTERVAL_MS: '100',
    TRUST_PROXY: 'true',
    SHUTDOWN_GRACE_MS: '0',
    DATA_DIR: '/var/lib/bestex',
    REDIS_URL: 'redis://:secret@redis.internal:6380/2',
    IDEMPOTENCY_SECRET: 'an-idempotency-secret-of-32-chars-or-more',
    STATE_MAX_PLAN_RECORDS: '1',
    STATE_MAX_RATE_WINDOWS: '10000000',
    USAGE_FLUSH_MS: '600000',
    INTENT_POLL_INTERVAL_MS: '250',
    INTENT_FOLLOW_MAX: '20',
    PLAN_STATUS_POLL_MS: '100',
    PLAN_STATUS_RETENTION_HOURS: '2',
    SSE_HEARTBEAT_MS: '5000',
    FEE_COLLECTION_ENABLED: 'true',
    SERVICE_FEE_PARTY: `bestex-fees::1220${'e'.repeat(64)}`,
    FEE_SCHEMAS_FILE: '/etc/bestex/fees.json',
    RATE_LIMIT_KEYLESS_PER_MINUTE: '60',
    RATE_LIMIT_KEYED_PER_MINUTE: '6000',
    RATE_LIMIT_FRESH_QUOTES_PER_MINUTE: '10',
    RATE_LIMIT_KEYED_FRESH_QUOTES_PER_MINUTE: '50',
    PLAN_RECORDS_PER_IP: '7',
    PLAN_RECORDS_PER_KEY: '70',
    PORTAL_ENABLED: 'false',
    PORTAL_KEYS_PER_IP_PER_HOUR: '3',
    PORTAL_KEYS_PER_IP_PER_DAY: '4',
    PORTAL_KEYS_PER_DAY: '1000',
    LEDGER_URL: 'http://localhost:7000/',
    LEDGER_TOKEN: 'eyJhbGciOi.sandbox.jwt',
    LEDGER_READ_AS: `pool-a::1220${'a'.repeat(64)}, pool-b::1220${'b'.repeat(64)}`,
    LEDGER_TIMEOUT_MS: '1500',
    LEDGER_PAGE_SIZE: '50',
    OUTCOME_TIMEOUT_MS: '2500',
    REQUEST_TIMEOUT_MS: '5000',
    HEADERS_TIMEOUT_MS: '2000',
    MAX_CONNECTIONS: '100',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_FIRST_RETRY_MS: '1000',
    WEBHOOK_MAX_ATTEMPT_INTERVAL_MS: '60000',
    WEBHOOK_RETRY_FOR_MS: '3600000',
    WEBHOOK_TIMEOUT_MS: '2000',
    WEBHOOK_CONCURRENCY: '16',
  });
  const { venuesMode, liveVenues, ...rest } = config;
  t.equal(venuesMode, 'sandbox');
  t.equal(liveVenues.venues.cantex.timeoutMs, 1, 'a venue\'s timeout defaults to VENUE_TIMEOUT_MS');
  t.strictSame(rest, {
    host: '0.0.0.0',
    port: 9090,
    metricsPort: 9464,
    metricsHost: '10.0.0.5',
    logLevel: 'debug',
    serviceBuild: '0123456789abcdef0123456789abcdef01234567',
    venueTimeoutMs: 1,
    quoteCacheTtlMs: 60_000,
    quoteCacheMaxEntries: 1_000_000,
    livenessProbeIntervalMs: 100,
    trustProxyHops: 1,
    requestTimeoutMs: 5_000,
    headersTimeoutMs: 2_000,
    maxConnections: 100,
    shutdownGraceMs: 0,
    dataDir: '/var/lib/bestex',
    redisUrl: 'redis://:secret@redis.internal:6380/2',
    idempotencySecret: 'an-idempotency-secret-of-32-chars-or-more',
    stateMaxPlanRecords: 1,
    stateMaxRateWindows: 10_000_000,
    usageFlushMs: 600_000,
    intentPollIntervalMs: 250,
    intentFollowMax: 20,
    planStatusPollMs: 100,
    planStatusRetentionMs: 7_200_000,
    tradeLedgerRetentionMs: 90 * 86_400_000,
    sseHeartbeatMs: 5_000,
    feeCollectionEnabled: true,
    feeSchemasFile: '/etc/bestex/fees.json',
    rateLimitKeylessPerMinute: 60,
    rateLimitKeyedPerMinute: 6000,
    rateLimitFreshQuotesPerMinute: 10,
    rateLimitKeyedFreshQuotesPerMinute: 50,
    planRecordsPerIp: 7,
    planRecordsPerKey: 70,
    portalEnabled: false,
    portalKeysPerIpPerHour: 3,
    portalKeysPerIpPerDay: 4,
    portalKeysPerDay: 1000,
    sandboxUrl: null,
    sandboxVenuesPort: 0,
    sandboxRestartWaitMs: 250,
    sandboxRegistries: {},
    tokenRegistries: {},
    poolParties: DEFAULTS.poolParties,
    serviceFeeParty: `bestex-fees::1220${'e'.repeat(64)}`,
    b2cFeeParty: null,
    ledgerUrl: 'http://localhost:7000',
    ledgerToken: 'eyJhbGciOi.sandbox.jwt',
    ledgerReadAs: [`pool-a::1220${'a'.repeat(64)}`, `pool-b::1220${'b'.repeat(64)}`],
    ledgerTimeoutMs: 1500,
    ledgerPageSize: 50,
    outcomeTimeoutMs: 2500,
    webhooks: { allowPrivate: true, firstRetryMs: 1000, maxAttemptIntervalMs: 60_000, retryForMs: 3_600_000, timeoutMs: 2000, concurrency: 16 },
  });
  t.equal(loadConfig({ PORT: '0' }).port, 0, 'PORT 0 (an ephemeral port) is allowed');
  t.equal(loadConfig({ PORT: '65535' }).port, 65535, 'the top of the range');
  t.equal(loadConfig({ PORT: ' 8081 ' }).port, 8081, 'surrounding spaces are trimmed');
  t.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxyHops, 0);
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '4000' }).headersTimeoutMs, 4_000, 'the head\'s time is within the whole request\'s');
  t.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '4000', HEADERS_TIMEOUT_MS: '5000' }), { name: 'ConfigError', message: /HEADERS_TIMEOUT_MS must be an integer from 100 to REQUEST_TIMEOUT_MS \(4000\)/ });
  t.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxyHops, 2, 'two proxies of our own in front');
  t.equal(loadConfig({ HOST: '::1' }).host, '::1', 'an IPv6 address');
  t.equal(loadConfig({ HOST: 'api.example.com' }).host, 'api.example.com');
  for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const) {
    t.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
  }
});

t.test('loadConfig: "a bad value stops start-up with a message that names it"', async (t) => {
  const cases: Array<[string, string]> = [
    ['PORT', 'abc'],
    ['PORT', '65536'],
    ['PORT', '-1'],
    ['PORT', '80.5'],
    ['PORT', '1e3'],
    ['LOG_LEVEL', 'loud'],
    ['LOG_LEVEL', 'INFO'],
    ['TRUST_PROXY', 'yes'],
    ['TRUST_PROXY', '11'],
    ['TRUST_PROXY', '0x1'],
    ['HOST', 'not a host'],
    ['SERVICE_BUILD', 'ABCDEF1'],
    ['SERVICE_BUILD', 'abc12'],
    ['VENUE_TIMEOUT_MS', '0'],
    ['VENUE_TIMEOUT_MS', '30001'],
    ['QUOTE_CACHE_TTL_MS', '60001'],
    ['QUOTE_CACHE_MAX_ENTRIES', '0'],
    ['LIVENESS_PROBE_INTERVAL_MS', '99'],
    ['SHUTDOWN_GRACE_MS', '600001'],
    ['FEE_COLLECTION_ENABLED', 'yes'],
    ['RATE_LIMIT_KEYLESS_PER_MINUTE', '0'],
    ['RATE_LIMIT_KEYED_PER_MINUTE', 'lots'],
    ['RATE_LIMIT_FRESH_QUOTES_PER_MINUTE', '-1'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', 'nine'],
    ['METRICS_HOST', 'not a host'],
    ['STATE_MAX_PLAN_RECORDS', '0'],
    ['STATE_MAX_RATE_WINDOWS', '10000001'],
    ['USAGE_FLUSH_MS', '99'],
    ['INTENT_POLL_INTERVAL_MS', '99'],
    ['INTENT_FOLLOW_MAX', '0'],
    ['PLAN_STATUS_POLL_MS', '19'],
    ['PLAN_STATUS_RETENTION_HOURS', '721'],
    ['SSE_HEARTBEAT_MS', 'soon'],
  ];
  for (const [name, value] of cases) {
    const err = configError(t, { [name]: value });
    t.type(err, ConfigError, `${name}=${value} throws ConfigError`);
    t.equal(err.name, 'ConfigError');
    t.equal(err.problems.length, 1, `${name}=${value}: one problem`);
    t.match(err.message, new RegExp(`\\b${name}\\b`), `${name}=${value}: the message names ${name}`);
    t.ok(err.message.includes(JSON.stringify(value)), `${name}=${value}: the message shows the bad value`);
  }
  t.match(configError(t, { PORT: '9464', METRICS_PORT: '9464' }).message, /METRICS_PORT must differ from PORT: metrics are never served on the public port/);
  t.equal(loadConfig({ PORT: '0', METRICS_PORT: '0' }).metricsPort, 0, 'both on ephemeral ports (tests): two different ports');
  t.match(configError(t, { PORT: 'abc' }).message, /PORT'? must be an integer from 0 to 65535/);
  t.match(configError(t, { LOG_LEVEL: 'loud' }).message, /LOG_LEVEL'? must be one of fatal, error, warn, info, debug, trace, silent/);
  t.match(configError(t, { TRUST_PROXY: 'yes' }).message, /TRUST_PROXY'? must be "false", "true" \(one proxy\) or the number of proxies in front, 1 to 10/);
});

const PARTY = (hint: string) => `${hint}::1220${'c'.repeat(64)}`;
const LIVE = {
  VENUES: 'live',
  CANTEX_API_KEY: 'cantex-secret',
  CANTEX_INSTRUMENT_ADMINS: `Amulet=${PARTY('dso')}, USDCx=${PARTY('circle')},CBTC=${PARTY('bitsafe')}`,
  ONESWAP_API_KEY: 'os_live_secret',
  NIGHTLY_RECIPIENT: PARTY('bestex-quotes'),
  TEMPLE_URL: 'https://api.temple.example/',
  TEMPLE_API_KEY: 'temple-secret',
  TRADECRAFT_POOL_PARTIES: `CC/USDCx=${PARTY('tc-pool-usdcx')}`,
  LEDGER_URL: 'https://participant.example/',
};

t.test('loadConfig: the key portal is "default on in sandbox mode and off with VENUES=live until an operator turns it on"; its creation limits are positive integers', async (t) => {
  t.equal(loadConfig({}).portalEnabled, true, 'sandbox: on');
  t.equal(loadConfig(LIVE).portalEnabled, false, 'live: off');
  t.equal(loadConfig({ ...LIVE, PORTAL_ENABLED: 'true' }).portalEnabled, true, 'live, turned on');
  t.equal(loadConfig({ PORTAL_ENABLED: 'false' }).portalEnabled, false, 'sandbox, turned off');
  t.match(configError(t, { PORTAL_ENABLED: 'yes' }).message, /PORTAL_ENABLED must be "true" or "false"/);
  t.match(configError(t, { PORTAL_KEYS_PER_IP_PER_HOUR: '0' }).message, /PORTAL_KEYS_PER_IP_PER_HOUR must be an integer from 1/);
  t.match(configError(t, { PORTAL_KEYS_PER_DAY: '-1' }).message, /PORTAL_KEYS_PER_DAY must be an integer from 1/);
  t.equal(loadConfig({ PORTAL_KEYS_PER_IP_PER_HOUR: '2', PORTAL_KEYS_PER_DAY: '7' }).portalKeysPerDay, 7);
});

t.test('loadConfig: partner webhooks: private addresses refused unless WEBHOOK_ALLOW_PRIVATE=true; the retry waits never longer than the time a delivery is retried for', async (t) => {
  t.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'true' }).webhooks.allowPrivate, true);
  t.strictSame(
    loadConfig({ WEBHOOK_FIRST_RETRY_MS: '20', WEBHOOK_MAX_ATTEMPT_INTERVAL_MS: '80', WEBHOOK_RETRY_FOR_MS: '1000', WEBHOOK_TIMEOUT_MS: '200', WEBHOOK_CONCURRENCY: '2' }).webhooks,
    { allowPrivate: false, firstRetryMs: 20, maxAttemptIntervalMs: 80, retryForMs: 1000, timeoutMs: 200, concurrency: 2 },
  );
  t.match(configError(t, { WEBHOOK_ALLOW_PRIVATE: 'yes' }).message, /WEBHOOK_ALLOW_PRIVATE must be "true" or "false"/);
  t.match(configError(t, { WEBHOOK_FIRST_RETRY_MS: '5000', WEBHOOK_MAX_ATTEMPT_INTERVAL_MS: '1000' }).message, /WEBHOOK_FIRST_RETRY_MS must be at most WEBHOOK_MAX_ATTEMPT_INTERVAL_MS/);
  t.match(configError(t, { WEBHOOK_RETRY_FOR_MS: '60000' }).message, /WEBHOOK_MAX_ATTEMPT_INTERVAL_MS must be at most WEBHOOK_RETRY_FOR_MS/);
  t.match(configError(t, { WEBHOOK_TIMEOUT_MS: '0' }).message, /WEBHOOK_TIMEOUT_MS must be an integer from 50 to 60000/);
  t.match(configError(t, { WEBHOOK_CONCURRENCY: '0' }).message, /WEBHOOK_CONCURRENCY must be an integer from 1 to 256/);
});

t.test('loadConfig: "per-venue config: enabled, base URL, credentials from the environment, timeout, instrument admins" (VENUES=live)', async (t) => {
  const { venuesMode, liveVenues } = loadConfig({ ...LIVE, ONESWAP_ENABLED: 'false', TRADECRAFT_URL: 'http://127.0.0.1:9000/v1', TEMPLE_TIMEOUT_MS: '300' });
  t.equal(venuesMode, 'live');
  t.strictSame(liveVenues.venues.tradecraft, { enabled: true, baseUrl: 'http://127.0.0.1:9000/v1', apiKey: null, timeoutMs: 800 });
  t.strictSame(liveVenues.venues.temple, { enabled: true, baseUrl: 'https://api.temple.example', apiKey: 'temple-secret', timeoutMs: 300 }, 'a trailing slash is dropped');
  t.equal(liveVenues.venues.oneswap.enabled, false);
  t.strictSame(liveVenues.cantexInstrumentAdmins, { Amulet: PARTY('dso'), USDCx: PARTY('circle'), CBTC: PARTY('bitsafe') });
  t.equal(liveVenues.nightlyRecipient, PARTY('bestex-quotes'));
});

t.test('loadConfig: TOKEN_REGISTRIES names each instrument admin\'s token registry (https unless on this machine); unset, none', async (t) => {
  t.strictSame(loadConfig(LIVE).tokenRegistries, {}, 'none by default');
  const registries = loadConfig({ ...LIVE, TOKEN_REGISTRIES: `${PARTY('dso')}=https://scan.example/registry/, ${PARTY('circle')}=http://127.0.0.1:7000` }).tokenRegistries;
  t.strictSame(registries, { [PARTY('dso')]: 'https://scan.example/registry', [PARTY('circle')]: 'http://127.0.0.1:7000' });
  t.match(configError(t, { ...LIVE, TOKEN_REGISTRIES: `${PARTY('dso')}=http://registry.example` }).message, /TOKEN_REGISTRIES must be "<instrument admin party>=<registry URL>,\.\.\."/, 'plain http off this machine is refused');
  t.match(configError(t, { ...LIVE, TOKEN_REGISTRIES: 'dso=https://registry.example' }).message, /TOKEN_REGISTRIES must be/, 'an admin that is no party id is refused');
  t.match(configError(t, { ...LIVE, TOKEN_REGISTRIES: PARTY('dso') }).message, /TOKEN_REGISTRIES must be/, 'an entry without a URL is refused');
});

t.test('loadConfig: VENUES=live without what an enabled venue needs stops start-up, naming each variable and never showing a key', async (t) => {
  const err = configError(t, { VENUES: 'live' });
  const text = err.problems.join('\n');
  for (const name of ['CANTEX_API_KEY', 'ONESWAP_API_KEY', 'TEMPLE_API_KEY', 'TEMPLE_URL', 'CANTEX_INSTRUMENT_ADMINS', 'NIGHTLY_RECIPIENT', 'TRADECRAFT_POOL_PARTIES', 'LEDGER_URL']) t.match(text, name);
  const tradecraftOnly = { VENUES: 'live', CANTEX_ENABLED: 'false', ONESWAP_ENABLED: 'false', TEMPLE_ENABLED: 'false', NIGHTLY_ENABLED: 'false' };
  t.doesNotThrow(() => loadConfig({ ...tradecraftOnly, TRADECRAFT_POOL_PARTIES: LIVE.TRADECRAFT_POOL_PARTIES, LEDGER_URL: LIVE.LEDGER_URL }), 'a venue turned off needs nothing');
  t.match(configError(t, { ...LIVE, CANTEX_INSTRUMENT_ADMINS: 'Amulet=dso' }).message, /CANTEX_INSTRUMENT_ADMINS must be "Amulet=<party>,USDCx=<party>,CBTC=<party>"/);
  t.match(configError(t, { ...LIVE, TRADECRAFT_URL: 'ftp://x' }).message, /TRADECRAFT_URL must be an http\(s\):\/\/ URL without credentials, query or fragment/);
  t.match(configError(t, { VENUES: 'staging' }).message, /VENUES must be "sandbox" or "live"/);
  t.doesNotThrow(() => loadConfig({}), 'the sandbox needs none of it');
});

t.test('loadConfig: "the venue\'s pool party per pair is configuration" (TRADECRAFT_POOL_PARTIES; sandbox pools by default)', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const applied = withSandbox(loadConfig({}), readManifest(sandbox.manifest), sandbox.ledgerToken);
  t.strictSame(applied.poolParties, SANDBOX_POOLS, 'the sandbox pools without configuration, as its manifest says');
  t.strictSame(applied.ledgerReadAs, Object.values(SANDBOX_POOLS), 'and read as by default');
  t.equal(applied.sandboxUrl, sandbox.manifest.sandbox, 'the applied configuration names the sandbox it found, started or given');
  const own = { 'CC/USDCx': PARTY('mine') };
  t.strictSame(withSandbox(loadConfig({ TRADECRAFT_POOL_PARTIES: `CC/USDCx=${PARTY('mine')}` }), readManifest(sandbox.manifest), 't').poolParties, own, 'TRADECRAFT_POOL_PARTIES, when set, wins');
  t.strictSame(loadConfig({ ...LIVE, TRADECRAFT_POOL_PARTIES: `usdcx / cc=${PARTY('a')}, Amulet/CBTC=${PARTY('b')}` }).poolParties, { 'CC/USDCx': PARTY('a'), 'CC/CBTC': PARTY('b') }, 'pairs named as the API accepts tokens, in either order');
  for (const bad of [`USDCx/CBTC=${PARTY('a')}`, `CC/CC=${PARTY('a')}`, 'CC/USDCx=alice', `CC/USDCx=${PARTY('a')},USDCx/CC=${PARTY('b')}`, `CC/ETH=${PARTY('a')}`, 'CC-USDCx']) {
    t.match(configError(t, { TRADECRAFT_POOL_PARTIES: bad }).message, /TRADECRAFT_POOL_PARTIES must be "CC\/USDCx=<party>,CC\/CBTC=<party>"/, bad);
  }
});

t.test('loadConfig: the ledger outcomes are read from: the sandbox ledger on loopback by default; VENUES=live needs LEDGER_URL; the token is never shown nor sent in the clear', async (t) => {
  t.match(configError(t, { LEDGER_URL: 'http://10.0.0.5:7575' }).message, /LEDGER_URL must be an http:\/\/ URL on this machine/, 'the sandbox ledger listens on loopback only');
  t.match(configError(t, { LEDGER_URL: 'http://127.0.0.1' }).message, /LEDGER_URL must be/, 'the sandbox ledger needs a port said');
  t.match(configError(t, { LEDGER_URL: 'http://127.0.0.1:7575/v2' }).message, /LEDGER_URL must be/, 'and no path');
  t.equal(loadConfig({ LEDGER_URL: 'http://127.0.0.1:0' }).ledgerUrl, 'http://127.0.0.1:0', 'port 0: any free port');
  const live = loadConfig(LIVE);
  t.equal(live.ledgerUrl, 'https://participant.example');
  t.equal(live.ledgerToken, null, 'a participant without auth needs no token');
  t.strictSame(live.ledgerReadAs, [PARTY('tc-pool-usdcx')], 'the pool parties are read as by default');
  const tokenInClear = configError(t, { ...LIVE, LEDGER_URL: 'http://participant.example', LEDGER_TOKEN: 'hunter2-jwt' });
  t.match(tokenInClear.message, /LEDGER_URL must be an http\(s\):\/\/ URL .*https unless on this machine/);
  t.notMatch(tokenInClear.message, /participant\.example|hunter2/, 'neither the URL nor the token is shown');
  t.equal(loadConfig({ ...LIVE, LEDGER_URL: 'http://127.0.0.1:7575', LEDGER_TOKEN: 'jwt' }).ledgerUrl, 'http://127.0.0.1:7575', 'plain http on this machine is fine');
  const badToken = configError(t, { LEDGER_TOKEN: 'has hunter2 space' });
  t.match(badToken.message, /LEDGER_TOKEN must be printable ASCII without spaces/);
  t.notMatch(badToken.message, /hunter2/);
  for (const bad of ['alice', `${PARTY('a')},${PARTY('a')}`, `${PARTY('a')},`]) t.match(configError(t, { LEDGER_READ_AS: bad }).message, /LEDGER_READ_AS must be one or more ledger party ids/, bad);
  t.match(configError(t, { LEDGER_PAGE_SIZE: '0' }).message, /LEDGER_PAGE_SIZE must be an integer from 1 to 10000/);
  t.match(configError(t, { LEDGER_TIMEOUT_MS: 'soon' }).message, /LEDGER_TIMEOUT_MS must be an integer from 1 to 120000/);
  t.match(configError(t, { OUTCOME_TIMEOUT_MS: '0' }).message, /OUTCOME_TIMEOUT_MS must be an integer from 1 to 120000/);
});

t.test('loadConfig: fee parties: SERVICE_FEE_PARTY is required while fees are collected; no fee party is a pool party', async (t) => {
  t.match(configError(t, { FEE_COLLECTION_ENABLED: 'true' }).message, /SERVICE_FEE_PARTY is required with FEE_COLLECTION_ENABLED=true/);
  const config = loadConfig({ FEE_COLLECTION_ENABLED: 'true', SERVICE_FEE_PARTY: PARTY('svc'), B2C_FEE_PARTY: PARTY('b2c') });
  t.equal(config.serviceFeeParty, PARTY('svc'));
  t.equal(config.b2cFeeParty, PARTY('b2c'));
  t.equal(loadConfig({ FEE_COLLECTION_ENABLED: 'true', SERVICE_FEE_PARTY: PARTY('svc') }).b2cFeeParty, null, 'B2C_FEE_PARTY may be left unset: keyless collecting plans then answer 503');
  t.match(configError(t, { B2C_FEE_PARTY: 'nope' }).message, /B2C_FEE_PARTY must be a ledger party id/);
  t.match(configError(t, { ...LIVE, SERVICE_FEE_PARTY: PARTY('tc-pool-usdcx') }).message, /SERVICE_FEE_PARTY must not be a pool party/);
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  t.throws(() => withSandbox(loadConfig({ SERVICE_FEE_PARTY: SANDBOX_POOLS['CC/USDCx']! }), readManifest(sandbox.manifest), 't'), { name: 'ConfigError', message: /SERVICE_FEE_PARTY must not be a pool party/ }, 'nor one of the sandbox\'s');
});

t.test('loadConfig: SANDBOX_URL, a running sandbox, needs LEDGER_TOKEN and VENUES=sandbox', async (t) => {
  t.equal(loadConfig({ SANDBOX_URL: 'http://127.0.0.1:4100/', LEDGER_TOKEN: 'tok' }).sandboxUrl, 'http://127.0.0.1:4100');
  t.match(configError(t, { SANDBOX_URL: 'http://127.0.0.1:4100' }).message, /LEDGER_TOKEN is required with SANDBOX_URL/);
  t.match(configError(t, { ...LIVE, SANDBOX_URL: 'http://127.0.0.1:4100' }).message, /SANDBOX_URL is for VENUES=sandbox/);
  const credentials = configError(t, { SANDBOX_URL: 'http://u:hunter2@127.0.0.1:4100', LEDGER_TOKEN: 'tok' });
  t.match(credentials.message, /SANDBOX_URL must be an http\(s\):\/\/ URL without credentials/);
  t.notMatch(credentials.message, /hunter2/, 'a refused SANDBOX_URL is not shown: it may hold a password');
  t.match(configError(t, { SANDBOX_URL: 'http://sandbox.example:4100', LEDGER_TOKEN: 'tok' }).message, /https unless on this machine/, 'the ledger token never goes in the clear off this machine');
  t.equal(loadConfig({ SANDBOX_URL: 'https://sandbox.example', LEDGER_TOKEN: 'tok' }).sandboxUrl, 'https://sandbox.example');
});

t.test('loadConfig: venue URLs and keys are refused without being shown: credentials or a query in a URL, a key sent over plain http, a blank key', async (t) => {
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ TEMPLE_URL: 'https://t.example/v1?key=hunter2' }, 'TEMPLE_URL', 'hunter2'],
    [{ TRADECRAFT_URL: 'https://user:hunter2@api.tradecraft.fi/v1' }, 'TRADECRAFT_URL', 'hunter2'],
    [{ CANTEX_URL: 'http://cantex.example' }, 'CANTEX_URL', 'cantex.example'],
    [{ CANTEX_API_KEY: 'has hunter2 space' }, 'CANTEX_API_KEY', 'hunter2'],
    [{ ONESWAP_API_KEY: '   ' }, 'ONESWAP_API_KEY', '   '],
  ];
  for (const [env, name, secret] of cases) {
    const err = configError(t, { ...LIVE, ...env });
    t.match(err.message, new RegExp(`${name} must be`), name);
    t.notOk(err.message.includes(`(got ${JSON.stringify(secret)}`) || (secret.trim() !== '' && err.message.includes(secret)), `${name}: the value is not shown`);
  }
  t.equal(loadConfig({ ...LIVE, TEMPLE_URL: 'http://127.0.0.1:9000' }).liveVenues.venues.temple.baseUrl, 'http://127.0.0.1:9000', 'plain http on this machine is fine');
});

t.test('loadConfig: VENUES=live keeps tradecraft, the v1 execution venue, and no venue waits past VENUE_TIMEOUT_MS', async (t) => {
  t.match(configError(t, { ...LIVE, TRADECRAFT_ENABLED: 'false' }).message, /tradecraft is the v1 execution venue/);
  t.match(configError(t, { ...LIVE, VENUE_TIMEOUT_MS: '500', CANTEX_TIMEOUT_MS: '600' }).message, /CANTEX_TIMEOUT_MS must be an integer from 1 to VENUE_TIMEOUT_MS \(500\)/);
});

t.test('loadConfig: a bad REDIS_URL stops start-up without showing the value, which may hold a password', async (t) => {
  const err = configError(t, { REDIS_URL: 'localhost:6379?password=hunter2' });
  t.match(err.message, /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/);
  t.notMatch(err.message, /hunter2/);
});

t.test('loadConfig: "IDEMPOTENCY_SECRET required when REDIS_URL is set", one clear line when missing or too short, never showing it; without REDIS_URL none is needed', async (t) => {
  const missing = configError(t, { REDIS_URL: 'redis://127.0.0.1:6379' });
  t.strictSame(missing.problems, [
    'IDEMPOTENCY_SECRET is required with REDIS_URL: one secret of at least 32 characters shared by every instance, so the plan records in Redis let no reader test a guessed taker or caller (openssl rand -hex 32 makes one)',
  ]);
  const short = configError(t, { REDIS_URL: 'redis://127.0.0.1:6379', IDEMPOTENCY_SECRET: 'hunter2-is-too-short' });
  t.equal(short.problems.length, 1, 'one line');
  t.match(short.message, /IDEMPOTENCY_SECRET must be at least 32 printable ASCII characters without spaces/);
  t.notMatch(short.message, /hunter2/, 'the value is not shown');
  t.equal(loadConfig({}).idempotencySecret, null, 'in-process state: a random secret of the process\'s own (core/services.ts)');
  t.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }, { serviceBuild: 'dev', makesPlans: false }).idempotencySecret, null, 'a program that makes no plans (the keys CLI) needs none');
});

t.test('loadConfig: "TRUST_PROXY must be \\"false\\", \\"true\\" or a number of proxies" — names inherited from Object.prototype are bad values too', async (t) => {
  for (const value of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
    let result: unknown;
    let thrown: unknown;
    try {
      result = loadConfig({ TRUST_PROXY: value }).trustProxyHops;
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof ConfigError, `TRUST_PROXY=${value} throws ConfigError (got trustProxyHops ${typeof result})`);
  }
});

t.test('loadConfig: "several bad values are all reported at once"', async (t) => {
  const err = configError(t, { PORT: 'abc', LOG_LEVEL: 'loud', TRUST_PROXY: 'yes', HOST: '127.0.0.1' });
  t.equal(err.problems.length, 3, 'three problems, not just the first');
  for (const name of ['PORT', 'LOG_LEVEL', 'TRUST_PROXY']) {
    t.ok(err.problems.some((p) => new RegExp(`^'?${name}\\b`).test(p)), `a problem names ${name}`);
    t.match(err.message, name, `the message names ${name}`);
  }
  t.notMatch(err.message, 'HOST', 'the good value is not reported');
  t.match(err.message, /^invalid configuration:\n  - /);
});

t.test('core/party.ts checks party ids with exactly the spec\'s PartyId pattern', async (t) => {
  const { loadSpec } = await import('../helpers/spec.js');
  const schemas = (loadSpec().document.components as { schemas: Record<string, { pattern?: string }> }).schemas;
  t.equal(PARTY_ID.source, schemas.PartyId!.pattern);
});

t.test('"The configuration table lists every variable the service reads": docs/operations.md\'s table and loadConfig name the same variables', async (t) => {
  // Every name loadConfig asks the environment for, in both venue modes (a mode may read more).
  const read = new Set<string>();
  const recording = (base: Record<string, string>) =>
    new Proxy(base, {
      get(target, name) {
        if (typeof name !== 'string') return undefined;
        read.add(name);
        return target[name];
      },
    });
  loadConfig(recording({}));
  t.throws(() => loadConfig(recording({ VENUES: 'live' })), ConfigError, 'live mode without its variables is refused, after reading them all');
  t.ok(read.size > 20, `loadConfig read ${read.size} variables`);

  const doc = readFileSync(path.join(repoRoot(), 'docs', 'operations.md'), 'utf8');
  const start = doc.indexOf('\n## Configuration\n');
  t.ok(start >= 0, 'docs/operations.md has a Configuration section');
  const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
  const venues = ['TRADECRAFT', 'CANTEX', 'ONESWAP', 'NIGHTLY', 'TEMPLE'];
  const documented = new Set(
    [...section.matchAll(/^\| `([A-Z0-9_<>]+)` \|/gm)].flatMap(([, name]) =>
      name!.startsWith('<VENUE>_') ? venues.map((venue) => name!.replace('<VENUE>', venue)) : [name!],
    ),
  );
  t.strictSame([...read].filter((name) => !documented.has(name)).sort(), [], 'every variable loadConfig reads has a row in the table');
  t.strictSame([...documented].filter((name) => !read.has(name)).sort(), [], 'every row in the table is a variable loadConfig reads');
});
