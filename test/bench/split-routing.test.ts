// What the bench's split measurement relies on: "its five-venue market is the sandbox's" (the
// bench restates the sandbox's seeds, as it imports no sandbox code: each venue nets there what the
// sandbox's venue does, test/helpers/sandbox-curves.ts being held to the service's quotes), its
// amounts are what it says, and its gate is the level docs/performance.md states. No test here
// measures time.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { dec } from '../../core/decimal.js';
import { MAX_SPLIT_P99_US } from '../../bench/gates.js';
import { SPLIT_AMOUNTS, splitAmounts, splitMarket } from '../../bench/split-routing.js';
import { repoRoot } from '../../handlers/app.js';
import { sandboxCurves } from '../helpers/sandbox-curves.js';

t.test('"the bench splits on the sandbox\'s five venues": each of its curves nets what the sandbox\'s venue does, small to past the depth', async (t) => {
  const bench = new Map(splitMarket().map((c) => [c.venueId, c]));
  const sandbox = sandboxCurves();
  t.strictSame([...bench.keys()].sort(), sandbox.map((c) => c.venueId).sort());
  for (const curve of sandbox) {
    for (const amount of ['0.5', '24.9999999999', '25', '499.9999999999', '500', '123456.7890123456', '333889.816360601', '333889.8163606011', '1000000', '1170000', '1170000.0000000001']) {
      t.equal(bench.get(curve.venueId)!.net(dec(amount))?.toFixed() ?? null, curve.net(dec(amount))?.toFixed() ?? null, `${curve.venueId}: ${amount}`);
    }
  }
});

t.test('"1,000 amounts, 100 CC to about 2,000,000 CC, most with 10 fractional digits"', async (t) => {
  const amounts = splitAmounts();
  t.equal(amounts.length, SPLIT_AMOUNTS);
  t.equal(SPLIT_AMOUNTS, 1000);
  t.equal(amounts[0]!.toFixed(), '100');
  t.ok(amounts[999]!.gt(1_990_000) && amounts[999]!.lt(2_010_000), `the last: ${amounts[999]!.toFixed()}`);
  t.ok(amounts.every((a) => a.decimalPlaces() <= 10) && amounts.filter((a) => a.decimalPlaces() === 10).length >= 900, 'Daml Decimals, most rounding at every digit');
});

t.test('"the gate table states the split\'s level": docs/performance.md\'s row is MAX_SPLIT_P99_US', async (t) => {
  const doc = readFileSync(path.join(repoRoot(), 'docs', 'performance.md'), 'utf8');
  const row = doc.split('\n').find((line) => line.startsWith('| the split of one swap'));
  t.ok(row, 'the table has the split\'s row');
  t.match(row ?? '', new RegExp(`p99 CPU per call <= ${MAX_SPLIT_P99_US} µs`));
  t.match(row ?? '', /\| never: one measurement, not rounds \|$/);
});
