// The realised figures of a completed swap (or of one paid leg of a split, against its own net and
// floor): the price received, the slippage against the quote's net and the margin above the
// plan's floor, in exact decimals, rounded against the taker.
import { divide, fromUnits, toUnits } from '../decimal.js';
import type { Executable } from './executable.js';
import type { Realised } from './types.js';

/** ceil(a / b) for b > 0: a worse payout is never understated, a better one never overstated. */
const ceilDiv = (a: bigint, b: bigint): bigint => (a > 0n ? (a + b - 1n) / b : a / b);

export function realised(plan: { readonly quoteRef: Pick<Executable['quoteRef'], 'amount' | 'net' | 'minReceive'> }, received: bigint): Realised {
  const net = toUnits(plan.quoteRef.net);
  return {
    price: fromUnits(divide(received, toUnits(plan.quoteRef.amount))),
    slippageBps: Number(ceilDiv((net - received) * 10_000n, net)),
    aboveFloor: fromUnits(received - toUnits(plan.quoteRef.minReceive)),
  };
}
