// Outcome derivation (core/outcome.ts): the query's rules, and each status from the transactions
// a pool party sees.
import t from 'tap';
import { Decimal } from '../core/decimal.js';
import { DomainError } from '../core/errors.js';
import type { LedgerEvent, LedgerTransaction } from '../core/ledger/ledger.js';
import { OffsetTimeIndex, OutcomeTracker, parseOutcomeQuery, poolTokens, type OutcomeQuery } from '../core/outcome.js';
import { SANDBOX_POOL_PARTIES } from '../core/sandbox/market.js';
import { CBTC, USDCX } from '../core/tokens.js';

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

const settle = (cid: string, choice: 'Accept' | 'Reject' | 'Withdraw', tag = choice === 'Accept' ? 'Completed' : 'Failed'): LedgerEvent => ({
  kind: 'exercised', contractId: cid, templateId: 'x:Sandbox.Token:TransferInstruction', interfaceId: TI, choice: `TransferInstruction_${choice}`,
  actingParties: [POOL], consuming: true, exerciseResult: { output: { tag: `TransferInstructionResult_${tag}`, value: {} } },
});

const holding = (owner: string, instrument: string, amount: string): LedgerEvent => ({
  kind: 'created', contractId: `h-${Math.random()}`, templateId: 'x:Sandbox.Token:Holding',
  interfaceViews: [{ interfaceId: HOLDING, view: { owner, instrumentId: { admin: 'x', id: instrument }, amount, lock: null, meta: {} } }],
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
  t.strictSame(derive([tx(1, offer('o1')), accepted, tx(5, holding(ALICE, 'USDCx', '14.95'))], 10), { status: 'completed', depositUpdateId: accepted.updateId }, 'a payout in a later update');
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

t.test('expired: no answer before executeBefore, then null until an update returns the funds', async (t) => {
  t.strictSame(derive([tx(1, offer('o1'))], 89.999), { status: 'pending', depositUpdateId: null }, 'until executeBefore it may still be accepted');
  t.strictSame(derive([tx(1, offer('o1'))], 90), { status: 'expired', depositUpdateId: null }, 'executeBefore itself is too late');
  const rejectedAtDeadline = tx(90, settle('o1', 'Reject'));
  t.strictSame(derive([tx(1, offer('o1')), rejectedAtDeadline], 100), { status: 'expired', depositUpdateId: rejectedAtDeadline.updateId }, 'a rejection at the deadline returns expired funds');
  const lateReject = tx(95, settle('o1', 'Reject'));
  t.strictSame(derive([tx(1, offer('o1')), lateReject], 100), { status: 'expired', depositUpdateId: lateReject.updateId }, 'a rejection after the deadline is the return of expired funds, not a slippage failure');
});

t.test('not_found: no offer of the party to a pool in the window', async (t) => {
  t.strictSame(derive([], 10), { status: 'not_found', depositUpdateId: null });
  t.strictSame(derive([tx(1, offer('o1', { sender: BOB }))], 10).status, 'not_found', 'another taker\'s offer');
  t.strictSame(derive([tx(1, offer('o1', { receiver: BOB }))], 10).status, 'not_found', 'an offer to a party that is no pool');
  t.strictSame(derive([tx(-1, offer('o1'))], 10).status, 'not_found', 'before since');
  t.strictSame(derive([tx(91, offer('o1'))], 100).status, 'not_found', 'after the deadline');
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

t.test('OffsetTimeIndex: a query starts before every transaction of its window, at most one sample a minute', async (t) => {
  const index = new OffsetTimeIndex();
  t.equal(index.startFor(T0), 0, 'nothing known: from the beginning');
  for (let i = 1; i <= 100; i++) index.add(i * 10, T0 + i * 30_000);
  // Samples at offsets 10, 30, 50, ... (every other one: 60 s apart).
  // since = T0 + 1500 s, less SKEW_MS (300 s): the last sample before T0 + 1200 s is i = 39.
  t.equal(index.startFor(T0 + 50 * 30_000), 390, 'the last sample more than SKEW_MS before since');
  index.add(5, T0 + 10_000_000);
  t.equal(index.startFor(T0 + 20_000_000), 990, 'an offset that goes back is not sampled');
});
