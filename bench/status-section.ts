// The plan status section: a sandbox of its own, and on it, one after the other, two instances of
// the service (bench/status-service.ts: the app as handlers/main.ts builds it, with an IPC channel
// to read its memory and watched plans), each with a data folder of its own. The first, holding a
// partner key issued into its key store as the keys CLI issues one, serves the status latency of
// plans executed on the sandbox, over event streams and, for the keyed plans, webhooks to a
// receiver in this process (bench/status-latency.ts); the second, quiet, the memory of open
// event streams (bench/sse-memory.ts). Each is gated (docs/performance.md, "Plan status").
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { keysFile } from '../core/keys/open-store.js';
import { FileKeyStore } from '../core/keys/file-store.js';
import { newKey } from '../core/keys/partner-keys.js';
import { dataDirOf, entry, serviceEnv, startSandbox, type RunningSandbox, type Server } from './deployment.js';
import { MAX_STATUS_P99_MS, MAX_STREAM_BYTES, record, type Outcome } from './gates.js';
import { freePort, HOST, stderrTail, stop, track, waitFor200 } from './processes.js';
import { fmt, verdict } from './report.js';
import { measureStreamMemory, OPEN_STREAMS, type ProbeService } from './sse-memory.js';
import { ARRIVAL_MS, measureStatusLatency, percentile, PLAN_TIMEOUT_MS } from './status-latency.js';
import type { Probe, ProbeRequest } from './status-service.js';

const PROBE_TIMEOUT_MS = 10_000;
const mb = (bytes: number): string => fmt(bytes / 1e6, 1);

interface StatusService extends Server {
  readonly probe: ProbeService;
}

/** Starts bench/status-service.js on `dataDir` against `sandbox`, as startService starts the service, with `env` on top. */
async function startStatusService(name: string, dataDir: string, sandbox: RunningSandbox, ledgerToken: string, env: Readonly<Record<string, string>> = {}): Promise<StatusService> {
  const port = await freePort();
  const child = track(
    fork(entry('./status-service.js'), [], {
      env: serviceEnv({ dataDir, sandbox, ledgerToken, redisUrl: '', env }, port),
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    }),
  );
  const stderr = stderrTail(child);
  const probe: ProbeService = (gc) =>
    new Promise<Probe>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${name} did not answer its probe within ${PROBE_TIMEOUT_MS / 1000} s: ${stderr()}`)), PROBE_TIMEOUT_MS);
      child.once('message', (message) => {
        clearTimeout(timer);
        resolve(message as Probe);
      });
      child.send({ probe: { gc } } satisfies ProbeRequest);
    });
  const service = { name, child, url: `http://${HOST}:${port}`, stderr, probe };
  await waitFor200(`${service.url}/api/status`, child, name, stderr);
  return service;
}

export async function statusSection(root: string, ledgerToken: string, outcome: Outcome): Promise<void> {
  console.log('');
  console.log('starting a sandbox and, in turn, two services for the plan status section (the app in a process of its own, --expose-gc, its memory and watched plans read over IPC)…');
  const sandbox = await startSandbox('the status sandbox', dataDirOf(root, 'status-sandbox'), ledgerToken);
  const runId = `bench-${randomBytes(4).toString('hex')}`;
  try {
    const dataDir = dataDirOf(root, 'status-service');
    mkdirSync(dataDir, { recursive: true });
    const issued = newKey('bench partner', 'partner-default');
    await new FileKeyStore(keysFile({ dataDir })).add(issued.record);
    // The bench's webhook receiver listens on loopback, an address a deployment's webhooks refuse.
    const service = await startStatusService('the status service', dataDir, sandbox, ledgerToken, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    let latency;
    let pollMs;
    try {
      ({ pollMs } = await service.probe(false));
      latency = await measureStatusLatency({ url: service.url, sandbox, ledgerToken, apiKey: issued.key, runId });
    } finally {
      await stop(service.child);
    }
    const arrived = latency.latenciesMs.filter(Number.isFinite);
    const p50 = percentile(latency.latenciesMs, 0.5);
    const p99 = percentile(latency.latenciesMs, 0.99);
    const latencyPass = p99 <= MAX_STATUS_P99_MS;
    const hooks = latency.webhooks;
    const hooksArrived = hooks.latenciesMs.filter(Number.isFinite);
    const hooksP50 = percentile(hooks.latenciesMs, 0.5);
    const hooksP99 = percentile(hooks.latenciesMs, 0.99);
    const hooksPass = hooksP99 <= MAX_STATUS_P99_MS && hooks.unverified === 0 && hooks.missing === 0;
    if (latency.failures.length > 0) outcome.invalid = true;
    record(outcome, 'plan status: server-sent event p99', verdict(latencyPass));
    record(outcome, 'plan status: webhook p99, signatures, none missing', verdict(hooksPass));
    const ms = (x: number): string => (x === Number.POSITIVE_INFINITY ? `never (over ${PLAN_TIMEOUT_MS / 1000} s)` : `${fmt(x, 0)} ms`);
    console.log('');
    console.log(`== plan status (a sandbox and services of its own; PLAN_STATUS_POLL_MS=${pollMs}) ==`);
    console.log(
      `status latency: ${latency.plans} plans (${latency.plans - latency.keyed} keyless, ${latency.keyed} keyed), one every ${ARRIVAL_MS} ms, executed by the SDK's sandbox wallet; ` +
        `all done in ${fmt(latency.elapsedMs / 1000, 1)} s; ends read: ${Object.entries(latency.ends).map(([state, n]) => `${state} ${n}`).join(', ') || 'none'}` +
        (latency.unarrived > 0 ? `; ${latency.unarrived} plans' terminal events did not arrive within ${PLAN_TIMEOUT_MS / 1000} s of their deposit` : ''),
    );
    for (const failure of latency.failures.slice(0, 5)) console.log(`status latency: INVALID RUN: ${failure}`);
    if (latency.failures.length > 5) console.log(`status latency: … and ${latency.failures.length - 5} more plans not made or not executed`);
    console.log(
      `status latency, server-sent events: ${arrived.length} state changes read from the ledger arrived (and ${latency.unarrived} plans' did not), from the update's record time to the event's arrival at the client: ` +
        `p50 ${ms(p50)}, p99 ${ms(p99)}, largest arrived ${fmt(Math.max(...arrived), 0)} ms (target p99 <= ${MAX_STATUS_P99_MS} ms) ${verdict(latencyPass)}`,
    );
    console.log(
      `status latency, webhooks: ${hooksArrived.length} state changes of the keyed plans read from the ledger delivered to a receiver in the bench (and ${hooks.undelivered} plans' terminal events were not within ${PLAN_TIMEOUT_MS / 1000} s), ` +
        `from the update's record time to the delivery's arrival: p50 ${ms(hooksP50)}, p99 ${ms(hooksP99)}, largest arrived ${fmt(Math.max(...hooksArrived), 0)} ms; ` +
        `${hooks.requests} requests (${hooks.repeated} repeating a webhook-id), ${hooks.unverified} whose signature did not verify, ${hooks.missing} events missing before a delivered terminal one ` +
        `(target p99 <= ${MAX_STATUS_P99_MS} ms, every signature verified, none missing) ${verdict(hooksPass)}`,
    );

    const quiet = await startStatusService('the streams service', dataDirOf(root, 'streams-service'), sandbox, ledgerToken);
    let memory;
    try {
      memory = await measureStreamMemory(quiet.url, quiet.probe, runId);
    } finally {
      await stop(quiet.child);
    }
    const perStream = Math.max(memory.rssBytesPerStream, memory.heapBytesPerStream);
    const memoryPass = perStream <= MAX_STREAM_BYTES;
    const releasePass = memory.open.watched === OPEN_STREAMS && memory.releasedMs !== null;
    record(outcome, 'plan status: memory per open stream', verdict(memoryPass));
    record(outcome, 'plan status: closed streams watch nothing', verdict(releasePass));
    console.log(
      `open streams (another instance, its own data folder): ${memory.streams}, one on each of as many keyless plans; the service after a full collection, before and with them open: ` +
        `RSS ${mb(memory.before.rssBytes)} and ${mb(memory.open.rssBytes)} MB, heap ${mb(memory.before.heapUsedBytes)} and ${mb(memory.open.heapUsedBytes)} MB; ` +
        `per stream RSS ${fmt(memory.rssBytesPerStream, 0)} bytes, heap ${fmt(memory.heapBytesPerStream, 0)} bytes (target: the larger <= ${MAX_STREAM_BYTES}) ${verdict(memoryPass)}`,
    );
    console.log(
      `open streams: ${memory.open.watched} plans watched while open, ${memory.releasedMs === null ? 'some still' : `none ${memory.releasedMs} ms`} after the clients closed them ${verdict(releasePass)}; ` +
        `then RSS ${mb(memory.closed.rssBytes)} MB, heap ${mb(memory.closed.heapUsedBytes)} MB`,
    );
  } finally {
    await stop(sandbox.child);
  }
}
