// The benchmark's baseline (see bench/bench.ts): a bare fastify server that answers
// GET /api/quote with the exact body bytes and headers the service sent for the cached keyless
// quote, and does nothing else: no spec, no validation, no quote cache, and fastify's logger OFF
// (the service keeps its pino access log on). It is the ceiling for this machine, this Node and
// this fastify; `make bench` reports the service as a ratio of it, measured in the same run.
// It ignores the query string (fastify routes on the path only), so bench.ts can drive it both
// with the cached quote's static path and with the fresh run's varying amounts: the second gives
// the like-for-like baseline for the fresh quote, with the load generator doing the same work.
//
// Started by bench.ts only, with:
//   BENCH_BASELINE_PORT        the loopback port to listen on (127.0.0.1)
//   BENCH_BASELINE_BODY_FILE   a file holding the response body, byte for byte
//   BENCH_BASELINE_HEADERS     a JSON object of the response headers to send
// It exits when its parent closes its stdin (so a killed bench never leaves it behind) or on
// SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`bench-baseline: ${name} is not set (this server is started by bench/bench.ts)`);
    process.exit(2);
  }
  return value;
}

const port = Number(required('BENCH_BASELINE_PORT'));
// Read as text and sent as a string, as the service's handler does: fastify sends a string whose
// content type is already set without serialising it. bench.ts checks the bytes match.
const body = readFileSync(required('BENCH_BASELINE_BODY_FILE'), 'utf8');
const headers = JSON.parse(required('BENCH_BASELINE_HEADERS')) as Record<string, string>;

const server = Fastify({ logger: false });
server.get('/api/quote', async (_request, reply) => reply.headers(headers).send(body));

await server.listen({ host: '127.0.0.1', port });

let closing = false;
const shutdown = (): void => {
  if (closing) return;
  closing = true;
  setTimeout(() => process.exit(0), 2000).unref();
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
process.stdin.on('end', shutdown);
process.stdin.on('error', shutdown);
process.stdin.resume();
