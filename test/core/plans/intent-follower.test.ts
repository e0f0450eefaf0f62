// The intent follower (core/plans/intent-follower.ts) over a venue of the test's own: it records
// each change of status, cancels an intent whose plan expired still awaiting its deposit, lets an
// intent go once terminal or once its token's lifetime ends, follows at most its bound, and drops
// every token on close. Its rounds are run by the test, on the test's clock.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { IntentFollower, type FollowedIntent } from '../../../core/plans/intent-follower.js';
import { WalletToken, type IntentStatus, type IntentVenue } from '../../../core/venues/venue.js';

const START = Date.parse('2026-11-22T12:00:00.000Z');

function setUp(max = 10) {
  let now = START;
  const states = new Map<string, IntentStatus['state']>();
  const cancelled: string[] = [];
  const venue = {
    id: 'oneswap',
    intentStatus: async ({ intentId }: { intentId: string }) => {
      if (!states.has(intentId)) throw new Error('the venue did not answer');
      return {
      intentId, state: states.get(intentId)!, venueStatus: states.get(intentId) === 'completed' ? 'completed' : states.get(intentId) === 'cancelled' ? 'cancelled' : 'pending',
      actualOutput: states.get(intentId) === 'completed' ? dec('14.9') : null, minOutput: null, expiresAt: new Date(START + 86_400_000),
      };
    },
    cancelIntent: async ({ intentId }: { intentId: string }) => {
      cancelled.push(intentId);
      states.set(intentId, 'cancelled');
      return true;
    },
  } as unknown as IntentVenue;
  const recorded: Array<[string, string]> = [];
  const warnings: string[] = [];
  const follower = new IntentFollower({
    intervalMs: 60_000, max, timeoutMs: 1000, now: () => new Date(now),
    record: async (key, status) => void recorded.push([key, status.venueStatus]),
    log: { info() {}, warn: (_f, message) => void warnings.push(message), error() {} },
  });
  t.teardown(() => follower.close());
  const intent = (id: string, planExpiry = START + 90_000, tokenExpiry = START + 900_000): FollowedIntent => {
    states.set(id, 'awaiting_deposit');
    return { key: `plan-${id}`, venue, ref: { intentId: id, walletToken: new WalletToken(`osw_${id}`) }, planExpiry, tokenExpiry };
  };
  return { follower, states, cancelled, recorded, warnings, intent, at: (ms: number) => void (now = START + ms) };
}

t.test('"each change recorded once; a terminal intent let go"', async (t) => {
  const { follower, states, recorded, intent } = setUp();
  t.ok(follower.follow(intent('a')));
  await follower.tick();
  await follower.tick();
  t.strictSame(recorded, [['plan-a', 'pending']], 'recorded once while it does not change');
  states.set('a', 'completed');
  await follower.tick();
  t.strictSame(recorded, [['plan-a', 'pending'], ['plan-a', 'completed']]);
  t.equal(follower.size, 0, 'let go once terminal');
});

t.test('"an expired plan\'s intent is cancelled": still awaiting its deposit two rounds after the plan\'s expiry (a deposit accepted just before it may not show at once), never before', async (t) => {
  const { follower, cancelled, recorded, intent, at } = setUp();
  follower.follow(intent('b'));
  at(89_999);
  await follower.tick();
  t.strictSame(cancelled, [], 'not before the plan expires');
  at(90_000 + 2 * 60_000 - 1);
  await follower.tick();
  t.strictSame(cancelled, [], 'nor within two rounds of it');
  at(90_000 + 2 * 60_000);
  await follower.tick();
  t.strictSame(cancelled, ['b']);
  t.strictSame(recorded.at(-1), ['plan-b', 'cancelled'], 'its cancellation recorded');
  t.equal(follower.size, 0);
});

t.test('"bounded": at INTENT_FOLLOW_MAX an intent is not followed, said in the log; one whose token ended is let go; close drops them all', async (t) => {
  const { follower, intent, warnings, at } = setUp(2);
  t.ok(follower.follow(intent('c', START + 90_000, START + 10_000)));
  t.ok(follower.follow(intent('d')));
  t.notOk(follower.follow(intent('e')), 'over the bound');
  t.match(warnings, [/INTENT_FOLLOW_MAX/]);
  at(10_000);
  await follower.tick();
  t.equal(follower.size, 1, "the intent whose token ended is let go");
  await follower.close();
  t.equal(follower.size, 0);
  t.notOk(follower.follow(intent('f')), 'nothing followed once closed');
});

t.test('"a round says its failures in one line": intents the venue does not answer are read again next round, never one line each', async (t) => {
  const { follower, intent, warnings, states } = setUp();
  follower.follow(intent('g'));
  follower.follow(intent('h'));
  states.delete('g');
  states.delete('h');
  await follower.tick();
  t.equal(warnings.length, 1, 'one line for the round');
  t.match(warnings[0], /read again next round/);
  t.equal(follower.size, 2, 'both still followed');
});

t.test('"room to follow": none once INTENT_FOLLOW_MAX intents are followed, or once closed', async (t) => {
  const { follower, intent } = setUp(1);
  t.ok(follower.hasRoom);
  follower.follow(intent('i'));
  t.notOk(follower.hasRoom, 'full');
  await follower.close();
  t.notOk(follower.hasRoom, 'closed');
});

t.test('"close cancels what no one else could": an intent whose plan has expired still awaiting its deposit is cancelled as its token is dropped; one whose plan has not expired is left', async (t) => {
  const { follower, intent, cancelled, at } = setUp();
  follower.follow(intent('j'));
  follower.follow(intent('k', START + 200_000));
  at(100_000);
  await follower.close();
  t.strictSame(cancelled, ['j']);
  t.equal(follower.size, 0);
});
