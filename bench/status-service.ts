// The service of the plan status section (bench/status-section.ts): the app built from the
// environment and listening as handlers/main.ts builds it, in a process of its own, with an IPC
// channel through which the bench asks what only this process can tell: its memory after a full
// collection (run with --expose-gc) and how many plans its event streams watch
// (core.planStatus.watched). It exits when the bench goes.
import { loadConfig } from '../core/config.js';
import { buildApp } from '../handlers/app.js';

/** What the bench asks for: `gc`, whether to collect first. */
export interface ProbeRequest {
  readonly probe: { readonly gc: boolean };
}

export interface Probe {
  /** process.memoryUsage(): the resident set, as /proc/<pid>/status's VmRSS reads it, and the V8 heap in use. */
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly externalBytes: number;
  /** Plans that at least one open stream of this instance watches. */
  readonly watched: number;
  /** PLAN_STATUS_POLL_MS as the service read it. */
  readonly pollMs: number;
}

const config = loadConfig(process.env, { serviceBuild: 'bench' });
const app = await buildApp({ config });
await app.server.listen({ host: config.host, port: config.port });

const collect = (globalThis as { gc?: () => void }).gc;
process.on('message', (message: ProbeRequest) => {
  if (message.probe.gc) {
    if (!collect) throw new Error('run with --expose-gc');
    // Twice: the first collection's finalisers may free more.
    collect();
    collect();
  }
  const memory = process.memoryUsage();
  const probe: Probe = { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, externalBytes: memory.external, watched: app.core.planStatus.watched, pollMs: config.planStatusPollMs };
  process.send!(probe);
});
process.on('disconnect', () => process.exit(0));
