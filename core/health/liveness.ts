// Background liveness probes, one per venue: `unverified` until a venue's first probe completes,
// then `live` or `dead` from its latest probe.
import type { Venue } from '../venues/venue.js';
import type { LivenessState } from '../contract/v1.js';

export interface LivenessOptions {
  readonly intervalMs: number;
  readonly probeTimeoutMs: number;
  readonly onProbeError: (venueId: string, err: unknown) => void;
}

interface VenueLiveness {
  state: LivenessState;
  pairs: ReadonlySet<string>;
}

export class LivenessMonitor {
  private readonly states = new Map<string, VenueLiveness>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly venues: readonly Venue[],
    private readonly options: LivenessOptions,
  ) {
    for (const venue of venues) this.states.set(venue.id, { state: 'unverified', pairs: new Set() });
  }

  /** Starts probing; resolves when the first round has completed. */
  start(): Promise<void> {
    this.timer = setInterval(() => void this.probeAll(), this.options.intervalMs);
    this.timer.unref();
    return this.probeAll();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async probeAll(): Promise<void> {
    await Promise.all(this.venues.map((venue) => this.probe(venue)));
  }

  stateOf(venueId: string, pair?: string): LivenessState {
    const entry = this.states.get(venueId);
    if (!entry) throw new Error(`no venue ${venueId}`);
    if (pair === undefined || entry.state !== 'live') return entry.state;
    return entry.pairs.has(pair) ? 'live' : 'dead';
  }

  isDown(venueId: string): boolean {
    return this.states.get(venueId)?.state === 'dead';
  }

  snapshot(): Array<{ venue: string; state: LivenessState }> {
    return this.venues.map((v) => ({ venue: v.id, state: this.stateOf(v.id) }));
  }

  private async probe(venue: Venue): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.options.probeTimeoutMs);
    try {
      const result = await Promise.race([
        venue.probe(controller.signal),
        new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('probe timed out')))),
      ]);
      this.states.set(venue.id, { state: result.live ? 'live' : 'dead', pairs: new Set(result.pairs) });
    } catch (err) {
      this.options.onProbeError(venue.id, err);
      this.states.set(venue.id, { state: 'dead', pairs: new Set() });
    } finally {
      clearTimeout(timer);
    }
  }
}
