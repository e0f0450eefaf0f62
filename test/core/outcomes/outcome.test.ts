// Outcome derivation (core/outcomes/outcomes.ts): the query's rules, and each status from the transactions
// a pool party sees. GET /api/outcome over HTTP, end to end: test/handlers/operations/v1/outcome.test.ts.
import fc from 'fast-check';
import t from 'tap';
import { ComponentHealth } from '../../../core/health/component-health.js';
import { Decimal } from '../../../core/decimal.js';
import { DomainError } from '../../../core/errors.js';
import { LedgerFailure, type Ledger, type LedgerEvent, type LedgerTransaction } from '../../../core/ledger/ledger.js';
import { findStart, OffsetTimeIndex, OutcomeService, OutcomeTracker, parseOutcomeQuery, poolTokens, type OutcomeQuery } from '../../../core/outcomes/outcomes.js';
import { SANDBOX_POOL_PARTIES } from '../../../sandbox/venues/market.js';
import { CBTC, CC, USDCX } from '../../../core/tokens.js';

const POOL = SANDBOX_POOL_PARTIES['CC/USDCx']!;
const CBTC_POOL = SANDBOX_POOL_PARTIES['CC/CBTC']!;
const ALICE = `alice::1220${'b'.repeat(64)}`;
const BOB = `bob::1220${'a'.repeat(64)}`;
const TI = `${'72'.repeat(32)}:Splice.Api.Token.TransferInstructionV1:TransferInstruction`;
const HOLDING = `${'71'.repeat(32)}:Splice.Api.Token.HoldingV1:Holding`;
const T0 = Date.parse('2026-11-20T10:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let offset = 0;
const tx = (seconds: number, ...events: LedgerEvent[]): LedgerTransaction => ({ updateId: `1220${String(++offset).padStart(64, '0')}`, offset, recordTime: at(seconds), events });

function offer(cid: string, o: { sender?: string; receiver?: string; amount?: string; instrument?: string; memo?: string; executeBefore?: number } = {}): LedgerEvent {
  const transfer = {
    sender: o.sender ?? ALICE, receiver: o.receiver ?? POOL, amount: o.amount ?? '100', instrumentId: { admin: 'DSO::1220', id: o.instrument ?? 'Amulet' },
    requestedAt: at(0), executeBefore: at(o.executeBefore ?? 90), inputHoldingCids: [], meta: { values: { 'splice.lfdecentralizedtrust.org/reason': o.memo ?? '14.8' } },
  };
  return { kind: 'created', contractId: cid, templateId: 'x:Sandbox.Token:TransferInstruction', interfaceViews: [{ interfaceId: TI, view: { originalInstructionCid: null, transfer, status: {}, meta: {} } }] };
}

const settle = (cid: string, choice: 'Accept' | 'Reject' | 'Withdraw', tag = choice === 'Accept' ? 'Completed' : 'Failed', actor = POOL): LedgerEvent => ({
  kind: 'exercised', contractId: cid, templateId: 'x:Sandbox.Token:TransferInstruction', interfaceId: TI, choice: `TransferInstruction_${choice}`,
  actingParties: [actor], consuming: true, exerciseResult: { output: { tag: `TransferInstructionResult_${tag}`, value: {} } },
});

let holdings = 0;
const holding = (owner: string, instrument: string, amount: string, contractId = `h-${++holdings}`): LedgerEvent => ({
  kind: 'created', contractId, templateId: 'x:Sandbox.Token:Holding',
  interfaceViews: [{ interfaceId: HOLDING, view: { owner, instrumentId: { admin: 'x', id: instrument }, amount, lock: null, meta: {} } }],
});

/** A pool's own transfer (the TransferFactory_Transfer it exercises to pay a taker out). */
const poolTransfer = (pool = POOL): LedgerEvent => ({
  kind: 'exercised', contractId: 'factory', templateId: 'x:Sandbox.Token:TransferFactory', interfaceId: `${'72'.repeat(32)}:Splice.Api.Token.TransferInstructionV1:TransferFactory`,
  choice: 'TransferFactory_Transfer', actingParties: [pool], consuming: false, exerciseResult: { output: { tag: 'TransferInstructionResult_Completed', value: {} }, senderChangeCids: [] },
});

const QUERY: OutcomeQuery = { party: ALICE, since: new Date(T0), deadline: new Date(T0 + 90_000), escrow: null, amount: null, minReceive: null, want: null };

function derive(transactions: LedgerTransaction[], nowSeconds: number, query: Partial<OutcomeQuery> = {}) {
  const tracker = new OutcomeTracker({ ...QUERY, ...query }, poolTokens(SANDBOX_POOL_PARTIES));
  transactions.forEach((x) => tracker.observe(x));
  return tracker.outcome(T0 + nowSeconds * 1000);
}

t.test('query: "400 for bad or inconsistent parameters": since after deadline, a window over 24 h, a zero amount, an unknown want', async (t) => {
  const base = { party: ALICE, since: at(0), deadline: at(90) };
  t.throws(() => parseOutcomeQuery({ ...base, since: at(91) }), new DomainError('bad_request', 'since must not be after deadline'));
  t.throws(() => parseOutcomeQuery({ ...base, deadline: at(24 * 3600 + 1) }), { code: 'bad_request', message: /24 hours/ });
  t.throws(() => parseOutcomeQuery({ ...base, amount: '0' }), { code: 'bad_request', message: /'amount' must be a positive/ });
  t.throws(() => parseOutcomeQuery({ ...base, minReceive: '0.0' }), { code: 'bad_request', message: /'minReceive'/ });
  t.throws(() => parseOutcomeQuery({ ...base, want: 'DOGE' }), { code: 'unknown_token' });
  const parsed = parseOutcomeQuery({ ...base, since: at(90), amount: '100.50', want: 'usdcx', escrow: POOL });
  t.match(parsed, { escrow: POOL, want: USDCX });
  t.ok(parsed.amount!.eq(new Decimal('100.5')));
  t.equal(parsed.since.getTime(), parsed.deadline.getTime(), 'an empty window is allowed');
});

t.test('completed: the venue accepted and paid the want token out; depositUpdateId is the accepting update', async (t) => {
  const accepted = tx(3, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '14.95'));
  t.strictSame(derive([tx(1, offer('o1')), accepted], 10), { status: 'completed', depositUpdateId: accepted.updateId });
});

t.test('pending: an open offer before its deadline; an accepted one whose payout is not on the ledger yet, until it is', async (t) => {
  t.strictSame(derive([tx(1, offer('o1'))], 10), { status: 'pending', depositUpdateId: null });
  const accepted = tx(3, settle('o1', 'Accept'));
  t.strictSame(derive([tx(1, offer('o1')), accepted], 10), { status: 'pending', depositUpdateId: null });
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(4, holding(ALICE, 'CBTC', '1'))], 10), { status: 'pending', depositUpdateId: null }, 'a holding of another instrument is no payout');
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, holding(ALICE, 'USDCx', '14.95'))], 10).status, 'pending', 'a holding the pool took no part in is no payout');
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, poolTransfer(CBTC_POOL), holding(ALICE, 'USDCx', '14.95'))], 10).status, 'pending', 'nor one another pool paid');
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, poolTransfer(), holding(ALICE, 'USDCx', '14.95'))], 10), { status: 'completed', depositUpdateId: accepted.updateId }, 'the pool\'s own transfer in a later update');
});

t.test('"completed" when the pool pays out as a two-step transfer the taker accepts', async (t) => {
  const accepted = tx(3, settle('o1', 'Accept'));
  const payoutOffer = (sender: string) => tx(4, offer('p1', { sender, receiver: ALICE, instrument: 'USDCx', amount: '14.9', memo: 'payout' }));
  const takerAccepts = tx(5, settle('p1', 'Accept', 'Completed', ALICE), holding(ALICE, 'USDCx', '14.9'));
  t.strictSame(derive([tx(1, offer('o1')), accepted, payoutOffer(POOL), takerAccepts], 10), { status: 'completed', depositUpdateId: accepted.updateId });
  t.strictSame(derive([tx(1, offer('o1')), accepted, payoutOffer(BOB), takerAccepts], 10).status, 'pending', 'a transfer from someone else is no payout');
});

t.test('"completed" needs a real payout: not a refund, not less than the floor', async (t) => {
  const accepted = tx(3, settle('o1', 'Accept'));
  t.strictSame(derive([tx(1, offer('o1', { memo: '14.8' })), tx(3, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '14.7999999999'))], 10).status, 'pending', 'below the floor the offer carried');
  t.strictSame(derive([tx(1, offer('o1', { memo: '14.8' })), tx(3, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '14.8'))], 10).status, 'completed', 'the floor itself');
  t.strictSame(derive([tx(1, offer('o1', { memo: 'thanks' })), tx(3, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '0'))], 10).status, 'pending', 'nothing paid, with no floor to compare');
  // The taker's opposite swap (USDCx for CC) is rejected by the pool and its USDCx refunded in an
  // update the pool acts in: that refund is change to its sender, not the first swap's payout.
  const reverse = offer('o2', { instrument: 'USDCx', amount: '15', memo: '99' });
  const refund = { ...settle('o2', 'Reject'), exerciseResult: { output: { tag: 'TransferInstructionResult_Failed', value: {} }, senderChangeCids: ['refund-1'] } } as LedgerEvent;
  t.strictSame(derive([tx(1, offer('o1', { memo: '14.8' })), accepted, tx(2, reverse), tx(4, refund, holding(ALICE, 'USDCx', '15', 'refund-1'))], 10, { amount: new Decimal('100') }).status, 'pending');
});

t.test('slippage_failed: the venue rejected before the deadline; depositUpdateId is the refund', async (t) => {
  const rejected = tx(3, settle('o1', 'Reject'));
  t.strictSame(derive([tx(1, offer('o1')), rejected], 10), { status: 'slippage_failed', depositUpdateId: rejected.updateId });
  const failedAccept = tx(3, settle('o1', 'Accept', 'Failed'));
  t.strictSame(derive([tx(1, offer('o1')), failedAccept], 10), { status: 'slippage_failed', depositUpdateId: failedAccept.updateId }, 'an accept that failed moved nothing');
});

t.test('withdrawn: the taker withdrew before the venue answered', async (t) => {
  const withdrawn = tx(3, settle('o1', 'Withdraw'));
  t.strictSame(derive([tx(1, offer('o1')), withdrawn], 10), { status: 'withdrawn', depositUpdateId: withdrawn.updateId });
});

t.test('expired: no answer before executeBefore, once an accept made before it can no longer be recorded; no update to bind, as no swap settled', async (t) => {
  t.strictSame(derive([tx(1, offer('o1'))], 149.999), { status: 'pending', depositUpdateId: null }, 'an accept made before executeBefore may be recorded up to 60 s later');
  t.strictSame(derive([tx(1, offer('o1'))], 150), { status: 'expired', depositUpdateId: null }, 'executeBefore plus the record-time tolerance');
  const lateAccept = tx(100, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '14.95'));
  t.strictSame(derive([tx(1, offer('o1')), lateAccept], 200), { status: 'completed', depositUpdateId: lateAccept.updateId }, 'an accept recorded within the tolerance completes the swap');
  const rejectedAtDeadline = tx(90, settle('o1', 'Reject'));
  t.strictSame(derive([tx(1, offer('o1')), rejectedAtDeadline], 100), { status: 'expired', depositUpdateId: null }, 'a rejection at the deadline returns expired funds: no swap settled');
  const lateReject = tx(95, settle('o1', 'Reject'));
  t.strictSame(derive([tx(1, offer('o1')), lateReject], 100), { status: 'expired', depositUpdateId: null }, 'a rejection after the deadline is the return of expired funds, not a slippage failure');
});

t.test('not_found: no offer of the party to a pool in the window', async (t) => {
  t.strictSame(derive([], 10), { status: 'not_found', depositUpdateId: null });
  t.strictSame(derive([tx(1, offer('o1', { sender: BOB }))], 10).status, 'not_found', 'another taker\'s offer');
  t.strictSame(derive([tx(1, offer('o1', { receiver: BOB }))], 10).status, 'not_found', 'an offer to a party that is no pool');
  t.strictSame(derive([tx(-1, offer('o1'))], 10).status, 'not_found', 'before since');
  t.strictSame(derive([tx(151, offer('o1'))], 200).status, 'not_found', 'recorded after the deadline and its tolerance');
  t.strictSame(derive([tx(150, offer('o1'))], 160).status, 'expired', 'made by the deadline and recorded within the tolerance: found');
  t.strictSame(derive([tx(0, offer('o1'))], 10).status, 'pending', 'at since itself');
});

t.test('ambiguous: "two concurrent swaps disambiguated by escrow/amount" (and by minReceive and want)', async (t) => {
  const both = () => {
    offset = 100;
    return [tx(1, offer('o1', { amount: '100', memo: '14.8' })), tx(2, offer('o2', { amount: '200', memo: '29.5', receiver: CBTC_POOL })), tx(3, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '14.9'))];
  };
  t.strictSame(derive(both(), 10), { status: 'ambiguous', depositUpdateId: null });
  const first = both()[2]!.updateId;
  t.strictSame(derive(both(), 10, { amount: new Decimal('100') }), { status: 'completed', depositUpdateId: first });
  t.strictSame(derive(both(), 10, { amount: new Decimal('200') }), { status: 'pending', depositUpdateId: null });
  t.strictSame(derive(both(), 10, { escrow: CBTC_POOL }).status, 'pending');
  t.strictSame(derive(both(), 10, { escrow: POOL }).status, 'completed');
  t.strictSame(derive(both(), 10, { minReceive: new Decimal('14.80') }).status, 'completed', 'the floor compared as a decimal');
  t.strictSame(derive(both(), 10, { want: CBTC }).status, 'pending');
  t.strictSame(derive(both(), 10, { amount: new Decimal('300') }).status, 'not_found');
});

t.test('a payout pays the offer accepted in its own update, not an older one still waiting', async (t) => {
  offset = 200;
  const older = tx(3, settle('o1', 'Accept'));
  const newer = tx(4, settle('o2', 'Accept'), holding(ALICE, 'USDCx', '29'));
  const transactions = [tx(1, offer('o1', { amount: '100' })), tx(2, offer('o2', { amount: '200' })), older, newer];
  t.strictSame(derive(transactions, 10, { amount: new Decimal('200') }), { status: 'completed', depositUpdateId: newer.updateId });
  t.strictSame(derive(transactions, 10, { amount: new Decimal('100') }), { status: 'pending', depositUpdateId: null });
});

t.test('an instruction that continues as a new contract (result Pending) keeps its offer\'s fate', async (t) => {
  const pendingStep: LedgerEvent = { ...(settle('o1', 'Accept', 'Pending') as object), exerciseResult: { output: { tag: 'TransferInstructionResult_Pending', value: { transferInstructionCid: 'o1b' } } } } as LedgerEvent;
  const done = tx(4, settle('o1b', 'Accept'), holding(ALICE, 'USDCx', '14.9'));
  t.strictSame(derive([tx(1, offer('o1')), tx(3, pendingStep)], 10).status, 'pending');
  t.strictSame(derive([tx(1, offer('o1')), tx(3, pendingStep), done], 10), { status: 'completed', depositUpdateId: done.updateId });
});

t.test('OffsetTimeIndex: the samples bound where a time\'s first transaction lies, at most one sample a minute', async (t) => {
  const index = new OffsetTimeIndex();
  t.strictSame(index.bounds(T0), { after: 0, atOrBefore: null }, 'nothing known');
  for (let i = 1; i <= 100; i++) index.add(i * 10, T0 + i * 30_000);
  // Sampled: i = 1, 3, 5, ... (60 s apart), at offsets 10, 30, 50, ...
  t.strictSame(index.bounds(T0 + 1200_000), { after: 390, atOrBefore: 409 }, 'between the samples at 390 (1170 s) and 410 (1230 s)');
  t.strictSame(index.bounds(T0 + 3000_000 + 1), { after: 990, atOrBefore: null }, 'after the last sample');
  index.add(5, T0 + 10_000_000);
  t.strictSame(index.bounds(T0 + 20_000_000), { after: 990, atOrBefore: null }, 'an offset that goes back is not sampled');
});

/** A participant in memory answering from `all` (by offset), with history pruned up to `prunedUpTo`. */
function listLedger(all: readonly LedgerTransaction[], prunedUpTo = 0) {
  const sorted = [...all].sort((a, b) => a.offset - b.offset);
  const reads = { requests: 0, yielded: 0, begins: [] as number[] };
  const ledger: Ledger = {
    ledgerEnd: async () => sorted.at(-1)?.offset ?? 0,
    prunedUpTo: async () => prunedUpTo,
    async *transactions(range, signal, pageSize = 100) {
      let cursor = range.beginExclusive;
      for (;;) {
        if (signal.aborted) throw new LedgerFailure('timeout', 'stopped at the deadline');
        reads.requests += 1;
        reads.begins.push(cursor);
        const page = sorted.filter((x) => x.offset > cursor && x.offset <= range.endInclusive).slice(0, pageSize);
        if (page.length === 0) return;
        for (const x of page) {
          reads.yielded += 1;
          yield x;
        }
        cursor = page.at(-1)!.offset;
      }
    },
  };
  return { ledger, reads };
}

/** `count` transactions, one every 10 s from T0, at offsets 1..count, with `extra` ones in place of those at their offsets. */
function memoryLedger(count: number, extra: LedgerTransaction[] = [], prunedUpTo = 0) {
  const byOffset = new Map<number, LedgerTransaction>();
  for (let i = 1; i <= count; i++) byOffset.set(i, { updateId: `1220${String(i).padStart(64, '0')}`, offset: i, recordTime: new Date(T0 + i * 10_000).toISOString(), events: [] });
  for (const x of extra) byOffset.set(x.offset, x);
  return listLedger([...byOffset.values()], prunedUpTo);
}

const warnings: Array<{ fields: Record<string, unknown>; message: string }> = [];
const health = new ComponentHealth('ledger', { warn: (fields, message) => void warnings.push({ fields, message }), info: () => {} }, { down: 'ledger unreadable', up: 'ledger readable again' });
const service = (ledger: Ledger, now = T0 + 200_000_000, budgetMs = 5000) =>
  new OutcomeService({ ledger, pools: poolTokens(SANDBOX_POOL_PARTIES), budgetMs, pageSize: 50, health, now: () => new Date(now) });

t.test('OutcomeService: a query reads near its window, found by halving the offsets, not the whole ledger', async (t) => {
  // 10,000 transactions (about 28 hours); the taker's swap near the end.
  const at = (i: number) => T0 + i * 10_000;
  const swap = [
    { updateId: 'offer', offset: 9_950, recordTime: new Date(at(9_950)).toISOString(), events: [offer('o1', { executeBefore: (at(9_950) - T0) / 1000 + 90 })] },
    { updateId: 'accept', offset: 9_951, recordTime: new Date(at(9_951)).toISOString(), events: [settle('o1', 'Accept'), holding(ALICE, 'USDCx', '15')] },
  ];
  const { ledger, reads } = memoryLedger(10_000, swap);
  const query = { ...QUERY, since: new Date(at(9_949)), deadline: new Date(at(9_949) + 90_000) };
  const outcomes = service(ledger);
  t.strictSame(await outcomes.outcome(query), { status: 'completed', depositUpdateId: 'accept' });
  t.ok(reads.yielded < 300, `read ${reads.yielded} of 10,000 transactions`);
  t.ok(reads.requests < 60, `in ${reads.requests} requests`);
  t.ok(Math.min(...reads.begins.slice(-3)) >= 9_949 - 30 - 50, 'the scan began within the skew and a page of the window');
  const before = reads.requests;
  t.strictSame(await outcomes.outcome(query), { status: 'completed', depositUpdateId: 'accept' });
  t.ok(reads.requests - before < reads.requests / 2, 'the second query starts from what the first one learned');
});

t.test('OutcomeService: never reads before what the participant pruned', async (t) => {
  const { ledger, reads } = memoryLedger(1_000, [], 600);
  t.strictSame(await service(ledger).outcome({ ...QUERY, since: new Date(T0), deadline: new Date(T0 + 90_000) }), { status: 'not_found', depositUpdateId: null });
  t.ok(reads.begins.every((b) => b >= 600), 'every read starts after offset 600');
});

t.test('OutcomeService: stops reading once nothing later can change the outcome', async (t) => {
  const swap = [
    { updateId: 'offer', offset: 2, recordTime: at(15), events: [offer('o1')] },
    { updateId: 'reject', offset: 3, recordTime: at(25), events: [settle('o1', 'Reject')] },
  ];
  const { ledger, reads } = memoryLedger(1_000, swap);
  t.strictSame(await service(ledger).outcome(QUERY), { status: 'slippage_failed', depositUpdateId: 'reject' });
  t.ok(reads.yielded < 100, `read ${reads.yielded} transactions: up to the window's close and its tolerance (about 15), not 1,000`);
});

t.test('OutcomeService: "timeouts": a read past its budget answers ledger_unavailable and logs why, never the party', async (t) => {
  const stalled: Ledger = {
    ledgerEnd: async () => 10,
    prunedUpTo: async () => 0,
    async *transactions(_range, signal) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      throw new LedgerFailure('timeout', 'the read was stopped at its caller\'s deadline during POST /v2/updates');
    },
  };
  warnings.length = 0;
  await t.rejects(service(stalled, T0, 50).outcome(QUERY), new DomainError('ledger_unavailable', 'the ledger could not be read right now; nothing was changed'));
  t.match(warnings, [{ fields: { component: 'ledger', reason: /deadline/ }, message: 'ledger unreadable' }]);
  t.notOk(health.isUp, 'the status shows the ledger unreadable');
  await t.rejects(service(stalled, T0, 50).outcome(QUERY));
  t.equal(warnings.length, 1, 'logged once, not once per request');
  t.notMatch(JSON.stringify(warnings), ALICE);
  await service(memoryLedger(10).ledger).outcome(QUERY);
  t.ok(health.isUp, 'readable again once an outcome reads it');
});

t.test('OutcomeService stops at the right point: an unanswered offer is final once the ledger passed its executeBefore; an offer the query does not match holds nothing up; an accepted one waits for its payout; 5 minutes of skew are allowed', async (t) => {
  const at = (offset: number, seconds: number, ...events: LedgerEvent[]): LedgerTransaction => ({ updateId: `u${offset}`, offset, recordTime: new Date(T0 + seconds * 1000).toISOString(), events });
  const expired = memoryLedger(1_000, [at(2, 20, offer('o1'))]);
  t.strictSame(await service(expired.ledger).outcome(QUERY), { status: 'expired', depositUpdateId: null });
  t.ok(expired.reads.yielded < 100, `an expired offer: read ${expired.reads.yielded} of 1,000`);
  const other = memoryLedger(1_000, [at(2, 20, offer('o1', { amount: '100' })), at(3, 30, settle('o1', 'Reject')), at(4, 40, offer('o2', { amount: '200', executeBefore: 100_000 }))]);
  t.strictSame(await service(other.ledger).outcome({ ...QUERY, amount: new Decimal('100') }), { status: 'slippage_failed', depositUpdateId: 'u3' });
  t.ok(other.reads.yielded < 100, `another open offer of the taker's the query does not match: read ${other.reads.yielded}`);
  const late = memoryLedger(1_000, [at(2, 20, offer('o1')), at(3, 30, settle('o1', 'Accept')), at(900, 9_000, poolTransfer(), holding(ALICE, 'USDCx', '15'))]);
  t.strictSame(await service(late.ledger).outcome(QUERY), { status: 'completed', depositUpdateId: 'u3' });
  t.ok(late.reads.yielded >= 900, 'an accepted offer: read on to its payout');
  // Offset 20 is recorded past the window's close (150 s); offset 21, of another synchronizer, inside it.
  const interleaved = memoryLedger(0, [at(1, 10), at(20, 200), at(21, 100, offer('o1', { executeBefore: 1_000 })), ...Array.from({ length: 100 }, (_, i) => at(22 + i, 200 + i * 10))]);
  t.strictSame(await service(interleaved.ledger, T0 + 120_000).outcome(QUERY), { status: 'pending', depositUpdateId: null }, 'an offer recorded out of order within the skew is still found');
});

t.test('findStart: "every transaction at or before the answer was recorded before the time", over random sparse ledgers, pruning and warm indexes (property)', async (t) => {
  const ledgers = fc.record({
    // size 'max': fast-check otherwise keeps arrays to a handful of items, too few to halve.
    gaps: fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 300, size: 'max' }),
    steps: fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 300, maxLength: 300, size: 'max' }),
    // Shares as whole permilles: fc.double leans to values near zero, which would test one corner.
    prunedPermille: fc.integer({ min: 0, max: 900 }),
    pageSize: fc.integer({ min: 1, max: 30 }),
    warm: fc.integer({ min: 0, max: 300 }),
    atPermille: fc.integer({ min: 0, max: 1100 }),
  });
  await fc.assert(
    fc.asyncProperty(ledgers, async ({ gaps, steps, prunedPermille, pageSize, warm, atPermille }) => {
      let offset = 0;
      let time = T0;
      const all = gaps.map((gap, i) => ({ updateId: `u${i}`, offset: (offset += gap), recordTime: new Date((time += steps[i]!)).toISOString(), events: [] }));
      const pruned = Math.floor((offset * prunedPermille) / 1000);
      const { ledger } = listLedger(all, pruned);
      const index = new OffsetTimeIndex();
      for (const x of all.slice(0, warm)) index.add(x.offset, Date.parse(x.recordTime));
      const timeMs = T0 + Math.floor(((time - T0) * atPermille) / 1000);
      const start = await findStart(ledger, index, timeMs, offset, pageSize, new AbortController().signal);
      const skipped = all.filter((x) => x.offset > pruned && x.offset <= start && Date.parse(x.recordTime) >= timeMs);
      return start >= pruned && start <= offset && skipped.length === 0;
    }),
    { numRuns: 2_000 },
  );
  t.pass('no transaction recorded at or after the time lies at or before the start');
});

// Malformed ledger events. The ledger's values are JSON the service did not write: a field that
// is missing, of the wrong type or not a Daml decimal is read as absent, never as something
// else, and never stops the derivation.

/** `offer(...)` with its transfer changed by `edit` (fields removed when set to undefined). */
function offerWith(cid: string, edit: (transfer: Record<string, unknown>) => void, o: Parameters<typeof offer>[1] = {}): LedgerEvent {
  const event = offer(cid, o) as LedgerEvent & { interfaceViews: Array<{ view: { transfer: Record<string, unknown> } }> };
  edit(event.interfaceViews[0]!.view.transfer);
  return event;
}

const exercise = (cid: string, choice: string, exerciseResult: unknown, actor = POOL): LedgerEvent => ({
  kind: 'exercised', contractId: cid, templateId: 'x:Sandbox.Token:TransferInstruction', interfaceId: TI, choice, actingParties: [actor], consuming: true, exerciseResult,
});

t.test('query: a window of exactly 24 hours is allowed; without want, any token; an unknown want is named as want', async (t) => {
  const base = { party: ALICE, since: at(0), deadline: at(24 * 3600) };
  t.equal(parseOutcomeQuery(base).deadline.getTime() - parseOutcomeQuery(base).since.getTime(), 24 * 3600 * 1000);
  t.strictSame(parseOutcomeQuery(base).want, null, 'no want: null, matching every token');
  t.throws(() => parseOutcomeQuery({ ...base, want: 'DOGE' }), { code: 'unknown_token', message: /in want:/ });
});

t.test('malformed: amounts, floors and payouts are Daml decimals given as strings; anything else is no amount', async (t) => {
  t.strictSame(derive([tx(1, offer('o1', { amount: '100 CC' }))], 10).status, 'not_found', 'an amount with text after it is no offer');
  t.strictSame(derive([tx(1, offer('o1', { amount: 'CC 100' }))], 10).status, 'not_found', 'nor one with text before it');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void (x.amount = 100)))], 10).status, 'not_found', 'nor a JSON number');
  t.strictSame(derive([tx(1, offer('o1', { memo: 'min 14.8' }))], 10, { minReceive: new Decimal('14.8') }).status, 'not_found', 'a memo that is not a decimal is no floor');
  t.strictSame(derive([tx(1, offer('o1', { memo: 'thanks' }))], 10).status, 'pending', 'and the offer is still found');
  const accepted = tx(3, settle('o1', 'Accept'));
  t.strictSame(derive([tx(1, offer('o1', { memo: '1' })), accepted, tx(5, poolTransfer(), holding(ALICE, 'USDCx', 'lots'))], 10).status, 'pending', 'a holding whose amount is no decimal pays nothing');
  t.strictSame(derive([tx(1, offer('o1', { memo: '1' })), accepted, tx(5, poolTransfer(), holding(ALICE, 'USDCx', '15 USDCx'))], 10).status, 'pending', 'nor one with text after the decimal');
});

t.test('malformed: an offer missing its instrument, memo or executeBefore, or with one of the wrong type', async (t) => {
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void delete x.instrumentId))], 10), { status: 'pending', depositUpdateId: null }, 'no instrument: still the taker\'s offer');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void delete x.instrumentId))], 10, { want: USDCX }).status, 'not_found', 'with no want to match');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void delete x.meta))], 10, { minReceive: new Decimal('14.8') }).status, 'not_found', 'no meta: no floor');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void (x.meta = {})))], 10, { minReceive: new Decimal('14.8') }).status, 'not_found', 'meta without values: no floor');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void delete x.meta))], 10).status, 'pending', 'and the offer is found all the same');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void (x.executeBefore = 2026)))], 10).status, 'not_found', 'an executeBefore that is a number is no deadline');
  t.strictSame(derive([tx(1, offerWith('o1', (x) => void (x.executeBefore = [at(90)])))], 10).status, 'not_found', 'nor one in a list');
  const noTransfer: LedgerEvent = { kind: 'created', contractId: 'o1', templateId: 'x', interfaceViews: [{ interfaceId: TI, view: { originalInstructionCid: null, status: {}, meta: {} } }] };
  t.strictSame(derive([tx(1, noTransfer)], 10).status, 'not_found', 'an instruction without a transfer is no offer');
});

t.test('malformed: exercise results missing, null, or without an output: an accept that reports no Completed moved nothing', async (t) => {
  for (const result of [null, {}, { output: null }, { output: {} }, { output: { tag: 7 } }]) {
    const answer = tx(3, exercise('o1', 'TransferInstruction_Accept', result));
    t.strictSame(derive([tx(1, offer('o1')), answer], 10), { status: 'slippage_failed', depositUpdateId: answer.updateId }, `result ${JSON.stringify(result)}`);
  }
  const pendingWithoutNext = tx(3, exercise('o1', 'TransferInstruction_Accept', { output: { tag: 'TransferInstructionResult_Pending' } }));
  t.strictSame(derive([tx(1, offer('o1')), pendingWithoutNext], 10).status, 'pending', 'a Pending result naming no new instruction leaves the offer open');
  const otherChoice = tx(3, exercise('o1', 'TransferInstruction_Update', { output: { tag: 'TransferInstructionResult_Completed', value: {} } }));
  t.strictSame(derive([tx(1, offer('o1')), otherChoice], 10), { status: 'pending', depositUpdateId: null }, 'a choice other than accept, reject or withdraw settles nothing');
  const archived: LedgerEvent = { kind: 'archived', contractId: 'o1', templateId: 'x' };
  t.strictSame(derive([tx(1, offer('o1')), tx(3, archived)], 10), { status: 'pending', depositUpdateId: null }, 'an archive event alone is no answer');
});

t.test('payouts: only a holding of the taker\'s, of the want token, in an update the pool acted in', async (t) => {
  const accepted = tx(3, settle('o1', 'Accept'));
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, poolTransfer(), holding(BOB, 'USDCx', '15'))], 10).status, 'pending', 'a holding of another party\'s');
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, poolTransfer(), holding(ALICE, 'CBTC', '15'))], 10).status, 'pending', 'a holding of another token, even from the pool');
  const noInstrument = holding(ALICE, 'USDCx', '15') as LedgerEvent & { interfaceViews: Array<{ view: Record<string, unknown> }> };
  delete noInstrument.interfaceViews[0]!.view.instrumentId;
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, poolTransfer(), noInstrument)], 10).status, 'pending', 'a holding with no instrument');
  // A deposit of a token not of the pool's pair: the pool has nothing to pay it in.
  const stray = [tx(1, offer('o1', { instrument: 'CBTC' })), accepted];
  t.strictSame(derive([...stray, tx(5, poolTransfer(), holding(ALICE, 'USDCx', '15'))], 10).status, 'pending', 'a deposit of no token of the pair is never paid out');
  t.strictSame(derive([...stray, tx(5, poolTransfer(), noInstrument)], 10).status, 'pending', 'not even by a holding with no instrument');
  t.strictSame(derive([stray[0]!, tx(3, settle('o1', 'Accept'), holding(ALICE, 'USDCx', '15'))], 10).status, 'pending', 'nor by a holding in its own accept');
});

t.test('payouts: the pool\'s two-step transfer counts only once the taker accepted it and it completed', async (t) => {
  const accepted = tx(3, settle('o1', 'Accept'));
  const payoutOffer = tx(4, offer('p1', { sender: POOL, receiver: ALICE, instrument: 'USDCx', amount: '15', memo: 'payout' }));
  // Each answer below comes with a holding of the want token for the taker from elsewhere in that update.
  const cases: Array<[string, LedgerEvent]> = [
    ['the taker rejected it', settle('p1', 'Reject', 'Failed', ALICE)],
    ['the taker\'s accept failed', settle('p1', 'Accept', 'Failed', ALICE)],
    ['another choice, even one reporting Completed', exercise('p1', 'TransferInstruction_Update', { output: { tag: 'TransferInstructionResult_Completed', value: {} } }, ALICE)],
  ];
  for (const [name, answer] of cases) t.strictSame(derive([tx(1, offer('o1')), accepted, payoutOffer, tx(5, answer, holding(ALICE, 'USDCx', '15'))], 10).status, 'pending', name);
  const toBob = tx(4, offer('p2', { sender: POOL, receiver: BOB, instrument: 'USDCx', amount: '15', memo: 'payout' }));
  t.strictSame(derive([tx(1, offer('o1')), accepted, toBob, tx(5, settle('p2', 'Accept', 'Completed', BOB), holding(ALICE, 'USDCx', '15'))], 10).status, 'pending', 'the pool\'s transfer to another party, accepted by it');
});

t.test('payouts: a later payout pays an accepted offer, never one rejected or still open before it', async (t) => {
  const opened = [tx(1, offer('o1', { amount: '100' })), tx(2, offer('o2', { amount: '200' }))];
  const paid = tx(5, poolTransfer(), holding(ALICE, 'USDCx', '30'));
  const accepted = tx(3, settle('o2', 'Accept'));
  t.strictSame(derive([...opened, accepted, paid], 10, { amount: new Decimal('200') }), { status: 'completed', depositUpdateId: accepted.updateId }, 'the older offer is still open');
  const rejectedAndAccepted = tx(3, settle('o1', 'Reject'), settle('o2', 'Accept'));
  t.strictSame(derive([...opened, rejectedAndAccepted, paid], 10, { amount: new Decimal('200') }).status, 'completed', 'the older offer was rejected before');
  const sameUpdate = tx(3, settle('o1', 'Reject'), settle('o2', 'Accept'), holding(ALICE, 'USDCx', '30'));
  t.strictSame(derive([...opened, sameUpdate], 10, { amount: new Decimal('200') }), { status: 'completed', depositUpdateId: sameUpdate.updateId }, 'rejected in the same update as the other\'s accept and payout');
});

t.test('want: the token the pool pays for the deposit is the other of its pair, whichever the deposit is', async (t) => {
  t.strictSame(derive([tx(1, offer('o1', { instrument: 'USDCx' }))], 10, { want: CC }).status, 'pending', 'USDCx in: CC out');
  t.strictSame(derive([tx(1, offer('o1', { instrument: 'USDCx' }))], 10, { want: USDCX }).status, 'not_found');
  t.strictSame(derive([tx(1, offer('o1', { instrument: 'Amulet' }))], 10, { want: USDCX }).status, 'pending', 'CC in: USDCx out');
});

t.test('an instruction the registry re-creates (originalInstructionCid) continues the same offer, not a second one', async (t) => {
  const continued = (cid: string, original: string): LedgerEvent => {
    const event = offer(cid) as LedgerEvent & { interfaceViews: Array<{ view: Record<string, unknown> }> };
    event.interfaceViews[0]!.view.originalInstructionCid = original;
    return event;
  };
  const done = tx(4, settle('o1b', 'Accept'), holding(ALICE, 'USDCx', '14.9'));
  t.strictSame(derive([tx(1, offer('o1')), tx(2, continued('o1b', 'o1'))], 10), { status: 'pending', depositUpdateId: null }, 'one offer, still open');
  t.strictSame(derive([tx(1, offer('o1')), tx(2, continued('o1b', 'o1')), done], 10), { status: 'completed', depositUpdateId: done.updateId }, 'settled through its new contract');
  const pendingStep = tx(2, exercise('o1', 'TransferInstruction_Accept', { output: { tag: 'TransferInstructionResult_Pending', value: { transferInstructionCid: 'o1b' } } }));
  const third = tx(5, settle('o1c', 'Reject'));
  t.strictSame(derive([tx(1, offer('o1')), pendingStep, tx(3, continued('o1c', 'o1b')), third], 10), { status: 'slippage_failed', depositUpdateId: third.updateId }, 'a re-creation of a continuation');
  t.strictSame(derive([tx(1, offer('o1', { sender: BOB })), tx(2, continued('o1b', 'o1'))], 10).status, 'not_found', 'a re-creation of no offer of the taker\'s is none either');
});

t.test('settled: "nothing read after this point can change the outcome", at its boundaries (the deadline and each open offer\'s executeBefore, plus the tolerance and the skew)', async (t) => {
  const observed = (...transactions: LedgerTransaction[]) => {
    const tracker = new OutcomeTracker(QUERY, poolTokens(SANDBOX_POOL_PARTIES));
    transactions.forEach((x) => tracker.observe(x));
    return tracker;
  };
  /** A transaction recorded `ms` milliseconds after T0, exactly. */
  const txMs = (ms: number, ...events: LedgerEvent[]): LedgerTransaction => ({ updateId: `u${ms}`, offset: ms, recordTime: new Date(T0 + ms).toISOString(), events });
  // The window closes at 90 s, plus 60 s of tolerance, read 300 s (the skew) later: 450 s.
  t.notOk(observed(txMs(331000)).settled, 'no offer, the ledger 31 s past the deadline (less the skew)');
  t.notOk(observed(txMs(450000)).settled, 'no offer, exactly at the close plus the tolerance');
  t.ok(observed(txMs(450001)).settled, 'no offer, past it');
  // An open offer whose executeBefore (500 s) is after the window: final past 500 + 60 + 300 s.
  const open = txMs(1000, offer('o1', { executeBefore: 500 }));
  t.notOk(observed(open, txMs(451000)).settled, 'open offer, the window closed');
  t.notOk(observed(open, txMs(800000)).settled, 'open offer, 500 s');
  t.notOk(observed(open, txMs(860000)).settled, 'open offer, exactly at its executeBefore plus the tolerance');
  t.ok(observed(open, txMs(860001)).settled, 'open offer, past it');
  const answeredAndOpen = [txMs(1000, offer('o1', { amount: '100' })), txMs(2000, offer('o2', { amount: '200', executeBefore: 500 })), txMs(3000, settle('o1', 'Reject'))];
  t.notOk(observed(...answeredAndOpen, txMs(451000)).settled, 'one offer answered, another open: every matching offer must be final');
});

t.test('OffsetTimeIndex: an offset already sampled is not sampled again; at most 50,000 samples, the oldest dropped', async (t) => {
  const index = new OffsetTimeIndex();
  index.add(10, T0);
  index.add(10, T0 + 60_000);
  t.strictSame(index.bounds(T0 + 30_000), { after: 10, atOrBefore: null }, 'the same offset a minute later is no sample');
  const full = new OffsetTimeIndex();
  for (let i = 1; i <= 50_000; i++) full.add(i, T0 + i * 60_000);
  t.strictSame(full.bounds(T0 + 60_000), { after: 0, atOrBefore: 0 }, '50,000 samples: the first is kept');
  full.add(50_001, T0 + 50_001 * 60_000);
  t.strictSame(full.bounds(T0 + 60_000), { after: 0, atOrBefore: 1 }, 'one more: the first is dropped, the second kept');
});

t.test('findStart: a range no longer than a page is read, not searched; a transaction recorded at the time itself is kept; a warm index needs no probe; a ledger end past the visible transactions', async (t) => {
  const { ledger, reads } = memoryLedger(100);
  t.equal(await findStart(ledger, new OffsetTimeIndex(), T0 + 500_000, 50, 50, new AbortController().signal), 0);
  t.equal(reads.requests, 0, 'fifty offsets, a page of fifty: no probe');
  const exact = memoryLedger(100);
  t.ok((await findStart(exact.ledger, new OffsetTimeIndex(), T0 + 500_000, 100, 1, new AbortController().signal)) < 50, 'offset 50, recorded at the time itself, is not skipped');
  const index = new OffsetTimeIndex();
  for (let i = 1; i <= 100; i++) index.add(i, T0 + i * 10_000);
  const warm = memoryLedger(100);
  t.equal(await findStart(warm.ledger, index, T0 + 500_000, 100, 50, new AbortController().signal), 49, 'between the samples at 49 (490 s) and 55 (550 s)');
  t.equal(warm.reads.requests, 0, 'the samples bound it to less than a page');
  // The participant's ledger end counts offsets of transactions the read-as parties do not see.
  const sparse = memoryLedger(100);
  const start = await findStart(sparse.ledger, new OffsetTimeIndex(), T0 + 500_000, 1_000, 10, new AbortController().signal);
  t.ok(start <= 49 && start >= 39, `started at ${start}: at most a page before offset 50 (500 s)`);
});

t.test('findStart: a ledger that answers a probe out of order cannot keep the search going (at most 53 probes, enough for 2^53 offsets)', async (t) => {
  let requests = 0;
  const backwards: Ledger = {
    ledgerEnd: async () => 1_000_000,
    prunedUpTo: async () => 0,
    async *transactions() {
      if (++requests > 1_000) throw new Error('probed without end');
      yield { updateId: 'u1', offset: 1, recordTime: at(0), events: [] };
    },
  };
  t.equal(await findStart(backwards, new OffsetTimeIndex(), T0 + 1_000, 1_000_000, 10, new AbortController().signal), 1);
  t.ok(requests <= 53, `${requests} probes`);
});

t.test('OutcomeService: a fault that is no ledger failure is no "ledger_unavailable": it is thrown as it is, the status unchanged', async (t) => {
  const broken: Ledger = { ledgerEnd: async () => { throw new TypeError('a bug'); }, prunedUpTo: async () => 0, transactions: memoryLedger(1).ledger.transactions };
  await service(memoryLedger(10).ledger).outcome(QUERY);
  await t.rejects(service(broken).outcome(QUERY), new TypeError('a bug'));
  t.ok(health.isUp, 'the ledger is not reported unreadable');
});

t.test('OutcomeService: the read budget\'s timer ends with the query (no timer per request left running)', async (t) => {
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const armed = new Set<unknown>();
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    const handle = realSet(...args);
    armed.add(handle);
    return handle;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((handle: Parameters<typeof clearTimeout>[0]) => {
    armed.delete(handle);
    realClear(handle);
  }) as typeof clearTimeout;
  t.teardown(() => {
    globalThis.setTimeout = realSet;
    globalThis.clearTimeout = realClear;
  });
  await service(memoryLedger(10).ledger, T0 + 200_000_000, 60_000).outcome(QUERY);
  t.equal(armed.size, 0, 'every timer the query set is cleared');
});
