// The cached quote's baseline (docs/performance.md): bare fastify answering GET /api/quote with the
// exact body bytes and headers the service sent for the cached keyless quote, and nothing else:
// no spec, no validation, no quote cache, no rate limit, no access log.
//
// Started by bench/start-baselines.ts only, with BENCH_BASELINE_PORT, BENCH_BASELINE_BODY_FILE (the
// body, byte for byte) and BENCH_BASELINE_HEADERS (a JSON object of the headers to send).
import { readFileSync } from 'node:fs';
import { bareFastify, required, serveUntilParentGoes } from './baseline-server.js';

// Sent as a string, as the service's handler does: fastify sends a string whose content type is
// already set without serialising it. bench/start-baselines.ts checks the bytes match.
const body = readFileSync(required('BENCH_BASELINE_BODY_FILE'), 'utf8');
const headers = JSON.parse(required('BENCH_BASELINE_HEADERS')) as Record<string, string>;

const server = bareFastify();
server.get('/api/quote', async (_request, reply) => reply.headers(headers).send(body));
await serveUntilParentGoes(server);
