// When a failed delivery is tried again (core/webhooks/retry.ts): "exponential backoff ~5 s
// doubling, capped at 1 h between attempts, give up after 24 h", the waits stretched by at most a
// tenth, counted afresh after a replay.
import t from 'tap';
import { afterFailure } from '../../../core/webhooks/retry.js';
import type { Attempt, Delivery } from '../../../core/webhooks/store.js';

const POLICY = { firstRetryMs: 5_000, maxAttemptIntervalMs: 3_600_000, retryForMs: 86_400_000 };
const T0 = Date.UTC(2026, 10, 26);

const delivery = (attempts: readonly Attempt[], windowStartedAt = T0): Delivery => ({
  endpointId: 'we_AAAAAAAAAAAAAAAAAAAA',
  partnerId: 'key_0123456789ab',
  planId: 'pl_AAAAAAAAAAAAAAAAAAAAAA',
  seq: 1,
  type: 'plan.planned',
  body: '{}',
  createdAt: T0,
  windowStartedAt,
  state: 'pending',
  nextAttemptAt: null,
  attempts,
});
const failed = (at: number): Attempt => ({ at, status: 500, error: null, durationMs: 3 });

/** Every attempt of a delivery that always fails, as the policy schedules it with `random`. */
function schedule(random: () => number): number[] {
  const attempts: Attempt[] = [failed(T0)];
  for (;;) {
    const next = afterFailure(delivery(attempts.slice(0, -1)), attempts.at(-1)!, POLICY, random);
    if (next.state === 'failed') return attempts.map((a) => a.at - T0);
    attempts.push(failed(next.nextAttemptAt!));
  }
}

t.test('"~5 s doubling, capped at 1 h between attempts": 5 s, 10 s, 20 s ... then an hour apart', async (t) => {
  const waits = schedule(() => 0).map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!)).slice(1);
  t.strictSame(waits.slice(0, 11), [5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, 3_600_000]);
  t.ok(waits.slice(10).every((w) => w === 3_600_000), 'then every hour');
});

t.test('"give up after 24 h": no attempt later than 24 h after queueing; the last one failing ends the delivery failed', async (t) => {
  const ats = schedule(() => 0);
  t.ok(ats.at(-1)! <= POLICY.retryForMs, `the last attempt ${ats.at(-1)! / 3_600_000} h in`);
  t.ok(ats.at(-1)! > POLICY.retryForMs - 3_600_000, 'within the last hour of the day');
  t.equal(ats.length, 33, 'about 33 attempts in a day');
});

t.test('waits are stretched by up to a tenth, never past the cap', async (t) => {
  const longest = schedule(() => 0.999999);
  const waits = longest.map((at, i, all) => (i === 0 ? 0 : at - all[i - 1]!)).slice(1);
  t.equal(waits[0], 5_500);
  t.ok(waits.every((w) => w <= 3_600_000));
});

t.test('a replay counts its retries afresh: its first failure waits ~5 s again, and it has a day from the replay', async (t) => {
  const old = Array.from({ length: 20 }, (_, i) => failed(T0 + i * 1000));
  const replayedAt = T0 + 2 * 86_400_000;
  const next = afterFailure(delivery(old, replayedAt), failed(replayedAt), POLICY, () => 0);
  t.strictSame(next, { state: 'pending', nextAttemptAt: replayedAt + 5_000 });
});
