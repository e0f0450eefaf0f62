// How a plan ends from its legs' ends (a split plan's legs each settle on its own; a single-venue
// plan is one leg), and a leg's end in words, for the status's note.
import type { ExecutionStatus, LegResult, LegStatus } from './types.js';

/**
 * A split plan's end, from its legs': COMPLETED when every leg paid, PARTIALLY_COMPLETED when some
 * did and the others were returned, VENUE_FAILED when a venue kept a leg; with none paid,
 * SLIPPAGE_FAILED when a venue rejected one, EXPIRED when none was answered, WITHDRAWN when the
 * taker took them all back. A single-venue plan ends as its one deposit does.
 */
export function splitStatus(fates: readonly LegStatus[]): ExecutionStatus {
  if (fates.length === 1) return fates[0]!;
  if (fates.includes('VENUE_FAILED')) return 'VENUE_FAILED';
  const paid = fates.filter((f) => f === 'COMPLETED').length;
  if (paid === fates.length) return 'COMPLETED';
  if (paid > 0) return 'PARTIALLY_COMPLETED';
  if (fates.includes('SLIPPAGE_FAILED')) return 'SLIPPAGE_FAILED';
  return fates.includes('EXPIRED') ? 'EXPIRED' : 'WITHDRAWN';
}

/** A leg's fate, in words, for the status's note. */
export function fateWords(leg: LegResult, want: string, feeLegs: boolean): string {
  const what = `leg ${leg.index} (${leg.venueId}, ${leg.amount})`;
  switch (leg.status) {
    case 'COMPLETED':
      return `${what} paid ${leg.received} ${want}`;
    case 'SLIPPAGE_FAILED':
      return `${what} returned: its venue could not pay its floor ${leg.minReceive}, and its deposit${feeLegs ? ' and fee legs' : ''} came back`;
    case 'EXPIRED':
      return `${what} expired unanswered: its deposit comes back when its venue rejects it, or withdraw takes it back`;
    case 'WITHDRAWN':
      return `${what} withdrawn: its deposit came back`;
    case 'VENUE_FAILED':
      return `${what} kept by its venue, which neither paid out nor refunded it`;
    case null:
      return `${what} not answered yet`;
  }
}
