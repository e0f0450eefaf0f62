// What open plan status streams cost the service's memory: OPEN_STREAMS keyless plans made, then
// one `GET /api/v2/plan/events` stream opened on each (every one answered with its plan's first
// event), the service's resident set and heap read after a full collection before and while they
// are open; then every stream closed from the client's side, and the plans its streams watch
// (core.planStatus.watched) read until none is left.
import type { PlanStatusEvent } from '../core/contract/v2.js';
import { PLAN_BODY } from './measure.js';
import { openEventStream, type EventStream } from './sse-client.js';
import type { Probe } from './status-service.js';

export const OPEN_STREAMS = 1000;
/** Streams opened, and plans made, at once: the listen backlog (511) is never in question. */
const BATCH = 100;
/** Streams opened and closed before the first reading, so the code they run is compiled and its pools grown. */
const WARM_UP_STREAMS = 100;
/** How long closed streams may take to leave no plan watched. */
const RELEASE_TIMEOUT_MS = 10_000;
/** Two readings a quarter of a second apart this close make a settled reading (the allocator may still be giving pages back). */
const SETTLED_BYTES = 256 * 1024;
const SETTLE_READINGS = 20;

export interface StreamMemory {
  readonly streams: number;
  readonly before: Probe;
  readonly open: Probe;
  readonly closed: Probe;
  /** How long after the clients closed their connections the service watched no plan; null if it still did after RELEASE_TIMEOUT_MS. */
  readonly releasedMs: number | null;
  readonly rssBytesPerStream: number;
  readonly heapBytesPerStream: number;
}

/** The service's memory and watched plans; after a full collection with `gc`. */
export type ProbeService = (gc: boolean) => Promise<Probe>;

async function inBatches<T, R>(items: readonly T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const done: R[] = [];
  for (let i = 0; i < items.length; i += BATCH) done.push(...(await Promise.all(items.slice(i, i + BATCH).map(each))));
  return done;
}

export async function measureStreamMemory(url: string, probe: ProbeService, runId: string): Promise<StreamMemory> {
  const plans = await inBatches(
    Array.from({ length: OPEN_STREAMS }, (_, i) => i),
    async (i) => {
      const response = await fetch(`${url}/api/v2/app/plan`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...PLAN_BODY, idempotencyKey: `${runId}-stream-${i}` }) });
      const plan = (await response.json()) as { planId?: string; statusToken?: string };
      if (response.status !== 200 || !plan.planId || !plan.statusToken) throw new Error(`POST /api/v2/app/plan answered ${response.status}`);
      return `${url}/api/v2/plan/events?planId=${plan.planId}&token=${plan.statusToken}`;
    },
  );
  const open = (streamUrl: string) =>
    openEventStream<PlanStatusEvent>(streamUrl).then(async (stream) => {
      await stream.first;
      return stream;
    });
  const closeAll = (streams: ReadonlyArray<EventStream<PlanStatusEvent>>) => {
    for (const stream of streams) stream.close();
  };

  closeAll(await inBatches(plans.slice(0, WARM_UP_STREAMS), open));
  await released(probe);
  const before = await settled(probe);
  const streams = await inBatches(plans, open);
  const during = await settled(probe);
  const closedAt = Date.now();
  closeAll(streams);
  const releasedMs = await released(probe).then((ok) => (ok ? Date.now() - closedAt : null));
  const closed = await probe(true);
  return {
    streams: streams.length,
    before,
    open: during,
    closed,
    releasedMs,
    rssBytesPerStream: (during.rssBytes - before.rssBytes) / streams.length,
    heapBytesPerStream: (during.heapUsedBytes - before.heapUsedBytes) / streams.length,
  };
}

/** A reading after a full collection once the resident set holds still, or the last of SETTLE_READINGS. */
async function settled(probe: ProbeService): Promise<Probe> {
  let last = await probe(true);
  for (let i = 1; i < SETTLE_READINGS; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = await probe(true);
    const still = Math.abs(now.rssBytes - last.rssBytes) <= SETTLED_BYTES;
    last = now;
    if (still) break;
  }
  return last;
}

/** Whether the service watches no plan within RELEASE_TIMEOUT_MS. */
async function released(probe: ProbeService): Promise<boolean> {
  const deadline = Date.now() + RELEASE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if ((await probe(false)).watched === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}
