// Wires the core from configuration: the embedded defaults, with any port replaced by an override
// (tests, and later the real adapters).
import type { Config } from './config.js';
import { emptyKeyStore, type KeyVerifier } from './keys.js';
import { LivenessMonitor } from './liveness.js';
import type { HealthOptions } from './health.js';
import { QuoteService } from './quote-service.js';
import { createSandboxVenues } from './sandbox/market.js';
import type { Venue } from './venue.js';

/** The v1 execution venue. */
export const SUPPORTED_VENUE_ID = 'tradecraft';

/** Core's view of a logger: pino-compatible, and nothing else of it. */
export interface CoreLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface CoreOverrides {
  readonly venues?: readonly Venue[];
  readonly keys?: KeyVerifier;
  readonly now?: () => Date;
}

export interface CoreServices {
  readonly quotes: QuoteService;
  readonly monitor: LivenessMonitor;
  readonly health: HealthOptions;
  readonly keys: KeyVerifier;
}

export function createServices(config: Config, log: CoreLog, overrides: CoreOverrides = {}): CoreServices {
  const venues = overrides.venues ?? createSandboxVenues();
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
    isVenueDown: (venueId) => monitor.isDown(venueId),
    onVenueError: (venueId, err) => log.warn({ venueId, err }, 'venue quote failed'),
    now: overrides.now ?? (() => new Date()),
  });
  const health: HealthOptions = {
    monitor,
    venueIds: venues.map((v) => v.id),
    supportedVenueId: SUPPORTED_VENUE_ID,
    plansServed: false,
  };
  return { quotes, monitor, health, keys: overrides.keys ?? emptyKeyStore };
}
