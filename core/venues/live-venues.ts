// The real venues, built from their configuration (core/config.ts, `VENUES=live`): each enabled
// venue's adapter with its base URL, credentials and timeout.
import type { Token } from '../tokens.js';
import type { Venue } from './venue.js';
import { CANTEX_BASE_URL, CantexVenue } from './cantex.js';
import { NIGHTLY_BASE_URL, NightlyVenue } from './nightly.js';
import { ONESWAP_BASE_URL, OneSwapVenue } from './oneswap.js';
import { TempleVenue } from './temple.js';
import { TRADECRAFT_BASE_URL, TradecraftVenue } from './tradecraft.js';

export const LIVE_VENUE_IDS = ['tradecraft', 'cantex', 'oneswap', 'nightly', 'temple'] as const;
export type LiveVenueId = (typeof LIVE_VENUE_IDS)[number];

/** The venues that are sent a credential. */
export const KEYED_VENUES: readonly LiveVenueId[] = ['cantex', 'oneswap', 'temple'];

/** Each venue's public base URL; Temple publishes none, so its URL must be configured. */
export const DEFAULT_BASE_URLS: Readonly<Record<LiveVenueId, string>> = {
  tradecraft: TRADECRAFT_BASE_URL,
  cantex: CANTEX_BASE_URL,
  oneswap: ONESWAP_BASE_URL,
  nightly: NIGHTLY_BASE_URL,
  temple: '',
};

export interface LiveVenueConfig {
  readonly enabled: boolean;
  readonly baseUrl: string;
  /** The venue's credential (Cantex: a bearer key; OneSwap, Temple: an API key); never logged. */
  readonly apiKey: string | null;
  readonly timeoutMs: number;
}

export interface LiveVenuesConfig {
  readonly venues: Readonly<Record<LiveVenueId, LiveVenueConfig>>;
  /** Cantex names instruments by id and registry admin party. */
  readonly cantexInstrumentAdmins: Readonly<Record<Token['instrument'], string>> | null;
  /** The party Nightly is sent as `recipient` at quote time, when there is no taker yet. */
  readonly nightlyRecipient: string | null;
  /** Tradecraft's pool party per pair (TRADECRAFT_POOL_PARTIES), where its execution terms send the deposit. */
  readonly tradecraftPoolParties?: Readonly<Record<string, string>>;
}

/** What each enabled venue needs beyond a base URL, as config errors; empty when all is there. */
export function missingLiveVenueConfig(config: LiveVenuesConfig): string[] {
  const missing: string[] = [];
  const { venues } = config;
  if (!venues.tradecraft.enabled) missing.push('TRADECRAFT_ENABLED=false: tradecraft is the v1 execution venue; it cannot be turned off');
  for (const id of KEYED_VENUES) {
    if (venues[id].enabled && venues[id].apiKey === null) missing.push(`${id.toUpperCase()}_API_KEY is required with VENUES=live (or set ${id.toUpperCase()}_ENABLED=false)`);
  }
  if (venues.temple.enabled && venues.temple.baseUrl === '') missing.push('TEMPLE_URL is required with VENUES=live: Temple publishes no public base URL (or set TEMPLE_ENABLED=false)');
  if (venues.cantex.enabled && config.cantexInstrumentAdmins === null) missing.push('CANTEX_INSTRUMENT_ADMINS is required with VENUES=live (or set CANTEX_ENABLED=false)');
  if (venues.nightly.enabled && config.nightlyRecipient === null) missing.push('NIGHTLY_RECIPIENT is required with VENUES=live (or set NIGHTLY_ENABLED=false)');
  return missing;
}

/** The enabled venues' adapters; the configuration has passed missingLiveVenueConfig. */
export function createLiveVenues(config: LiveVenuesConfig): Venue[] {
  const { venues } = config;
  const http = (id: LiveVenueId, headers: Record<string, string> = {}) => ({ baseUrl: venues[id].baseUrl, timeoutMs: venues[id].timeoutMs, headers });
  const key = (id: LiveVenueId): string => venues[id].apiKey ?? '';
  const build: Record<LiveVenueId, () => Venue> = {
    tradecraft: () => new TradecraftVenue({ ...http('tradecraft'), poolParties: config.tradecraftPoolParties }),
    cantex: () => new CantexVenue({ ...http('cantex', { authorization: `Bearer ${key('cantex')}` }), instrumentAdmins: config.cantexInstrumentAdmins! }),
    oneswap: () => new OneSwapVenue(http('oneswap', { 'x-api-key': key('oneswap') })),
    nightly: () => new NightlyVenue({ ...http('nightly'), recipient: config.nightlyRecipient! }),
    temple: () => new TempleVenue(http('temple', { 'x-api-key': key('temple') })),
  };
  return LIVE_VENUE_IDS.filter((id) => venues[id].enabled).map((id) => build[id]());
}
