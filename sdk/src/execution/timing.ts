// The clock of an execution: how long a plan and its offer stay answerable, and the wait between
// reads, which a stopped execution cuts short.
import type { AbortSignalLike } from '../platform.js';

/** Canton's record-time tolerance: an offer may still be answered this long after its executeBefore. */
export const ANSWER_GRACE_MS = 60_000;
/** The span of a plan's validity, for the outcome query's `since`. */
export const PLAN_VALIDITY_MS = 90_000;

export const sleep = (ms: number, signal?: AbortSignalLike) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
