// What `make bench` relies on: the bare fan-out baseline sends exactly the venue requests a fresh
// quote makes (bench/fan-out-requests.ts against the real adapters), and the sandbox program's
// fault knob, SANDBOX_HANG_PATHS, hangs what it names and nothing else; its gates are the levels
// docs/performance.md states, judged as it says (bench/gates.ts). No test here measures time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { dec } from '../../core/decimal.js';
import { sandboxVenuesConfig } from '../../core/sandbox-link/manifest.js';
import { CC, USDCX } from '../../core/tokens.js';
import { createLiveVenues, LIVE_VENUE_IDS, type LiveVenueId } from '../../core/venues/live-venues.js';
import type { SandboxAnnouncement } from '../../sandbox/manifest.js';
import { decimalText, fanOutRequests } from '../../bench/fan-out-requests.js';
import {
  conclusion,
  EXIT_STATUS,
  exitStatus,
  HUNG_SLACK_MS,
  judge,
  judgeShare,
  MAX_P99_FACTOR,
  MAX_STATUS_P99_MS,
  MAX_STREAM_BYTES,
  MIN_RATIO,
  MIN_SHARE_OF_ONE,
  MIN_SHARE_OF_V1,
  SPREAD_BOUND,
  spreadOf,
  type Outcome,
  type Verdict,
} from '../../bench/gates.js';
import { repoRoot } from '../../handlers/app.js';
import { testSandbox } from '../helpers/sandbox.js';
import { plainChild } from '../helpers/plain-child.js';
import { tempDir } from '../helpers/temp.js';

interface Recorded {
  readonly origin: string;
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
}

// The HTTP client's own headers, whichever client the service uses (node:http, undici): not the
// adapters' choice, so not the fan-out's either. user-agent is the adapters' own and is compared.
const CLIENT_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

const adapterHeaders = (headers: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !CLIENT_HEADERS.has(name)).map(([name, value]) => [name, String(value)]));

/** A proxy on loopback that records each request and passes it to the sandbox's venues. */
async function recordingProxy(target: string): Promise<{ url: string; recorded: Recorded[]; close(): Promise<void> }> {
  const recorded: Recorded[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = chunks.length === 0 ? undefined : Buffer.concat(chunks).toString('utf8');
      recorded.push({ origin: url, method: request.method ?? '', path: request.url ?? '', headers: adapterHeaders(request.headers), body });
      const forward = httpRequest(`${target}${request.url ?? ''}`, { method: request.method, headers: { ...request.headers, host: new URL(target).host } }, (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    recorded,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

t.test('"the bare fan-out makes exactly the five venue requests a fresh quote makes": same method, path and query, body and credential headers as the real adapters send', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const proxy = await recordingProxy(sandbox.manifest.sandbox);
  t.teardown(proxy.close);
  const venues = Object.fromEntries(LIVE_VENUE_IDS.map((id) => [id, sandbox.manifest.venues[id]!.replace(sandbox.manifest.sandbox, proxy.url)])) as Record<LiveVenueId, string>;
  const manifest = { ...sandbox.manifest, venues };
  const adapters = createLiveVenues(sandboxVenuesConfig(manifest, 5_000));
  const deadline = { signal: new AbortController().signal, endsAt: Number.POSITIVE_INFINITY };
  // As the service does before its first quote: the probes read tradecraft's pools and nightly's
  // tokens, which their quotes then use. Only the quotes' requests are compared.
  for (const venue of adapters) t.match(await venue.probe(deadline.signal), { live: true }, `${venue.id} probes live`);
  const requestsFor = fanOutRequests(manifest);
  for (const amount of ['100', '100.0000000010', '2500.5']) {
    proxy.recorded.length = 0;
    for (const venue of adapters) {
      const quote = await venue.quote({ give: CC, want: USDCX, amount: dec(amount) }, deadline);
      t.equal(quote.available, true, `${venue.id} quotes ${amount} CC`);
    }
    const expected = requestsFor(decimalText(amount)!).map(({ origin, method, path, headers, body }) => ({ origin, method, path, headers, body }));
    t.strictSame(proxy.recorded, expected, `${amount} CC: the fan-out's requests are the adapters' own, in createLiveVenues' order`);
  }
});

t.test('"an amount goes on the wire as the service\'s Decimal prints it": decimalText is Decimal#toFixed for plain decimals, and refuses anything else', async (t) => {
  for (const text of ['100', '100.0000000010', '0.5', '007.250', '25.0', '0.0000000001', '123456789.1234567890']) {
    t.equal(decimalText(text), dec(text).toFixed(), text);
  }
  for (const text of ['', '1e5', '-1', '.5', 'abc', '1.2.3']) t.equal(decimalText(text), null, JSON.stringify(text));
});

t.test('"a request whose path starts with one of SANDBOX_HANG_PATHS is accepted and never answered": the venue\'s other paths still answer, and stopping the sandbox does not wait on it', async (t) => {
  const program = fileURLToPath(new URL('../../sandbox/main.js', import.meta.url));
  const child = spawn(...plainChild(process.execPath, [program]), {
    env: {
      PATH: process.env.PATH,
      DATA_DIR: tempDir(t, 'bestex-bench-test-'),
      SANDBOX_VENUES_PORT: '0',
      LEDGER_URL: 'http://127.0.0.1:0',
      LEDGER_TOKEN: 'bench-test-token',
      SANDBOX_HANG_PATHS: '/nightly/nswap/quote, /temple/nowhere',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => child.kill('SIGKILL'));
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const venues = (JSON.parse(line) as SandboxAnnouncement).venues;

  let hungSettled = false;
  const hung = fetch(`${venues.nightly}/nswap/quote`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"fromToken":"Amulet","toToken":"USDCx","amount":"100","recipient":"x"}' }).then(
    () => 'answered',
    () => 'no answer',
  );
  void hung.then(() => (hungSettled = true));
  const tokens = await fetch(`${venues.nightly}/nswap/tokens`);
  t.equal(tokens.status, 200, "the hung venue's probe path still answers");
  const other = await fetch(`${venues.tradecraft}/quoteForFixedInput/CC/USDCx?givingAmount=100`);
  t.equal(other.status, 200, "another venue's quote still answers");
  t.equal(hungSettled, false, 'the hung request got no answer while later ones did');

  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 0, 'the sandbox stops on SIGTERM with a request still hung');
  t.equal(await hung, 'no answer', 'the hung request ends without an answer when the sandbox stops');
});

t.test('SANDBOX_HANG_PATHS that are not paths stop the sandbox program with its name', async (t) => {
  const program = fileURLToPath(new URL('../../sandbox/main.js', import.meta.url));
  const child = spawn(...plainChild(process.execPath, [program]), {
    env: { PATH: process.env.PATH, DATA_DIR: tempDir(t, 'bestex-bench-test-'), SANDBOX_VENUES_PORT: '0', SANDBOX_HANG_PATHS: 'nightly/nswap/quote' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 1);
  t.match(stderr, /SANDBOX_HANG_PATHS must be comma-separated paths, each starting with \//);
});

/** The cells of the gate table's row whose first cell starts with `measurement`. */
function gateRow(doc: string, measurement: string): { gated: string; bound: string } {
  const row = doc.split('\n').find((line) => line.startsWith(`| ${measurement}`));
  if (row === undefined) throw new Error(`docs/performance.md's gate table has no row for ${measurement}`);
  const cells = row.split('|').slice(1, -1).map((cell) => cell.trim());
  if (cells.length !== 4) throw new Error(`the row for ${measurement} has ${cells.length} cells, not 4`);
  return { gated: cells[2]!, bound: cells[3]! };
}

const numberIn = (text: string, pattern: RegExp): number => {
  const match = pattern.exec(text);
  if (!match) throw new Error(`${JSON.stringify(text)} does not match ${pattern}`);
  return Number(match[1]);
};

t.test('"the gate table states the levels the bench gates at": each level and cannot-judge bound in docs/performance.md is bench/gates.ts\'s, and so are the exit statuses', async (t) => {
  const doc = readFileSync(path.join(repoRoot(), 'docs', 'performance.md'), 'utf8');
  const cached = gateRow(doc, 'cached keyless quote');
  const fresh = gateRow(doc, 'fresh keyless quote');
  const plan = gateRow(doc, 'keyless plan');
  const shares = gateRow(doc, 'the same three, two instances');
  const v2 = gateRow(doc, 'the cached quote and the plan in API version 2');
  const wide = gateRow(doc, 'fresh quotes at 50 connections');
  const hung = gateRow(doc, 'one venue hung');
  const atLeast = /CPU-capacity ratio >= ([0-9.]+)/;
  t.strictSame(
    { cached: numberIn(cached.gated, atLeast), fresh: numberIn(fresh.gated, atLeast), plan: numberIn(plan.gated, atLeast) },
    { ...MIN_RATIO },
    'one instance: cached, fresh and plan minimums',
  );
  t.strictSame(
    {
      cached: numberIn(shares.gated, />= ([0-9.]+) \(cached\)/),
      fresh: numberIn(shares.gated, />= ([0-9.]+) \(fresh\)/),
      plan: numberIn(shares.gated, />= ([0-9.]+) \(plan\)/),
    },
    { ...MIN_SHARE_OF_ONE },
    "two instances: their shares of one instance's ratio",
  );
  t.strictSame(
    { cached: numberIn(v2.gated, />= ([0-9.]+) \(cached\)/), plan: numberIn(v2.gated, />= ([0-9.]+) \(plan\)/) },
    { ...MIN_SHARE_OF_V1 },
    "v2: its shares of v1's ratio",
  );
  t.equal(numberIn(wide.gated, /p99 at most ([0-9.]+)x/), MAX_P99_FACTOR, 'the p99 factor at 50 connections');
  t.equal(numberIn(hung.gated, /`VENUE_TIMEOUT_MS` \+ ([0-9]+) ms/), HUNG_SLACK_MS, "the hung venue's slack past its deadline");
  const latency = gateRow(doc, 'plan status latency');
  const webhooks = gateRow(doc, 'partner webhooks latency');
  const streams = gateRow(doc, 'open plan status streams');
  t.equal(numberIn(latency.gated, /p99 <= ([0-9]+) ms/), MAX_STATUS_P99_MS, "the status latency's p99");
  t.equal(numberIn(webhooks.gated, /p99 <= ([0-9]+) ms/), MAX_STATUS_P99_MS, "the webhooks' p99");
  t.equal(numberIn(streams.gated, /<= ([0-9]+) bytes per stream/), MAX_STREAM_BYTES, 'the memory per open stream');
  for (const [name, row] of [['status latency', latency], ['webhooks latency', webhooks], ['open streams', streams]] as const) t.match(row.bound, /^never/, `${name}: one measurement, never held back`);
  for (const [name, row] of [['cached', cached], ['fresh', fresh], ['plan', plan], ['two instances', shares], ['v2', v2]] as const) {
    t.equal(numberIn(row.bound, /^([0-9.]+)/), SPREAD_BOUND.cpuRatio, `${name}: the cannot-judge bound of CPU-capacity ratios`);
  }
  t.equal(numberIn(wide.bound, /^([0-9.]+), for the p99 ratio/), SPREAD_BOUND.p99Ratio, "the p99 ratio's cannot-judge bound");
  t.match(hung.bound, /^never/, 'the hung check is never held back');
  t.match(doc, new RegExp(`- CPU-capacity ratios: ${SPREAD_BOUND.cpuRatio}\\.`), "the bound's reasons name it");
  t.match(doc, new RegExp(`- The p99 ratio at 50 connections: ${SPREAD_BOUND.p99Ratio}\\.`), "the p99 bound's reasons name it");
  t.match(
    doc,
    new RegExp(`\\*\\*Exit status\\.\\*\\* ${EXIT_STATUS.fail} when a judged gate fails[^*]*else ${EXIT_STATUS.cannotJudge} when any gate cannot be judged[^*]*else ${EXIT_STATUS.pass}\\.`),
    'the exit statuses',
  );
});

t.test('"the largest per-round figure over the smallest": the spread, and no spread to read when a round measured nothing', async (t) => {
  t.strictSame(spreadOf([0.6, 0.49, 0.78]), { low: 0.49, high: 0.78, factor: 0.78 / 0.49 });
  t.equal(spreadOf([0.7]).factor, 1, 'one round: no spread');
  t.equal(spreadOf([0.6, Number.NaN]).factor, Number.POSITIVE_INFINITY, 'a round without a figure');
  t.equal(spreadOf([0.6, 0]).factor, Number.POSITIVE_INFINITY, 'a round that read 0');
  t.equal(spreadOf([]).factor, Number.POSITIVE_INFINITY, 'no rounds');
});

t.test('"a gate judges the median of its per-round figures, unless they spread wider than its bound"', async (t) => {
  const level = { atLeast: 0.6 };
  t.match(judge([0.58, 0.65, 0.7, 0.55, 0.66], level, 2.5), { verdict: 'PASS', median: 0.65 }, 'two rounds below the level, the median above');
  t.match(judge([0.58, 0.59, 0.7, 0.55, 0.66], level, 2.5), { verdict: 'FAIL', median: 0.59 }, 'the median below');
  t.equal(judge([0.6, 0.61, 0.62], level, 2.5).verdict, 'PASS', 'the level itself passes');
  t.match(judge([0.31, 0.66, 1.01, 0.5, 0.8], level, 2.5), { verdict: 'CANNOT JUDGE', median: 0.66 }, 'a spread of 3.26 against 2.5, though the median passes');
  t.equal(judge([0.31, 0.4, 1.01, 0.5, 0.45], level, 2.5).verdict, 'CANNOT JUDGE', 'a spread of 3.26, though the median fails');
  t.equal(judge([0.4, 1.0], level, 2.5).verdict, 'PASS', 'a spread at the bound is judged');
  t.equal(judge([0.4, 1.01], level, 2.5).verdict, 'CANNOT JUDGE', 'just past it is not');
  t.equal(judge([Number.NaN, Number.NaN], level, 2.5).verdict, 'FAIL', 'nothing measured fails');
  t.equal(judge([], level, 2.5).verdict, 'FAIL', 'no rounds fail');
  t.equal(judge([0.7, Number.NaN, 0.65], level, 2.5).verdict, 'CANNOT JUDGE', 'a round without a figure leaves the rest unjudgeable');
  const p99 = { atMost: MAX_P99_FACTOR };
  t.match(judge([0.84, 1.48, 3.34, 1.2, 1.6], p99, SPREAD_BOUND.p99Ratio), { verdict: 'PASS', median: 1.48 }, 'a p99 ratio at most its factor');
  t.equal(judge([1.9, 2.62, 2.7], p99, SPREAD_BOUND.p99Ratio).verdict, 'FAIL', 'a p99 ratio past it');
  t.equal(judge([0.3, 1.5, 4.0], p99, SPREAD_BOUND.p99Ratio).verdict, 'CANNOT JUDGE', 'p99 ratios apart by more than 10x');
});

t.test('"the spreads recorded in docs/performance.md\'s quiet runs are judged, the busy run\'s is not"', async (t) => {
  for (const [what, low, high] of [
    ['cached, 2026-12-05 run 1', 0.49, 0.78],
    ['plan, 2026-12-05 run 1', 0.53, 1.0],
    ['cached, 2026-12-01', 0.59, 0.93],
    ['cached, 2026-11-26 runs 1-3', 0.6, 1.32],
    ['fresh, 1 s pairs', 0.26, 0.56],
  ] as const) {
    t.not(judge([low, high], { atLeast: 0.5 }, SPREAD_BOUND.cpuRatio).verdict, 'CANNOT JUDGE', what);
  }
  for (const [what, low, high] of [
    ['2026-12-05 run 1', 0.84, 3.34],
    ['2026-12-01', 0.72, 5.42],
  ] as const) {
    t.not(judge([low, high], { atMost: MAX_P99_FACTOR }, SPREAD_BOUND.p99Ratio).verdict, 'CANNOT JUDGE', `p99, ${what}`);
  }
  t.equal(judge([0.31, 1.01], { atLeast: 0.5 }, SPREAD_BOUND.cpuRatio).verdict, 'CANNOT JUDGE', 'cached, 2026-11-26 run 6, the host busy');
});

t.test('"a share is each round\'s ratio over one instance\'s median ratio; it cannot be judged when either side spreads past the bound"', async (t) => {
  const one = [0.6, 0.65, 0.7, 0.62, 0.68];
  t.match(judgeShare([0.45, 0.5, 0.55, 0.48, 0.52], one, 0.7, 2.5), { verdict: 'PASS', median: 0.5 / 0.65 }, 'the median share is the ratio of the medians');
  t.match(judgeShare([0.4, 0.42, 0.45, 0.41, 0.43], one, 0.7, 2.5), { verdict: 'FAIL', median: 0.42 / 0.65 });
  t.equal(judgeShare([0.2, 0.5, 0.55, 0.48, 0.52], one, 0.7, 2.5).verdict, 'CANNOT JUDGE', 'its own rounds spread 2.75');
  const blurred = judgeShare([0.45, 0.5, 0.55, 0.48, 0.52], [0.3, 0.65, 0.8, 0.62, 0.68], 0.7, 2.5);
  t.equal(blurred.verdict, 'CANNOT JUDGE', "one instance's rounds spread 2.67: the reference says nothing");
  t.match(blurred.reference, { low: 0.3, high: 0.8 }, 'and the reference is named');
  t.equal(judgeShare([0.4, 0.42, 0.45], [0.3, 0.65, 0.8], 0.7, 2.5).verdict, 'CANNOT JUDGE', 'a failing share of a blurred reference is not judged either');
  t.equal(judgeShare([Number.NaN], one, 0.7, 2.5).verdict, 'FAIL', 'nothing measured fails');
});

t.test('"exit 1 on a failed gate or an invalid run, else 3 when a gate cannot be judged, else 0", named on the last line', async (t) => {
  const outcome = (invalid: boolean, ...verdicts: Verdict[]): Outcome => ({ verdicts: verdicts.map((verdict, i) => ({ gate: `gate ${i + 1}`, verdict })), invalid });
  t.equal(exitStatus(outcome(false, 'PASS', 'PASS')), 0);
  t.equal(exitStatus(outcome(false, 'PASS', 'FAIL')), 1);
  t.equal(exitStatus(outcome(false, 'PASS', 'CANNOT JUDGE')), 3);
  t.equal(exitStatus(outcome(false, 'CANNOT JUDGE', 'FAIL', 'CANNOT JUDGE')), 1, 'a failure outranks gates that cannot be judged');
  t.equal(exitStatus(outcome(true, 'PASS', 'CANNOT JUDGE')), 1, 'an invalid run outranks them too');
  t.equal(exitStatus(outcome(true, 'PASS')), 1, 'an invalid run with every gate passed');
  t.equal(new Set(Object.values(EXIT_STATUS)).size, 3, 'three distinct statuses');
  t.match(conclusion(outcome(false, 'PASS', 'CANNOT JUDGE')), /^bench: exit 3: .*cannot be judged.*: gate 2$/);
  t.match(conclusion(outcome(true, 'FAIL', 'CANNOT JUDGE')), /^bench: exit 1: FAIL: gate 1; invalid runs .*; and cannot be judged: gate 2$/);
  t.match(conclusion(outcome(false, 'PASS')), /^bench: exit 0: every gate passed/);
});
