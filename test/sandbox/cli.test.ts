// The sandbox wallet CLI (sandbox/wallet.ts): each command against a running service's sandbox
// ledger, and every refusal a non-zero exit with a message that says what to do.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { PLAN_VALIDITY_MS } from '../../core/plan-validity.js';
import type { AppPlan } from '../../core/contract/v1.js';
import type { SandboxExercisedEvent } from '../../sandbox/ledger/sandbox-ledger.js';
import { COLLECTING, testApp, type TestApp } from '../helpers/app.js';
import { sandboxCli } from '../helpers/sandbox-cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir(t, 'bestex-cli-');
let takers = 0;
const newTaker = () => `cli-taker-${++takers}::1220${'7'.repeat(64)}`;

async function started(t: { teardown(fn: () => Promise<void>): void }, env: Record<string, string> = {}) {
  const app = await testApp({ env });
  t.teardown(app.close);
  const cli = (...args: string[]) => sandboxCli(args, { LEDGER_URL: app.sandbox!.manifest.ledger, SANDBOX_URL: app.sandbox!.manifest.sandbox });
  return { app, cli };
}

async function planFile(app: TestApp, taker: string, name: string, amount = '100'): Promise<{ plan: AppPlan; file: string }> {
  const res = await app.server.inject({ method: 'POST', url: '/api/app/plan', payload: { from: 'CC', to: 'USDCx', amount, venueId: 'tradecraft', takerParty: taker, idempotencyKey: name } });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, res.body);
  return { plan: res.json<AppPlan>(), file };
}

t.test('usage: help exits 0; no command, an unknown one, a missing or malformed flag exit 2 with the usage', async (t) => {
  const { cli } = await started(t);
  const help = await cli('help');
  t.equal(help.code, 0);
  t.match(help.stdout, /fund --party P --token T --amount N/);
  for (const [args, message] of [
    [[], /no command/],
    [['swap'], /unknown command "swap"/],
    [['fund', '--token', 'CC', '--amount', '1'], /--party P is required/],
    [['fund', '--party', 'alice', '--token', 'CC', '--amount', '1'], /--party must be a ledger party id/],
    [['fund', '--party', newTaker(), '--token', 'DOGE', '--amount', '1'], /unknown token 'DOGE'/],
    [['move', '--pair', 'CC/USDCx', '--bps', 'lots'], /--bps N must be a whole number/],
    [['execute', '--party', newTaker()], /--plan FILE is required/],
    [['balance', '--party', newTaker(), '--extra'], /Unknown option '--extra'/],
  ] as Array<[string[], RegExp]>) {
    const run = await cli(...args);
    t.equal(run.code, 2, args.join(' '));
    t.match(run.stderr, message);
    t.match(run.stderr, /usage: npm run -s sandbox/);
  }
});

t.test('fund and balance: a new holding, spendable at once', async (t) => {
  const { cli } = await started(t);
  const taker = newTaker();
  const funded = await cli('fund', '--party', taker, '--token', 'usdcx', '--amount', '12.5');
  t.equal(funded.code, 0);
  t.match(funded.stdout, /^funded 12\.5 USDCx \(update 1220[0-9a-f]{64}\)\n$/);
  t.equal((await cli('fund', '--party', taker, '--token', 'CC', '--amount', '0')).code, 1, 'a zero amount is refused by the ledger');
  const balance = await cli('balance', '--party', taker);
  t.equal(balance.stdout, 'Amulet  spendable 0, locked in offers 0\nUSDCx   spendable 12.5, locked in offers 0\nCBTC    spendable 0, locked in offers 0\n');
});

t.test('execute "refuses an expired plan", and sends nothing', async (t) => {
  const { app, cli } = await started(t);
  const taker = newTaker();
  await cli('fund', '--party', taker, '--token', 'CC', '--amount', '100');
  const { plan } = await planFile(app, taker, 'cli-expired');
  const file = path.join(dir, 'cli-expired-old.json');
  writeFileSync(file, JSON.stringify({ ...plan, expiry: new Date(Date.now() - 5_000).toISOString() }));
  const end = app.sandbox!.ledger.ledgerEnd;
  // A relative path is the caller's: npm runs the script in the package's folder and says where it was run.
  const run = await sandboxCli(['execute', '--plan', path.basename(file), '--party', taker], { LEDGER_URL: app.sandbox!.manifest.ledger, SANDBOX_URL: app.sandbox!.manifest.sandbox, INIT_CWD: dir });
  t.equal(run.code, 1);
  t.match(run.stderr, /the plan expired at .*, [0-9]+ s ago; .* re-plan with a new idempotencyKey/);
  t.equal(app.sandbox!.ledger.ledgerEnd, end, 'no transaction');
});

t.test('execute refuses what is not a plan, and a party that cannot cover it, naming the fund command', async (t) => {
  const { app, cli } = await started(t);
  const taker = newTaker();
  const junk = path.join(dir, 'junk.json');
  writeFileSync(junk, '{"planId": 1}');
  t.match(await cli('execute', '--plan', junk, '--party', taker), { code: 1, stderr: /is not an execution plan/ });
  t.match(await cli('execute', '--plan', path.join(dir, 'missing.json'), '--party', taker), { code: 1, stderr: /cannot read the plan/ });
  await cli('fund', '--party', taker, '--token', 'CC', '--amount', '40');
  const { file } = await planFile(app, taker, 'cli-poor');
  const end = app.sandbox!.ledger.ledgerEnd;
  const run = await cli('execute', '--plan', file, '--party', taker);
  t.equal(run.code, 1);
  t.match(run.stderr, /cannot cover the venue-deposit step: it needs 100 Amulet .* it holds 40 Amulet spendable \(fund it: npm run -s sandbox -- fund --party <party> --token CC/);
  t.equal(app.sandbox!.ledger.ledgerEnd, end);
});

t.test('execute "performs the deposit and, when fees are collected, the fee legs, as one batch"; an uncovered fee leg "degrades to the deposit alone, fee-less", and says so', async (t) => {
  const { app, cli } = await started(t, COLLECTING);
  const taker = newTaker();
  await cli('fund', '--party', taker, '--token', 'CC', '--amount', '200');
  const { plan: feeless, file: feelessFile } = await planFile(app, taker, 'cli-fees-uncovered');
  t.equal(feeless.steps.map((s) => s.kind).join(','), 'venue-deposit,b2c-fee-transfer');
  const ledger = app.sandbox!.ledger;
  let end = ledger.ledgerEnd;
  const unfunded = await cli('execute', '--plan', feelessFile, '--party', taker);
  t.equal(unfunded.code, 0, unfunded.stderr);
  t.match(unfunded.stdout, /^executed .* with floor [0-9.]+ \(update 1220[0-9a-f]{64}\)\nnote: the b2c-fee-transfer leg needs .* USDCx .* the deposit goes alone, fee-less\n/);
  const alone = ledger.transactions(end, end + 1)[0]!;
  t.equal(alone.events.filter((e) => e.kind === 'exercised' && e.choice === 'TransferFactory_Transfer').length, 1, 'the deposit alone, no fee charged apart from its swap');
  await cli('fund', '--party', taker, '--token', 'USDCx', '--amount', '1');
  const { plan, file } = await planFile(app, taker, 'cli-fees');
  end = ledger.ledgerEnd;
  const run = await cli('execute', '--plan', file, '--party', taker);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /with 1 fee leg\(s\)/);
  const batch = ledger.transactions(end, end + 1)[0]!;
  const transfers = batch.events.filter((e): e is SandboxExercisedEvent => e.kind === 'exercised' && e.choice === 'TransferFactory_Transfer');
  t.equal(transfers.length, 2, 'the deposit and the fee leg in one transaction');
  const receivers = transfers.map((e) => (e.choiceArgument as { transfer: { receiver: string; amount: string; meta: { values: Record<string, string> } } }).transfer);
  t.strictSame(receivers.map((r) => [r.receiver, r.amount]), plan.steps.map((s) => [s.target, s.amount]), 'each step to its target, for its amount');
  t.equal(receivers[0]!.meta.values['splice.lfdecentralizedtrust.org/reason'], plan.quoteRef.minReceive, 'the deposit\'s memo is the floor');
  const outcome = await app.server.inject({ url: `/api/outcome?${new URLSearchParams({ party: taker, since: new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS).toISOString(), deadline: plan.expiry, amount: '100', minReceive: plan.quoteRef.minReceive })}` });
  t.equal(outcome.json<{ status: string }>().status, 'completed', 'a fee leg is no deposit: the swap is told apart from it');
});

t.test('move refuses a pair without a pool and a price at or below zero; every command fails clearly without a ledger', async (t) => {
  const { app, cli } = await started(t);
  t.match(await cli('move', '--pair', 'USDCx/CBTC', '--bps', '100'), { code: 1, stderr: /no tradecraft pool for USDCx\/CBTC/ });
  t.match(await cli('move', '--pair', 'CC/USDCx', '--bps', '-10000'), { code: 1, stderr: /bps must be a non-zero whole number above -10000/ });
  const up = await cli('move', '--pair', 'USDCx/CC', '--bps', '100');
  t.match(up, { code: 0, stdout: /1 USDCx was 6\.666666666\d* CC, is 6\.73333333\d* CC/ }, 'the pair in either order');
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  const absent = await sandboxCli(['balance', '--party', newTaker()], { LEDGER_URL: `http://127.0.0.1:${port}` });
  t.match(absent, { code: 1, stderr: new RegExp(`cannot reach the sandbox ledger at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\): is the sandbox running \\(make run, or make sandbox\\)`) });
  const wrongToken = await sandboxCli(['pause'], { LEDGER_URL: app.sandbox!.manifest.ledger, LEDGER_TOKEN: 'guess' });
  t.match(wrongToken, { code: 1, stderr: /refused the token: set LEDGER_TOKEN to the sandbox's/ });
  t.equal(app.sandbox!.ledger.operatorPaused, false);
});

t.test('execute refuses to run a plan twice (the ledger deduplicates its submission); withdraw takes back what nobody answered', async (t) => {
  const { app, cli } = await started(t);
  const taker = newTaker();
  await cli('fund', '--party', taker, '--token', 'CC', '--amount', '200');
  const { file } = await planFile(app, taker, 'cli-twice');
  t.equal((await cli('execute', '--plan', file, '--party', taker)).code, 0);
  const again = await cli('execute', '--plan', file, '--party', taker);
  t.equal(again.code, 1);
  t.match(again.stderr, /pl_\S+ was already executed for this party; to swap again, re-plan with a new idempotencyKey/);
  t.match((await cli('balance', '--party', taker)).stdout, /Amulet {2}spendable 100, locked in offers 0/, 'one deposit, not two');
  await cli('pause');
  const second = await planFile(app, taker, 'cli-withdraw');
  t.equal((await cli('execute', '--plan', second.file, '--party', taker)).code, 0);
  t.match((await cli('balance', '--party', taker)).stdout, /Amulet {2}spendable 0, locked in offers 100/);
  const withdrawn = await cli('withdraw', '--party', taker);
  t.equal(withdrawn.code, 0, withdrawn.stderr);
  t.match(withdrawn.stdout, /^withdrew 100 Amulet offered to tradecraft-pool-cc-usdcx::1220c+ \(executeBefore .*\): the funds are back \(update 1220[0-9a-f]{64}\)\n$/);
  t.match((await cli('balance', '--party', taker)).stdout, /Amulet {2}spendable 100, locked in offers 0/);
  const update = /update (1220[0-9a-f]{64})/.exec(withdrawn.stdout)![1];
  const query = new URLSearchParams({ party: taker, since: new Date(Date.parse(second.plan.expiry) - PLAN_VALIDITY_MS).toISOString(), deadline: second.plan.expiry });
  t.strictSame((await app.server.inject({ url: `/api/outcome?${query}` })).json(), { status: 'withdrawn', depositUpdateId: update }, 'the outcome reads the withdrawal');
  t.equal((await cli('withdraw', '--party', taker)).stdout, 'no open offers to withdraw\n');
  await cli('resume');
});
