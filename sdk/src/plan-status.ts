// `watch`: a version 2 plan's status followed as the service's server-sent events (GET
// /api/v2/plan/events), read with fetch and event-stream.ts rather than an EventSource, so a keyed
// plan's stream carries its key (`x-api-key`) and the same code runs in Node and in browsers. Each
// PlanStatusEvent is handed on once, in `seq` order: a dropped connection is opened again after the
// server's `retry` delay (doubling while it keeps failing, a bounded number of times in a row)
// from the last seq received, so none is missed or repeated; an event of another plan, or one
// that is not an event at all, ends the watch. It ends after the plan's terminal event, when its
// signal aborts (with what it had), or at an answer outside 2xx that waiting cannot mend (4xx, 501),
// thrown as the BestexError of the spec's `{error, code}`. A keyless plan's status is read with its
// `statusToken`, taken from the plan when the plan itself is given. The last seq travels as the
// `lastEventId` query parameter, which the spec takes for `Last-Event-ID`: a browser may send no
// such header across origins without a preflight the service's CORS answer does not allow.
import type * as V2 from './contract/v2.js';
import { answerError, BestexError, versionError } from './errors.js';
import { EventStreamParser } from './event-stream.js';
import { sleep, type AbortSignalLike, type Fetch } from './platform.js';

/** The API version the stream speaks. */
const API_VERSION = '2';
/** The reconnection delay until the stream says its own (`retry`): the spec's `retry: 2000`. */
const DEFAULT_RETRY_MS = 2000;
/** The longest wait before a reconnection, however many failed before it. */
const MAX_RETRY_DELAY_MS = 30_000;
/** Connections failed in a row before the watch gives up, by default. */
const DEFAULT_MAX_RETRIES = 5;
/** A stream silent this long is taken for dropped: the service sends a heartbeat every 15 s. */
const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/** A plan as `watch` and `getPlanStatus` take it: any v2 plan the service answered is one. */
export interface PlanRef {
  readonly planId: string;
  /** A keyless plan's capability to read its status. */
  readonly statusToken?: string | undefined;
}

export interface PlanStatusOptions {
  /** A keyless plan's `statusToken`; by default the plan's own, when the plan is given. A keyed plan is read with the client's key. */
  readonly token?: string | undefined;
}

export interface WatchOptions extends PlanStatusOptions {
  /** The seq of the last event already held: the watch starts after it. Without it the stream starts with the plan's latest state. */
  readonly lastEventId?: number | undefined;
  /** Ends the watch: `done` then resolves with the last event received. */
  readonly signal?: AbortSignalLike | undefined;
  /** Called with each event, in order, once. A hook that throws, or rejects, never breaks the watch. */
  readonly onStatus?: ((event: V2.PlanStatusEvent) => void) | undefined;
  /** How many times in a row a dropped or failed connection is opened again before the watch gives up: 5 by default. */
  readonly maxRetries?: number | undefined;
  /** How long a silent stream is waited on before it is taken for dropped: 45 s by default (the service sends a heartbeat every 15 s). */
  readonly idleTimeoutMs?: number | undefined;
}

/**
 * A plan's status events as they come: iterate it (`for await`), each iteration from the first
 * event the watch received; leaving an iteration early (`break`) ends the watch.
 */
export interface PlanWatch extends AsyncIterable<V2.PlanStatusEvent> {
  /**
   * Settles when the watch ends: with the last event received (the terminal one, or the last
   * before the signal aborted; null when none came), or rejected with a BestexError.
   */
  readonly done: Promise<V2.PlanStatusEvent | null>;
}

/** Where and how the service is asked: the client's own options. */
export interface StatusConnection {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly fetch: Fetch | undefined;
}

/** The planId and the token a plan's status is read with: an explicit token wins over the plan's. */
export function statusTarget(plan: string | PlanRef, options: PlanStatusOptions | undefined): { planId: string; token: string | undefined } {
  if (typeof plan === 'string') return { planId: plan, token: options?.token };
  if (typeof plan?.planId !== 'string') throw new TypeError('a plan status is read by its planId: pass the planId, or the plan the service answered');
  return { planId: plan.planId, token: options?.token ?? plan.statusToken };
}

/** How a connection ended. */
type Ending =
  /** The plan's terminal event came, or the watch was stopped: nothing more to read. */
  | { readonly over: true }
  /** Dropped, or refused for now: open again, after at least `waitMs`. */
  | { readonly over: false; readonly error: BestexError; readonly waitMs: number };

/** An answer that waiting may mend: the service not reachable, restarting or at capacity (501 is no such: the build does not serve it). */
const transient = (status: number) => status >= 500 && status !== 501;

/** What the contract says an event's data is, as far as the watch relies on it. */
function eventProblem(value: unknown, planId: string): string | null {
  if (typeof value !== 'object' || value === null) return 'its data is not a PlanStatusEvent';
  const event = value as Partial<Record<keyof V2.PlanStatusEvent, unknown>>;
  if (event.planId !== planId) return `it is of another plan (${String(event.planId)})`;
  if (!Number.isInteger(event.seq) || (event.seq as number) < 1) return 'its seq is not a positive integer';
  const status = event.status as Partial<Record<keyof V2.PlanStatus, unknown>> | null | undefined;
  if (typeof status !== 'object' || status === null || status.planId !== planId || typeof status.state !== 'string' || typeof status.terminal !== 'boolean') return 'its status is not the plan\'s PlanStatus';
  return null;
}

/** Follows `plan`'s status events (see PlanWatch); `connection` is the client's. */
export function watchPlan(connection: StatusConnection, plan: string | PlanRef, options: WatchOptions = {}): PlanWatch {
  const { planId, token } = statusTarget(plan, options);
  const { lastEventId, signal, onStatus } = options;
  if (lastEventId !== undefined && !(Number.isSafeInteger(lastEventId) && lastEventId >= 0)) throw new RangeError(`lastEventId is the seq of an event: a whole number from 0, not ${String(lastEventId)}`);
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const fetcher = (connection.fetch ?? globalThis.fetch) as typeof globalThis.fetch;
  const base = connection.baseUrl.replace(/\/+$/, '');

  const events: V2.PlanStatusEvent[] = [];
  let last: number | null = lastEventId ?? null;
  let ended = false;
  let failure: BestexError | null = null;
  let wake: Array<() => void> = [];
  const notify = () => {
    const waiting = wake;
    wake = [];
    for (const resolve of waiting) resolve();
  };
  // Stops every wait and every connection: the caller's signal, or an iteration left early.
  const stopper = new AbortController();
  const stop = () => stopper.abort();
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) stop();

  const deliver = (event: V2.PlanStatusEvent) => {
    events.push(event);
    last = event.seq;
    notify();
    try {
      const returned = (onStatus as ((event: V2.PlanStatusEvent) => unknown) | undefined)?.(event);
      // An async hook's rejection too: unhandled, it would end a Node process.
      if (returned instanceof Promise) returned.catch(() => undefined);
    } catch {
      // The hook is the caller's code: its failure must not end the watch.
    }
  };

  /** One connection, read until it ends; throws the BestexError that ends the watch. */
  async function connect(retry: { ms: number }): Promise<Ending> {
    const query = new URLSearchParams({ planId });
    if (token !== undefined) query.set('token', token);
    if (last !== null) query.set('lastEventId', String(last));
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (connection.apiKey !== undefined) headers['x-api-key'] = connection.apiKey;
    const aborter = new AbortController();
    const abort = () => aborter.abort();
    stopper.signal.addEventListener('abort', abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    let silent = false;
    const awake = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        silent = true;
        aborter.abort();
      }, idleTimeoutMs);
    };
    try {
      let response: Response;
      try {
        awake();
        response = await fetcher(`${base}/api/v2/plan/events?${query}`, { headers, signal: aborter.signal });
      } catch (err) {
        if (stopper.signal.aborted) return { over: true };
        const what = silent ? `did not answer in ${idleTimeoutMs} ms` : `could not be reached: ${err instanceof Error ? err.message : String(err)}`;
        return { over: false, error: new BestexError(`the service ${what}`, { status: null, code: 'network_error', cause: err }), waitMs: 0 };
      }
      const unsupported = versionError(response, API_VERSION);
      if (!response.ok) {
        const error = answerError(response, await response.json().catch(() => null));
        // A proxy in front of a restarting service answers without the API version: waited on all the same.
        if (transient(response.status)) return { over: false, error, waitMs: (error.retryAfterSeconds ?? 0) * 1000 };
        throw unsupported ?? error;
      }
      if (unsupported) throw unsupported;
      const type = response.headers.get('content-type') ?? '';
      if (!/^text\/event-stream\b/i.test(type) || !response.body) {
        throw new BestexError(`the service answered the plan's events as ${type || 'no content type'}, not text/event-stream`, { status: response.status, code: 'unreadable_response' });
      }
      const reader = response.body.getReader();
      let ending: Ending | null = null;
      const parser = new EventStreamParser({
        onRetry: (ms) => {
          retry.ms = ms;
        },
        onEvent: (message) => {
          // Events after the one that ended this connection are not read.
          if (ending !== null || message.type !== 'status') return;
          let data: unknown;
          try {
            data = JSON.parse(message.data);
          } catch {
            throw new BestexError(`the service sent ${planId}'s status event with data that is not JSON`, { status: response.status, code: 'unreadable_response' });
          }
          const problem = eventProblem(data, planId);
          if (problem) throw new BestexError(`the service sent a status event of ${planId} that the watch cannot take: ${problem}`, { status: response.status, code: 'unreadable_response' });
          const event = data as V2.PlanStatusEvent;
          if (message.lastEventId !== String(event.seq)) {
            throw new BestexError(`the service sent ${planId}'s event ${event.seq} under the id ${JSON.stringify(message.lastEventId)}`, { status: response.status, code: 'unreadable_response' });
          }
          // Already held (a stream that repeats what came before): not handed on twice.
          if (last !== null && event.seq <= last) return;
          if (last !== null && event.seq !== last + 1) {
            // Read again from the last event held, so that the ones between come first.
            ending = { over: false, error: new BestexError(`the service sent ${planId}'s event ${event.seq} after ${last}: reading again from ${last}`, { status: response.status, code: 'unreadable_response' }), waitMs: 0 };
            return;
          }
          deliver(event);
          if (event.status.terminal) ending = { over: true };
        },
      });
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) break;
          awake();
          parser.push(chunk.value);
          if (ending !== null) break;
        }
      } catch (err) {
        if (err instanceof BestexError) throw err;
        if (err instanceof RangeError) throw new BestexError(`the service's event stream for ${planId} cannot be read: ${err.message}`, { status: response.status, code: 'unreadable_response' });
        if (stopper.signal.aborted) return { over: true };
        const what = silent ? `was silent for ${idleTimeoutMs} ms` : `dropped: ${err instanceof Error ? err.message : String(err)}`;
        return { over: false, error: new BestexError(`the plan's event stream ${what}`, { status: null, code: 'network_error', cause: err }), waitMs: 0 };
      } finally {
        parser.end();
        // Nothing more is read of this connection: let the platform close it.
        reader.cancel().catch(() => undefined);
      }
      if (ending !== null) return ending;
      if (stopper.signal.aborted) return { over: true };
      return { over: false, error: new BestexError(`the plan's event stream ended before ${planId}'s terminal event`, { status: null, code: 'network_error' }), waitMs: 0 };
    } finally {
      clearTimeout(idle);
      stopper.signal.removeEventListener('abort', abort);
      aborter.abort();
    }
  }

  async function run(): Promise<V2.PlanStatusEvent | null> {
    const retry = { ms: DEFAULT_RETRY_MS };
    let failures = 0;
    while (!stopper.signal.aborted) {
      const before = events.length;
      const ending = await connect(retry);
      if (ending.over) break;
      // A connection that handed on an event made progress: only failures in a row count.
      failures = events.length > before ? 1 : failures + 1;
      if (failures > maxRetries) throw ending.error;
      await sleep(Math.max(ending.waitMs, Math.min(MAX_RETRY_DELAY_MS, retry.ms * 2 ** (failures - 1))), stopper.signal);
    }
    return events.at(-1) ?? null;
  }

  const done = run()
    .catch((err: unknown) => {
      failure = err instanceof BestexError ? err : new BestexError(`watching ${planId} failed: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'network_error', cause: err });
      throw failure;
    })
    .finally(() => {
      ended = true;
      signal?.removeEventListener('abort', stop);
      notify();
    });
  // Whoever only iterates still sees the failure there: `done` unheard must not end a Node process.
  done.catch(() => undefined);

  return {
    done,
    [Symbol.asyncIterator](): AsyncIterator<V2.PlanStatusEvent> {
      let index = 0;
      let finished = false;
      return {
        async next(): Promise<IteratorResult<V2.PlanStatusEvent>> {
          for (;;) {
            if (finished) return { done: true, value: undefined };
            const event = events[index];
            if (event) {
              index += 1;
              return { done: false, value: event };
            }
            if (ended) {
              finished = true;
              if (failure) throw failure;
              return { done: true, value: undefined };
            }
            await new Promise<void>((resolve) => wake.push(resolve));
          }
        },
        async return(): Promise<IteratorResult<V2.PlanStatusEvent>> {
          finished = true;
          stop();
          return { done: true, value: undefined };
        },
      };
    },
  };
}
