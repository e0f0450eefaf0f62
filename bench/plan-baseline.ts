// The keyless plan's baseline (see bench/bench.ts): bare fastify answering POST /api/app/plan (its
// JSON body parsed, as any fastify route's) with the exact bytes and headers of a real keyless plan
// the service made, after one read of the shared state under the request's idempotencyKey, which
// misses as the service's lookup of a new key does: one Map read, or with
// BENCH_BASELINE_REDIS_URL one Redis GET through ioredis.
//
// Started by bench.ts only, with BENCH_BASELINE_PORT, BENCH_BASELINE_BODY_FILE,
// BENCH_BASELINE_HEADERS (as bench/baseline.ts) and optionally BENCH_BASELINE_REDIS_URL.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { bareFastify, required, serveUntilParentGoes } from './baseline-server.js';

const body = readFileSync(required('BENCH_BASELINE_BODY_FILE'), 'utf8');
const headers = JSON.parse(required('BENCH_BASELINE_HEADERS')) as Record<string, string>;
const redisUrl = process.env.BENCH_BASELINE_REDIS_URL;

const records = new Map<string, string>();
const redis = redisUrl ? new Redis(redisUrl) : null;
// A key no one writes: the read always misses, as the service's does for a new idempotencyKey.
const read = redis ? (key: string) => redis.get(`bestex-bench-baseline:${key}`) : async (key: string) => records.get(key);

const server = bareFastify();
server.post<{ Body: { idempotencyKey?: string } }>('/api/app/plan', async (request, reply) => {
  await read(String(request.body.idempotencyKey));
  return reply.headers(headers).send(body);
});
await serveUntilParentGoes(server, async () => {
  await redis?.quit();
});
