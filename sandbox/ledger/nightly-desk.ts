// The sandbox Nightly's swap desk: its swapAddress party, worked as Nightly's settlement service
// works it. Nightly's docs fix the flow (the taker's wallet transfers the quote's fromAmount to
// swapAddress carrying the quote's memo; the venue pays the quote's recipient at least its
// minOutAmount); what they leave open is the sandbox's assumption, stated in
// sandbox/venues/nightly.ts and docs/sandbox.md:
//
// - Right after a transfer offer to swapAddress commits, the desk answers it in a transaction of
//   its own: it accepts it and pays the quote's recipient, in the same transaction, what the
//   pools pay for the quote's fromAmount as they stand then (nightlyPayout, the quote's own
//   formula), when that is at least the quote's minOutAmount; the pool takes the whole give
//   amount (the fee is inside the price) and pays the payout out, so the next quote moves.
// - It rejects the offer, returning the funds and paying nothing, when its memo names no quote the
//   venue gave, a quote already settled (a memo is used up by its first transfer, paid or not), or
//   one past its validity; when the offer is not the quote's fromToken and fromAmount exactly;
//   when the pools moved so that the payout is below minOutAmount; or when its executeBefore
//   passed before the desk met it.
//
// The desk's party holds the pools' reserves as holdings (minted at genesis; one party for every
// pair, as Nightly names one swapAddress), spent by a payout and minted or burnt by a price move.
import type { Decimal } from '../../core/decimal.js';
import { REASON_KEY } from '../../core/ledger/token-standard.js';
import { CC, type Token } from '../../core/tokens.js';
import { nightlyPayout, type NightlyQuoteBook } from '../venues/nightly.js';
import { AmmDesk, type AmmDeskOptions } from './amm-desk.js';
import { directTransfer, type DeskAnswer, type SandboxPool } from './pool-operator.js';
import type { Instruction } from './token-contracts.js';

export interface NightlyDeskOptions extends AmmDeskOptions {
  /** The quotes its wire gave. */
  readonly quotes: NightlyQuoteBook;
}

/** Why the desk returned a deposit, or what it pays for it. */
type Answer = { readonly refused: string } | { readonly entry: SandboxPool; readonly want: Token; readonly payout: Decimal; readonly recipient: string };

export class NightlyDesk extends AmmDesk<NightlyDeskOptions> {
  /** Offers open to the desk, oldest first. */
  openOffers(): string[] {
    return [...this.contracts.instructions.entries()].filter(([, i]) => i.receiver === this.party).map(([cid]) => cid);
  }

  /** Answers one open offer: paid and accepted, or returned. */
  answer(cid: string, instruction: Instruction): DeskAnswer {
    const { contracts } = this;
    const now = this.now();
    const answer = now.getTime() >= Date.parse(instruction.executeBefore) ? { refused: 'expired' } : this.price(instruction);
    if ('refused' in answer) {
      const returned = contracts.returned(cid, instruction, 'reject');
      returned.apply();
      this.commit(`nightly-${cid.slice(2, 14)}`, [returned.node]);
      return 'returned';
    }
    const { entry, want, payout, recipient } = answer;
    const accept = contracts.accepted(cid, instruction);
    const paid = directTransfer(contracts, { sender: this.party, receiver: recipient, instrument: want.instrument, amount: payout, now, executeBefore: instruction.executeBefore, reason: `payout for ${cid}` });
    accept.apply();
    const { pool } = entry;
    if (want === CC) {
      pool.quoteReserve = pool.quoteReserve.plus(instruction.amount);
      pool.baseReserve = pool.baseReserve.minus(payout);
    } else {
      pool.baseReserve = pool.baseReserve.plus(instruction.amount);
      pool.quoteReserve = pool.quoteReserve.minus(payout);
    }
    this.commit(`nightly-${cid.slice(2, 14)}`, [accept.node, paid]);
    return 'paid';
  }

  /** The quote the offer's memo redeems, priced against the pools now; or why it is returned. */
  private price(instruction: Instruction): Answer {
    const redeemed = this.options.quotes.redeem(instruction.meta[REASON_KEY]);
    if ('refused' in redeemed) return { refused: `memo ${redeemed.refused}` };
    const { quote } = redeemed;
    if (instruction.instrument !== quote.from.instrument || !instruction.amount.eq(quote.fromAmount)) return { refused: 'not the quote\'s fromToken and fromAmount' };
    const entry = this.poolFor(quote.from, quote.to);
    if (!entry) return { refused: 'no pool' };
    const payout = nightlyPayout(this.options.spec, entry.pool, quote.from, instruction.amount);
    const reserveOut = quote.to === CC ? entry.pool.baseReserve : entry.pool.quoteReserve;
    if (payout.lt(quote.minOutAmount) || !payout.gt(0) || payout.gte(reserveOut)) return { refused: 'below minOutAmount' };
    return { entry, want: quote.to, payout, recipient: quote.recipient };
  }
}
