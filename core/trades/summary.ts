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

/** The sums of trades added one at a time (a range is read a page at a time). */
export class TradeSums {
  private readonly days = new Map<string, { plans: number; completed: number; given: Totals; received: Totals }>();
  private readonly venues = new Map<string, { legs: number; ended: number; completed: number }>();
  private readonly fees = new Map<Token, { ds: Decimal; di: Decimal; cs: Decimal; ci: Decimal }>();
  /** The paid plans' slippage: how many, their sum and the worst, so the summary keeps no list. */
  private paid = 0;
  private slippageSum: Decimal = ZERO;
  private worst: Decimal | null = null;
  private belowFloor = 0;
  private completed = 0;
  private plans = 0;

  add(trade: Trade): void {
    const { days, venues, fees } = this;
    this.plans += 1;
    const date = utcDay(Date.parse(trade.createdAt));
    const day = days.get(date) ?? { plans: 0, completed: 0, given: new Totals(), received: new Totals() };
    days.set(date, day);
    day.plans += 1;
    const paid = trade.legs.filter((l) => l.received !== null);
    if (paid.length > 0) {
      day.completed += 1;
      this.completed += 1;
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
      const slippage = new Decimal(trade.slippageBps);
      this.paid += 1;
      this.slippageSum = this.slippageSum.plus(slippage);
      this.worst = this.worst === null || slippage.gt(this.worst) ? slippage : this.worst;
      const floor = paid.reduce((s, l) => s.plus(l.minReceive), ZERO);
      if (new Decimal(trade.received!).lt(floor)) this.belowFloor += 1;
    }
    const f = fees.get(trade.fees.token) ?? { ds: ZERO, di: ZERO, cs: ZERO, ci: ZERO };
    fees.set(trade.fees.token, {
      ds: f.ds.plus(trade.fees.disclosed.service),
      di: f.di.plus(trade.fees.disclosed.integrator),
      cs: f.cs.plus(trade.fees.collected.service),
      ci: f.ci.plus(trade.fees.collected.integrator),
    });
  }

  summary(range: TradeRange): TradeSummary {
    const dayRows: TradeDay[] = [...this.days]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([date, d]) => ({ date, plans: d.plans, completed: d.completed, given: d.given.list(), received: d.received.list() }));
    const venueRows: VenueSuccess[] = [...this.venues]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([venueId, v]) => ({ venueId, legs: v.legs, ended: v.ended, completed: v.completed, successRate: rate(v.completed, v.ended) }));
    const feeRows: TradeFees[] = [...this.fees]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([token, f]) => ({ token, disclosed: { service: toWire(f.ds), integrator: toWire(f.di) }, collected: { service: toWire(f.cs), integrator: toWire(f.ci) } }));
    return {
      from: range.from,
      to: range.to,
      plans: this.plans,
      completed: this.completed,
      days: dayRows,
      venues: venueRows,
      slippage: {
        paid: this.paid,
        averageBps: this.paid === 0 ? null : bps(this.slippageSum.div(this.paid).toDecimalPlaces(2, Decimal.ROUND_CEIL)),
        worstBps: this.worst === null ? null : bps(this.worst),
        belowFloor: this.belowFloor,
      },
      fees: feeRows,
    };
  }
}
