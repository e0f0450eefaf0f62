// Whether a dependency (the shared state, the key store, the ledger) answers, as last seen by any of its
// users: every change is logged once, not once per request, and read by the status.
import type { CoreLog } from '../log.js';

export interface HealthMessages {
  /** Logged at warn when it stops answering. */
  readonly down: string;
  /** Logged at info when it answers again. */
  readonly up: string;
}

export class ComponentHealth {
  private answering = true;

  constructor(
    readonly component: string,
    private readonly log: Pick<CoreLog, 'warn' | 'info'>,
    private readonly messages: HealthMessages,
  ) {}

  get isUp(): boolean {
    return this.answering;
  }

  up(): void {
    if (this.answering) return;
    this.answering = true;
    this.log.info({ component: this.component }, this.messages.up);
  }

  /** `err`'s message is logged: adapters keep secrets (a Redis password) out of theirs. */
  down(err?: unknown): void {
    if (!this.answering) return;
    this.answering = false;
    this.log.warn({ component: this.component, reason: err instanceof Error ? err.message : undefined }, this.messages.down);
  }
}
