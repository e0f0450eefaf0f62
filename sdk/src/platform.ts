// The platform's fetch and abort signal as this package's declarations name them. The DOM library
// declares both, @types/node declares both, a bare ES project neither: naming them structurally, or
// through whatever the consumer's globals hold, lets a project that compiles without the DOM
// library (a Node backend, a worker) use every entry but the widget. And the one wait the package
// makes, which its signal cuts short.

/** The consumer's `fetch`, wherever its globals declare one (DOM, @types/node, a worker runtime's types). */
export type Fetch = typeof globalThis extends { readonly fetch: infer F } ? F : never;

/** What this package uses of an AbortSignal: one from the platform's AbortController is one. */
export interface AbortSignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** Waits `ms`, or until `signal` aborts. */
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
