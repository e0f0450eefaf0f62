// What became of a plan's deposits, from the transactions the taker saw: the submission that
// offered every deposit (from the taker to its venue's party, for its leg's amount, with its memo)
// and each deposit's fee legs, and then, deposit by deposit, the venue's accept with the payout,
// its reject (the deposit returns), or the taker's withdraw; each fee leg is accepted once its
// leg's payout is on the ledger, or comes back. A single-venue plan is one deposit; a split plan's
// legs settle each on its own, and another leg's deposit is never a fee leg. Pure: it is fed
// transactions in ledger order and says where things stand.
import { toUnits } from './decimal.js';
import type { LedgerTransaction, TransferView } from './ledger-view.js';
import { CHOICES, REASON_KEY } from './generated/token-standard.js';

export type DepositOutcome = 'COMPLETED' | 'SLIPPAGE_FAILED' | 'EXPIRED' | 'WITHDRAWN';

export interface DepositTarget {
  readonly party: string;
  readonly pool: string;
  readonly instrument: string;
  readonly amount: string;
  readonly memo: string;
  readonly want: string;
  /** When the offer stops being acceptable (the plan's expiry). */
  readonly executeBefore: string;
  /** No offer committed before this is the plan's: it did not exist yet (its creation, less the record-time tolerance). */
  readonly notBefore: string;
  /** The fee legs that go with this deposit, by receiver and amount, in the plan's order (offered in the same submission, when they were). */
  readonly feeLegs: ReadonlyArray<{ readonly receiver: string; readonly amount: string }>;
}

/** A fee leg found offered: its contract, and which of its deposit's fee legs it is (an index into `DepositTarget.feeLegs`). */
export interface OfferedFeeLeg {
  readonly cid: string;
  readonly receiver: string;
  readonly amount: string;
  readonly index: number;
}

/** Where one deposit stands. */
export interface DepositTracked {
  readonly offerCid: string | null;
  /** Its fee legs offered in the same submission. */
  readonly feeLegs: readonly OfferedFeeLeg[];
  /** The transaction that accepted, rejected or withdrew the deposit. */
  readonly depositUpdateId: string | null;
  readonly outcome: DepositOutcome | null;
  /** What the taker was paid for it, in 1e-10 units of the want instrument. */
  readonly received: bigint | null;
  /** Each fee leg's answer by its offer's contract id: accepted (released), returned, or not yet (absent). */
  readonly feeAnswers: Readonly<Record<string, 'accepted' | 'returned'>>;
}

export interface Tracked {
  /** The transaction that offered the deposits, once seen. */
  readonly offerUpdateId: string | null;
  /** One per target, in the targets' order, once the submission is seen (none before). */
  readonly deposits: readonly DepositTracked[];
  /** The offset of the last transaction fed. */
  readonly offset: number;
}

const UNSEEN: DepositTracked = { offerCid: null, feeLegs: [], depositUpdateId: null, outcome: null, received: null, feeAnswers: {} };

/** Where things stand before any transaction after `offset` is read: no deposit seen. */
export const start = (offset: number): Tracked => ({ offerUpdateId: null, deposits: [], offset });

/** Whether every fee leg of `deposits` was accepted (true), any returned (false), or some are not answered yet (null; also when there are none). */
export function feesReleased(deposits: readonly DepositTracked[]): boolean | null {
  const answers = deposits.flatMap((d) => d.feeLegs.map((leg) => d.feeAnswers[leg.cid]));
  if (answers.some((a) => a === 'returned')) return false;
  return answers.length > 0 && answers.every((a) => a === 'accepted') ? true : null;
}

const isDeposit = (t: TransferView, target: DepositTarget) =>
  t.sender === target.party &&
  t.receiver === target.pool &&
  t.instrumentId.id === target.instrument &&
  toUnits(t.amount) === toUnits(target.amount) &&
  Date.parse(t.executeBefore) === Date.parse(target.executeBefore) &&
  t.meta?.values?.[REASON_KEY] === target.memo;

/**
 * The submission's offers in `tx`, when it has every target's deposit: each deposit's offer, and
 * its fee legs, each the taker's first offer not yet claimed with the leg's receiver and amount
 * (deposits claimed first, so no deposit is ever taken for a fee leg).
 */
function offered(tx: LedgerTransaction, targets: readonly DepositTarget[]): DepositTracked[] | null {
  const offers = tx.events.flatMap((e) => (e.kind === 'created' && e.transfer !== null && e.transfer.sender === targets[0]?.party ? [{ cid: e.contractId, transfer: e.transfer }] : []));
  const claimed = new Set<string>();
  const deposits: string[] = [];
  for (const target of targets) {
    const offer = offers.find((o) => !claimed.has(o.cid) && isDeposit(o.transfer, target));
    if (!offer) return null;
    claimed.add(offer.cid);
    deposits.push(offer.cid);
  }
  return targets.map((target, i) => {
    const feeLegs = target.feeLegs.flatMap((leg, index) => {
      const offer = offers.find((o) => !claimed.has(o.cid) && o.transfer.receiver === leg.receiver && toUnits(o.transfer.amount) === toUnits(leg.amount));
      if (!offer) return [];
      claimed.add(offer.cid);
      return [{ cid: offer.cid, receiver: leg.receiver, amount: leg.amount, index }];
    });
    return { ...UNSEEN, offerCid: deposits[i]!, feeLegs };
  });
}

/** One deposit after `tx`: its venue's answer, its payout, its fee legs' answers. */
function answered(deposit: DepositTracked, tx: LedgerTransaction, target: DepositTarget): DepositTracked {
  let next = deposit;
  if (next.outcome !== null) return feesIn(next, tx);
  if (next.depositUpdateId === null) {
    const answer = tx.events.find((e) => e.kind === 'exercised' && e.contractId === next.offerCid);
    if (answer?.kind === 'exercised') {
      if (answer.choice === CHOICES.accept) next = { ...next, depositUpdateId: tx.updateId };
      else if (answer.choice === CHOICES.withdraw) next = { ...next, depositUpdateId: tx.updateId, outcome: 'WITHDRAWN' };
      else if (answer.choice === CHOICES.reject) {
        // A reject after the offer's executeBefore returns an expired deposit: no swap was priced.
        const late = Date.parse(tx.recordTime) >= Date.parse(target.executeBefore);
        next = { ...next, depositUpdateId: tx.updateId, outcome: late ? 'EXPIRED' : 'SLIPPAGE_FAILED' };
      }
    }
  }
  if (next.depositUpdateId !== null && next.outcome === null) {
    // The payout: the want instrument created for the taker, in the accepting transaction or a
    // later one its venue's party acted in. The taker's own change never counts.
    const poolActed = tx.updateId === next.depositUpdateId || tx.events.some((e) => e.kind === 'exercised' && e.actingParties.includes(target.pool));
    const paid = poolActed
      ? tx.events.reduce((sum, e) => (e.kind === 'created' && e.holding?.owner === target.party && e.holding.instrumentId.id === target.want && e.holding.lock === null ? sum + toUnits(e.holding.amount) : sum), 0n)
      : 0n;
    if (paid > 0n) next = { ...next, outcome: 'COMPLETED', received: paid };
  }
  return feesIn(next, tx);
}

/** Where things stand after `transactions`, from `state`, for `targets` (one per deposit). `submittedUpdateId`, when known, is the submission's. */
export function track(state: Tracked, transactions: readonly LedgerTransaction[], targets: readonly DepositTarget[], submittedUpdateId: string | null): Tracked {
  let next = state;
  for (const tx of transactions) {
    if (tx.offset <= next.offset) continue;
    next = { ...next, offset: tx.offset };
    if (next.offerUpdateId === null) {
      if (submittedUpdateId !== null && tx.updateId !== submittedUpdateId) continue;
      if (targets.some((target) => Date.parse(tx.recordTime) < Date.parse(target.notBefore))) continue;
      const deposits = offered(tx, targets);
      if (deposits) next = { ...next, offerUpdateId: tx.updateId, deposits };
      continue;
    }
    next = { ...next, deposits: next.deposits.map((deposit, i) => answered(deposit, tx, targets[i]!)) };
  }
  return next;
}

function feesIn(deposit: DepositTracked, tx: LedgerTransaction): DepositTracked {
  let answers = deposit.feeAnswers;
  for (const e of tx.events) {
    if (e.kind !== 'exercised' || !deposit.feeLegs.some((leg) => leg.cid === e.contractId) || answers[e.contractId]) continue;
    answers = { ...answers, [e.contractId]: e.choice === CHOICES.accept ? 'accepted' : 'returned' };
  }
  return answers === deposit.feeAnswers ? deposit : { ...deposit, feeAnswers: answers };
}
