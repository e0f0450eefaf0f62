// The sandbox order book's pricing, its own, written from what Temple's third-party SDK documents
// (a central limit order book, `bids`/`asks` of `{price, quantity}`, price in quote currency per
// CC, best level first; no quote endpoint, so a taker walks the book), not shared with the
// service's adapter, so the two check each other.
//
// A taker fills level by level from the best: selling CC takes the bids, paid price × quantity of
// each level it fills; buying CC spends quote currency on the asks, receiving each level's
// quantity while its whole cost fits, then what the rest buys at the next level's price. An order
// the book cannot fill whole is not filled at all.
//
// Rounding, where Temple says nothing: the taker is paid one amount for the order, so the total
// is rounded down once, to the ledger's 10 fractional digits, not level by level.
import { floor10, ZERO, type Decimal } from '../../core/decimal.js';

export interface BookLevel {
  readonly price: Decimal;
  readonly quantity: Decimal;
}

/** The quote currency selling `amount` CC into `bids` pays; null when they hold less than `amount`. */
export function sellIntoBids(bids: readonly BookLevel[], amount: Decimal): Decimal | null {
  let unsold = amount;
  let proceeds = ZERO;
  for (const level of bids) {
    if (unsold.lte(0)) break;
    const filled = level.quantity.lt(unsold) ? level.quantity : unsold;
    proceeds = proceeds.plus(filled.times(level.price));
    unsold = unsold.minus(filled);
  }
  return unsold.isZero() ? floor10(proceeds) : null;
}

/** The CC that `spend` of quote currency buys from `asks`; null when their whole cost is less than `spend`. */
export function buyFromAsks(asks: readonly BookLevel[], spend: Decimal): Decimal | null {
  let unspent = spend;
  let bought = ZERO;
  for (const level of asks) {
    if (unspent.lte(0)) break;
    const levelCost = level.price.times(level.quantity);
    if (levelCost.lte(unspent)) {
      bought = bought.plus(level.quantity);
      unspent = unspent.minus(levelCost);
    } else {
      bought = bought.plus(unspent.div(level.price));
      unspent = ZERO;
    }
  }
  return unspent.isZero() ? floor10(bought) : null;
}
