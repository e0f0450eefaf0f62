// `make soak` (not in `make test`): the service under a long mixed load, as deployed: the sandbox
// and the service each in a process of their own (bench/deployment.ts), SOAK_CONNECTIONS
// connections (50) for SOAK_SECONDS (600) of cached and fresh quotes, keyless and keyed plans, and
// replays of plans already made. Every 30 s it prints the service's resident memory (from /proc),
// its heap in use and the worst event-loop delay since the last line (the service's own metrics); at the end, the
// answers by status. It passes when no answer was a 5xx and the memory after the first retention
// window (5 minutes: by then every kind of state the load makes has started to expire) grew by at
// most 10 %. Rate limits, per-caller plan shares and the in-process record bound are set out of
// reach (as make bench sets them): the soak measures memory and errors, not refusals, so every
// plan made is a record held for its 5 minutes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startSandbox, startService } from './deployment.js';
import { freePort, killAll, stopAll } from './processes.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 50);
const SAMPLE_MS = 30_000;
/** A plan record's retention: memory is judged from the first sample after it. */
const WINDOW_MS = 5 * 60_000;
const MAX_GROWTH = 0.1;
const UNLIMITED = '1000000000';

const PLAN = { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: `soak-taker::1220${'c'.repeat(64)}` } as const;

/** Each kind of request, and its share of the load. */
const MIX = [
  ['cached quote', 40],
  ['fresh quote', 15],
  ['keyless plan', 15],
  ['keyed plan', 15],
  ['replay', 15],
] as const;
type Kind = (typeof MIX)[number][0];

const pick = (): Kind => {
  let roll = Math.random() * 100;
  for (const [kind, share] of MIX) {
    roll -= share;
    if (roll < 0) return kind;
  }
  return 'cached quote';
};

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** The worst event-loop delay since the last scrape (ms) and the heap in use now (MB), from the service's own metrics. */
async function scrape(metrics: string): Promise<{ delayMs: number | null; heapMb: number | null }> {
  try {
    const text = await (await fetch(`${metrics}/metrics`)).text();
    const read = (name: string) => {
      const value = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1];
      return value === undefined ? null : Number(value);
    };
    const delay = read('nodejs_eventloop_lag_max_seconds');
    const heap = read('nodejs_heap_size_used_bytes');
    return { delayMs: delay === null ? null : delay * 1000, heapMb: heap === null ? null : heap / 1024 / 1024 };
  } catch {
    return { delayMs: null, heapMb: null };
  }
}

async function main(): Promise<number> {
  if (!Number.isFinite(SECONDS) || SECONDS < 60 || !Number.isInteger(CONNECTIONS) || CONNECTIONS < 1) throw new Error('SOAK_SECONDS must be at least 60 and SOAK_CONNECTIONS a positive integer');
  const root = mkdtempSync(path.join(tmpdir(), 'bestex-soak-'));
  try {
    const token = `soak-${Date.now()}`;
    const sandbox = await startSandbox('sandbox', path.join(root, 'sandbox'), token);
    const dataDir = path.join(root, 'service');
    // A partner key in the service's key store, made with the keys CLI as an operator makes one.
    const keys = fileURLToPath(new URL('../scripts/keys.js', import.meta.url));
    const key = execFileSync(process.execPath, [keys, 'create', '--name', 'soak'], { env: { ...process.env, DATA_DIR: dataDir }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const metricsPort = await freePort();
    const service = await startService('service', {
      dataDir,
      sandbox,
      ledgerToken: token,
      redisUrl: '',
      env: { METRICS_PORT: String(metricsPort), RATE_LIMIT_KEYED_PER_MINUTE: UNLIMITED, RATE_LIMIT_KEYED_FRESH_QUOTES_PER_MINUTE: UNLIMITED, PLAN_RECORDS_PER_IP: '10000000', PLAN_RECORDS_PER_KEY: '10000000' },
    });
    const pid = service.child.pid!;
    const metrics = `http://127.0.0.1:${metricsPort}`;
    console.log(`node ${process.version}; soaking ${service.url} for ${SECONDS} s at ${CONNECTIONS} connections: ${MIX.map(([kind, share]) => `${kind} ${share} %`).join(', ')}`);

    const pool = new Pool(service.url, { connections: CONNECTIONS, pipelining: 1 });
    const statuses = new Map<string, number>();
    const made: string[] = [];
    let sent = 0;
    let errors = 0;
    const end = Date.now() + SECONDS * 1000;
    const started = Date.now();

    const one = async (): Promise<void> => {
      const kind = pick();
      const n = sent++;
      let request: { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string };
      switch (kind) {
        case 'cached quote':
          request = { method: 'GET', path: '/api/quote?from=CC&to=USDCx&amount=100' };
          break;
        case 'fresh quote':
          request = { method: 'GET', path: `/api/quote?from=CC&to=USDCx&amount=100.${String(n).padStart(10, '0')}` };
          break;
        case 'replay':
          if (made.length > 0) {
            request = JSON.parse(made[Math.floor(Math.random() * made.length)]!) as typeof request;
            break;
          }
        // falls through: nothing to replay yet
        case 'keyless plan':
        case 'keyed plan': {
          const keyed = kind === 'keyed plan';
          request = {
            method: 'POST',
            path: keyed ? '/api/execute/plan' : '/api/app/plan',
            headers: { 'content-type': 'application/json', ...(keyed ? { 'x-api-key': key } : {}) },
            body: JSON.stringify({ ...PLAN, idempotencyKey: `soak-${n}` }),
          };
          // The most recent plans are the ones replayed, as a client retries soon after.
          made.push(JSON.stringify(request));
          if (made.length > 1000) made.shift();
        }
      }
      try {
        const answer = await pool.request(request);
        await answer.body.dump();
        const label = `${kind} ${answer.statusCode}`;
        statuses.set(label, (statuses.get(label) ?? 0) + 1);
      } catch {
        errors++;
      }
    };
    const loop = async () => {
      while (Date.now() < end) await one();
    };

    const samples: Array<{ at: number; rss: number }> = [];
    let worst = 0;
    await scrape(metrics);
    const sampler = setInterval(() => {
      void (async () => {
        const at = Date.now() - started;
        const rss = rssMb(pid);
        const { delayMs: delay, heapMb } = await scrape(metrics);
        if (delay !== null) worst = Math.max(worst, delay);
        samples.push({ at, rss });
        console.log(`${String(Math.round(at / 1000)).padStart(4)} s  rss ${rss.toFixed(1)} MB  heap in use ${heapMb === null ? 'unread' : `${heapMb.toFixed(1)} MB`}  requests ${sent}  worst event-loop delay since the last line ${delay === null ? 'unread' : `${delay.toFixed(1)} ms`}`);
      })();
    }, SAMPLE_MS);
    await Promise.all(Array.from({ length: CONNECTIONS }, loop));
    clearInterval(sampler);
    await pool.close();

    const fivexx = [...statuses].filter(([label]) => / 5\d\d$/.test(label)).reduce((sum, [, count]) => sum + count, 0);
    console.log('\nanswers by kind and status:');
    for (const [label, count] of [...statuses].sort()) console.log(`  ${label.padEnd(22)} ${count}`);
    console.log(`  transport errors       ${errors}`);
    const after = samples.find((s) => s.at >= WINDOW_MS);
    const last = samples.at(-1);
    let growth: number | null = null;
    if (after && last && last !== after) growth = (last.rss - after.rss) / after.rss;
    console.log(`\nworst event-loop delay: ${worst.toFixed(1)} ms`);
    console.log(
      growth === null
        ? `memory: the run is shorter than the first retention window (${WINDOW_MS / 60_000} min) and a sample after it: no growth to judge`
        : `memory: ${after!.rss.toFixed(1)} MB at ${Math.round(after!.at / 1000)} s, ${last!.rss.toFixed(1)} MB at ${Math.round(last!.at / 1000)} s: ${(growth * 100).toFixed(1)} % growth after the first retention window (at most ${MAX_GROWTH * 100} %)`,
    );
    console.log(`5xx answers: ${fivexx}`);
    const ok = fivexx === 0 && errors === 0 && (growth === null || growth <= MAX_GROWTH);
    console.log(ok ? 'soak: passed' : 'soak: FAILED');
    return ok ? 0 : 1;
  } finally {
    await stopAll();
    rmSync(root, { recursive: true, force: true });
  }
}

process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    killAll();
    console.error(`soak: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
