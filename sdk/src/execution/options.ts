// What `execute`, `resume` and `withdraw` take, and the store an execution is recorded in when the
// host names none: one per page or process, so that `resume` finds what `execute` wrote.
import type { BestexClient, BestexClientV2 } from '../client.js';
import type { AbortSignalLike, Fetch } from '../platform.js';
import type { CantonProvider } from '../provider.js';
import { memoryStorage, type ExecutionStorage } from './storage.js';
import type { ExecutionHooks } from './types.js';

export interface ExecuteOptions {
  readonly provider: CantonProvider;
  /** The taker; the wallet's primary account by default. */
  readonly party?: string | undefined;
  /**
   * Each instrument admin's token registry base URL (such as a Scan's for Amulet), by admin party,
   * for the transfer factory and choice contexts. The sandbox names its own in its manifest
   * (`registries`; `sandboxRegistries` reads it). A registry is asked directly, with no credential.
   * A version 2 plan names each instrument's registry itself: this is then needed only where the
   * plan names none (null), and wins over the plan's where it names the admin.
   */
  readonly registries?: Readonly<Record<string, string>> | undefined;
  /** One registry for every instrument, where `registries` does not name the admin; it too wins over a version 2 plan's. */
  readonly registryUrl?: string | undefined;
  readonly hooks?: ExecutionHooks | undefined;
  /** Where the execution is recorded for `resume`; one in-memory store per page or process by default. */
  readonly storage?: ExecutionStorage | undefined;
  /** Stops waiting (the swap goes on): the promise then resolves with the state reached. */
  readonly signal?: AbortSignalLike | undefined;
  /** The service, to cross-check the outcome with GET /api/outcome (or /api/v2/outcome, through createClientV2's client). */
  readonly client?: BestexClient | BestexClientV2 | undefined;
  /** For the registry calls; the platform's by default. */
  readonly fetch?: Fetch | undefined;
  /** How often the ledger is read while waiting; 250 ms by default. */
  readonly pollIntervalMs?: number | undefined;
}

export const defaultStorage = memoryStorage();
