// A partner's plan as its trade ledger shows it: the plan's status (state, legs, what was paid,
// update ids) with what it was quoted and disclosed (TradeTerms), and the figures derived from
// both. Every figure is recomputable from the others: `net`, `minReceive` and `received` are the
// legs' sums, the slippage is of the paid legs, the fees collected are the paid legs' lines.
import { Decimal, toWire, ZERO } from '../decimal.js';
import type { Trade, TradeLeg } from '../contract/portal.js';
import type { PlanStatus } from '../contract/v2.js';
import type { TrackedPlan, TradeTerms } from '../plan-status/status.js';

/** 10000 × (net - received) / net to 2 places, rounded up: a slippage is never shown smaller than it was. */
export function slippageBps(net: Decimal, received: Decimal): string {
  const bps = net.minus(received).times(10_000).div(net).toDecimalPlaces(2, Decimal.ROUND_CEIL);
  return bps.isZero() ? '0' : bps.toFixed();
}

const sum = (values: readonly string[]): Decimal => values.reduce((total, v) => total.plus(v), ZERO);

/** The row of a partner's plan at `status`. */
export function tradeOf(plan: TrackedPlan, terms: TradeTerms, status: PlanStatus): Trade {
  const legs: TradeLeg[] = status.legs.map((leg, i) => ({
    leg: leg.leg,
    venueId: leg.venueId,
    amount: leg.amount,
    net: terms.legs[i]!.net,
    minReceive: leg.minReceive,
    state: leg.state,
    basis: leg.basis,
    received: leg.received,
    depositUpdateId: leg.depositUpdateId,
    settlementUpdateId: leg.settlementUpdateId,
  }));
  const paid = legs.map((leg, i) => ({ leg, terms: terms.legs[i]! })).filter(({ leg }) => leg.received !== null);
  const received = paid.length === 0 ? null : sum(paid.map(({ leg }) => leg.received!));
  const collected = (line: 'serviceFee' | 'integratorFee') => toWire(terms.collectsFees ? sum(paid.map(({ terms: t }) => t[line])) : ZERO);
  return {
    planId: plan.planId,
    createdAt: new Date(plan.createdAtMs).toISOString(),
    updatedAt: status.updatedAt,
    state: status.state,
    terminal: status.terminal,
    pair: { give: plan.pair.give, want: plan.pair.want },
    amount: plan.amount,
    net: toWire(sum(legs.map((l) => l.net))),
    minReceive: plan.minReceive,
    received: received === null ? null : toWire(received),
    slippageBps: received === null || !status.terminal ? null : slippageBps(sum(paid.map(({ leg }) => leg.net)), received),
    legs,
    fees: {
      token: plan.pair.want,
      disclosed: { service: toWire(sum(terms.legs.map((l) => l.serviceFee))), integrator: toWire(sum(terms.legs.map((l) => l.integratorFee))) },
      collected: { service: collected('serviceFee'), integrator: collected('integratorFee') },
    },
    takerRef: terms.takerRef,
  };
}
