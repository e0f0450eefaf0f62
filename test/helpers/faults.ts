// Ports that fail as a bug would: each call of a wrapped port's methods, drawn from a seed, may
// throw or reject with a plain Error, the kind no adapter documents (no SharedStateUnavailable, no
// KeyStoreUnavailable, no LedgerUnavailable). The robustness fuzz sends requests through an app
// built on such ports, so the central error handler's answers are judged as often as the others.

/** A marker in every injected error's message: no answer may carry it (nor the stack it comes with). */
export const FAULT_MARKER = 'injected-fault-f4c3';

/** One switch and one seeded draw for every port wrapped with it. */
export class Faults {
  /** Whether calls may fail: off while a test sets the app up (issuing its key, say). */
  enabled = false;
  /** Calls that failed. */
  injected = 0;
  private state: number;

  /** `rate`: the share of calls that fail, drawn from `seed`. */
  constructor(
    seed: number,
    private readonly rate: number,
  ) {
    this.state = seed >>> 0;
  }

  /** mulberry32: a small seeded generator, so a failing run replays with its seed. */
  private draw(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let x = this.state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  }

  /**
   * `port` with each method's calls failing at the drawn points. A failing call still runs (as a
   * write whose answer is lost does), then fails in its method's form: a promise's half the time
   * rejected and half the time thrown before it is returned, anything else's thrown. `close`
   * never fails: the test must end.
   */
  wrap<T extends object>(port: T, name: string): T {
    return new Proxy(port, {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function' || property === 'close' || property === 'constructor') return value;
        return (...args: unknown[]) => {
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (!this.enabled || this.draw() >= this.rate) return result;
          this.injected += 1;
          const fault = new Error(`${FAULT_MARKER}: ${name}.${String(property)} failed (secret=bx_${FAULT_MARKER})`);
          if (!(result instanceof Promise)) throw fault;
          // The real call's own outcome is superseded by the failure.
          result.catch(() => {});
          if (this.draw() < 0.5) throw fault;
          return Promise.reject(fault);
        };
      },
    });
  }
}
