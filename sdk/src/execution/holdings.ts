// Which of the taker's holdings a plan spends: the deposit's cover, and the inputs a batch with
// the fee legs starts from, or what the taker lacks for it, in words.
import { fromUnits, toUnits } from '../decimal.js';
import type { OwnHolding } from '../ledger-view.js';
import type { ExecutableStep } from './executable.js';

/** The taker's unlocked holdings, largest first. */
export const freeHoldings = (holdings: readonly OwnHolding[]) => holdings.filter((h) => !h.locked).sort((a, b) => (a.units === b.units ? 0 : a.units > b.units ? -1 : 1));

/** Holdings of `instrument` that together hold `needed` units, largest first; null when all of them hold less. */
export function cover(free: readonly OwnHolding[], instrument: string, needed: bigint): OwnHolding[] | null {
  const chosen: OwnHolding[] = [];
  let total = 0n;
  for (const holding of free) {
    if (total >= needed) break;
    if (holding.instrument !== instrument) continue;
    chosen.push(holding);
    total += holding.units;
  }
  return total >= needed ? chosen : null;
}

export const spendable = (holdings: readonly OwnHolding[], instrument: string) => fromUnits(holdings.filter((h) => h.instrument === instrument && !h.locked).reduce((s, h) => s + h.units, 0n));

/**
 * The holdings a batch of `steps` starts from, by instrument: enough for every step of that
 * instrument together, since the batch threads one transfer's change into the next. Or, when an
 * instrument falls short, what it lacks, in words (its deposits covered: only fee legs fall short).
 */
export function batchInputs(steps: readonly ExecutableStep[], holdings: readonly OwnHolding[]): { inputs: Map<string, OwnHolding[]> } | { short: string } {
  const free = freeHoldings(holdings);
  const inputs = new Map<string, OwnHolding[]>();
  for (const instrument of new Set(steps.map((s) => s.instrument))) {
    const of = steps.filter((s) => s.instrument === instrument);
    const needed = of.reduce((sum, s) => sum + toUnits(s.amount), 0n);
    const chosen = cover(free, instrument, needed);
    if (chosen) {
      inputs.set(instrument, chosen);
      continue;
    }
    const legs = of.filter((s) => s.kind !== 'venue-deposit');
    const deposit = of.find((s) => s.kind === 'venue-deposit');
    const what = legs.length === 1 ? `the ${legs[0]!.kind} leg needs ${legs[0]!.amount} ${instrument}` : `the ${legs.map((l) => l.kind).join(' and ')} legs need ${fromUnits(legs.reduce((sum, l) => sum + toUnits(l.amount), 0n))} ${instrument} together`;
    const held = spendable(holdings, instrument);
    return {
      short: `${what}${deposit ? ` besides the deposit's ${deposit.amount}` : ''} and the party holds ${held} ${instrument} spendable, ${fromUnits(needed - toUnits(held))} short`,
    };
  }
  return { inputs };
}
