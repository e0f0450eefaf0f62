// The keyless plan's earlier baseline (docs/performance.md), its ratio printed beside the plan
// floor's (bench/plan-floor.ts): bare fastify answering POST /api/app/plan (its JSON body parsed,
// as any fastify route's) with the exact bytes and headers of a real keyless plan the service
// made, after one read of a Map under the request's idempotencyKey, which misses as the service's
// lookup of a new key does.
//
// Started by bench/start-baselines.ts only, with BENCH_BASELINE_PORT, BENCH_BASELINE_BODY_FILE and
// BENCH_BASELINE_HEADERS (as bench/baseline.ts).
import { readFileSync } from 'node:fs';
import { bareFastify, required, serveUntilParentGoes } from './baseline-server.js';

const body = readFileSync(required('BENCH_BASELINE_BODY_FILE'), 'utf8');
const headers = JSON.parse(required('BENCH_BASELINE_HEADERS')) as Record<string, string>;

// No one writes it: the read always misses, as the service's does for a new idempotencyKey.
const records = new Map<string, string>();

const server = bareFastify();
server.post<{ Body: { idempotencyKey?: string } }>('/api/app/plan', async (request, reply) => {
  records.get(String(request.body.idempotencyKey));
  return reply.headers(headers).send(body);
});
await serveUntilParentGoes(server);
