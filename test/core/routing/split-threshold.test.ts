// "A split that does not beat the best single venue by more than the threshold is not proposed":
// SPLIT_MIN_EDGE_BPS (5 bps, as docs/split-routing.md states it), judged exactly on the nets, with
// the edge in bps rounded down; a caller's own threshold; and a split with no single venue to beat.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { VenueCurve } from '../../../core/routing/curves.js';
import { optimalSplit, SPLIT_MIN_EDGE_BPS } from '../../../core/routing/split.js';
import { toUnits } from '../../../core/routing/units.js';
import { repoRoot } from '../../../handlers/app.js';

// Two like pools: splitting A in halves earns about A / (2 x 10,000,000), 5 bps near 10,000.
const curves = ['a', 'b'].map((venueId) => new VenueCurve({ kind: 'constant-product', venueId, reserveIn: dec('10000000'), reserveOut: dec('1500000') }));

t.test('"a split is proposed exactly when (split - best) x 10000 > best x 5", its edge floor(10000 x (split - best) / best)', async (t) => {
  let proposed = 0;
  let refused = 0;
  for (let amount = 9_900; amount <= 10_100; amount += 7) {
    const given = dec(`${amount}.1234567891`);
    const best = curves[0]!.netUnits(toUnits(given))!;
    const found = optimalSplit(given, curves, { minEdgeBps: -10_000 })!;
    const total = toUnits(found.net);
    const beats = (total - best) * 10_000n > best * BigInt(SPLIT_MIN_EDGE_BPS);
    const split = optimalSplit(given, curves);
    t.equal(split !== null, beats, `${given.toFixed()}: ${beats ? 'proposed' : 'not proposed'}`);
    if (split) {
      proposed += 1;
      t.equal(split.edgeBps, Number(((total - best) * 10_000n) / best), 'its edge in bps, rounded down');
      t.strictSame(split.bestSingle, { venueId: 'a', net: curves[0]!.net(given) }, 'the best single venue, the lower id of two alike');
    } else refused += 1;
  }
  t.ok(proposed > 0 && refused > 0, `both sides of the threshold are reached (${proposed} proposed, ${refused} not)`);
});

t.test('"a caller\'s threshold replaces it"', async (t) => {
  const split = optimalSplit(dec('20000'), curves)!;
  t.equal(split.edgeBps, 9, 'about 10 bps at 20,000');
  t.equal(optimalSplit(dec('20000'), curves, { minEdgeBps: 9 })?.edgeBps, 9, 'a threshold below the exact edge: proposed');
  t.equal(optimalSplit(dec('20000'), curves, { minEdgeBps: 10 }), null, 'one above: not');
});

t.test('"with no single venue taking the whole amount, any split is proposed, with no edge"', async (t) => {
  const capped = ['a', 'b'].map((venueId) => new VenueCurve({ kind: 'constant-product', venueId, reserveIn: dec('10000000'), reserveOut: dec('1500000'), max: dec('600') }));
  const split = optimalSplit(dec('1000'), capped)!;
  t.equal(split.bestSingle, null);
  t.equal(split.edgeBps, null);
  t.strictSame(split.legs.map((l) => l.amount.toFixed()), ['500', '500']);
  t.equal(optimalSplit(dec('1300'), capped), null, 'nor any split past every cap');
});

t.test('"the threshold is the documented one": docs/split-routing.md states SPLIT_MIN_EDGE_BPS', async (t) => {
  const doc = readFileSync(path.join(repoRoot(), 'docs', 'split-routing.md'), 'utf8');
  t.match(doc, new RegExp(`\\*\\*The threshold\\.\\*\\* A split is proposed only when it beats the best single venue by more than ${SPLIT_MIN_EDGE_BPS} bps`));
});
