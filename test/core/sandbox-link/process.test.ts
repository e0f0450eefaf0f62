// The sandbox as its own program in its own process, as `make run` and `make sandbox` run it: the
// service starts it on free ports and stops it however the service ends; it is reached only over
// HTTP; a service whose sandbox dies keeps answering and says so.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import type { QuoteResponse } from '../../../core/contract/v1.js';
import { plainChild } from '../../helpers/plain-child.js';
import { sandboxCli } from '../../helpers/sandbox-cli.js';
import { alive, logLines, MAIN, run, service, until } from '../../helpers/service-process.js';
import { tempDir } from '../../helpers/temp.js';

const SANDBOX = fileURLToPath(new URL('../../../sandbox/main.js', import.meta.url));
/** The README's first quote. */
const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';

/** The parent process id, from /proc. */
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[1]);

const refused = (url: string) => fetch(url).then(() => false, () => true);

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Two services as two checkouts run them, side by side, started once for the tests that only look
 * at them (each may run alone: the first to ask starts them) and killed when the file ends. The
 * first's DATA_DIR held a world-readable sandbox.json from before it started: the token must not
 * land in it.
 */
let sideBySide: Promise<[Awaited<ReturnType<typeof service>>, Awaited<ReturnType<typeof service>>]> | undefined;
const twoServices = () =>
  (sideBySide ??= (() => {
    const dataDir = tempDir(t, 'bestex-process-');
    writeFileSync(path.join(dataDir, 'sandbox.json'), '{}', { mode: 0o644 });
    return Promise.all([service(t, { DATA_DIR: dataDir }), service(t)]);
  })());

t.test('make run: the service and the sandbox are two processes, on free ports, and two checkouts run side by side; the README\'s quote is answered', async (t) => {
  const [a, b] = await twoServices();
  for (const s of [a, b]) {
    t.not(s.sandbox.pid, s.child.pid, 'the sandbox is a process of its own');
    t.equal(parentOf(s.sandbox.pid), s.child.pid, 'started by the service');
    const res = await fetch(`${s.address}${QUOTE}`);
    t.equal(res.status, 200);
    const body = (await res.json()) as QuoteResponse;
    t.equal(body.venues.length, 5);
    t.ok(body.venues.every((v) => v.available), 'every venue quotes, over HTTP to the sandbox');
  }
  t.not(a.sandbox.url, b.sandbox.url, 'no two sandboxes share a port');
  t.not(a.sandbox.ledger, b.sandbox.ledger);
});

t.test('the sandbox says where it is in DATA_DIR/sandbox.json (its owner\'s only), and the wallet CLI finds it there', async (t) => {
  const [s] = await twoServices();
  const file = path.join(s.dataDir, 'sandbox.json');
  t.equal(statSync(file).mode & 0o777, 0o600, 'it holds the ledger token: owner-only, whatever was there before');
  t.match(JSON.parse(readFileSync(file, 'utf8')), { sandbox: s.sandbox.url, ledger: s.sandbox.ledger, ledgerToken: String, pid: s.sandbox.pid });
  const party = `wallet-finds::1220${'4'.repeat(64)}`;
  const funded = await sandboxCli(['fund', '--party', party, '--token', 'CC', '--amount', '7'], { DATA_DIR: s.dataDir, LEDGER_URL: '', LEDGER_TOKEN: '' });
  t.equal(funded.code, 0, funded.stderr);
  const absent = await sandboxCli(['balance', '--party', party], { DATA_DIR: tempDir(t, 'bestex-empty-'), LEDGER_URL: '', LEDGER_TOKEN: '' });
  t.match(absent, { code: 1, stderr: /no running sandbox found .*sandbox\.json is absent.*make run.*make sandbox.*or set LEDGER_URL/ });
});

t.test('a second make run on a port already served "never disturbs a running instance": it stops before starting anything, in one line naming the port, and the first\'s sandbox.json, sandbox and answers are untouched', async (t) => {
  const [first] = await twoServices();
  const dataDir = first.dataDir;
  const port = new URL(first.address).port;
  const file = path.join(dataDir, 'sandbox.json');
  const before = readFileSync(file, 'utf8');
  const second = run(t, MAIN, { DATA_DIR: dataDir, PORT: port });
  t.teardown(() => second.child.kill('SIGKILL'));
  const [code] = (await once(second.child, 'exit')) as [number];
  t.equal(code, 1, 'the second exits non-zero');
  t.equal(second.stderr(), `bestex: cannot listen on 127.0.0.1:${port}: the port is already in use (EADDRINUSE); stop what listens there or set PORT\n`, 'one line naming the port and what to do');
  t.notOk(logLines(second).some((l) => l.msg === 'sandbox started'), 'it started no sandbox');
  t.equal(readFileSync(file, 'utf8'), before, 'the first\'s sandbox.json is as it wrote it');
  t.ok(alive(first.sandbox.pid), 'the first\'s sandbox runs');
  t.equal((await fetch(`${first.address}${QUOTE}`)).status, 200, 'the first still answers');
  const funded = await sandboxCli(['fund', '--party', `second-run::1220${'6'.repeat(64)}`, '--token', 'CC', '--amount', '1'], { DATA_DIR: dataDir, LEDGER_URL: '', LEDGER_TOKEN: '' });
  t.equal(funded.code, 0, `the wallet CLI still finds the first\'s sandbox: ${funded.stderr}`);
});

t.test('SIGTERM to the service stops its sandbox too: no process left, no port left listening, its file gone', async (t) => {
  const s = await service(t);
  s.child.kill('SIGTERM');
  const [code] = (await once(s.child, 'exit')) as [number];
  t.equal(code, 0);
  t.notOk(alive(s.sandbox.pid), 'the sandbox exited before the service did');
  t.ok(await refused(`${s.sandbox.url}/nightly/nswap/tokens`), 'its venues no longer answer');
  t.ok(await refused(`${s.sandbox.ledger}/v2/state/ledger-end`), 'nor its ledger');
  t.notOk(existsSync(path.join(s.dataDir, 'sandbox.json')));
});

t.test('a service that dies without closing (SIGKILL) leaves no orphan: the sandbox sees its stdin close and stops', async (t) => {
  const s = await service(t);
  s.child.kill('SIGKILL');
  await once(s.child, 'exit');
  await until(() => !alive(s.sandbox.pid), 'the sandbox to stop');
  t.ok(await refused(`${s.sandbox.url}/nightly/nswap/tokens`));
});

const statusOf = async (address: string) => (await (await fetch(`${address}/api/status`)).json()) as { state: string; components: Array<{ component: string; state: string }> };

t.test('a sandbox that dies is known at once from its exit, not a probe: status reads sandbox restarting and degraded, and one error line says so', async (t) => {
  // No probe in the way, and a restart a minute off: only the child's exit can tell the status, which is read before it is back.
  const s = await service(t, { LIVENESS_PROBE_INTERVAL_MS: '3600000', SANDBOX_RESTART_WAIT_MS: '60000' });
  t.match((await statusOf(s.address)).components.at(-1), { component: 'sandbox', state: 'up' });
  process.kill(s.sandbox.pid, 'SIGKILL');
  await until(() => logLines(s).some((l) => l.msg === 'the sandbox stopped: restarting it'), 'the service to notice');
  t.match(logLines(s).find((l) => l.msg === 'the sandbox stopped: restarting it'), { level: 50, signal: 'SIGKILL', restartInMs: 60000 });
  const status = await statusOf(s.address);
  t.match(status.components.at(-1), { component: 'sandbox', state: 'restarting' });
  t.not(status.state, 'ok');
});

t.test('a sandbox that dies is restarted where it listened, with the same token, and the restart logged: quotes and its ledger answer again', async (t) => {
  // Venues probed often and given long deadlines: on a busy host the restarted sandbox's first answers are slow, and a
  // probe that ran while it was down leaves it venue_down until the next one.
  const s = await service(t, { QUOTE_CACHE_TTL_MS: '1', VENUE_TIMEOUT_MS: '30000', LIVENESS_PROBE_INTERVAL_MS: '100' });
  const manifest = JSON.parse(readFileSync(path.join(s.dataDir, 'sandbox.json'), 'utf8')) as Record<string, unknown>;
  process.kill(s.sandbox.pid, 'SIGKILL');
  const restarted = (await until(() => logLines(s).find((l) => l.msg === 'the sandbox restarted'), 'the restart')) as { pid: number; restarts: number };
  t.equal(restarted.restarts, 1);
  t.not(restarted.pid, s.sandbox.pid, 'a new process');
  t.equal(parentOf(restarted.pid), s.child.pid, 'started by the service');
  t.teardown(() => alive(restarted.pid) && process.kill(restarted.pid, 'SIGKILL'));
  const again = JSON.parse(readFileSync(path.join(s.dataDir, 'sandbox.json'), 'utf8')) as Record<string, unknown>;
  t.strictSame({ ...again, pid: 0 }, { ...manifest, pid: 0 }, 'the same venues, ledger, registries, gateway and token');
  t.match((await statusOf(s.address)).components.at(-1), { component: 'sandbox', state: 'up' });
  let amount = 100;
  const tradecraft = async () => ((await (await fetch(`${s.address}/api/quote?from=CC&to=USDCx&amount=${++amount}`)).json()) as QuoteResponse).venues.find((v) => v.venueId === 'tradecraft');
  t.ok(await until(async () => (await tradecraft())?.available, 'tradecraft to quote again', 60_000), 'the venues answer again');
  const funded = await sandboxCli(['fund', '--party', `restarted::1220${'5'.repeat(64)}`, '--token', 'CC', '--amount', '1'], { DATA_DIR: s.dataDir, LEDGER_URL: '', LEDGER_TOKEN: '' });
  t.equal(funded.code, 0, `its ledger answers the same token: ${funded.stderr}`);
});

t.test('Ctrl-C (SIGINT to the service\'s process group) stops the service first and its sandbox after, with no false "sandbox stopped" error', async (t) => {
  const dataDir = tempDir(t, 'bestex-process-');
  const { LEDGER_URL: _l, SANDBOX_URL: _s, LEDGER_TOKEN: _t, ...inherited } = process.env;
  // Its own group, as a terminal gives it: the group's SIGINT is what Ctrl-C sends.
  const child = spawn(...plainChild(process.execPath, [MAIN]), { env: { ...inherited, HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  t.teardown(() => void (child.exitCode === null && child.kill('SIGKILL')));
  const r = { child, dataDir, stdout: () => stdout, stderr: () => '' };
  await until(() => /Server listening at/.test(stdout), 'the service to listen');
  const started = logLines(r).find((l) => l.msg === 'sandbox started') as { sandboxPid: number };
  process.kill(-child.pid!, 'SIGINT');
  const [code] = (await once(child, 'exit')) as [number];
  t.equal(code, 0);
  t.notOk(alive(started.sandboxPid), 'the sandbox is gone');
  t.notOk(logLines(r).some((l) => l.msg === 'the sandbox stopped: restarting it'), 'its stop was the service\'s own doing');
  t.notOk(existsSync(path.join(dataDir, 'sandbox.json')));
});

t.test('SANDBOX_VENUES_PORT and LEDGER_URL choose where the started sandbox listens; a port taken stops start-up with one clear line', async (t) => {
  const [venues, ledger] = [await freePort(), await freePort()];
  const s = await service(t, { SANDBOX_VENUES_PORT: String(venues), LEDGER_URL: `http://127.0.0.1:${ledger}` });
  t.equal(s.sandbox.url, `http://127.0.0.1:${venues}`);
  t.equal(s.sandbox.ledger, `http://127.0.0.1:${ledger}`);
  const taken = run(t, MAIN, { SANDBOX_VENUES_PORT: String(venues) });
  const [code] = (await once(taken.child, 'exit')) as [number];
  t.equal(code, 1);
  t.equal(
    taken.stderr(),
    `bestex: the sandbox did not start: the sandbox venues cannot listen on 127.0.0.1:${venues} (EADDRINUSE); set SANDBOX_VENUES_PORT to a free port, or 0 for any\n`,
    'one line, no stack',
  );
  const ledgerTaken = run(t, MAIN, { LEDGER_URL: `http://127.0.0.1:${ledger}` });
  await once(ledgerTaken.child, 'exit');
  t.match(ledgerTaken.stderr(), new RegExp(`^bestex: the sandbox did not start: the sandbox ledger cannot listen on 127\\.0\\.0\\.1:${ledger} \\(EADDRINUSE\\); set LEDGER_URL`));
});

t.test('make sandbox: one JSON line once it listens; a service with SANDBOX_URL and LEDGER_TOKEN uses it and leaves it running; SIGINT stops it', async (t) => {
  const sandbox = run(t, SANDBOX, {});
  t.teardown(() => sandbox.child.kill('SIGKILL'));
  const line = await until(() => sandbox.stdout().split('\n')[0]?.endsWith('}') && sandbox.stdout().split('\n')[0], 'the sandbox line');
  const said = JSON.parse(line) as { sandbox: string; ledger: string; ledgerToken: string; pid: number };
  t.equal(said.pid, sandbox.child.pid);
  t.match(said.ledgerToken, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}$/, 'a token of its own, chosen at start, said once, shaped as the JWT Canton\'s clients require');
  const chosen = run(t, SANDBOX, { LEDGER_TOKEN: 'operator-chosen-token' });
  t.teardown(() => chosen.child.kill('SIGKILL'));
  const chosenLine = await until(() => chosen.stdout().split('\n')[0]?.endsWith('}') && chosen.stdout().split('\n')[0], 'the second sandbox line');
  t.notMatch(chosenLine, /operator-chosen-token|ledgerToken/, 'a token set through LEDGER_TOKEN is not printed');
  chosen.child.kill('SIGTERM');
  const s = run(t, MAIN, { SANDBOX_URL: said.sandbox, LEDGER_TOKEN: said.ledgerToken });
  t.teardown(() => s.child.kill('SIGKILL'));
  const address = await until(() => /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(s.stdout())?.[1], 'the service');
  t.notOk(logLines(s).some((l) => l.msg === 'sandbox started'), 'it starts none of its own');
  const body = (await (await fetch(`${address}${QUOTE}`)).json()) as QuoteResponse;
  t.equal(body.venues.length, 5);
  t.ok(body.venues.every((v) => v.available));
  const outcome = await fetch(`${address}/api/outcome?party=${encodeURIComponent(`someone::1220${'5'.repeat(64)}`)}&since=2026-11-20T10:00:00Z&deadline=2026-11-20T10:01:30Z`);
  t.equal(outcome.status, 200, 'outcomes read its ledger with the token');
  s.child.kill('SIGTERM');
  await once(s.child, 'exit');
  t.equal((await fetch(`${said.sandbox}/nightly/nswap/tokens`)).status, 200, 'a sandbox the service did not start outlives it');
  sandbox.child.kill('SIGINT');
  const [code] = (await once(sandbox.child, 'exit')) as [number];
  t.equal(code, 0);
  t.ok(await refused(`${said.sandbox}/nightly/nswap/tokens`));
  t.notOk(existsSync(path.join(sandbox.dataDir, 'sandbox.json')), 'its file goes with it');
});

t.test('make sandbox SANDBOX_FLAGS=--without-batching-utility: its participant lacks the batching utility package and its line says so; an unknown argument stops it with one line', async (t) => {
  const sandbox = run(t, SANDBOX, {}, ['--without-batching-utility']);
  t.teardown(() => sandbox.child.kill('SIGKILL'));
  const line = await until(() => sandbox.stdout().split('\n')[0]?.endsWith('}') && sandbox.stdout().split('\n')[0], 'the sandbox line');
  const said = JSON.parse(line) as { ledger: string; ledgerToken: string; batchingUtility: boolean };
  t.equal(said.batchingUtility, false);
  const asked = await fetch(`${said.ledger}/v2/interactive-submission/preferred-package-version?package-name=splice-util-token-standard-wallet`, { headers: { authorization: `Bearer ${said.ledgerToken}` } });
  t.match({ status: asked.status, body: await asked.json() }, { status: 404, body: { code: 'PACKAGE_NAMES_NOT_FOUND' } }, 'its participant answers that it has no such package');
  sandbox.child.kill('SIGTERM');
  await once(sandbox.child, 'exit');
  const typo = run(t, SANDBOX, {}, ['--without-batching']);
  const [code] = (await once(typo.child, 'exit')) as [number];
  t.equal(code, 1);
  t.equal(typo.stderr(), 'sandbox: unknown argument --without-batching; the sandbox takes --exit-with-stdin and --without-batching-utility\n');
});

t.test('"a sandbox manifest file belongs to the process that wrote it": a second sandbox on the same DATA_DIR, once stopped, gives the running one its sandbox.json back; the last one stopped removes it', async (t) => {
  const dataDir = tempDir(t, 'bestex-process-');
  const file = path.join(dataDir, 'sandbox.json');
  const firstLine = (r: ReturnType<typeof run>, what: string) => until(() => r.stdout().split('\n')[0]?.endsWith('}') && r.stdout().split('\n')[0], what);
  const first = run(t, SANDBOX, { DATA_DIR: dataDir });
  t.teardown(() => first.child.kill('SIGKILL'));
  await firstLine(first, 'the first sandbox');
  const firstFile = readFileSync(file, 'utf8');
  const second = run(t, SANDBOX, { DATA_DIR: dataDir });
  t.teardown(() => second.child.kill('SIGKILL'));
  await firstLine(second, 'the second sandbox');
  t.match(JSON.parse(readFileSync(file, 'utf8')), { pid: second.child.pid }, 'the newest sandbox says where it is');
  second.child.kill('SIGTERM');
  await once(second.child, 'exit');
  t.equal(readFileSync(file, 'utf8'), firstFile, 'the running one\'s file is back as it wrote it');
  t.equal(statSync(file).mode & 0o777, 0o600, 'owner-only still');
  first.child.kill('SIGTERM');
  const [code, signal] = (await once(first.child, 'exit')) as [number | null, string | null];
  t.equal(code, 0, `it stopped as asked (${signal ?? 'no signal'}; ${first.stderr() || 'no stderr'})`);
  t.notOk(existsSync(file), 'the last one stopped leaves none');
});

t.test('a SANDBOX_URL where no sandbox answers stops start-up with one clear line', async (t) => {
  const port = await freePort();
  const s = run(t, MAIN, { SANDBOX_URL: `http://127.0.0.1:${port}`, LEDGER_TOKEN: 'x' });
  const [code] = (await once(s.child, 'exit')) as [number];
  t.equal(code, 1);
  t.match(s.stderr(), new RegExp(`^bestex: no sandbox answers at SANDBOX_URL http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): start one with make sandbox, or unset SANDBOX_URL to have the service start its own\\n$`));
});
