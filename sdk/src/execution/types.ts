// What an execution is and ends as: its states, a step's progress, the hooks' payloads, the
// result, and the record storage keeps for `resume` (./entry-points.ts documents the states).
import type { Outcome } from '../contract/v1.js';
import type { BestexError } from '../errors.js';
import type { AnyPlanStep, Plan } from '../plan.js';

/** The version of the record this SDK writes. */
export const RECORD_VERSION = 1;

export type ExecutionStatus = 'SUBMITTING' | 'INITIATED' | 'COMPLETED' | 'SLIPPAGE_FAILED' | 'EXPIRED' | 'WITHDRAWN' | 'USER_REJECTED' | 'SUBMIT_FAILED' | 'REFUSED';

export const TERMINAL_STATUSES: readonly ExecutionStatus[] = ['COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN', 'USER_REJECTED', 'SUBMIT_FAILED', 'REFUSED'];

export const isTerminal = (status: ExecutionStatus): boolean => TERMINAL_STATUSES.includes(status);

/** The end states in which nothing reached the ledger. */
export const NOTHING_SUBMITTED: readonly ExecutionStatus[] = ['REFUSED', 'USER_REJECTED', 'SUBMIT_FAILED'];

/** A step's progress: `skipped` for a fee leg left out (the swap went fee-less), `returned` for funds that came back. */
export type StepState = 'pending' | 'submitted' | 'accepted' | 'returned' | 'skipped';

export interface StepUpdate {
  readonly index: number;
  /** The step as the plan says it, in the plan's version. */
  readonly step: AnyPlanStep;
  readonly state: StepState;
  readonly updateId?: string;
}

export interface StatusDetail {
  readonly planId: string;
  /** The transaction that created the deposit offer (INITIATED), or answered it (terminal). */
  readonly updateId?: string;
  /** Why, in words: the fee legs left out, the reason for a refusal. */
  readonly note?: string;
  /** On COMPLETED: the amount received, in the plan's want instrument (a page shows it before `execute` returns). */
  readonly received?: string | undefined;
  /** On INITIATED: the ledger already had this plan (submitted before, elsewhere); nothing new was sent. */
  readonly duplicate?: true;
  readonly error?: BestexError;
}

/** A wallet that asks its user elsewhere (a remote gateway's approval page): where, for which plan. */
export interface ApprovalRequest {
  readonly planId: string;
  readonly url: string;
}

export interface ExecutionHooks {
  readonly onStatus?: ((status: ExecutionStatus, detail: StatusDetail) => void) | undefined;
  readonly onStep?: ((update: StepUpdate) => void) | undefined;
  /**
   * The wallet waits for its user to approve at `url`. Without this hook, a browser opens it in a
   * new window (as dapp-sdk does), which a popup blocker may stop: a page gives a link instead.
   */
  readonly onApproval?: ((request: ApprovalRequest) => void) | undefined;
}

export interface Realised {
  /** What the taker received per unit given, to 10 fractional digits (rounded down). */
  readonly price: string;
  /** How much worse than the quote's net the payout was, in bps (negative: better), rounded up: a loss is never understated, a gain never overstated. */
  readonly slippageBps: number;
  /** The payout less the plan's floor: never negative for a COMPLETED swap. */
  readonly aboveFloor: string;
}

export interface ExecutionResult {
  readonly planId: string;
  readonly party: string;
  readonly status: ExecutionStatus;
  /** The ledger transaction that accepted, rejected or withdrew the deposit. */
  readonly depositUpdateId: string | null;
  /** The transaction that created the deposit offer. */
  readonly submittedUpdateId: string | null;
  /** The amount received in the want instrument, on COMPLETED. */
  readonly received: string | null;
  readonly realised: Realised | null;
  readonly fees: {
    /** Whether the plan's fee legs went with the deposit. */
    readonly included: boolean;
    /** Whether they were accepted (released), returned, or not answered yet. */
    readonly released: boolean | null;
    /** Why they were left out, when they were. */
    readonly note: string | null;
  };
  /** The service's reading of the same swap (GET /api/outcome, or /api/v2/outcome with a version 2 client), when a client was given. */
  readonly outcome: { readonly status: Outcome['status']; readonly depositUpdateId: string | null; readonly agrees: boolean } | null;
  readonly error: BestexError | null;
}

/** What storage keeps of an execution. */
export interface ExecutionRecord {
  readonly version: typeof RECORD_VERSION;
  readonly planId: string;
  readonly party: string;
  readonly plan: Plan;
  readonly status: ExecutionStatus;
  /** The ledger end before submitting: tracking reads from here. */
  readonly startOffset: number;
  /** The step indexes submitted. */
  readonly included: readonly number[];
  readonly feeNote: string | null;
  readonly submittedUpdateId: string | null;
  readonly result: ExecutionResult | null;
}
