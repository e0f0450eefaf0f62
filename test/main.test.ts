// The entry point: bad config stops start-up with a clear message; the service listens where
// HOST and PORT say and shuts down gracefully on SIGTERM.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const MAIN = fileURLToPath(new URL('../handlers/main.js', import.meta.url));

function start(env: Record<string, string>) {
  // SERVICE_BUILD unset: the entry point must fall back to the stamp make build wrote.
  const { SERVICE_BUILD: _unset, ...inherited } = process.env;
  // The started sandbox's ledger on any free port, unless a test says where, whatever the shell set.
  const child = spawn(process.execPath, [MAIN], { env: { ...inherited, LEDGER_URL: 'http://127.0.0.1:0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

t.test('listens on HOST:PORT, answers, and exits 0 on SIGTERM after logging the shutdown', async (t) => {
  const run = start({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' });
  t.teardown(() => run.child.kill('SIGKILL'));
  let address: string | undefined;
  // Polled until it listens or exits: a loaded machine may take a while to start it and its sandbox.
  for (let i = 0; i < 1200 && !address && run.child.exitCode === null; i++) {
    address = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(run.stdout())?.[1];
    if (!address) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.ok(address, 'logged its address');
  const res = await fetch(`${address}/api/quote?from=CC&to=USDCx&amount=1`);
  t.equal(res.status, 200);
  const stamp = JSON.parse(readFileSync(fileURLToPath(new URL('../build-info.json', import.meta.url)), 'utf8')) as { build: string };
  t.equal(res.headers.get('x-service-build'), stamp.build, 'x-service-build is the commit make build stamped');
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
  t.match(await scraped.text(), /^bestex_http_request_duration_seconds_count\{operation="getQuote",status="200"\} 1$/m);
  t.equal((await fetch(`${address}/metrics`)).status, 404, 'not on the public port');
  run.child.kill('SIGTERM');
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 0, 'the metrics listener does not hold the exit');
});

t.test('a metrics port already in use stops the process with a fatal log line naming it', async (t) => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  t.teardown(() => blocker.close());
  const { port } = blocker.address() as { port: number };
  const run = start({ HOST: '127.0.0.1', PORT: '0', METRICS_PORT: String(port) });
  const [code] = (await once(run.child, 'exit')) as [number];
  t.equal(code, 1);
  t.match(run.stdout(), new RegExp(`"level":60.*"msg":"cannot listen for metrics on 127\\.0\\.0\\.1:${port} \\(METRICS_HOST, METRICS_PORT\\)"`));
  t.notMatch(run.stdout(), /Server listening/, 'the public port was never opened');
});
