// Keeps a started program running: when it stops without being asked, that is known at once (its
// exit, not a probe), said in one error line, and it is started again after a wait that doubles
// with each failed start, up to a cap, and starts over once a run has lasted. Every restart is
// logged. The program is anything that can be started, stopped, and reports its exit.
import type { CoreLog } from '../log.js';

export interface Running {
  readonly pid: number | undefined;
  /** Resolves when the program ends, however it ends. */
  readonly exited: Promise<{ readonly code: number | null; readonly signal: string | null }>;
  /** Stops it (asked): resolves once it has ended. */
  stop(): Promise<void>;
}

export interface SupervisorOptions<T extends Running> {
  readonly what: string;
  /** Starts it again; rejects when it could not be. */
  restart(): Promise<T>;
  readonly log: CoreLog;
  /** The first wait before a restart; doubled after each failed start. */
  readonly firstWaitMs?: number;
  readonly maxWaitMs?: number;
  /** A run this long resets the wait to the first. */
  readonly steadyMs?: number;
  readonly now?: () => number;
}

export type SupervisedState = 'up' | 'restarting' | 'stopped';

const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 30_000;
const STEADY_MS = 60_000;

export class Supervisor<T extends Running> {
  private stateNow: SupervisedState = 'up';
  private restartsSoFar = 0;
  private wait: number;
  private upSince: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private starting: Promise<void> | null = null;
  private readonly now: () => number;

  constructor(
    private running: T,
    private readonly options: SupervisorOptions<T>,
  ) {
    this.now = options.now ?? Date.now;
    this.wait = options.firstWaitMs ?? FIRST_WAIT_MS;
    this.upSince = this.now();
    this.watch(running);
  }

  get state(): SupervisedState {
    return this.stateNow;
  }

  get restarts(): number {
    return this.restartsSoFar;
  }

  get current(): T {
    return this.running;
  }

  /** Stops the program and keeps it stopped: a restart under way is let finish, then stopped. */
  async close(): Promise<void> {
    this.stateNow = 'stopped';
    clearTimeout(this.timer);
    await this.starting;
    await this.running.stop();
  }

  private watch(running: T): void {
    void running.exited.then(({ code, signal }) => {
      if (this.stateNow === 'stopped' || running !== this.running) return;
      this.stateNow = 'restarting';
      if (this.now() - this.upSince >= (this.options.steadyMs ?? STEADY_MS)) this.wait = this.options.firstWaitMs ?? FIRST_WAIT_MS;
      this.options.log.error({ code, signal, restartInMs: this.wait }, `${this.options.what} stopped: restarting it`);
      this.schedule();
    });
  }

  private schedule(): void {
    const wait = this.wait;
    this.wait = Math.min(wait * 2, this.options.maxWaitMs ?? MAX_WAIT_MS);
    this.timer = setTimeout(() => {
      this.starting = this.restart().finally(() => (this.starting = null));
    }, wait);
  }

  private async restart(): Promise<void> {
    let next: T;
    try {
      next = await this.options.restart();
    } catch (err) {
      if (this.stateNow === 'stopped') return;
      this.options.log.error({ reason: err instanceof Error ? err.message : String(err), restartInMs: this.wait }, `${this.options.what} could not be restarted: trying again`);
      this.schedule();
      return;
    }
    if (this.stateNow === 'stopped') {
      await next.stop();
      return;
    }
    this.running = next;
    this.stateNow = 'up';
    this.upSince = this.now();
    this.restartsSoFar++;
    this.options.log.info({ pid: next.pid, restarts: this.restartsSoFar }, `${this.options.what} restarted`);
    this.watch(next);
  }
}
