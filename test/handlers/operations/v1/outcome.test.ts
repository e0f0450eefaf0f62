// GET /api/outcome over HTTP, end to end on the embedded sandbox: quote -> plan -> the sandbox
// wallet executes it -> the outcome read from the sandbox ledger through the JSON Ledger API. The
// derivation's rules are tested without HTTP in test/core/outcomes/outcome.test.ts.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { getHeapSnapshot } from 'node:v8';
import t from 'tap';
import { PLAN_VALIDITY_MS } from '../../../../core/plan-validity.js';
import { Decimal } from '../../../../core/decimal.js';
import type { SandboxTransaction } from '../../../../sandbox/ledger/sandbox-ledger.js';
import type { AppPlan, Outcome, QuoteResponse } from '../../../../core/contract/v1.js';
import { testApp, type TestApp } from '../../../helpers/app.js';
import { spendable } from '../../../helpers/ledger.js';
import { sandboxCli } from '../../../helpers/sandbox-cli.js';
import { tempDir } from '../../../helpers/temp.js';

const FINGERPRINT = `1220${'9e'.repeat(32)}`;
let takers = 0;
/** A taker of its own per test, all sharing one fingerprint that no log may show. */
const newTaker = () => `taker-${++takers}::${FINGERPRINT}`;
const dir = tempDir(t, 'bestex-outcome-');

interface Flow {
  readonly app: TestApp;
  /** Moves the service's and the sandbox ledger's clock forward. */
  advance(ms: number): void;
  cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Gives the taker CC from the sandbox ledger's faucet. */
  fund(taker: string, amount: string): Promise<void>;
  /** Holds (or lets go) the pools' operator: deposits wait unanswered while it is paused. */
  pauseOperator(paused: boolean): Promise<void>;
  plan(taker: string, amount: string, idempotencyKey: string, to?: string): Promise<{ plan: AppPlan; file: string }>;
  outcome(query: Record<string, string>): Promise<{ status: number; body: Outcome }>;
  /** The outcome once it is no longer pending (the pool's operator answers right after a deposit commits). */
  settled(query: Record<string, string>): Promise<Outcome>;
  quoteNet(amount: string): Promise<string>;
  transactions(): readonly SandboxTransaction[];
  balance(party: string, instrument: string): Decimal;
}

async function flow(t: { teardown(fn: () => Promise<void>): void }): Promise<Flow> {
  let skew = 0;
  // No quote is reused: each shows the pool as it stands.
  const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1' }, overrides: { now: () => new Date(Date.now() + skew) } });
  t.teardown(app.close);
  const sandbox = { url: app.sandbox!.manifest.ledger, ledger: app.sandbox!.ledger };
  // The ledger's own controls, which the wallet CLI's fund, pause and resume post to (test/sandbox/cli.test.ts runs those).
  const control = async (resource: string, body: unknown) => {
    const res = await fetch(new URL(resource, sandbox.url), { method: 'POST', headers: { authorization: `Bearer ${app.sandbox!.ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status !== 200) throw new Error(`${resource}: ${res.status} ${await res.text()}`);
  };
  const outcome = async (query: Record<string, string>) => {
    const res = await app.server.inject({ url: `/api/outcome?${new URLSearchParams(query).toString()}` });
    return { status: res.statusCode, body: res.json<Outcome>() };
  };
  return {
    app,
    advance: (ms) => void (skew += ms),
    cli: (...args) => sandboxCli(args, { LEDGER_URL: sandbox.url, SANDBOX_URL: app.sandbox!.manifest.sandbox }),
    fund: (taker, amount) => control('/sandbox/v1/fund', { party: taker, token: 'CC', amount }),
    pauseOperator: (paused) => control('/sandbox/v1/operator', { paused }),
    async plan(taker, amount, idempotencyKey, to = 'USDCx') {
      const res = await app.server.inject({ method: 'POST', url: '/api/app/plan', payload: { from: 'CC', to, amount, venueId: 'tradecraft', takerParty: taker, idempotencyKey } });
      if (res.statusCode !== 200) throw new Error(`plan: ${res.statusCode} ${res.body}`);
      const file = path.join(dir, `${idempotencyKey}.json`);
      writeFileSync(file, res.body);
      return { plan: res.json<AppPlan>(), file };
    },
    outcome,
    async settled(query) {
      for (let i = 0; i < 200; i++) {
        const { body } = await outcome(query);
        if (body.status !== 'pending') return body;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error('the outcome stayed pending');
    },
    async quoteNet(amount) {
      const res = await app.server.inject({ url: `/api/quote?from=CC&to=USDCx&amount=${amount}` });
      return res.json<QuoteResponse>().venues.find((v) => v.venueId === 'tradecraft')!.net!;
    },
    transactions: () => sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd),
    balance: (party, instrument) => spendable(sandbox.ledger, party, instrument),
  };
}

/** The outcome query a plan's own figures make. */
const queryFor = (taker: string, plan: AppPlan, extra: Record<string, string> = {}) => ({
  party: taker,
  since: new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS).toISOString(),
  deadline: plan.expiry,
  ...extra,
});

/** The update in which `choice` was exercised on an instruction. */
const updateWith = (transactions: readonly SandboxTransaction[], choice: string) => transactions.find((tx) => tx.events.some((e) => e.kind === 'exercised' && e.choice === choice));

function noPartyLogged(t: { ok(value: unknown, message: string): void; notOk(value: unknown, message: string): void }, app: TestApp): void {
  const answered = app.logs().filter((l) => l.route === '/api/outcome' && l.msg === 'request completed');
  t.ok(answered.length > 0 && answered.every((l) => typeof l.outcome === 'string' || l.status !== 200), `the outcomes were logged (${answered.length} lines), each with its status`);
  t.notOk(app.rawLogs().includes(FINGERPRINT), 'no log line holds the taker\'s party');
}

t.test('"quote -> plan -> execute -> outcome completed with the real depositUpdateId"; the swap moves the next quote', async (t) => {
  const f = await flow(t);
  const taker = newTaker();
  await f.fund(taker, '1000');
  const netBefore = await f.quoteNet('100');
  const { plan, file } = await f.plan(taker, '100', 'completed-1');
  t.equal(plan.quoteRef.net, netBefore, 'the plan is built from the quote');
  const executed = await f.cli('execute', '--plan', file, '--party', taker);
  t.equal(executed.code, 0, executed.stderr);
  t.match(executed.stdout, /executed pl_.*100 Amulet offered to the venue with floor/);
  const outcome = await f.settled(queryFor(taker, plan));
  const accept = updateWith(f.transactions(), 'TransferInstruction_Accept')!;
  t.strictSame(outcome, { status: 'completed', depositUpdateId: accept.updateId }, 'the update in which the pool accepted the deposit');
  t.match(outcome.depositUpdateId, /^1220[0-9a-f]{64}$/);
  const received = f.balance(taker, 'USDCx');
  t.ok(received.gte(plan.quoteRef.minReceive), `received ${received.toFixed()} >= the floor ${plan.quoteRef.minReceive}`);
  t.ok(received.gte(plan.quoteRef.net), 'and at least the quoted net, the pool standing where it was quoted');
  t.equal(f.balance(taker, 'Amulet').toFixed(), '900');
  t.ok(new Decimal(await f.quoteNet('100')).lt(netBefore), 'selling CC into the pool lowered the next quote');
  noPartyLogged(t, f.app);
});

t.test('"a price move between plan and execution -> slippage failure with refund"', async (t) => {
  const f = await flow(t);
  const taker = newTaker();
  await f.fund(taker, '500');
  const { plan, file } = await f.plan(taker, '200', 'slippage-1');
  const moved = await f.cli('move', '--pair', 'CC/USDCx', '--bps', '-300');
  t.equal(moved.code, 0, moved.stderr);
  t.equal(moved.stdout, 'moved the tradecraft CC/USDCx pool: 1 CC was 0.15 USDCx, is 0.1455 USDCx\n', 'the price of CC in USDCx fell by 3 %');
  t.ok(new Decimal(await f.quoteNet('200')).lt(plan.quoteRef.minReceive), 'the quote now pays less than the plan\'s floor');
  t.equal((await f.cli('execute', '--plan', file, '--party', taker)).code, 0, 'the wallet executes: the venue decides');
  const outcome = await f.settled(queryFor(taker, plan));
  const reject = updateWith(f.transactions(), 'TransferInstruction_Reject')!;
  t.strictSame(outcome, { status: 'slippage_failed', depositUpdateId: reject.updateId }, 'the update that refunded the deposit');
  t.equal(f.balance(taker, 'Amulet').toFixed(), '500', 'the deposit came back whole');
  t.equal(f.balance(taker, 'USDCx').toFixed(), '0');
  noPartyLogged(t, f.app);
});

t.test('"no execution before the deadline -> expired": pending while the venue does not answer, expired after, refunded when it answers late', async (t) => {
  const f = await flow(t);
  const taker = newTaker();
  await f.fund(taker, '100');
  await f.pauseOperator(true);
  const { plan, file } = await f.plan(taker, '100', 'expired-1');
  t.equal((await f.cli('execute', '--plan', file, '--party', taker)).code, 0);
  t.strictSame((await f.outcome(queryFor(taker, plan))).body, { status: 'pending', depositUpdateId: null }, 'the offer is open');
  t.equal(f.balance(taker, 'Amulet').toFixed(), '0', 'its funds are locked in the offer');
  f.advance(91_000);
  t.strictSame((await f.outcome(queryFor(taker, plan))).body, { status: 'pending', depositUpdateId: null }, 'past executeBefore an accept made just before may still be recorded');
  f.advance(60_000);
  t.strictSame((await f.outcome(queryFor(taker, plan))).body, { status: 'expired', depositUpdateId: null }, 'past executeBefore and the record-time tolerance, nothing settled');
  await f.pauseOperator(false);
  const outcome = await f.settled(queryFor(taker, plan));
  const returned = updateWith(f.transactions(), 'TransferInstruction_Reject')!;
  t.ok(returned, 'the pool answered late, rejecting');
  t.strictSame(outcome, { status: 'expired', depositUpdateId: null }, 'the late answer returns the funds; the swap stays expired, settled by no update');
  t.equal(f.balance(taker, 'Amulet').toFixed(), '100');
  t.equal(f.balance(taker, 'USDCx').toFixed(), '0', 'an expired offer is never paid out');
  const noDeposit = (await f.plan(newTaker(), '100', 'expired-2')).plan;
  f.advance(151_000);
  t.strictSame((await f.outcome(queryFor(taker, noDeposit))).body, { status: 'not_found', depositUpdateId: null }, 'a plan never executed: no offer in its window');
  noPartyLogged(t, f.app);
});

t.test('"two concurrent swaps disambiguated by escrow/amount" (and by minReceive and want)', async (t) => {
  const f = await flow(t);
  const taker = newTaker();
  for (const amount of ['100', '100', '200']) await f.fund(taker, amount);
  await f.pauseOperator(true);
  // Three swaps in one window: two of 100 CC to different pools, one of 200 CC to the first's pool.
  const a = await f.plan(taker, '100', 'concurrent-a');
  const b = await f.plan(taker, '100', 'concurrent-b', 'CBTC');
  const c = await f.plan(taker, '200', 'concurrent-c');
  for (const p of [a, b, c]) t.equal((await f.cli('execute', '--plan', p.file, '--party', taker)).code, 0);
  await f.pauseOperator(false);
  const window = { party: taker, since: new Date(Date.parse(a.plan.expiry) - PLAN_VALIDITY_MS).toISOString(), deadline: c.plan.expiry };
  const [poolUsdcx, poolCbtc] = [a.plan.steps[0]!.target, b.plan.steps[0]!.target];
  t.not(poolUsdcx, poolCbtc);
  await f.settled({ ...window, amount: '200' });
  const accepts = f.transactions().filter((tx) => tx.events.some((e) => e.kind === 'exercised' && e.choice === 'TransferInstruction_Accept'));
  t.equal(accepts.length, 3, 'every swap completed, each in its own update');
  const ask = async (extra: Record<string, string>) => (await f.outcome({ ...window, ...extra })).body;
  t.strictSame(await ask({}), { status: 'ambiguous', depositUpdateId: null }, 'three match');
  t.strictSame((await ask({ amount: '100' })).status, 'ambiguous', 'two of 100 CC');
  t.strictSame((await ask({ escrow: poolUsdcx })).status, 'ambiguous', 'two to the CC/USDCx pool');
  const byEscrow = await ask({ escrow: poolCbtc });
  const byAmount = await ask({ amount: '200' });
  const byBoth = await ask({ escrow: poolUsdcx, amount: '100' });
  for (const outcome of [byEscrow, byAmount, byBoth]) t.equal(outcome.status, 'completed');
  t.strictSame(new Set([byEscrow.depositUpdateId, byAmount.depositUpdateId, byBoth.depositUpdateId]), new Set(accepts.map((tx) => tx.updateId)), 'each query found its own swap\'s settlement');
  t.strictSame(await ask({ want: 'CBTC' }), byEscrow, 'the want token picks the CBTC swap');
  t.strictSame(await ask({ minReceive: a.plan.quoteRef.minReceive }), byBoth, 'the floor picks the swap it was planned for');
  t.strictSame((await ask({ amount: '100', escrow: poolCbtc, want: 'USDCx' })).status, 'not_found', 'filters that contradict match none');
  t.strictSame((await f.outcome({ ...window, party: newTaker() })).body.status, 'not_found', 'another taker sees none of them');
  noPartyLogged(t, f.app);
});

t.test('"400 for bad or inconsistent parameters", in the error shape, naming no party; nothing is read', async (t) => {
  const f = await flow(t);
  const taker = newTaker();
  const base = { party: taker, since: '2026-11-20T10:00:00Z', deadline: '2026-11-20T10:01:30Z' };
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ ...base, since: '2026-11-20T10:05:00Z' }, /since must not be after deadline/],
    [{ ...base, party: 'alice' }, /query parameter 'party'/],
    [{ ...base, party: `alice::1220${'G'.repeat(64)}` }, /query parameter 'party'/],
    [{ ...base, amount: '-1' }, /query parameter 'amount'/],
    [{ ...base, minReceive: '0' }, /'minReceive' must be a positive/],
    [{ ...base, since: 'yesterday' }, /'since' must be an ISO 8601 date-time/],
    [{ ...base, deadline: '2026-11-22T10:00:00Z' }, /24 hours/],
    [{ ...base, escrow: 'pool' }, /query parameter 'escrow'/],
    [{ ...base, color: 'red' }, /unknown query parameter 'color'/],
  ];
  const before = f.app.sandbox!.ledger.ledgerEnd;
  for (const [query, message] of cases) {
    const res = await f.outcome(query);
    t.equal(res.status, 400, JSON.stringify(query));
    t.match(res.body, { code: 'bad_request', error: message, action: 'fix the request per the message' });
    t.notMatch(JSON.stringify(res.body), FINGERPRINT);
  }
  const unknown = await f.outcome({ ...base, want: 'DOGE' });
  t.match(unknown, { status: 400, body: { code: 'unknown_token' } });
  t.equal(f.app.sandbox!.ledger.ledgerEnd, before, 'nothing changed');
  noPartyLogged(t, f.app);
});

t.test('an unreadable ledger answers 500 ledger_unavailable, logs why once, shows in the status, never logs the party', async (t) => {
  const app = await testApp({ env: { LEDGER_TOKEN: 'service-token' } });
  t.teardown(app.close);
  // The sandbox ledger answers only its own token; point the adapter at it with another.
  const { JsonApiLedger } = await import('../../../../core/ledger/json-api-ledger.js');
  const wrong = await testApp({ overrides: { ledger: new JsonApiLedger({ baseUrl: app.sandbox!.manifest.ledger, token: 'stolen', readAs: app.config.ledgerReadAs, timeoutMs: 2000, pageSize: 10 }) } });
  t.teardown(wrong.close);
  const res = await wrong.server.inject({ url: `/api/outcome?party=${encodeURIComponent(newTaker())}&since=2026-11-20T10:00:00Z&deadline=2026-11-20T10:01:30Z` });
  t.equal(res.statusCode, 500);
  t.strictSame(res.json(), { error: 'the ledger could not be read right now; nothing was changed', code: 'ledger_unavailable', action: 'retry' });
  t.equal(res.headers['cache-control'], 'no-store');
  const line = wrong.logs().find((l) => l.msg === 'ledger unreadable: outcomes answer 500 ledger_unavailable');
  t.match(line, { level: 40, component: 'ledger', reason: /HTTP 401: check that LEDGER_TOKEN is valid/ });
  const status = await wrong.server.inject('/api/status');
  t.match(status.json(), { state: 'degraded', components: [{}, {}, {}, {}, {}, {}, {}, {}, {}, { component: 'ledger', state: 'unreadable' }] }, 'the status shows it');
  t.notOk(wrong.rawLogs().includes(FINGERPRINT));
  t.notOk(wrong.rawLogs().includes('stolen'), 'nor the token');
});

t.test('a LEDGER_READ_AS that leaves out a pool party is warned of at start (its deposits would read not_found)', async (t) => {
  const onlyUsdcx = testApp({ env: { LEDGER_READ_AS: `tradecraft-pool-cc-usdcx::1220${'c'.repeat(64)}` } });
  const app = await onlyUsdcx;
  t.teardown(app.close);
  t.match(app.logs().find((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('LEDGER_READ_AS leaves out pool parties')), { level: 40, pools: [`tradecraft-pool-cc-cbtc::1220${'d'.repeat(64)}`] });
  const full = await testApp();
  t.teardown(full.close);
  t.notOk(full.logs().some((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('LEDGER_READ_AS')), 'the default reads as every pool party');
});

/**
 * Which of the texts `needles()` gives anything the process holds after a full garbage collection
 * (a heap snapshot makes one). The needles are made only once the snapshot is taken, so the test's
 * own copies are not in it.
 */
async function heldTexts(needles: () => readonly string[]): Promise<boolean[]> {
  // The last string a regular expression was run on is kept by the engine (RegExp.lastMatch): one of the test's own.
  /x/.exec('the test\'s own text');
  const chunks: Buffer[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(Buffer.from(chunk as Uint8Array));
  const snapshot = Buffer.concat(chunks);
  return needles().map((needle) => snapshot.includes(needle));
}

t.test('"the party is never put in a cache key that outlives the request": once outcome queries are answered, nothing the process holds names the party', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  // The party's 64 hex digits exist, as text, only within the requests: the test keeps their bytes.
  const digits = randomBytes(32);
  const ask = async (): Promise<number[]> => {
    const url = `/api/outcome?party=${encodeURIComponent(`outcome-privacy::1220${digits.toString('hex')}`)}&since=2026-11-20T10:00:00Z&deadline=2026-11-20T10:01:30Z`;
    const statuses: number[] = [];
    // The same URL twice: a cache by URL would be hit the second time.
    for (let i = 0; i < 2; i++) statuses.push((await app.server.inject({ url })).statusCode);
    return statuses;
  };
  t.strictSame(await ask(), [200, 200], 'the queries were answered');
  // The injection harness lets go of a request's objects in callbacks queued after its answer.
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  // The search finds what is held: a party the test keeps, of other digits, is found.
  const control = randomBytes(32);
  const kept = { party: `kept::1220${control.toString('hex')}` };
  const [party, controlParty] = await heldTexts(() => [digits.toString('hex'), control.toString('hex')]);
  t.equal(controlParty, true, 'a party something holds is found');
  t.equal(party, false, 'no cache, memo or log kept the queried party');
  t.ok(kept.party);
});
