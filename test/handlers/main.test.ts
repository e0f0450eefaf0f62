// The entry point: bad config stops start-up with a clear message; the service listens where
// HOST and PORT say and shuts down gracefully on SIGTERM.
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { plainChild } from '../helpers/plain-child.js';
import { testSandbox } from '../helpers/sandbox.js';

const MAIN = fileURLToPath(new URL('../../handlers/main.js', import.meta.url));

function start(env: Record<string, string>) {
  // SERVICE_BUILD unset: the entry point must fall back to the stamp make build wrote.
  const { SERVICE_BUILD: _unset, ...inherited } = process.env;
  // The started sandbox's ledger on any free port, unless a test says where, whatever the shell set.
  const child = spawn(...plainChild(process.execPath, [MAIN]), { env: { ...inherited, LEDGER_URL: 'http://127.0.0.1:0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return { child, stdout: () => stdout, stderr: () => stderr };
}

t.test('bad config stops the process at start with a message naming every bad variable', async (t) => {
  const run = start({ PORT: 'eighty', LOG_LEVEL: 'loud' });
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 1);
  t.match(run.stderr(), /invalid configuration/);
  t.match(run.stderr(), /PORT must be an integer from 0 to 65535 \(got "eighty"\)/);
  t.match(run.stderr(), /LOG_LEVEL must be one of/);
  t.notMatch(run.stderr(), /at .*\.js:\d+/, 'no stack trace');
});

/** The address the service logs once it listens, when it does; undefined when it exits first. */
function listening(run: ReturnType<typeof start>): Promise<string | undefined> {
  const address = () => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout())?.[1];
  return new Promise((resolve) => {
    const check = () => {
      const found = address();
      if (found === undefined) return;
      run.child.stdout.off('data', check);
      resolve(found);
    };
    run.child.stdout.on('data', check);
    run.child.once('exit', () => resolve(address()));
    check();
  });
}

t.test('listens on HOST:PORT, answers, and exits 0 on SIGTERM after logging the shutdown', async (t) => {
  const run = start({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' });
  t.teardown(() => run.child.kill('SIGKILL'));
  const address = await listening(run);
  t.ok(address, 'logged its address');
  const res = await fetch(`${address}/api/quote?from=CC&to=USDCx&amount=1`);
  t.equal(res.status, 200);
  const stamp = JSON.parse(readFileSync(fileURLToPath(new URL('../../build-info.json', import.meta.url)), 'utf8')) as { build: string };
  t.equal(res.headers.get('x-service-build'), stamp.build, 'x-service-build is the commit make build stamped');
  const sandbox = (JSON.parse(run.stdout().split('\n').find((l) => l.includes('"sandbox started"'))!) as { url: string }).url;
  t.strictSame(
    run.stderr().split('\n').filter((l) => l.startsWith('bestex: listening')),
    [`bestex: listening on ${address} (${address}/docs, ${address}/demo, ${address}/portal); sandbox at ${sandbox}`],
    '"the sandbox venues\' URL" is printed plainly, not only in a JSON log line, with the pages a person opens (the key portal is on in sandbox mode)',
  );
  run.child.kill('SIGTERM');
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 0);
  t.match(run.stdout(), /"msg":"shutting down"/);
});

/** The lines a failed start printed on stderr. */
const stderrLines = (run: ReturnType<typeof start>) => run.stderr().split('\n').filter((l) => l !== '');

t.test('"Start-up failures are one clear line, never a stack": the HTTP port taken', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const { port } = blocker.address() as { port: number };
  const run = start({ HOST: '127.0.0.1', PORT: String(port) });
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 1);
  t.strictSame(stderrLines(run), [`bestex: cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE); stop what listens there or set PORT`], 'one line naming the address and the problem');
  t.notMatch(run.stdout(), /"sandbox started"/, 'known before anything is started: no sandbox');
  t.notMatch(run.stdout() + run.stderr(), /\bat .*\(?(node:|file:|\/).*:\d+/, 'no stack anywhere');
  t.notMatch(run.stdout(), /"level":(50|60)/, 'no error log line besides it');
});

t.test('"Start-up failures are one clear line, never a stack": a HOST that cannot be bound (not this machine\'s, or not resolving)', async (t) => {
  const cases = [
    // TEST-NET-1 (RFC 5737): never an address of this machine.
    ['192.0.2.1', 'HOST is not an address of this machine (EADDRNOTAVAIL); set HOST'],
    ['no-such-host.invalid', /HOST does not resolve to an address \((ENOTFOUND|EAI_AGAIN)\); set HOST/],
  ] as const;
  // Started together: each start runs a sandbox first, which takes a while on a loaded machine.
  const runs = cases.map(([host]) => start({ HOST: host, PORT: '0' }));
  const codes = await Promise.all(runs.map(async (run) => ((await once(run.child, 'exit')) as [number])[0]));
  for (const [i, [host, problem]] of cases.entries()) {
    const run = runs[i]!;
    const code = codes[i];
    t.equal(code, 1, `${host}: exit code 1`);
    const lines = stderrLines(run);
    t.equal(lines.length, 1, `${host}: one line`);
    t.match(lines[0], `bestex: cannot listen on ${host}:0: `, `${host}: names the address`);
    t.match(lines[0], problem, `${host}: and the problem`);
    t.notMatch(run.stdout() + run.stderr(), /\bat .*\(?(node:|file:|\/).*:\d+/, `${host}: no stack anywhere`);
  }
});

t.test('a sandbox ledger port already in use stops the process with a message naming LEDGER_URL', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const { port } = blocker.address() as { port: number };
  const run = start({ HOST: '127.0.0.1', PORT: '0', LEDGER_URL: `http://127.0.0.1:${port}` });
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 1);
  t.match(run.stdout() + run.stderr(), new RegExp(`the sandbox ledger cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\); set LEDGER_URL`));
  t.equal(stderrLines(run).length, 1, 'one line');
  t.notMatch(run.stdout() + run.stderr(), /\bat .*\(?(node:|file:|\/).*:\d+/, 'no stack anywhere');
});

t.test('"Start-up failures are one clear line, never a stack": the sandbox venues\' port taken', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const { port } = blocker.address() as { port: number };
  const run = start({ HOST: '127.0.0.1', PORT: '0', SANDBOX_VENUES_PORT: String(port) });
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 1);
  const lines = stderrLines(run);
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], new RegExp(`^bestex: .*${port}.*SANDBOX_VENUES_PORT`), 'naming the port and the variable');
  t.notMatch(run.stdout() + run.stderr(), /\bat .*\(?(node:|file:|\/).*:\d+/, 'no stack anywhere');
});

t.test('with METRICS_PORT, the metrics listen on their own port before the public one, and close with it on SIGTERM', async (t) => {
  const run = start({ HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', LOG_LEVEL: 'info' });
  t.teardown(() => run.child.kill('SIGKILL'));
  let metrics: string | undefined;
  let address: string | undefined;
  for (let i = 0; i < 600 && !address; i++) {
    metrics = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)","msg":"metrics listening"/.exec(run.stdout())?.[1];
    address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout())?.[1];
    if (!address) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(metrics, 'logged the metrics URL');
  t.ok(run.stdout().indexOf('metrics listening') < run.stdout().indexOf('Server listening'), 'before the public port');
  t.equal((await fetch(`${address}/api/quote?from=CC&to=USDCx&amount=1`)).status, 200);
  const scraped = await fetch(metrics!);
  t.equal(scraped.status, 200);
  t.match(await scraped.text(), /^bestex_http_request_duration_seconds_count\{operation="getQuote",version="1",status="200"\} 1$/m);
  t.equal((await fetch(`${address}/metrics`)).status, 404, 'not on the public port');
  run.child.kill('SIGTERM');
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 0, 'the metrics listener does not hold the exit');
});

t.test('a metrics port already in use stops the process with one line naming it, never a stack', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const { port } = blocker.address() as { port: number };
  const run = start({ HOST: '127.0.0.1', PORT: '0', METRICS_PORT: String(port) });
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 1);
  t.strictSame(stderrLines(run), [`bestex: cannot listen for metrics on 127.0.0.1:${port}: the port is already in use (EADDRINUSE); stop what listens there or set METRICS_PORT`]);
  t.notMatch(run.stdout(), /Server listening/, 'the public port was never opened');
  t.notMatch(run.stdout(), /"sandbox started"/, 'nor a sandbox started');
});

/** The path of tradecraft's quote: a fresh quote waits on it, and the venue's liveness probe does not. */
const HELD_PATH = '/tradecraft/v1/quoteForFixedInput/';

/**
 * A sandbox behind a proxy that holds each request for tradecraft's quote until the test releases it:
 * the service, pointed at the proxy (SANDBOX_URL), then has a quote in flight for as long as the
 * test says, and the test knows when it is (the held request has arrived), with no timing.
 */
async function holdingSandbox(t: Test): Promise<{ url: string; ledgerToken: string; held: Promise<void>; release(): void }> {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  const target = sandbox.manifest.sandbox;
  let arrived!: () => void;
  const held = new Promise<void>((resolve) => (arrived = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const proxy = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      if ((request.url ?? '').startsWith(HELD_PATH)) {
        arrived();
        await released;
      }
      const forward = httpRequest(`${target}${request.url ?? ''}`, { method: request.method, headers: { ...request.headers, host: new URL(target).host } }, (answer) => {
        const parts: Buffer[] = [];
        answer.on('data', (part: Buffer) => parts.push(part));
        answer.on('end', () => {
          // The manifest names the venues under the sandbox's URL: they are reached through the proxy.
          const body = Buffer.from(Buffer.concat(parts).toString('utf8').replaceAll(target, url));
          response.writeHead(answer.statusCode ?? 502, { ...answer.headers, 'content-length': String(body.length) });
          response.end(body);
        });
      });
      // A request released as the test ends finds the sandbox gone: its client is gone too.
      forward.on('error', () => response.destroy());
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  t.teardown(() => {
    release();
    proxy.closeAllConnections();
    proxy.close();
  });
  return { url, ledgerToken: sandbox.ledgerToken, held, release };
}

/** Whether a new TCP connection to `address` is refused (true) or accepted (false, and closed at once). */
function refused(address: string): Promise<boolean> {
  const { hostname, port } = new URL(address);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/**
 * The service started against a holding sandbox (its venue deadline longer than any test), with
 * `graceMs` to shut down in: its address once listening, and its exit.
 */
async function heldService(t: Test, graceMs: number) {
  const venues = await holdingSandbox(t);
  const run = start({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', SANDBOX_URL: venues.url, LEDGER_TOKEN: venues.ledgerToken, VENUE_TIMEOUT_MS: '30000', SHUTDOWN_GRACE_MS: String(graceMs) });
  t.teardown(() => run.child.kill('SIGKILL'));
  const address = await listening(run);
  t.ok(address, `logged its address (${run.stderr()})`);
  const exited = once(run.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  return { venues, run, address: address!, exited };
}

t.test('graceful shutdown: "SIGTERM waits for in-flight requests" (SHUTDOWN_GRACE_MS): a request in flight gets its answer, new connections are refused meanwhile, and the process exits 0', async (t) => {
  // Neither the venue's deadline nor the grace ends while the test holds the quote: the answer
  // comes from the released venue, and only the shutdown could cut it short.
  const { venues, run, address, exited } = await heldService(t, 60_000);

  let settled = false;
  const inFlight = fetch(`${address}/api/quote?from=CC&to=USDCx&amount=7`).then(async (res) => ({ status: res.status, body: await res.text() }));
  void inFlight.finally(() => (settled = true)).catch(() => undefined);
  await venues.held;
  run.child.kill('SIGTERM');

  // Polled until the listener is closed; the quote is still held, so it cannot have been answered.
  let closed = false;
  while (!closed && !settled && run.child.exitCode === null) {
    closed = await refused(address);
    if (!closed) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.ok(closed, 'a new connection is refused once SIGTERM arrives');
  t.equal(settled, false, 'while the request in flight is still waiting on its venue');
  t.equal(run.child.exitCode, null, 'and the process still runs');

  venues.release();
  const answer = await inFlight;
  t.equal(answer.status, 200, 'the request in flight gets its answer');
  const held = (JSON.parse(answer.body) as { venues: Array<{ venueId: string; available: boolean }> }).venues.find((v) => v.venueId === 'tradecraft');
  t.equal(held?.available, true, "with the held venue's quote in it");
  const [code, signal] = await exited;
  t.strictSame({ code, signal }, { code: 0, signal: null }, 'then the process exits 0');
  t.match(run.stdout(), /"msg":"shutting down"/);
  t.notMatch(run.stdout(), /graceful shutdown timed out/);
});

t.test('graceful shutdown: a request still in flight when SHUTDOWN_GRACE_MS ends does not hold the process: it exits 1, saying so', async (t) => {
  const { venues, run, address, exited } = await heldService(t, 200);
  const inFlight = fetch(`${address}/api/quote?from=CC&to=USDCx&amount=7`).then(
    (res) => `answered ${res.status}`,
    () => 'no answer',
  );
  await venues.held;
  run.child.kill('SIGTERM');
  const [code] = await exited;
  t.equal(code, 1, 'the venue is never released: the grace ends first');
  t.match(run.stdout(), /"level":50.*"msg":"graceful shutdown timed out"/);
  t.equal(await inFlight, 'no answer');
});

t.test('graceful shutdown: a request that arrives during the grace on a connection already open is served in the contract\'s terms (never fastify\'s own 503 body), then its connection closes', async (t) => {
  const { venues, run, address, exited } = await heldService(t, 60_000);

  const { hostname, port } = new URL(address);
  const socket = createConnection({ host: hostname, port: Number(port) });
  t.teardown(() => socket.destroy());
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  const ended = once(socket, 'close');
  socket.write(`GET /api/quote?from=CC&to=USDCx&amount=7 HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  await venues.held;
  run.child.kill('SIGTERM');
  while (!(await refused(address))) await new Promise((resolve) => setTimeout(resolve, 20));

  // Pipelined behind the held quote, on the connection the listener's close leaves open.
  socket.write(`GET /api/status HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  venues.release();
  await ended;
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
  t.strictSame(statuses, [200, 200], `both requests are answered 200, in order (${received.slice(0, 200)})`);
  const second = received.slice(received.lastIndexOf('HTTP/1.1 '));
  const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
  t.ok(Array.isArray(body.components), 'the second is the status summary the contract documents');
  t.notMatch(received, /Service Unavailable/, "fastify's own 503 body never reaches the caller");
  const [code] = await exited;
  t.equal(code, 0, 'and the process exits 0 once both are answered');
});
