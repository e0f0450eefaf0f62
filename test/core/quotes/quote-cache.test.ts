// The quote cache shared between instances (core/quotes/service.ts), at the level of the quote
// service: instances as QuoteServices over one shared state, venues that count what they are asked.
// What it promises: "instances serve the same bytes for a combination within its window"; the
// request that finds no instance holding a quote claims it in its one round trip and answers without
// waiting for its body's write; whoever reads a claim waits for the claimer's body instead of
// computing one of its own; a claim whose claimer stopped lapses and is claimed again.
import t from 'tap';
import { parseQuoteParams } from '../../../core/quotes/params.js';
import { QuoteService, type QuoteCounts } from '../../../core/quotes/service.js';
import { RateWindows, type PendingCount } from '../../../core/state/rate-windows.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState, type WindowCount } from '../../../core/state/shared-state.js';
import type { Venue } from '../../../core/venues/venue.js';

const MINUTE = 60_000;
/** The venues' deadline: a claim lasts it and a margin of a second. */
const DEADLINE_MS = 300;

/** A venue that counts the quotes it is asked for, and cannot quote (a body needs no price here). */
function countingVenue(): { venue: Venue; asked: () => number } {
  let asked = 0;
  const venue: Venue = {
    id: 'counting',
    settlementMode: 'managed-deposit',
    quote: async () => {
      asked += 1;
      return { available: false, rejectionCode: 'no_pool' };
    },
    probe: async () => ({ live: true, pairs: [] }),
  };
  return { venue, asked: () => asked };
}

/**
 * One in-process state standing for the store the instances share (shared: true, so each
 * QuoteService uses it as the shared level), with each instance's writes of a body into it
 * (replaceIf) held until the test lets them go.
 */
function sharedStore(): { state: InProcessSharedState; instance(): { view: SharedState; letGo(): void; held: () => number; cutOff(): void } } {
  const state = new InProcessSharedState();
  return {
    state,
    instance: () => {
      const held: Array<() => void> = [];
      let holding = true;
      let reachable = true;
      // Over an object of its own: a proxy of the in-process state would pass for it (instanceof), and its windows for this process's own.
      const view = new Proxy({} as InProcessSharedState, {
        get(_, property) {
          if (property === 'shared') return true;
          if (!reachable && property !== 'close') return () => Promise.reject(new SharedStateUnavailable('Redis at db:6379 is unreachable'));
          if (property === 'replaceIf') {
            return (...args: Parameters<SharedState['replaceIf']>) =>
              holding ? new Promise<boolean>((resolve) => held.push(() => void state.replaceIf(...args).then(resolve))) : state.replaceIf(...args);
          }
          const value: unknown = Reflect.get(state, property);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(state) : value;
        },
      }) as unknown as SharedState;
      return {
        view,
        held: () => held.length,
        cutOff: () => void (reachable = false),
        letGo: () => {
          holding = false;
          for (const write of held.splice(0)) write();
        },
      };
    },
  };
}

/** An instance: its quote service over the shared store, its venue and its clock (`offsetMs` ahead of this process's, or `now`). */
function instance(store: ReturnType<typeof sharedStore>, offsetMs: number, now: () => Date = () => new Date(Date.now() + offsetMs)) {
  const { venue, asked } = countingVenue();
  const shared = store.instance();
  const quotes = new QuoteService({
    venues: [venue],
    venueTimeoutMs: DEADLINE_MS,
    cacheTtlMs: 10_000,
    cacheMaxEntries: 100,
    sharedCache: shared.view,
    windows: new RateWindows(shared.view),
    isVenueDown: () => false,
    onVenueError: () => {},
    now,
  });
  return { quotes, asked, ...shared };
}

/** A request's counts, each judged as the rate limits judge it: over its max is a refusal. */
function counts(caller: string): QuoteCounts {
  const pending = (key: string): PendingCount & { counted: boolean } => {
    const count: PendingCount & { counted: boolean } = {
      hit: { key, windowMs: MINUTE, max: 1000 },
      // Held to one round trip each: a lease would count later requests without one.
      leasable: false,
      counted: false,
      judge: (c: WindowCount) => {
        count.counted = true;
        if (c.count > 1000) throw new Error(`${key} over its limit`);
      },
    };
    return count;
  };
  return { window: pending(`rate:ip:${caller}`), fresh: pending(`rate:fresh:${caller}`) };
}

const request = (amount: string) => parseQuoteParams({ from: 'CC', to: 'USDCx', amount });

t.test('a fresh quote answers after its one round trip: its body replaces the claim after the answer, not before it', async (t) => {
  const store = sharedStore();
  const a = instance(store, 0);
  const quote = await a.quotes.counted(request('7'), counts('a'));
  t.equal(quote.cached, false, 'computed for this request');
  t.equal(a.held(), 1, "answered while its body's write is still held");
  t.match((await store.state.get('quote-record:CC|USDCx|7'))?.value, /^claim:/, 'the shared cache holds the claim meanwhile');
  a.letGo();
  await a.quotes.settled();
  t.equal((await store.state.get('quote-record:CC|USDCx|7'))?.value, `${quote.impacts}\n${quote.json}`, 'then the body answered, its price impacts before it');
  t.equal(await store.state.get('quote:CC|USDCx|7'), null, "nothing under earlier builds' key, whose value they would serve as a body");
});

t.test('"instances serve the same bytes": a quote another instance claimed is waited for and its body served, no venue asked, its fresh budget unspent', async (t) => {
  const store = sharedStore();
  const a = instance(store, 0);
  const b = instance(store, 1000);
  const fromA = await a.quotes.counted(request('8'), counts('a'));
  const bCounts = counts('b');
  const waiting = b.quotes.counted(request('8'), bCounts);
  await new Promise((resolve) => setTimeout(resolve, 30));
  t.equal(b.asked(), 0, 'B reads the claim and waits: it asks no venue');
  a.letGo();
  const fromB = await waiting;
  t.equal(fromB.json, fromA.json, "B serves A's bytes (its own clock would have made another asOf)");
  t.equal(fromB.impacts, fromA.impacts, "and A's price impacts with them");
  t.equal(fromB.cached, true, 'a hit for B');
  t.equal(b.asked(), 0, 'still no venue asked by B');
  t.equal(a.asked(), 1, 'A asked its venue once');
  t.equal((bCounts.fresh as { counted: boolean }).counted, false, "B's fresh-quote budget is not spent on A's quote");
  t.equal((await store.state.peek('rate:fresh:b')), null, 'nothing counted in it');
});

t.test('a claim whose claimer stopped (no body ever written) lapses after the deadline and a second; the next reader then claims and computes it', async (t) => {
  const store = sharedStore();
  const a = instance(store, 0);
  const b = instance(store, 1000);
  b.letGo();
  await a.quotes.counted(request('9'), counts('a'));
  // A never writes its body: it stopped after its answer.
  const started = Date.now();
  const fromB = await b.quotes.counted(request('9'), counts('b'));
  const waited = Date.now() - started;
  t.ok(waited >= DEADLINE_MS + 1000 - 50, `B waited out the claim (${waited} ms)`);
  t.equal(fromB.cached, false, 'then computed it itself');
  t.equal(b.asked(), 1, 'asking its venue');
  t.equal((await store.state.peek('rate:fresh:b'))?.count, 1, "B's fresh-quote budget spent on it");
  await b.quotes.settled();
  t.equal((await store.state.get('quote-record:CC|USDCx|9'))?.value, `${fromB.impacts}\n${fromB.json}`, "B's quote in the shared cache");
});

t.test('a quote that fails drops its claim at once: the next reader computes it without waiting', async (t) => {
  const store = sharedStore();
  let fail = true;
  const a = instance(store, 0, () => {
    if (fail) throw new Error('the clock failed');
    return new Date();
  });
  a.letGo();
  await t.rejects(a.quotes.counted(request('10'), counts('a')), /the clock failed/, 'the quote fails');
  fail = false;
  await a.quotes.settled();
  t.equal(await store.state.get('quote-record:CC|USDCx|10'), null, 'its claim is dropped');
  const b = instance(store, 0);
  b.letGo();
  const started = Date.now();
  const fromB = await b.quotes.counted(request('10'), counts('b'));
  t.equal(fromB.cached, false, 'B computes it');
  t.ok(Date.now() - started < DEADLINE_MS, 'without waiting for a claim');
});

t.test('requests of one instance for a quote it is computing join that computation: one venue request, one claim, no poll', async (t) => {
  const store = sharedStore();
  const a = instance(store, 0);
  a.letGo();
  const [first, second] = await Promise.all([a.quotes.counted(request('11'), counts('a')), a.quotes.counted(request('11'), counts('a'))]);
  t.equal(second.json, first.json, 'the same bytes');
  t.equal(a.asked(), 1, 'one venue request');
  t.equal((await store.state.peek('rate:fresh:a'))?.count, 1, 'one fresh quote spent');
});

t.test('a waiter whose store stops answering is answered all the same: the quote computed here, its fresh quote counted in this process', async (t) => {
  const store = sharedStore();
  const a = instance(store, 0);
  const b = instance(store, 1000);
  await a.quotes.counted(request('12'), counts('a'));
  const waiting = b.quotes.counted(request('12'), counts('b'));
  await new Promise((resolve) => setTimeout(resolve, 2));
  b.cutOff();
  const fromB = await waiting;
  t.equal(fromB.cached, false, "B computed it, not waiting out A's claim");
  t.equal(b.asked(), 1, 'asking its venue');
});
