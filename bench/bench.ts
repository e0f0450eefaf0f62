// `make bench`: what the service's work costs, as deployed, each measurement set against a baseline
// doing only the unavoidable part of the same work. What it measures, its gates, its environment's
// figures and its exit statuses: docs/performance.md. This entry point runs its parts in order (the
// usage-recording cost and the split's, bench/split-routing.ts, the one-instance section of
// bench/pairs.ts' pairs, bench/hung-venue.ts, bench/redis-section.ts, and with every other child
// stopped, bench/status-section.ts: plan status latency and open streams), prints the conclusion last,
// and stops every child process on the way out, even on error.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { dataDirOf, startSandbox, startService } from './deployment.js';
import { conclusion, EXIT_STATUS, exitStatus, MAX_SPLIT_P99_US, record, SPREAD_BOUND, type Outcome } from './gates.js';
import { hungScenario } from './hung-venue.js';
import { CONNECTIONS, PIPELINING } from './load.js';
import { PAIRS, WIDE } from './pairs.js';
import { HOST, killAll, stopAll } from './processes.js';
import { redisSection } from './redis-section.js';
import { median } from './report.js';
import { report, runSection, type Section } from './section.js';
import { settingsFromEnv } from './settings.js';
import { describeSplitCost, measureSplitRouting } from './split-routing.js';
import { startBaselines, takeSamples } from './start-baselines.js';
import { statusSection } from './status-section.js';
import { describeRecordingCost, measureUsageRecording } from './usage-recording.js';

/** The temp dir holding the data dirs and the baselines' body files; removed on the way out. */
let tmpDir: string | null = null;

async function main(): Promise<number> {
  const settings = settingsFromEnv();
  const { rounds, durationS, warmupS } = settings;
  const redisUrl = process.env.REDIS_URL?.trim() ?? '';
  const cpus = os.cpus();
  console.log(
    `bestex bench: node ${process.version}, ${cpus.length} CPU(s) (${cpus[0]?.model.trim() ?? 'unknown'}); autocannon pipelining ${PIPELINING}, ` +
      `${CONNECTIONS} connections (${WIDE} for the latency checks), on ${HOST}; ${rounds} round${rounds === 1 ? '' : 's'} of ` +
      `${PAIRS.map((p) => `${p.baseName} -> ${p.name}`).join(', ')}; ${durationS} s each after a ${warmupS} s warm-up in round 1` +
      `${rounds > 1 ? `, ${settings.laterWarmupS} s in later rounds` : ''}`,
  );

  // First, while no child process competes for the CPU; the split's figure is printed once the
  // fresh quote's, which it is set beside, is measured.
  console.log(describeRecordingCost(await measureUsageRecording()));
  const splitCost = measureSplitRouting();

  const root = mkdtempSync(path.join(os.tmpdir(), 'bestex-bench-'));
  tmpDir = root;
  // The sandboxes' ledgers take it; the bench sets it, so no sandbox prints one.
  const ledgerToken = `bench-${randomBytes(24).toString('hex')}`;
  try {
    console.log('starting the sandbox (node dist/sandbox/main.js) and the service against it (SANDBOX_URL; LOG_LEVEL=info, stdout to /dev/null)…');
    const sandbox = await startSandbox('the sandbox', dataDirOf(root, 'sandbox'), ledgerToken);
    const service = await startService('the service', { dataDir: dataDirOf(root, 'service'), sandbox, ledgerToken, redisUrl: '' });

    const samples = await takeSamples(service, root);
    console.log(
      `service ready; its cached quote is ${samples.quote.body.length} bytes, a keyless plan ${samples.plan.body.length} bytes ` +
        `(in v2: ${samples.quoteV2.body.length} and ${samples.planV2.body.length} bytes, set against the same baselines)`,
    );
    console.log(describeRecordMemory(samples.planFile));

    const baselines = await startBaselines(samples, sandbox);
    console.log(`baselines ready: ${Object.keys(samples.quoteHeaders).length} headers and the bytes of the quote and of the plan copied and checked; the fan-out asks ${sandbox.announcement.sandbox}`);
    const [load1] = os.loadavg();
    if (load1 !== undefined && load1 > cpus.length / 2) {
      console.log(`note: 1-minute load average is ${load1.toFixed(1)} on ${cpus.length} CPU(s): other processes compete for the CPU, expect noisy numbers`);
    }

    const local: Section = {
      title: 'one instance, in-process state',
      services: [service],
      baselines,
      pairs: PAIRS,
      redis: null,
    };
    const results = await runSection(local, settings);
    const outcome: Outcome = { verdicts: [], invalid: false };
    report(local, results, rounds, outcome);
    console.log('(baselines: bare fastify, logger off, each in its own process; service: LOG_LEVEL=info, access log on, stdout to /dev/null)');
    console.log('(CPU-capacity ratio: baseline CPU µs/req / service CPU µs/req, the server process only, over warm-up and run, median of per-round ratios)');
    console.log(
      '(median req/s and CPU µs/req: medians over the rounds, so the quotient of the two sides\' CPU medians need not be the median ratio; p50/p99: from the median round; 2xx, non-2xx, errors: summed over the rounds)',
    );
    console.log(
      `(per-round spread: the largest per-round value over the smallest; a gate whose rounds spread wider than its bound, ${SPREAD_BOUND.cpuRatio} for CPU-capacity ratios and shares, ` +
        `${SPREAD_BOUND.p99Ratio} for the p99 ratio, cannot be judged: the median would land either side of the level by chance)`,
    );

    console.log('');
    const splitPass = splitCost.p99Us <= MAX_SPLIT_P99_US;
    record(outcome, 'split routing: p99 CPU per call', splitPass ? 'PASS' : 'FAIL');
    console.log(describeSplitCost(splitCost, median(results.get('fresh')!.map((r) => r.service.serverCpuUs)), MAX_SPLIT_P99_US, splitPass ? 'PASS' : 'FAIL'));

    await hungScenario(root, ledgerToken, settings, outcome);

    console.log('');
    if (redisUrl === '') {
      console.log('two instances sharing Redis: skipped (REDIS_URL is not set); run `REDIS_URL=redis://127.0.0.1:6379/15 make bench` to measure them');
    } else {
      await redisSection(redisUrl, root, sandbox, ledgerToken, local.baselines, results, settings, outcome);
    }
    // Last: its sandbox's ledger and its services are its own, and the others are stopped by then.
    await stopAll();
    await statusSection(root, ledgerToken, outcome);
    console.log('');
    console.log(conclusion(outcome));
    return exitStatus(outcome);
  } finally {
    await stopAll();
    rmSync(root, { recursive: true, force: true });
    tmpDir = null;
  }
}

// Last resort: whatever way this process ends, no child outlives it.
process.on('exit', () => {
  killAll();
  if (tmpDir !== null) rmSync(tmpDir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\nbench: ${signal}, stopping child processes`);
    process.exit(130);
  });
}
try {
  process.exitCode = await main();
} catch (err) {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = EXIT_STATUS.fail;
}

/** The heap a plan record holds in the in-process state, measured in a process of its own (bench/record-memory.ts). */
function describeRecordMemory(planFile: string): string {
  const program = fileURLToPath(new URL('./record-memory.js', import.meta.url));
  const line = execFileSync(process.execPath, ['--expose-gc', program, planFile, '50000'], { encoding: 'utf8' }).trim();
  const measured = JSON.parse(line) as { records: number; planBytes: number; heapBytesPerRecord: number; heapMB: number; heapMBPer10k: number; rssMBPer10k: number; heapBytesPerWindow: number };
  return (
    `in-process state, measured: a plan record holds ${measured.heapBytesPerRecord} bytes of heap (${measured.records} records of this ${measured.planBytes}-byte plan hold ${measured.heapMB} MB; STATE_MAX_PLAN_RECORDS bounds them); ` +
    `per 10,000 records ${measured.heapMBPer10k} MB of heap and ${measured.rssMBPer10k} MB of RSS; a caller's rate window ${measured.heapBytesPerWindow} bytes (STATE_MAX_RATE_WINDOWS)`
  );
}
