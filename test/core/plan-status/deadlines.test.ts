// The follower's deadlines: answered in time order once due, each with the deadline it was pushed with.
import t from 'tap';
import { Deadlines } from '../../../core/plan-status/deadlines.js';

t.test('"entries come out once due, earliest first, however they went in"', async (t) => {
  const deadlines = new Deadlines();
  const ats = Array.from({ length: 200 }, (_, i) => (i * 7919) % 1000);
  ats.forEach((at, i) => deadlines.push(`k${i}`, at));
  t.strictSame(deadlines.due(-1), [], 'nothing before the first');
  const first = deadlines.due(499);
  t.ok(first.every((e) => e.at <= 499) && first.length === ats.filter((at) => at <= 499).length, 'every entry due, and only those');
  t.strictSame(first.map((e) => e.at), [...first.map((e) => e.at)].sort((a, b) => a - b), 'in time order');
  const rest = deadlines.due(Number.POSITIVE_INFINITY);
  t.equal(first.length + rest.length, 200);
  t.strictSame(deadlines.due(Number.POSITIVE_INFINITY), [], 'nothing left');
});

t.test('"a key pushed again keeps both entries: the caller tells the current one by its deadline"', async (t) => {
  const deadlines = new Deadlines();
  deadlines.push('plan', 10);
  deadlines.push('plan', 50);
  t.strictSame(deadlines.due(20), [{ at: 10, key: 'plan' }]);
  t.strictSame(deadlines.due(60), [{ at: 50, key: 'plan' }]);
});
