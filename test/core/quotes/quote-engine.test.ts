// quoteAcrossVenues (core/quotes/engine.ts) with fake venues, and SingleFlightCache
// (core/quotes/single-flight-cache.ts) with a fake clock. No assertion here depends on wall-clock time:
// a timeout test passes if the call settles at all and the venue's signal was aborted.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { quoteAcrossVenues as rankedQuote, type QuoteEngineOptions, type QuoteRequest } from '../../../core/quotes/engine.js';
import { SingleFlightCache } from '../../../core/quotes/single-flight-cache.js';
import { CBTC, CC, USDCX } from '../../../core/tokens.js';
import type { Metrics } from '../../../core/metrics.js';
import type { Deadline, Venue, VenueQuote, VenueQuoteRequest } from '../../../core/venues/venue.js';

const REQUEST: QuoteRequest = { give: CC, want: USDCX, amount: dec('100') };
const NOW = new Date('2025-06-01T12:00:00.000Z');

interface FakeVenue extends Venue {
  calls: number;
  signals: AbortSignal[];
  requests: VenueQuoteRequest[];
}

function fakeVenue(id: string, answer: (signal: AbortSignal) => Promise<VenueQuote>): FakeVenue {
  const v: FakeVenue = {
    id,
    settlementMode: 'managed-deposit',
    calls: 0,
    signals: [],
    requests: [],
    quote(request, deadline) {
      v.calls++;
      v.signals.push(deadline.signal);
      v.requests.push(request);
      return answer(deadline.signal);
    },
    probe: async () => ({ live: true, pairs: ['CC/USDCx'] }),
  };
  return v;
}

/** A venue that gets the deadline itself and decides when, if ever, to read its signal. */
function fakeVenueWithDeadline(id: string, answer: (deadline: Deadline) => Promise<VenueQuote>): Venue {
  return { id, settlementMode: 'managed-deposit', quote: (_request, deadline) => answer(deadline), probe: async () => ({ live: true, pairs: [] }) };
}

const answers = (gross: string): FakeVenue => fakeVenue(`gross-${gross}`, async () => ({ available: true, gross: dec(gross), fee: null }));
const never = (id: string): FakeVenue => fakeVenue(id, () => new Promise<VenueQuote>(() => {}));

/** How many timers are set from now until the test ends: setTimeout counted, still working. */
function countTimers(t: { teardown(fn: () => void): void }): () => number {
  const realSetTimeout = globalThis.setTimeout;
  let armed = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    armed++;
    return realSetTimeout(...args);
  }) as typeof setTimeout;
  t.teardown(() => {
    globalThis.setTimeout = realSetTimeout;
  });
  return () => armed;
}

function options(venues: Venue[], over: Partial<QuoteEngineOptions> = {}) {
  const errors: Array<[string, unknown]> = [];
  const downChecks: string[] = [];
  const opts: QuoteEngineOptions = {
    venues,
    venueTimeoutMs: 50,
    isVenueDown: (id) => {
      downChecks.push(id);
      return false;
    },
    onVenueError: (id, err) => errors.push([id, err]),
    now: () => NOW,
    ...over,
  };
  return { opts, errors, downChecks };
}

/** The engine's v1 body, which most tests here read. */
const quoteAcrossVenues = async (request: QuoteRequest, opts: QuoteEngineOptions) => (await rankedQuote(request, opts)).response;

const byId = <T extends { venueId: string }>(venues: readonly T[], id: string): T => {
  const v = venues.find((x) => x.venueId === id);
  if (!v) throw new Error(`no venue ${id} in response`);
  return v;
};

// ---------------------------------------------------------------------------------------------
t.test('quoteAcrossVenues: "a venue that does not answer in time is reported as `timeout` and never holds the response"', async (t) => {
  const stuck = never('stuck');
  const fast = fakeVenue('fast', async () => ({ available: true, gross: dec('15'), fee: null }));
  const { opts, errors } = options([stuck, fast], { venueTimeoutMs: 50 });
  // If the never-settling promise held the response, this await would never return and tap's
  // per-file timeout would fail the file; it returning at all is the assertion.
  const res = await quoteAcrossVenues(REQUEST, opts);
  t.equal(byId(res.venues, 'stuck').rejectionCode, 'timeout');
  t.equal(byId(res.venues, 'stuck').available, false);
  t.equal(byId(res.venues, 'fast').available, true, 'the venue that answered is still quoted');
  t.strictSame(res.best, { venueId: 'fast', gross: '15', net: '15' });
  t.equal(res.edgeBps, null, 'one available venue: no edge');
  t.equal(stuck.calls, 1, 'the slow venue was asked');
  t.equal(stuck.signals[0]!.aborted, true, 'and the signal it was given was aborted at the deadline');
  t.strictSame(errors, [], 'a timeout is not a venue error');
});

t.test('quoteAcrossVenues: every venue shares the one deadline signal, and it is not aborted when all answer in time', async (t) => {
  const a = answers('10.3');
  const b = answers('11');
  const { opts } = options([a, b], { venueTimeoutMs: 20 });
  const res = await quoteAcrossVenues(REQUEST, opts);
  t.equal(a.signals[0], b.signals[0], 'one shared signal');
  t.equal(a.signals[0]!.aborted, false, 'not aborted when every venue answered');
  // Wait past the deadline: the timer must have been cleared, so the signal stays un-aborted.
  await new Promise((r) => setTimeout(r, 60));
  t.equal(a.signals[0]!.aborted, false, 'the deadline timer was cleared once the quote was done');
  t.strictSame(res.venues.map((v) => v.venueId), ['gross-11', 'gross-10.3']);
  t.equal(res.edgeBps, 679, 'floor(10000 × 0.7 / 10.3) = floor(679.61…) = 679');
  t.strictSame(a.requests[0], REQUEST, 'the venue gets the request as is');
});

t.test('quoteAcrossVenues: "one deadline per quote": every venue gets the same deadline, which says when it ends, VENUE_TIMEOUT_MS from the quote\'s start', async (t) => {
  const seen: Deadline[] = [];
  const venue = (id: string) => fakeVenueWithDeadline(id, async (deadline) => {
    seen.push(deadline);
    return { available: true, gross: dec('1'), fee: null };
  });
  const before = Date.now();
  await quoteAcrossVenues(REQUEST, options([venue('a'), venue('b')], { venueTimeoutMs: 5_000 }).opts);
  const after = Date.now();
  t.equal(seen[0], seen[1], 'one deadline object for the quote');
  t.ok(seen[0]!.endsAt >= before + 5_000 && seen[0]!.endsAt <= after + 5_000, `endsAt is the quote's start + VENUE_TIMEOUT_MS (${seen[0]!.endsAt - before} ms after the call)`);
});

t.test('quoteAcrossVenues: a venue that first reads the deadline signal after the deadline finds it aborted', async (t) => {
  let late: Deadline | undefined;
  const lazy = fakeVenueWithDeadline('lazy', (deadline) => {
    late = deadline;
    return new Promise<VenueQuote>(() => {});
  });
  const { opts } = options([lazy], { venueTimeoutMs: 20 });
  const res = await quoteAcrossVenues(REQUEST, opts);
  t.equal(res.venues[0]!.rejectionCode, 'timeout');
  t.equal(late!.signal.aborted, true, 'the signal, made on first read after the deadline, is already aborted');
});

t.test('quoteAcrossVenues: no deadline timer is set when every venue answers at once, and one is when a venue is still out', async (t) => {
  const armed = countTimers(t);
  await quoteAcrossVenues(REQUEST, options([answers('1'), answers('2')]).opts);
  t.equal(armed(), 0, 'in-process answers: no timer');
  await quoteAcrossVenues(REQUEST, options([answers('1'), never('stuck')], { venueTimeoutMs: 10 }).opts);
  t.equal(armed(), 1, 'a venue still out: the deadline timer');
});

/** A venue that honours the Venue contract: "must settle or give up promptly once `signal` aborts". */
const polite = (): FakeVenue =>
  fakeVenue(
    'polite',
    (signal) =>
      new Promise<VenueQuote>((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      }),
  );

t.test('quoteAcrossVenues: "a venue that does not answer in time is reported as `timeout`" — also when it gives up on the abort signal', async (t) => {
  const { opts } = options([polite(), answers('1')], { venueTimeoutMs: 30 });
  const res = await quoteAcrossVenues(REQUEST, opts);
  t.equal(byId(res.venues, 'polite').rejectionCode, 'timeout');
  t.equal(res.best?.venueId, 'gross-1');
});

t.test('quoteAcrossVenues: a venue giving up on abort after the deadline is a timeout, not a venue error for onVenueError', async (t) => {
  const { opts, errors } = options([polite(), answers('1')], { venueTimeoutMs: 30 });
  await quoteAcrossVenues(REQUEST, opts);
  t.strictSame(errors.map(([id]) => id), [], 'onVenueError is not called');
});

t.test('quoteAcrossVenues: "a throwing venue → venue_error, and onVenueError is called with the venue id and the error"', async (t) => {
  const boom = new Error('boom');
  const throwing = fakeVenue('throwing', async () => {
    throw boom;
  });
  const { opts, errors } = options([throwing, answers('2')]);
  const res = await quoteAcrossVenues(REQUEST, opts);
  const entry = byId(res.venues, 'throwing');
  t.equal(entry.available, false);
  t.equal(entry.rejectionCode, 'venue_error');
  t.strictSame([entry.gross, entry.net, entry.fee, entry.feeBps], [null, null, null, null]);
  t.equal(errors.length, 1);
  t.equal(errors[0]![0], 'throwing');
  t.equal(errors[0]![1], boom);
  t.equal(res.best?.venueId, 'gross-2', 'the other venue still wins');
});

t.test('quoteAcrossVenues: "a venue that throws synchronously from quote() → venue_error", not a failed quote', async (t) => {
  const syncThrower: Venue = {
    id: 'sync',
    settlementMode: 'managed-deposit',
    quote: () => {
      throw new Error('sync boom');
    },
    probe: async () => ({ live: true, pairs: [] }),
  };
  const { opts, errors } = options([syncThrower, answers('3')]);
  let res: Awaited<ReturnType<typeof quoteAcrossVenues>> | undefined;
  let thrown: unknown;
  try {
    res = await quoteAcrossVenues(REQUEST, opts);
  } catch (err) {
    thrown = err;
  }
  t.equal(thrown, undefined, 'the quote does not reject');
  t.equal(res && byId(res.venues, 'sync').rejectionCode, 'venue_error', 'the venue is venue_error');
  t.equal(errors.length, 1, 'onVenueError is called');
});

t.test('quoteAcrossVenues: "a venue whose probe reads it dead is not asked" → venue_down, quote() never called', async (t) => {
  const down = answers('100');
  const up = answers('5');
  const { opts, errors } = options([down, up], { isVenueDown: (id) => id === down.id });
  const res = await quoteAcrossVenues(REQUEST, opts);
  t.equal(down.calls, 0, 'quote() was never called on the down venue');
  t.equal(byId(res.venues, down.id).rejectionCode, 'venue_down');
  t.equal(byId(res.venues, down.id).available, false);
  t.equal(up.calls, 1);
  t.equal(res.best?.venueId, up.id, 'the down venue cannot be best even though it would have quoted higher');
  t.strictSame(errors, []);
});

t.test('quoteAcrossVenues: "all venues failing → best null, edgeBps null, exactly one entry per venue"', async (t) => {
  const venues = [
    never('d-timeout'),
    fakeVenue('c-error', async () => {
      throw new Error('x');
    }),
    answers('1'),
    fakeVenue('a-nopool', async () => ({ available: false, rejectionCode: 'no_pool' })),
  ];
  const downId = venues[2]!.id;
  const { opts } = options(venues, { isVenueDown: (id) => id === downId, venueTimeoutMs: 20 });
  const res = await quoteAcrossVenues(REQUEST, opts);
  t.equal(res.best, null);
  t.equal(res.edgeBps, null);
  t.equal(res.venues.length, venues.length, 'one entry per venue');
  t.strictSame(
    res.venues.map((v) => [v.venueId, v.available, v.rejectionCode]),
    [
      ['a-nopool', false, 'no_pool'],
      ['c-error', false, 'venue_error'],
      ['d-timeout', false, 'timeout'],
      ['gross-1', false, 'venue_down'],
    ],
    'unavailable venues by venueId, each with its reason',
  );
  t.strictSame(res.pair, { give: 'Amulet', want: 'USDCx' });
  t.equal(res.amount, '100');
  t.equal(res.asOf, NOW.toISOString(), 'asOf comes from the injected clock');
});

t.test('quoteAcrossVenues: no venues at all → an empty list, best null, edgeBps null', async (t) => {
  const res = await quoteAcrossVenues(REQUEST, options([]).opts);
  t.strictSame(res.venues, []);
  t.equal(res.best, null);
  t.equal(res.edgeBps, null);
});

t.test('quoteAcrossVenues: a venue fee in neither give nor want asset → venue_error for that venue only', async (t) => {
  const odd = fakeVenue('odd', async () => ({ available: true, gross: dec('20'), fee: { amount: dec('1'), asset: CBTC, appliedTo: 'on_top' } }));
  const res = await quoteAcrossVenues(REQUEST, options([odd, answers('7')]).opts);
  t.equal(byId(res.venues, 'odd').rejectionCode, 'venue_error');
  t.equal(res.best?.venueId, 'gross-7');
});

// ---------------------------------------------------------------------------------------------
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

t.test('SingleFlightCache: "concurrent misses for the same key share one computation"', async (t) => {
  const cache = new SingleFlightCache<string>(1000, 10, () => 0);
  let computed = 0;
  const d = deferred<string>();
  const compute = () => {
    computed++;
    return d.promise;
  };
  const first = cache.get('k', compute);
  const second = cache.get('k', compute);
  const third = cache.get('k', compute);
  t.equal(computed, 1, 'computed once');
  t.equal(first.hit, false, 'the first call started the computation');
  t.equal(second.hit, true);
  t.equal(third.hit, true);
  t.equal(second.value, first.value, 'they share the same promise');
  d.resolve('v');
  t.strictSame(await Promise.all([first.value, second.value, third.value]), ['v', 'v', 'v']);
  const other = cache.get('other', async () => 'o');
  t.equal(other.hit, false, 'a different key computes on its own');
  t.equal(await other.value, 'o');
});

t.test('SingleFlightCache: "a TTL cache" — a hit before expiresAt, a recompute from expiresAt on (fake clock)', async (t) => {
  let now = 1_000;
  const cache = new SingleFlightCache<number>(100, 10, () => now);
  let computed = 0;
  const compute = async () => ++computed;
  t.equal(await cache.get('k', compute).value, 1);
  now = 1_099;
  const stillFresh = cache.get('k', compute);
  t.equal(stillFresh.hit, true, 'hit at t + ttl − 1');
  t.equal(await stillFresh.value, 1);
  now = 1_100;
  const expired = cache.get('k', compute);
  t.equal(expired.hit, false, 'miss at t + ttl');
  t.equal(await expired.value, 2, 'recomputed');
  t.equal(computed, 2);
  now = 1_150;
  t.equal(cache.get('k', compute).hit, true, 'the new entry lives from its own start');
  t.equal(cache.size, 1);
});

t.test('SingleFlightCache.peek: the value at once, only when computed and unexpired (fake clock)', async (t) => {
  let now = 0;
  const cache = new SingleFlightCache<string>(100, 10, () => now);
  const d = deferred<string>();
  t.equal(cache.peek('k'), undefined, 'nothing cached');
  const first = cache.get('k', () => d.promise);
  t.equal(cache.peek('k'), undefined, 'still in flight');
  d.resolve('v');
  await first.value;
  t.strictSame(cache.peek('k'), { value: 'v' }, 'computed');
  now = 100;
  t.equal(cache.peek('k'), undefined, 'expired');
});

t.test('SingleFlightCache: "a failed computation is not cached"', async (t) => {
  const cache = new SingleFlightCache<string>(10_000, 10, () => 0);
  let computed = 0;
  const d = deferred<string>();
  const failing = cache.get('k', () => {
    computed++;
    return d.promise;
  });
  const joined = cache.get('k', async () => 'unused');
  t.equal(joined.hit, true, 'a concurrent call joins the in-flight computation');
  d.reject(new Error('venue fire'));
  await t.rejects(failing.value, { message: 'venue fire' });
  await t.rejects(joined.value, { message: 'venue fire' });
  t.equal(cache.size, 0, 'the failed entry was dropped');
  t.equal(cache.peek('k'), undefined, 'and peek finds nothing');
  const retry = cache.get('k', async () => {
    computed++;
    return 'ok';
  });
  t.equal(retry.hit, false, 'the next call computes again');
  t.equal(await retry.value, 'ok');
  t.equal(computed, 2);
  t.equal(cache.get('k', async () => 'again').hit, true, 'and the success is cached');
});

t.test('SingleFlightCache: "a computation that throws synchronously caches nothing"', async (t) => {
  const cache = new SingleFlightCache<string>(10_000, 10, () => 0);
  t.throws(() =>
    cache.get('k', () => {
      throw new Error('sync');
    }),
  );
  t.equal(cache.size, 0);
  t.equal(cache.get('k', async () => 'v').hit, false);
});

t.test('SingleFlightCache: "over maxEntries, the oldest entries are dropped"', async (t) => {
  const cache = new SingleFlightCache<string>(10_000, 3, () => 0);
  for (const k of ['a', 'b', 'c']) cache.get(k, async () => k);
  t.equal(cache.size, 3);
  cache.get('a', async () => 'a2'); // a hit does not refresh its age
  cache.get('d', async () => 'd');
  t.equal(cache.size, 3, 'never more than maxEntries');
  let recomputed = '';
  const a = cache.get('a', async () => (recomputed = 'a'));
  t.equal(a.hit, false, 'a, the oldest, was evicted');
  await a.value;
  t.equal(recomputed, 'a');
  // Inserting a again evicted b, now the oldest.
  t.equal(cache.get('c', async () => 'x').hit, true, 'c survives');
  t.equal(cache.get('d', async () => 'x').hit, true, 'd survives');
  t.equal(cache.get('b', async () => 'x').hit, false, 'b was the next oldest and was evicted');
});

t.test('SingleFlightCache: "drop expired ones" — an insert sweeps expired entries from the front even under the cap', async (t) => {
  let now = 0;
  const cache = new SingleFlightCache<string>(100, 10, () => now);
  cache.get('old', async () => 'old');
  now = 50;
  cache.get('mid', async () => 'mid');
  now = 120; // old expired at 100; mid lives until 150
  cache.get('new', async () => 'new');
  t.equal(cache.size, 2, 'old was swept, mid and new remain');
  t.equal(cache.get('mid', async () => 'x').hit, true, 'the live entry is kept');
  t.equal(cache.get('new', async () => 'x').hit, true);
});


t.test('SingleFlightCache: a key recomputed after it expired keeps its new entry; the old one\'s eviction record does not remove it', async (t) => {
  let now = 0;
  const cache = new SingleFlightCache<string>(100, 2, () => now);
  cache.get('k', async () => 'first');
  now = 150; // k expired at 100
  t.equal(cache.get('k', async () => 'second').hit, false, 'recomputed');
  cache.get('other', async () => 'other');
  t.equal(cache.size, 2);
  const again = cache.get('k', async () => 'third');
  t.equal(again.hit, true, 'the recomputed k is still cached');
  t.equal(await again.value, 'second');
});

t.test('SingleFlightCache: many more misses than maxEntries keep exactly maxEntries, the newest', async (t) => {
  const cache = new SingleFlightCache<number>(1_000_000, 100, () => 0);
  for (let i = 0; i < 5000; i++) cache.get(String(i), async () => i);
  t.equal(cache.size, 100);
  t.equal(cache.get('4999', async () => -1).hit, true, 'the newest is kept');
  t.equal(cache.get('4900', async () => -1).hit, true, 'the 100th newest is kept');
  t.equal(cache.get('4899', async () => -1).hit, false, 'older ones are gone');
});

// ---------------------------------------------------------------------------------------------
// Rules that `make mutation` found no test for (mutation/equivalent-mutants.md lists the rest).

t.test('quoteAcrossVenues: "a venue that does not answer in time is reported as `timeout`" — even one that answers the moment the deadline aborts it', async (t) => {
  const last = fakeVenue(
    'last-moment',
    (signal) => new Promise<VenueQuote>((resolve) => signal.addEventListener('abort', () => resolve({ available: true, gross: dec('99'), fee: null }))),
  );
  const res = await quoteAcrossVenues(REQUEST, options([last, answers('1')], { venueTimeoutMs: 20 }).opts);
  t.equal(byId(res.venues, 'last-moment').rejectionCode, 'timeout', 'its answer came after the deadline');
  t.equal(res.best?.venueId, 'gross-1');
});

t.test('quoteAcrossVenues: no venues at all is answered at once, with no deadline timer armed', async (t) => {
  const armed = countTimers(t);
  const res = await quoteAcrossVenues(REQUEST, options([], { venueTimeoutMs: 60_000 }).opts);
  t.strictSame(res.venues, []);
  t.equal(armed(), 0, 'nothing to wait for');
});

t.test('quoteAcrossVenues: "per-venue quote latency and results by rejectionCode": each venue of a computed quote is reported once, with its result as the response lists it and its time to answer', async (t) => {
  const reported: Array<{ venue: string; result: string; seconds: number | null }> = [];
  const metrics = { venueQuote: (venue: string, result: string, seconds: number | null) => void reported.push({ venue, result, seconds }) } as unknown as Metrics;
  const { opts } = options([answers('2'), never('stuck'), answers('1'), fakeVenue('dormant', async () => ({ available: true, gross: dec('9'), fee: null }))], {
    venueTimeoutMs: 20,
    isVenueDown: (id) => id === 'dormant',
    metrics,
  });
  const before = performance.now();
  const res = await quoteAcrossVenues(REQUEST, opts);
  const outside = (performance.now() - before) / 1000;
  t.strictSame(
    reported.map(({ venue, result }) => [venue, result]),
    [['gross-2', 'available'], ['stuck', 'timeout'], ['gross-1', 'available'], ['dormant', 'venue_down']],
    'every venue, in venue order, with the result its entry in the response has',
  );
  t.strictSame(res.venues.map((v) => [v.venueId, v.rejectionCode ?? 'available']).sort(), reported.map(({ venue, result }) => [venue, result]).sort());
  // Measured inside the call, so never more than the call took as seen from outside it: in seconds.
  for (const { venue, seconds } of reported.slice(0, 3)) t.ok(seconds !== null && seconds >= 0 && seconds <= outside, `${venue}: a time to answer in seconds, within the call's own ${outside} s`);
  t.equal(reported[3]!.seconds, null, 'a venue not asked (down) has no time to answer');
  const waited = reported[1]!.seconds!;
  t.ok(waited >= reported[0]!.seconds! && waited >= reported[2]!.seconds!, 'the timed-out venue waited at least as long as those that answered');
});

t.test('quoteAcrossVenues: "the price impact travels beside v1\'s body, never in it": each venue\'s, rounded up to 10 digits, null when unknown or unavailable', async (t) => {
  const impact = (id: string, priceImpact: string | null | undefined) =>
    fakeVenue(id, async () => ({ available: true, gross: dec('15'), fee: null, ...(priceImpact === undefined ? {} : { priceImpact: priceImpact === null ? null : dec(priceImpact) }) }));
  const rejected = fakeVenue('rejected', async () => ({ available: false, rejectionCode: 'no_pool' }));
  const { response, impacts } = await rankedQuote(REQUEST, options([impact('exact', '0.0012'), impact('finer', '0.00000000001'), impact('unknown', null), impact('unstated', undefined), rejected]).opts);
  t.strictSame(impacts, { exact: '0.0012', finer: '0.0000000001', unknown: null, unstated: null, rejected: null });
  for (const venue of response.venues) t.notOk('priceImpact' in venue, `${venue.venueId}: v1's entry has no priceImpact`);
  t.notMatch(JSON.stringify(response), /priceImpact/);
});
