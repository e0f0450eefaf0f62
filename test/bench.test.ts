// What `make bench` relies on: the bare fan-out baseline sends exactly the venue requests a fresh
// quote makes (bench/fan-out-requests.ts against the real adapters), and the sandbox program's
// fault knob, SANDBOX_HANG_PATHS, hangs what it names and nothing else. No test here measures time.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { dec } from '../core/decimal.js';
import { sandboxVenuesConfig } from '../core/sandbox-link/manifest.js';
import { CC, USDCX } from '../core/tokens.js';
import { createLiveVenues, LIVE_VENUE_IDS, type LiveVenueId } from '../core/venues/live-venues.js';
import type { SandboxAnnouncement } from '../sandbox/manifest.js';
import { decimalText, fanOutRequests } from '../bench/fan-out-requests.js';
import { testSandbox } from './helpers/sandbox.js';

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
  const program = fileURLToPath(new URL('../sandbox/main.js', import.meta.url));
  const child = spawn(process.execPath, [program], {
    env: {
      PATH: process.env.PATH,
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'bestex-bench-test-')),
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
  const program = fileURLToPath(new URL('../sandbox/main.js', import.meta.url));
  const child = spawn(process.execPath, [program], {
    env: { PATH: process.env.PATH, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'bestex-bench-test-')), SANDBOX_VENUES_PORT: '0', SANDBOX_HANG_PATHS: 'nightly/nswap/quote' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  t.equal(code, 1);
  t.match(stderr, /SANDBOX_HANG_PATHS must be comma-separated paths, each starting with \//);
});
