// What the bench's baselines (bench/baseline.ts, fan-out-baseline.ts, plan-baseline.ts, plan-floor.ts) share:
// their settings from the environment bench/start-baselines.ts sets, and listening until the bench
// goes. Each is a bare fastify server, logger off: the ceiling the service is measured against, not
// a copy of it.
import Fastify, { type FastifyInstance } from 'fastify';

export function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    console.error(`bench baseline: ${name} is not set (the baselines are started by bench/bench.ts)`);
    process.exit(2);
  }
  return value;
}

export function bareFastify(): FastifyInstance {
  return Fastify({ logger: false });
}

/**
 * Listens on 127.0.0.1:BENCH_BASELINE_PORT; exits when the parent closes its stdin (so a killed
 * bench never leaves it behind) or on SIGINT/SIGTERM, after `onClose`.
 */
export async function serveUntilParentGoes(server: FastifyInstance, onClose: () => Promise<void> = async () => {}): Promise<void> {
  await server.listen({ host: '127.0.0.1', port: Number(required('BENCH_BASELINE_PORT')) });
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    setTimeout(() => process.exit(0), 2000).unref();
    server
      .close()
      .then(onClose)
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
}
