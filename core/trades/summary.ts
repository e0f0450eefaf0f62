// A partner's trades summed: per UTC day (plans made, plans paid, volume per token), per venue (legs
// ended and paid), the realised slippage of the paid plans, and the fees per want token. Volume is
// per token, never converted; a plan counts on the day it was made, with its paid legs.
import { Decimal, toWire, ZERO } from '../decimal.js';
import type { Trade, TradeDay, TradeFees, TradeSummary, VenueSuccess } from '../contract/portal.js';
import { isTerminal } from '../plan-status/status.js';
import type { TradeRange } from './range.js';
import { utcDay } from './range.js';

type Token = Trade['pair']['give'];

class Totals {
  private readonly byToken = new Map<Token, Decimal>();
  add(token: Token, amount: string): void {
    this.byToken.set(token, (this.byToken.get(token) ?? ZERO).plus(amount));
  }
  list(): Array<{ token: Token; amount: string }> {
    return [...this.byToken].sort(([a], [b]) => (a < b ? -1 : 1)).map(([token, amount]) => ({ token, amount: toWire(amount) }));
  }
}

const bps = (x: Decimal): string => (x.isZero() ? '0' : x.toFixed());
/** completed / ended rounded down to 4 places, in canonical form. */
const rate = (completed: number, ended: number): string | null => (ended === 0 ? null : toWire(new Decimal(completed).div(ended).toDecimalPlaces(4, Decimal.ROUND_DOWN)));

export function summarise(trades: readonly Trade[], range: TradeRange): TradeSummary {
  const days = new Map<string, { plans: number; completed: number; given: Totals; received: Totals }>();
  const venues = new Map<string, { legs: number; ended: number; completed: number }>();
  const fees = new Map<Token, { ds: Decimal; di: Decimal; cs: Decimal; ci: Decimal }>();
  const slippages: Decimal[] = [];
  let belowFloor = 0;
  let completed = 0;
  for (const trade of trades) {
    const date = utcDay(Date.parse(trade.createdAt));
    const day = days.get(date) ?? { plans: 0, completed: 0, given: new Totals(), received: new Totals() };
    days.set(date, day);
    day.plans += 1;
    const paid = trade.legs.filter((l) => l.received !== null);
    if (paid.length > 0) {
      day.completed += 1;
      completed += 1;
    }
    for (const leg of trade.legs) {
      const venue = venues.get(leg.venueId) ?? { legs: 0, ended: 0, completed: 0 };
      venues.set(leg.venueId, venue);
      venue.legs += 1;
      if (isTerminal(leg.state)) venue.ended += 1;
      if (leg.received !== null) {
        venue.completed += 1;
        day.given.add(trade.pair.give, leg.amount);
        day.received.add(trade.pair.want, leg.received);
      }
    }
    if (trade.slippageBps !== null) {
      slippages.push(new Decimal(trade.slippageBps));
      const floor = paid.reduce((s, l) => s.plus(l.minReceive), ZERO);
      if (new Decimal(trade.received!).lt(floor)) belowFloor += 1;
    }
    const f = fees.get(trade.fees.token) ?? { ds: ZERO, di: ZERO, cs: ZERO, ci: ZERO };
    fees.set(trade.fees.token, {
      ds: f.ds.plus(trade.fees.disclosed.service),
      di: f.di.plus(trade.fees.disclosed.integrator),
      cs: f.cs.plus(trade.fees.collected.service),
      ci: f.ci.plus(trade.fees.collected.integrator),
    });
  }
  const dayRows: TradeDay[] = [...days]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([date, d]) => ({ date, plans: d.plans, completed: d.completed, given: d.given.list(), received: d.received.list() }));
  const venueRows: VenueSuccess[] = [...venues]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([venueId, v]) => ({ venueId, legs: v.legs, ended: v.ended, completed: v.completed, successRate: rate(v.completed, v.ended) }));
  const feeRows: TradeFees[] = [...fees]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([token, f]) => ({ token, disclosed: { service: toWire(f.ds), integrator: toWire(f.di) }, collected: { service: toWire(f.cs), integrator: toWire(f.ci) } }));
  const total = slippages.reduce((s, x) => s.plus(x), ZERO);
  return {
    from: range.from,
    to: range.to,
    plans: trades.length,
    completed,
    days: dayRows,
    venues: venueRows,
    slippage: {
      paid: slippages.length,
      averageBps: slippages.length === 0 ? null : bps(total.div(slippages.length).toDecimalPlaces(2, Decimal.ROUND_CEIL)),
      worstBps: slippages.length === 0 ? null : bps(Decimal.max(...slippages)),
      belowFloor,
    },
    fees: feeRows,
  };
}
