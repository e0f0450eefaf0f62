// The usage port: what the swap API counts of each partner key's traffic (requests per UTC day and
// per operation, and the 429s among them by the limit that refused them), summed over every
// instance through the shared state, for the key portal to show. Recording is one in-memory
// increment on the request's path; counts reach the shared state in the background.

/** One UTC day of a key's traffic: only operations and limits with any count are present. */
export interface UsageDay {
  /** `YYYY-MM-DD`, UTC. */
  readonly date: string;
  /** Requests sent with the key, by operationId. */
  readonly requests: Readonly<Record<string, number>>;
  /** Of those, the ones refused with 429, by the limit that refused them (`keyed-window`, ...). */
  readonly rateLimited: Readonly<Record<string, number>>;
}

export interface UsageRecorder {
  /** Counts one request sent with the key `keyId` to `operationId`; `rateLimit` names the limit that refused it with 429, else null. Never throws, never waits. */
  record(keyId: string, operationId: string, rateLimit: string | null): void;
}

export interface UsageReader {
  /**
   * The key's last 7 UTC days with any traffic (today last, oldest first), summed over every
   * instance. Rejects with SharedStateUnavailable (core/state/shared-state.ts) while the shared
   * state cannot be read, rather than answering part of the counts.
   */
  days(keyId: string): Promise<UsageDay[]>;
}
