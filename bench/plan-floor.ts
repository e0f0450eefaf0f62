// The keyless plan's floor (docs/performance.md): bare fastify answering POST /api/app/plan with
// only the work no plan can do without, done by the service's own code: the body validated by the
// spec's generated validator and parsed as the service parses it (its fingerprint), the caller's
// and the request's keyed digests, the record's key and the plan id (IdempotencyRecords' HMACs),
// the plan's JSON text made from a plan of the same shape (the sample the service answered, with
// this request's id and idempotencyKey), and the record kept in an in-process state, with the
// service's retention and bound. No venue, no quote cache, no rate limit, no access log.
//
// Started by bench/start-baselines.ts only, with BENCH_BASELINE_PORT, BENCH_BASELINE_BODY_FILE (a
// plan the service answered), BENCH_BASELINE_HEADERS and BENCH_BASELINE_MAX_RECORDS (the service's
// STATE_MAX_PLAN_RECORDS).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createAppPlan } from '../generated/v1/body-validators.js';
import { IdempotencyRecords, IDEMPOTENCY_RETENTION_MS } from '../core/plans/idempotency.js';
import { parsePlanRequest } from '../core/plans/params.js';
import { StateCapacity } from '../core/state/capacity.js';
import { InProcessSharedState } from '../core/state/in-process.js';
import type { AppPlan, PlanRequest } from '../core/contract/v1.js';
import { bareFastify, required, serveUntilParentGoes } from './baseline-server.js';

const sample = JSON.parse(readFileSync(required('BENCH_BASELINE_BODY_FILE'), 'utf8')) as AppPlan;
const headers = JSON.parse(required('BENCH_BASELINE_HEADERS')) as Record<string, string>;
const state = new InProcessSharedState(Date.now, new StateCapacity({ maxPlanRecords: Number(required('BENCH_BASELINE_MAX_RECORDS')), maxRateWindows: 1 }));
const records = new IdempotencyRecords(state, randomBytes(32), IDEMPOTENCY_RETENTION_MS);

const server = bareFastify();
server.post('/api/app/plan', async (request, reply) => {
  if (!createAppPlan(request.body)) return reply.code(400).send({ error: 'invalid body', code: 'bad_request' });
  const params = parsePlanRequest(request.body as PlanRequest, 'app');
  const key = { caller: `app:${request.ip}`, idempotencyKey: params.idempotencyKey, fingerprint: params.fingerprint };
  const plan = JSON.stringify({ ...sample, planId: records.planId(key), idempotencyKey: params.idempotencyKey });
  const kept = await records.claim(key, { ...records.digests(key), plan });
  return reply.headers(headers).send(kept.plan);
});
await serveUntilParentGoes(server);
