// The metrics port (core/metrics.ts) as Prometheus metrics, with prom-client, in a registry of the
// app's own (never prom-client's global one: a process may hold several apps, as the tests do).
// Every label value comes from a closed set: an operationId of the spec, the API version its path
// belongs to ('1' or '2': both versions name their operations alike), a status code, a venue id
// of the configuration, a code of the spec's enums, a component of the status. Nothing a caller
// sends reaches a label, so no party, key or URL can.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EndedSwap, KeyVerificationResult, Metrics, PlanResult, RateLimitName } from '../../core/metrics.js';
import { Decimal } from '../../core/decimal.js';
import type { PlanRoute } from '../../core/plans/params.js';
import { statusSummary, type HealthOptions } from '../../core/health/status.js';
import type { OutcomeStatus, RejectionCode } from '../../core/contract/v1.js';
import { apiVersionOf, type ApiVersion } from './api-version.js';
import { CellHistogram } from './cell-histogram.js';

/** The operation label of a request no operation answered (a 404, the spec, the SDK's scripts, a 405). */
export const NO_OPERATION = 'none';

// A cached quote is answered in tens of microseconds, a plan or an outcome in milliseconds.
const REQUEST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// VENUE_TIMEOUT_MS is 800 by default and at most 30,000.
const VENUE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 2.5, 5, 10, 30];

/** What the access log tells the metrics of each finished request. */
export interface RequestMetrics {
  requestCompleted(request: FastifyRequest, reply: FastifyReply, elapsedMs: number): void;
}

type Observer = { observe(value: number): void };
type Incrementer = { inc(): void };

/** A labelled child made once for each label value seen, so a repeated event costs a map read. */
function children<T>(make: (value: string) => T): (value: string) => T {
  const made = new Map<string, T>();
  return (value) => {
    let child = made.get(value);
    if (child === undefined) made.set(value, (child = make(value)));
    return child;
  };
}

export class PrometheusMetrics implements Metrics, RequestMetrics {
  readonly registry = new Registry();
  // The cache counters are read on every quote: plain numbers, handed to prom-client when scraped.
  private cacheHits = 0;
  private cacheMisses = 0;
  private readonly requestDurations: (operationId: string) => (version: ApiVersion) => (status: number) => Observer;
  private readonly venueQuotes: (venueId: string) => (result: string) => Incrementer;
  private readonly venueDurations: (venueId: string) => Observer;
  private readonly rateLimitedBy: (limit: string) => Incrementer;
  private readonly plans: (route: string) => (result: string) => Incrementer;
  private readonly plansAtStateCap: Counter;
  private readonly guardrailTrips: (route: string) => Incrementer;
  private readonly keyVerifications: (result: string) => Incrementer;
  private readonly outcomes: (status: string) => Incrementer;
  private readonly swaps: (outcome: string) => Incrementer;
  private readonly swapLegs: (venue: string) => (outcome: string) => Incrementer;
  /** Volume by token and side, summed exactly; a float only as the scrape's text. */
  private readonly volume = new Map<string, { token: string; side: string; amount: Decimal }>();
  private health: HealthOptions | null = null;

  constructor() {
    const registers = [this.registry];
    // Observed on every request: cells of its own, not prom-client's labelled children.
    const requests = new CellHistogram<'operation' | 'version' | 'status'>(
      'bestex_http_request_duration_seconds',
      'Requests answered, by operationId ("none": no operation answered), API version (the path\'s: 1, or 2 under /api/v2) and status code, and the time to answer them',
      REQUEST_BUCKETS,
      this.registry,
    );
    this.requestDurations = children((operation) =>
      children((version) => {
        const byStatus = new Map<number, Observer>();
        return (status: number) => {
          let cell = byStatus.get(status);
          if (cell === undefined) byStatus.set(status, (cell = requests.cell({ operation, version, status: String(status) })));
          return cell;
        };
      }),
    );
    const metrics = this;
    new Counter({
      name: 'bestex_quote_cache_total',
      help: 'Base quotes read from a cache (hit: this instance\'s, the shared one or one in flight) or computed (miss)',
      labelNames: ['result'],
      registers,
      collect() {
        this.reset();
        this.inc({ result: 'hit' }, metrics.cacheHits);
        this.inc({ result: 'miss' }, metrics.cacheMisses);
      },
    });
    const venueQuotes = new Counter({
      name: 'bestex_venue_quotes_total',
      help: 'Each venue\'s part in the quotes computed: available, or its rejectionCode',
      labelNames: ['venue', 'result'],
      registers,
    });
    this.venueQuotes = children((venue) => children((result) => venueQuotes.labels(venue, result)));
    const venueDurations = new Histogram({
      name: 'bestex_venue_quote_duration_seconds',
      help: 'Time from a quote\'s start to each asked venue\'s answer (to the deadline for a timeout)',
      labelNames: ['venue'],
      buckets: VENUE_BUCKETS,
      registers,
    });
    this.venueDurations = children((venue) => venueDurations.labels(venue));
    const rateLimited = new Counter({
      name: 'bestex_rate_limited_total',
      help: 'Requests refused with 429, by the limit that refused them: keyless-window (per IP), keyed-window (per key), fresh-quote-budget (keyless fresh quotes per IP), keyed-fresh-quote-budget (fresh quotes per key), plan-records (new plans per IP or key within a record\'s retention)',
      labelNames: ['limit'],
      registers,
    });
    this.rateLimitedBy = children((limit) => rateLimited.labels(limit));
    const plans = new Counter({
      name: 'bestex_plans_total',
      help: 'Plan requests by route (app, partner) and result: created, replayed (the plan made before under the idempotencyKey) or conflict (the key was used for another request)',
      labelNames: ['route', 'result'],
      registers,
    });
    this.plans = children((route) => children((result) => plans.labels(route, result)));
    this.plansAtStateCap = new Counter({
      name: 'bestex_plans_refused_state_cap_total',
      help: 'Plans refused because this process\'s in-memory state is at its memory cap',
      registers,
    });
    const trips = new Counter({
      name: 'bestex_guardrail_trips_total',
      help: 'Plans the party-isolation guardrail stopped, by route',
      labelNames: ['route'],
      registers,
    });
    this.guardrailTrips = children((route) => trips.labels(route));
    const keys = new Counter({
      name: 'bestex_key_verifications_total',
      help: 'Presented partner keys by result: valid, invalid (malformed, unknown or revoked), wrong_origin, unavailable (the key store could not be read)',
      labelNames: ['result'],
      registers,
    });
    this.keyVerifications = children((result) => keys.labels(result));
    const outcomes = new Counter({
      name: 'bestex_outcomes_total',
      help: 'Outcomes answered, by status',
      labelNames: ['status'],
      registers,
    });
    this.outcomes = children((status) => outcomes.labels(status));
    const swaps = new Counter({
      name: 'bestex_swaps_total',
      help: 'v2 plans that reached a terminal state, by outcome (the plan status\'s state); summed over partners and takers',
      labelNames: ['outcome'],
      registers,
    });
    this.swaps = children((outcome) => swaps.labels(outcome));
    const swapLegs = new Counter({
      name: 'bestex_swap_legs_total',
      help: 'Legs of v2 plans that reached a terminal state, by venue and the leg\'s own state',
      labelNames: ['venue', 'outcome'],
      registers,
    });
    this.swapLegs = children((venue) => children((outcome) => swapLegs.labels(venue, outcome)));
    new Counter({
      name: 'bestex_swap_volume_total',
      help: 'What the paid legs of ended v2 plans gave (side="given", in the give token) and received (side="received", in the want token), per token, never converted',
      labelNames: ['token', 'side'],
      registers,
      collect() {
        this.reset();
        for (const { token, side, amount } of metrics.volume.values()) this.inc({ token, side }, amount.toNumber());
      },
    });
    new Gauge({
      name: 'bestex_status_component',
      help: 'Each component of GET /api/status: 1, labelled with its current state',
      labelNames: ['component', 'state'],
      registers,
      collect() {
        this.reset();
        if (metrics.health === null) return;
        for (const { component, state } of statusSummary(metrics.health).components) this.set({ component, state }, 1);
      },
    });
    // Process metrics, event-loop delay among them (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
  }

  /** The status the component gauge reads when scraped. */
  watchHealth(health: HealthOptions): void {
    this.health = health;
  }

  requestCompleted(request: FastifyRequest, reply: FastifyReply, elapsedMs: number): void {
    // An operation's request refused before its handler ran (a body that is not JSON) is still its
    // operation's: the route says which.
    const operationId = request.operationId ?? (request.is404 ? undefined : (request.routeOptions.config as { operationId?: string }).operationId);
    this.requestDurations(operationId ?? NO_OPERATION)(apiVersionOf(request.url))(reply.statusCode).observe(elapsedMs / 1000);
  }

  quoteCacheHit(): void {
    this.cacheHits += 1;
  }

  quoteCacheMiss(): void {
    this.cacheMisses += 1;
  }

  venueQuote(venueId: string, result: 'available' | RejectionCode, seconds: number | null): void {
    this.venueQuotes(venueId)(result).inc();
    if (seconds !== null) this.venueDurations(venueId).observe(seconds);
  }

  rateLimited(limit: RateLimitName): void {
    this.rateLimitedBy(limit).inc();
  }

  plan(route: PlanRoute, result: PlanResult): void {
    this.plans(route)(result).inc();
  }

  planRefusedAtStateCap(): void {
    this.plansAtStateCap.inc();
  }

  guardrailTrip(route: PlanRoute): void {
    this.guardrailTrips(route).inc();
  }

  keyVerification(result: KeyVerificationResult): void {
    this.keyVerifications(result).inc();
  }

  outcome(status: OutcomeStatus): void {
    this.outcomes(status).inc();
  }

  swapEnded(swap: EndedSwap): void {
    this.swaps(swap.outcome).inc();
    for (const leg of swap.legs) this.swapLegs(leg.venueId)(leg.state).inc();
    this.addVolume(swap.give, 'given', swap.given);
    this.addVolume(swap.want, 'received', swap.received);
  }

  private addVolume(token: string, side: 'given' | 'received', amount: string): void {
    const key = `${token}/${side}`;
    const held = this.volume.get(key);
    if (held) held.amount = held.amount.plus(amount);
    else this.volume.set(key, { token, side, amount: new Decimal(amount) });
  }
}
