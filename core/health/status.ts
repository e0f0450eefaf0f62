// The liveness and status reads over the liveness monitor.
import { badRequest } from '../errors.js';
import type { LivenessMonitor } from './liveness.js';
import { pairKey, resolvePair } from '../tokens.js';
import type { GetLivenessQuery, Liveness, StatusSummary } from '../contract/v1.js';

export interface HealthOptions {
  readonly monitor: LivenessMonitor;
  readonly venueIds: readonly string[];
  /** The v1 execution venue, the default subject of a liveness read. */
  readonly supportedVenueId: string;
  /** Whether plans can be made now: served, not (their records' store unreachable), or refused at the instance's bound on plan records. */
  readonly plans: () => 'served' | 'not_served' | 'at_capacity';
  /** The shared state: this process's memory, a shared store that answers, one that does not, or one that lost its data. */
  readonly sharedState: () => 'in-process' | 'shared' | 'unreachable' | 'lost';
  /** Whether the last key lookup could read the key store. */
  readonly keyStore: () => 'ok' | 'unreadable';
  /** Whether the last outcome could read the ledger. */
  readonly ledger: () => 'ok' | 'unreadable';
  /** The sandbox the service started: up, or restarting since it stopped; null when it runs none. */
  readonly sandbox?: () => 'up' | 'restarting' | null;
}

export function venueLiveness(query: GetLivenessQuery, options: HealthOptions): Liveness {
  const venue = query.venue ?? options.supportedVenueId;
  if (!options.venueIds.includes(venue)) {
    throw badRequest(`unknown venue '${venue}': integrated venues are ${[...options.venueIds].sort().join(', ')}`);
  }
  if ((query.from === undefined) !== (query.to === undefined)) throw badRequest("'from' and 'to' must be sent together");
  if (query.from === undefined || query.to === undefined) return { venue, state: options.monitor.stateOf(venue) };
  const { give, want } = resolvePair(query.from, query.to);
  return { venue, state: options.monitor.stateOf(venue, pairKey(give, want)) };
}

export function statusSummary(options: HealthOptions): StatusSummary {
  const venues = options.monitor.snapshot();
  const live = venues.filter((v) => v.state === 'live').length;
  const dead = venues.filter((v) => v.state === 'dead').length;
  const supportedLive = options.monitor.stateOf(options.supportedVenueId) === 'live';
  const shared = options.sharedState();
  const keyStore = options.keyStore();
  const ledger = options.ledger();
  const plans = options.plans();
  const sandbox = options.sandbox?.() ?? null;
  const venueState: StatusSummary['state'] =
    live === venues.length ? 'ok' : dead === 0 ? 'starting' : live === 0 ? 'down' : 'degraded';
  // Without its shared state or key store the service still quotes, but keyed requests get 503
  // (and, without the shared state, rate limits hold per instance only); without its ledger,
  // outcomes get 500. A sandbox being restarted is known from its exit, before any probe fails.
  const impaired = plans === 'at_capacity' || shared === 'unreachable' || shared === 'lost' || keyStore === 'unreadable' || ledger === 'unreadable' || sandbox === 'restarting';
  const state = impaired && venueState !== 'down' ? 'degraded' : venueState;
  return {
    mode: plans === 'served' && supportedLive ? 'live' : 'monitor',
    state,
    components: [
      ...venues.map((v) => ({ component: `venue:${v.venue}`, state: v.state })),
      { component: 'plans', state: plans },
      { component: 'shared-state', state: shared },
      { component: 'key-store', state: keyStore },
      { component: 'rate-limits', state: shared === 'shared' ? 'shared' : 'per-instance' },
      { component: 'ledger', state: ledger },
      ...(sandbox === null ? [] : [{ component: 'sandbox', state: sandbox }]),
    ],
  };
}
