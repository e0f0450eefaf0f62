// What counting a keyed request's usage costs its request ("no more than one in-memory
// increment"), measured in this process, informational: the access log's usage hook
// (handlers/http/usage-counting.ts) on a keyed request, which records it (core/usage/), and on a
// keyless one, which every keyless request now pays; beside them, one Map lookup and increment,
// the least any per-key count costs. A thousand keys, two operations, one request in fifty a 429.
// The hook runs as the service runs it, on requests shaped as fastify's, with the real clock; the
// flushes, in the background in the service, run between rounds here and are not in the figures.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { Document } from 'openapi-backend';
import { parse } from 'yaml';
import { InProcessSharedState } from '../core/state/in-process.js';
import { UsageCounter } from '../core/usage/usage-counter.js';
import { repoRoot } from '../handlers/app.js';
import { usageCounting } from '../handlers/http/usage-counting.js';

const KEYS = 1000;
const CALLS = 1_000_000;
const ROUNDS = 7;

export interface RecordingCost {
  /** ns per request, medians over the rounds. */
  readonly keyedNs: number;
  readonly keylessNs: number;
  readonly bareIncrementNs: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** ns per call of `step` over CALLS calls, the median of ROUNDS rounds, `between` run after each. */
async function nsPerCall(step: (i: number) => void, between: () => Promise<void>): Promise<number> {
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) step(i);
    rounds.push(Number(process.hrtime.bigint() - start) / CALLS);
    await between();
  }
  return median(rounds);
}

export async function measureUsageRecording(): Promise<RecordingCost> {
  const definition = parse(readFileSync(path.join(repoRoot(), 'openapi', 'v1.yaml'), 'utf8')) as Document;
  const usage = new UsageCounter({ state: new InProcessSharedState(), log: { info() {}, warn() {}, error() {} }, flushMs: null });
  const count = usageCounting(usage, [definition]);
  const keyIds = Array.from({ length: KEYS }, (_, i) => `key_${String(i).padStart(22, '0')}`);
  const keyed = keyIds.flatMap((partnerId, i) => [
    { operationId: 'getQuote', logFields: { partnerId, quoteCache: 'hit' }, i },
    { operationId: i % 7 === 0 ? 'createExecutePlan' : 'getQuote', logFields: i % 25 === 0 ? { partnerId, code: 'rate_limited', rateLimit: 'keyed-window' } : { partnerId }, i },
  ]) as unknown as FastifyRequest[];
  const keyless = [{ operationId: 'getQuote', logFields: { quoteCache: 'hit' } }, { operationId: 'getQuote', logFields: null }] as unknown as FastifyRequest[];
  const flush = () => usage.flush();
  const counters = new Map(keyIds.map((id) => [id, { n: 0 }]));
  const bare = (i: number) => void counters.get(keyIds[i % KEYS]!)!.n++;

  // A warm-up round of each, so every figure is of optimised code.
  await nsPerCall((i) => count(keyed[i % keyed.length]!), flush);
  const keyedNs = await nsPerCall((i) => count(keyed[i % keyed.length]!), flush);
  const keylessNs = await nsPerCall((i) => count(keyless[i & 1]!), flush);
  const bareIncrementNs = await nsPerCall(bare, async () => {});
  await usage.close();
  return { keyedNs, keylessNs, bareIncrementNs };
}

export function describeRecordingCost({ keyedNs, keylessNs, bareIncrementNs }: RecordingCost): string {
  return (
    `usage counting (informational, in the bench's own process): ${keyedNs.toFixed(1)} ns per keyed request (recorded), ` +
    `${keylessNs.toFixed(1)} ns per keyless request (checked, not recorded); one Map lookup and increment: ${bareIncrementNs.toFixed(1)} ns ` +
    `(${KEYS} keys, medians of ${ROUNDS} rounds of ${CALLS.toLocaleString('en-US')} calls)`
  );
}
