// The fresh quote's baseline, the "bare fan-out" (docs/performance.md): bare fastify answering GET
// /api/quote?amount=<a> by sending exactly the five venue requests a fresh quote of <a> CC for
// USDCx makes (bench/fan-out-requests.ts) to the same sandbox process, with the HTTP client the
// service uses (undici, one kept-alive Pool per venue), reading each answer's body as text
// and JSON.parse-ing it, then answering a small JSON body once all five are in. No deadline, no
// pricing, no ranking: the venue round trips are the floor of a fresh quote's cost.
//
// Started by bench/start-baselines.ts only, with BENCH_BASELINE_PORT and BENCH_SANDBOX_MANIFEST
// (the sandbox's announced line).
import { Pool } from 'undici';
import { bareFastify, required, serveUntilParentGoes } from './baseline-server.js';
import { decimalText, fanOutRequests, type FanOutManifest, type VenueRequest } from './fan-out-requests.js';

const requestsFor = fanOutRequests(JSON.parse(required('BENCH_SANDBOX_MANIFEST')) as FanOutManifest);
// One Pool per venue, as the service keeps one per venue's base URL: in a deployment each venue
// is an origin of its own, though the sandbox serves all five from one.
const pools = new Map<string, Pool>();
const poolFor = ({ venueId, origin }: VenueRequest): Pool => {
  let pool = pools.get(venueId);
  if (pool === undefined) {
    pool = new Pool(origin);
    pools.set(venueId, pool);
  }
  return pool;
};

async function ask(request: VenueRequest): Promise<unknown> {
  const { statusCode, body } = await poolFor(request).request({ method: request.method, path: request.path, headers: request.headers, body: request.body });
  const parsed: unknown = JSON.parse(await body.text());
  if (statusCode < 200 || statusCode > 299) throw new Error(`${request.venueId} answered ${statusCode}`);
  return parsed;
}

const ANSWER = JSON.stringify({ answered: 5 });

const server = bareFastify();
server.get<{ Querystring: { amount?: string } }>('/api/quote', async (request, reply) => {
  const amount = decimalText(request.query.amount ?? '');
  if (amount === null) return reply.code(400).send({ error: 'amount' });
  try {
    await Promise.all(requestsFor(amount).map(ask));
  } catch (err) {
    // A non-2xx the bench counts: a baseline that did not do the work must not look fast.
    return reply.code(502).send({ error: err instanceof Error ? err.message : String(err) });
  }
  return reply.header('content-type', 'application/json; charset=utf-8').send(ANSWER);
});
await serveUntilParentGoes(server, async () => {
  await Promise.all([...pools.values()].map((pool) => pool.close()));
});
