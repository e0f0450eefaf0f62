// The pairs the bench measures: each a load on the service and the baseline doing only the
// unavoidable part of the same work, with the level its CPU-capacity ratio is gated at
// (docs/performance.md's table). The v2 pairs ask the same under /api/v2/ and are set against
// their v1 pair's baseline as measured in the same round.
import { MIN_RATIO, MIN_SHARE_OF_ONE, MIN_SHARE_OF_V1 } from './gates.js';
import { CONNECTIONS, type LoadKind } from './load.js';

/** The connections of the latency checks. */
export const WIDE = 50;

export type PairKey = 'cached' | 'cachedV2' | 'fresh' | 'plan' | 'planV2' | 'fresh50';
/** The baselines: one per kind of load, and the plan's earlier one (its bytes after one read). */
export type BaselineKey = LoadKind | 'planBytes';
export interface Pair {
  readonly key: PairKey;
  readonly name: string;
  readonly baseName: string;
  readonly kind: LoadKind;
  /** The request in API version 2 (the same under /api/v2/); version 1's without. */
  readonly apiVersion?: 2;
  /**
   * A v2 pair's v1 pair, which precedes it: this pair is set against that pair's baseline as
   * measured in the same round (not measured again), and gated at this least share of that pair's
   * CPU-capacity ratio, round by round.
   */
  readonly v1?: { readonly key: PairKey; readonly minShare: number };
  /** A second baseline the same service run is set against, its ratio printed only. */
  readonly alsoAgainst?: { readonly key: BaselineKey; readonly name: string };
  /** Two instances on one Redis: the least share of one instance's CPU-capacity ratio (same baseline, same run) they keep. */
  readonly minShareOfOne?: number;
  readonly connections: number;
  /** Read every answer's venues (the 50-connection check). */
  readonly inspect: boolean;
  /** Gated CPU-capacity ratio; null: printed only. */
  readonly minRatio: number | null;
  /** Fresh quotes only: an open loop at this many arrivals per second (see LoadJob). */
  readonly arrivalsPerSecond?: number;
}

/** The latency check's load: fresh quotes at 50 connections, every answer's venues read. */
export const FRESH_WIDE: Pair = { key: 'fresh50', name: `fresh keyless quote, ${WIDE} conns`, baseName: `bare fan-out, ${WIDE} conns`, kind: 'fresh', connections: WIDE, inspect: true, minRatio: null };

export const PAIRS: readonly Pair[] = [
  { key: 'cached', name: 'cached keyless quote', baseName: 'bare fastify, same bytes', kind: 'cached', connections: CONNECTIONS, inspect: false, minRatio: MIN_RATIO.cached, minShareOfOne: MIN_SHARE_OF_ONE.cached },
  {
    key: 'cachedV2',
    name: 'cached keyless v2 quote',
    baseName: 'bare fastify, same bytes',
    kind: 'cached',
    apiVersion: 2,
    connections: CONNECTIONS,
    inspect: false,
    minRatio: null,
    v1: { key: 'cached', minShare: MIN_SHARE_OF_V1.cached },
  },
  { key: 'fresh', name: 'fresh keyless quote', baseName: 'bare fan-out', kind: 'fresh', connections: CONNECTIONS, inspect: false, minRatio: MIN_RATIO.fresh, minShareOfOne: MIN_SHARE_OF_ONE.fresh },
  {
    key: 'plan',
    name: 'keyless plan',
    baseName: 'plan floor',
    kind: 'plan',
    connections: CONNECTIONS,
    inspect: false,
    minRatio: MIN_RATIO.plan,
    alsoAgainst: { key: 'planBytes', name: 'bare fastify, plan bytes' },
    minShareOfOne: MIN_SHARE_OF_ONE.plan,
  },
  { key: 'planV2', name: 'keyless v2 plan', baseName: 'plan floor', kind: 'plan', apiVersion: 2, connections: CONNECTIONS, inspect: false, minRatio: null, v1: { key: 'plan', minShare: MIN_SHARE_OF_V1.plan } },
  FRESH_WIDE,
];
