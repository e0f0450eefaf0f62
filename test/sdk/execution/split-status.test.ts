// "A split ends as its legs did" (sdk/src/execution/legs.ts, read from the package as built):
// COMPLETED when every leg was paid, PARTIALLY_COMPLETED when some were and the others returned,
// VENUE_FAILED when a venue kept a leg, and with none paid SLIPPAGE_FAILED, EXPIRED or WITHDRAWN;
// a single-venue plan ends as its one deposit did.
import t from 'tap';
import type { ExecutionStatus, LegStatus } from '@bestex/sdk';

const { splitStatus } = (await import(new URL('./execution/legs.js', import.meta.resolve('@bestex/sdk')).href)) as { splitStatus(fates: readonly LegStatus[]): ExecutionStatus };

const CASES: ReadonlyArray<[readonly LegStatus[], ExecutionStatus, string]> = [
  [['COMPLETED', 'COMPLETED'], 'COMPLETED', 'every leg paid'],
  [['COMPLETED', 'COMPLETED', 'COMPLETED'], 'COMPLETED', 'every leg of three paid'],
  [['COMPLETED', 'SLIPPAGE_FAILED'], 'PARTIALLY_COMPLETED', 'one paid, one rejected'],
  [['EXPIRED', 'COMPLETED'], 'PARTIALLY_COMPLETED', 'one paid, one unanswered'],
  [['WITHDRAWN', 'COMPLETED', 'SLIPPAGE_FAILED'], 'PARTIALLY_COMPLETED', 'one paid, the others returned'],
  [['COMPLETED', 'VENUE_FAILED'], 'VENUE_FAILED', 'a venue kept its leg, whatever the others did'],
  [['SLIPPAGE_FAILED', 'VENUE_FAILED'], 'VENUE_FAILED', 'a venue kept its leg, none paid'],
  [['SLIPPAGE_FAILED', 'SLIPPAGE_FAILED'], 'SLIPPAGE_FAILED', 'every leg rejected'],
  [['SLIPPAGE_FAILED', 'EXPIRED'], 'SLIPPAGE_FAILED', 'none paid, a venue rejected one'],
  [['EXPIRED', 'EXPIRED'], 'EXPIRED', 'no leg answered'],
  [['EXPIRED', 'WITHDRAWN'], 'EXPIRED', 'none answered, one taken back'],
  [['WITHDRAWN', 'WITHDRAWN'], 'WITHDRAWN', 'every leg taken back'],
  [['SLIPPAGE_FAILED'], 'SLIPPAGE_FAILED', 'a single-venue plan: its one deposit\'s end'],
  [['WITHDRAWN'], 'WITHDRAWN', 'a single-venue plan withdrawn'],
];

t.test('a split ends as its legs did; a single-venue plan as its one deposit did', async (t) => {
  for (const [fates, status, why] of CASES) t.equal(splitStatus(fates), status, `${fates.join(' + ')} -> ${status}: ${why}`);
});
