// What became of a plan's deposit, from the transactions the taker saw: the deposit offer (from the
// taker to the pool party, for the plan's amount, with the plan's floor as its memo), and then the
// pool's accept with the payout, its reject (the deposit returns), or the taker's withdraw; the
// fee legs offered in the same submission are accepted once the payout is on the ledger, or come
// back. Pure: it is fed transactions in ledger order and says where things stand.
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
}

export interface Tracked {
  /** The transaction that created the deposit offer, once seen. */
  readonly offerUpdateId: string | null;
  readonly offerCid: string | null;
  /** The other offers of the deposit's submission: its fee legs. */
  readonly feeLegs: ReadonlyArray<{ readonly cid: string; readonly receiver: string; readonly amount: string }>;
  /** The transaction that accepted, rejected or withdrew the deposit. */
  readonly depositUpdateId: string | null;
  readonly outcome: DepositOutcome | null;
  /** What the taker was paid, in 1e-10 units of the want instrument. */
  readonly received: bigint | null;
  /** Each fee leg's answer by its offer's contract id: accepted (released), returned, or not yet (absent). */
  readonly feeAnswers: Readonly<Record<string, 'accepted' | 'returned'>>;
  /** The offset of the last transaction fed. */
  readonly offset: number;
}

export const START: Omit<Tracked, 'offset'> = {
  offerUpdateId: null,
  offerCid: null,
  feeLegs: [],
  depositUpdateId: null,
  outcome: null,
  received: null,
  feeAnswers: {},
};

/** Whether every fee leg was accepted (true), any returned (false), or some are not answered yet (null). */
export function feesReleased(state: Tracked): boolean | null {
  const answers = state.feeLegs.map((leg) => state.feeAnswers[leg.cid]);
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

/** Where things stand after `transactions`, from `state`. `offerUpdateId`, when known, is the submission's. */
export function track(state: Tracked, transactions: readonly LedgerTransaction[], target: DepositTarget, submittedUpdateId: string | null): Tracked {
  let next = state;
  for (const tx of transactions) {
    if (tx.offset <= next.offset) continue;
    next = { ...next, offset: tx.offset };
    if (next.outcome === 'COMPLETED' || next.outcome === 'SLIPPAGE_FAILED' || next.outcome === 'WITHDRAWN') {
      next = feesIn(next, tx);
      continue;
    }
    if (next.offerCid === null) {
      if (submittedUpdateId !== null && tx.updateId !== submittedUpdateId) continue;
      if (Date.parse(tx.recordTime) < Date.parse(target.notBefore)) continue;
      const offer = tx.events.find((e) => e.kind === 'created' && e.transfer !== null && isDeposit(e.transfer, target));
      if (!offer) continue;
      const legs = tx.events.flatMap((e) =>
        e.kind === 'created' && e.transfer?.sender === target.party && e.contractId !== offer.contractId ? [{ cid: e.contractId, receiver: e.transfer.receiver, amount: e.transfer.amount }] : [],
      );
      next = { ...next, offerCid: offer.contractId, offerUpdateId: tx.updateId, feeLegs: legs };
      continue;
    }
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
      // later one the pool acted in. The taker's own change never counts.
      const poolActed = tx.updateId === next.depositUpdateId || tx.events.some((e) => e.kind === 'exercised' && e.actingParties.includes(target.pool));
      const paid = poolActed
        ? tx.events.reduce((sum, e) => (e.kind === 'created' && e.holding?.owner === target.party && e.holding.instrumentId.id === target.want && e.holding.lock === null ? sum + toUnits(e.holding.amount) : sum), 0n)
        : 0n;
      if (paid > 0n) next = { ...next, outcome: 'COMPLETED', received: paid };
    }
    next = feesIn(next, tx);
  }
  return next;
}

function feesIn(state: Tracked, tx: LedgerTransaction): Tracked {
  let answers = state.feeAnswers;
  for (const e of tx.events) {
    if (e.kind !== 'exercised' || !state.feeLegs.some((leg) => leg.cid === e.contractId) || answers[e.contractId]) continue;
    answers = { ...answers, [e.contractId]: e.choice === CHOICES.accept ? 'accepted' : 'returned' };
  }
  return answers === state.feeAnswers ? state : { ...state, feeAnswers: answers };
}
