// The sandbox's manifest, as the service reads it: where the sandbox's venues and ledger listen and
// the parties and credentials a deployment would configure for real ones. It arrives from another
// program (its announced line, or GET <SANDBOX_URL>/sandbox/v1/manifest), so it is checked field by
// field before it becomes configuration, and it is applied as configuration: the service then runs
// exactly the adapters and settings `VENUES=live` runs.
import { ConfigError, feePartyProblems, LOOPBACK_HOSTS, type Config } from '../config.js';
import { isPartyId } from '../party.js';
import { pairKey, resolveToken, CC, TOKENS, type Token } from '../tokens.js';
import { LIVE_VENUE_IDS, type LiveVenueId, type LiveVenuesConfig } from '../venues/live-venues.js';

export interface SandboxManifest {
  readonly sandbox: string;
  readonly venues: Readonly<Record<LiveVenueId, string>>;
  readonly venueKeys: Readonly<Partial<Record<LiveVenueId, string>>>;
  readonly ledger: string;
  /** Each instrument admin's token registry, by admin party. */
  readonly registries: Readonly<Record<string, string>>;
  /** Its wallet gateway's remote dApp API, for dApps (the service does not use it). */
  readonly walletGateway: string;
  readonly poolParties: Readonly<Record<string, string>>;
  readonly instrumentAdmins: Readonly<Record<Token['instrument'], string>>;
  readonly nightlyRecipient: string;
  /** Whether its participant has Splice's batching utility package (wallets' business: the service does not use it); false when the manifest does not say. */
  readonly batchingUtility: boolean;
}

/** The sandbox's manifest is not one the service can use; the message says which field. */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function httpUrl(value: unknown, field: string): string {
  let parsed: URL | null = null;
  try {
    parsed = typeof value === 'string' ? new URL(value) : null;
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new ManifestError(`${field} is not an http(s) URL`);
  }
  // Keys and the ledger's token go to these addresses: never in the clear off this machine.
  if (parsed.protocol === 'http:' && !LOOPBACK_HOSTS.includes(parsed.hostname)) throw new ManifestError(`${field} is plain http off this machine`);
  return (value as string).replace(/\/+$/, '');
}

function party(value: unknown, field: string): string {
  if (!isPartyId(value)) throw new ManifestError(`${field} is not a ledger party id`);
  return value;
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (!isObject(value)) throw new ManifestError(`${field} is not an object`);
  return value;
}

/** The manifest in `value`, checked; ManifestError names the first field that is wrong. */
export function readManifest(value: unknown): SandboxManifest {
  const m = record(value, 'the manifest');
  const venues = record(m.venues, 'venues');
  const keys = record(m.venueKeys ?? {}, 'venueKeys');
  const venueKeys: Partial<Record<LiveVenueId, string>> = {};
  for (const id of LIVE_VENUE_IDS) {
    const key = keys[id];
    if (key === undefined) continue;
    if (typeof key !== 'string' || !/^[\x21-\x7e]+$/.test(key)) throw new ManifestError(`venueKeys.${id} is not printable ASCII without spaces`);
    venueKeys[id] = key;
  }
  const pools = record(m.poolParties, 'poolParties');
  const poolParties: Record<string, string> = {};
  for (const [pair, pool] of Object.entries(pools)) {
    let tokens: Token[];
    try {
      tokens = pair.split('/').map((symbol) => resolveToken(symbol, 'poolParties'));
    } catch {
      throw new ManifestError(`poolParties names a pair that is not one: ${JSON.stringify(pair)}`);
    }
    if (tokens.length !== 2 || tokens[0] === tokens[1] || !tokens.includes(CC)) throw new ManifestError(`poolParties names a pair without a CC leg: ${JSON.stringify(pair)}`);
    poolParties[pairKey(tokens[0]!, tokens[1]!)] = party(pool, `poolParties.${pair}`);
  }
  if (Object.keys(poolParties).length === 0) throw new ManifestError('poolParties names no pool');
  const admins = record(m.instrumentAdmins, 'instrumentAdmins');
  const registries = Object.fromEntries(Object.entries(record(m.registries, 'registries')).map(([admin, url]) => [party(admin, 'registries'), httpUrl(url, `registries.${admin.split('::')[0]}`)]));
  return {
    sandbox: httpUrl(m.sandbox, 'sandbox'),
    venues: Object.fromEntries(LIVE_VENUE_IDS.map((id) => [id, httpUrl(venues[id], `venues.${id}`)])) as Record<LiveVenueId, string>,
    venueKeys,
    ledger: httpUrl(m.ledger, 'ledger'),
    registries,
    walletGateway: httpUrl(m.walletGateway, 'walletGateway'),
    poolParties,
    instrumentAdmins: Object.fromEntries(TOKENS.map((t) => [t.instrument, party(admins[t.instrument], `instrumentAdmins.${t.instrument}`)])) as Record<Token['instrument'], string>,
    nightlyRecipient: party(m.nightlyRecipient, 'nightlyRecipient'),
    // A sandbox older than the batching utility wrote no such field: its participant did not have the package.
    batchingUtility: m.batchingUtility === undefined ? false : flag(m.batchingUtility, 'batchingUtility'),
  };
}

function flag(value: unknown, field: string): boolean {
  if (typeof value !== 'boolean') throw new ManifestError(`${field} is not true or false`);
  return value;
}

/**
 * The configuration of a service that uses this sandbox: its venues and ledger where it says, with
 * its credentials and parties. TRADECRAFT_POOL_PARTIES and LEDGER_READ_AS, when set, still win;
 * ConfigError when a fee party is one of the sandbox's pool parties.
 */
export function withSandbox(config: Config, manifest: SandboxManifest, ledgerToken: string): Config {
  const liveVenues = sandboxVenuesConfig(manifest, config.venueTimeoutMs);
  const poolParties = Object.keys(config.poolParties).length > 0 ? config.poolParties : manifest.poolParties;
  const applied: Config = {
    ...config,
    liveVenues,
    poolParties,
    // However it was found, the configuration the service runs with says where its sandbox is.
    sandboxUrl: manifest.sandbox,
    sandboxRegistries: manifest.registries,
    ledgerUrl: manifest.ledger,
    ledgerToken,
    ledgerReadAs: config.ledgerReadAs.length > 0 ? config.ledgerReadAs : [...new Set(Object.values(poolParties))],
  };
  const problems = feePartyProblems(applied);
  if (problems.length > 0) throw new ConfigError(problems);
  return applied;
}

/** The venue adapters' settings for the sandbox's venues: every one enabled, with its credential. */
export function sandboxVenuesConfig(manifest: SandboxManifest, timeoutMs: number): LiveVenuesConfig {
  return {
    venues: Object.fromEntries(
      LIVE_VENUE_IDS.map((id) => [id, { enabled: true, baseUrl: manifest.venues[id], apiKey: manifest.venueKeys[id] ?? null, timeoutMs }]),
    ) as LiveVenuesConfig['venues'],
    cantexInstrumentAdmins: manifest.instrumentAdmins,
    nightlyRecipient: manifest.nightlyRecipient,
  };
}
