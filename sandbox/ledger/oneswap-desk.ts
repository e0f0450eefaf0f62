// The sandbox OneSwap's pool swap party (ONESWAP_SWAP_ADDRESS), worked as OneSwap's settlement
// works it. OneSwap's docs fix the flow: the signed-in wallet party sends the intent's input to
// depositAddress, with depositReference in the transfer's reason when the wallet can set it;
// OneSwap matches the deposit by sender, swaps, and pays the output back to the same party, or
// refunds; the intent's status says which. What they leave open is the sandbox's assumption
// (sandbox/venues/oneswap-intents.ts, docs/sandbox.md):
//
// - Right after a transfer offer to the party commits, the desk answers it in a transaction of
//   its own. The intent is the one the reason names by depositReference, if the sender made it;
//   else the sender's pending intent for that input token. No intent: the offer is rejected (the
//   funds go back) and no intent changes. An intent no longer pending (expired, cancelled,
//   settled) has the offer rejected, its status unchanged; so has an offer whose executeBefore
//   passed before the desk met it.
// - A pending intent is settled by the pools as they stand then, the quote's arithmetic
//   (oneswapSwap): an amount other than the intent's is insufficient_amount, as is one no larger
//   than the traffic fee; a price impact over 15 % is price_impact_exceeded; an output the pool
//   cannot pay is insufficient_liquidity; an output below minOutput is slippage_failed: each
//   rejects the offer, refunding the deposit. Otherwise the desk accepts it and pays the output to
//   the sender in the same transaction (completed); the pool takes the input after the traffic
//   fee (the fee stays with the party, as OneSwap's treasury recovery) and pays the output out.
// - An outcome queued through the control API (test-only) replaces the pricing for the next
//   pending intent met: the refunding ones as above, and also output_failed (refunded: "the
//   input refund succeeded"); no_output_holdings, failed and refund_failed keep the deposit and
//   pay nothing (the states the docs say "require manual investigation by OneSwap").
import { toWire } from '../../core/decimal.js';
import { REASON_KEY } from '../../core/ledger/token-standard.js';
import { CC } from '../../core/tokens.js';
import { ONESWAP_MAX_PRICE_IMPACT, type OneSwapIntent, type OneSwapIntentBook, type SwapStatus } from '../venues/oneswap-intents.js';
import { oneswapSwap } from '../venues/oneswap-swap.js';
import { AmmDesk, type AmmDeskOptions } from './amm-desk.js';
import { directTransfer, type DeskAnswer, type SandboxPool } from './pool-operator.js';
import type { Instruction } from './token-contracts.js';

export interface OneSwapDeskOptions extends AmmDeskOptions {
  /** The intents its wire made. */
  readonly intents: OneSwapIntentBook;
}

/** Statuses after which the deposit goes back to the sender. */
const REFUNDED: ReadonlySet<SwapStatus> = new Set(['slippage_failed', 'price_impact_exceeded', 'insufficient_liquidity', 'insufficient_amount', 'output_failed']);

export class OneSwapDesk extends AmmDesk<OneSwapDeskOptions> {
  /** Answers one open offer: settles the intent it meets, or returns it. */
  answer(cid: string, instruction: Instruction): DeskAnswer {
    const { contracts } = this;
    const commandId = `oneswap-${cid.slice(2, 14)}`;
    const now = this.now();
    const intent = this.options.intents.match(instruction.sender, instruction.instrument, instruction.meta[REASON_KEY]);
    if (!intent || intent.status !== 'pending' || now.getTime() >= Date.parse(instruction.executeBefore)) {
      this.refund(cid, instruction, commandId);
      return 'returned';
    }
    intent.matchedAt = now.getTime();
    const entry = this.poolFor(intent.give, intent.want);
    const status = this.options.intents.takeForced() ?? (entry ? this.price(intent, instruction, entry) : 'insufficient_liquidity');
    intent.status = status;
    if (REFUNDED.has(status)) {
      this.refund(cid, instruction, commandId);
      return 'returned';
    }
    const accept = contracts.accepted(cid, instruction);
    if (status !== 'completed' || !entry) {
      // The deposit is kept and nothing is paid: the states the docs leave to manual intervention.
      accept.apply();
      this.commit(commandId, [accept.node]);
      return 'kept';
    }
    const swap = oneswapSwap(this.options.spec, entry.pool, intent.give, instruction.amount);
    const paid = directTransfer(contracts, { sender: this.party, receiver: intent.party, instrument: intent.want.instrument, amount: swap.output, now, executeBefore: instruction.executeBefore, reason: `${intent.depositReference} payout ${toWire(swap.output)}` });
    accept.apply();
    const { pool } = entry;
    if (intent.give === CC) {
      pool.baseReserve = pool.baseReserve.plus(swap.afterTrafficFee);
      pool.quoteReserve = pool.quoteReserve.minus(swap.output);
    } else {
      pool.quoteReserve = pool.quoteReserve.plus(swap.afterTrafficFee);
      pool.baseReserve = pool.baseReserve.minus(swap.output);
    }
    intent.actualOutput = swap.output;
    this.commit(commandId, [accept.node, paid]);
    return 'paid';
  }

  private refund(cid: string, instruction: Instruction, commandId: string): void {
    const returned = this.contracts.returned(cid, instruction, 'reject');
    returned.apply();
    this.commit(commandId, [returned.node]);
  }

  /** The status the pools give the deposit now. */
  private price(intent: OneSwapIntent, instruction: Instruction, entry: SandboxPool): SwapStatus {
    if (instruction.instrument !== intent.give.instrument || !instruction.amount.eq(intent.amount)) return 'insufficient_amount';
    const swap = oneswapSwap(this.options.spec, entry.pool, intent.give, instruction.amount);
    if (swap.afterTrafficFee.isZero()) return 'insufficient_amount';
    if (swap.priceImpact.gt(ONESWAP_MAX_PRICE_IMPACT)) return 'price_impact_exceeded';
    if (!swap.output.gt(0) || swap.output.gte(swap.reserveOut)) return 'insufficient_liquidity';
    if (swap.output.lt(intent.minOutput)) return 'slippage_failed';
    return 'completed';
  }
}
