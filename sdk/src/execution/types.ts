// What an execution is and ends as: its states, a step's progress, the hooks' payloads, the
// result, and the record storage keeps for `resume` (./entry-points.ts documents the states).
import type { Outcome } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { BestexError } from '../errors.js';
import type { AnyPlanStep, Plan, SignMessageStep } from '../plan.js';

/** The version of the record this SDK writes. */
export const RECORD_VERSION = 1;

export type ExecutionStatus =
  | 'SIGNING'
  | 'SUBMITTING'
  | 'INITIATED'
  | 'COMPLETED'
  | 'PARTIALLY_COMPLETED'
  | 'SLIPPAGE_FAILED'
  | 'EXPIRED'
  | 'WITHDRAWN'
  | 'VENUE_FAILED'
  | 'USER_REJECTED'
  | 'SUBMIT_FAILED'
  | 'REFUSED';

export const TERMINAL_STATUSES: readonly ExecutionStatus[] = ['COMPLETED', 'PARTIALLY_COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN', 'VENUE_FAILED', 'USER_REJECTED', 'SUBMIT_FAILED', 'REFUSED'];

/** The end states of a deposit that reached the ledger (a split plan's leg's, or a single-venue plan's). */
export const LEG_STATUSES = ['COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN', 'VENUE_FAILED'] as const;
/** How one leg of a split plan ended: paid (COMPLETED), returned (SLIPPAGE_FAILED, EXPIRED, WITHDRAWN), or kept by a failed venue (VENUE_FAILED). */
export type LegStatus = (typeof LEG_STATUSES)[number];

export const isTerminal = (status: ExecutionStatus): boolean => TERMINAL_STATUSES.includes(status);

/** The end states in which nothing reached the ledger. */
export const NOTHING_SUBMITTED: readonly ExecutionStatus[] = ['REFUSED', 'USER_REJECTED', 'SUBMIT_FAILED'];

/**
 * A step's progress: `skipped` for a fee leg left out (the swap went fee-less), `returned` for
 * funds that came back, `signed` for a sign-message step the wallet signed.
 */
export type StepState = 'pending' | 'submitted' | 'accepted' | 'returned' | 'skipped' | 'signed';

export interface StepUpdate {
  /** The step's place in the plan it belongs to: a sign-message step is step 0 of the plan as made; the completed plan's steps, which follow it, count from 0 again. */
  readonly index: number;
  /** The step as the plan says it, in the plan's version. */
  readonly step: AnyPlanStep | SignMessageStep;
  readonly state: StepState;
  readonly updateId?: string;
}

export interface StatusDetail {
  readonly planId: string;
  /** The transaction that created the deposit offer (INITIATED), or answered it (terminal). */
  readonly updateId?: string;
  /** Why, in words: the fee legs left out, the reason for a refusal. */
  readonly note?: string;
  /** On COMPLETED and PARTIALLY_COMPLETED: the amount received, in the plan's want instrument (a page shows it before `execute` returns). */
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

/** The wallet is about to be asked to sign a venue's message (a plan's sign-message step). */
export interface SignatureRequest {
  readonly planId: string;
  readonly venueId: string;
  /** The exact text the wallet signs. */
  readonly message: string;
  /** Why, in plain words: what the signature proves, and that it moves no funds. */
  readonly purpose: string;
}

/** One leg of a split plan settled. */
export interface LegUpdate {
  readonly planId: string;
  /** The leg's index in the plan's `split.legs`. */
  readonly index: number;
  readonly venueId: string;
  readonly status: LegStatus;
  /** What the leg paid, in the want instrument, when it did. */
  readonly received?: string;
  /** The transaction that accepted, rejected or withdrew the leg's deposit. */
  readonly updateId?: string;
}

export interface ExecutionHooks {
  readonly onStatus?: ((status: ExecutionStatus, detail: StatusDetail) => void) | undefined;
  /** Before the wallet is asked to sign a venue's message: what it signs and why, for the page to show. */
  readonly onSignature?: ((request: SignatureRequest) => void) | undefined;
  readonly onStep?: ((update: StepUpdate) => void) | undefined;
  /** A split plan's leg settled: once per leg, as it does (the execution ends when every leg has). */
  readonly onLeg?: ((update: LegUpdate) => void) | undefined;
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

/**
 * The service's reading of a deposit (GET /api/outcome, or /api/v2/outcome with a version 2
 * client). For a deposit to a swap intent (OneSwap's) it is the venue's own status of the intent
 * (`basis: 'venue'`, `venueStatus` as the venue says it), and it agrees when it names the same end.
 */
export interface ServiceReading {
  readonly status: Outcome['status'] | V2.Outcome['status'];
  readonly depositUpdateId: string | null;
  readonly agrees: boolean;
  readonly basis?: 'venue';
  readonly venueStatus?: string;
}

/** How one leg of a split plan ended, each leg read on its own. */
export interface LegResult {
  /** The leg's index in the plan's `split.legs`. */
  readonly index: number;
  readonly venueId: string;
  /** What the leg gave, in the give instrument, and its floor, in the want instrument. */
  readonly amount: string;
  readonly minReceive: string;
  /** Null while the leg has no end (nothing submitted, or its venue not answered yet). */
  readonly status: LegStatus | null;
  /** The transaction that accepted, rejected or withdrew the leg's deposit. */
  readonly depositUpdateId: string | null;
  /** What the leg paid, in the want instrument, when it was paid. */
  readonly received: string | null;
  /** The leg's realised figures against its own net and floor, when it was paid. */
  readonly realised: Realised | null;
  readonly fees: {
    /** Whether the leg's fee legs were accepted (released), returned, or not answered yet (or it has none). */
    readonly released: boolean | null;
  };
  /** The service's reading of the leg's deposit, when a client was given and it gave one. */
  readonly outcome: ServiceReading | null;
}

export interface ExecutionResult {
  readonly planId: string;
  readonly party: string;
  readonly status: ExecutionStatus;
  /** The ledger transaction that accepted, rejected or withdrew the deposit (null for a split plan: each leg's is in `legs`). */
  readonly depositUpdateId: string | null;
  /** The transaction that created the deposit offer (a split plan's: every leg's, in one batch). */
  readonly submittedUpdateId: string | null;
  /** The amount received in the want instrument, on COMPLETED (a split plan's: the paid legs' sum, on PARTIALLY_COMPLETED too). */
  readonly received: string | null;
  /** The realised figures on the whole; for a split plan only when every leg was paid (each paid leg's own are in `legs`). */
  readonly realised: Realised | null;
  readonly fees: {
    /** Whether the plan's fee legs went with the deposit. */
    readonly included: boolean;
    /** Whether they were accepted (released), returned, or not answered yet (a split plan's: all of them; each leg's own in `legs`). */
    readonly released: boolean | null;
    /** Why they were left out, when they were. */
    readonly note: string | null;
  };
  /**
   * The service's reading of the same swap, when a client was given (see ServiceReading); null for
   * a split plan, whose legs are each read on their own (`legs[i].outcome`).
   */
  readonly outcome: ServiceReading | null;
  /** The venue's swap intent the plan's deposit funded (a completed OneSwap plan's `intent`, or a split plan's OneSwap leg's). */
  readonly intent?: V2.PlanIntent | undefined;
  /** A split plan's legs, each as it ended, in leg order. */
  readonly legs?: readonly LegResult[] | undefined;
  readonly error: BestexError | null;
}

/** A plan made with a sign-message step: the step, and once the wallet signed, what it gave (so it is never asked twice). */
export interface SigningRecord {
  readonly step: SignMessageStep;
  readonly signature: string | null;
  readonly publicKey: string | null;
}

/** What storage keeps of an execution. */
export interface ExecutionRecord {
  readonly version: typeof RECORD_VERSION;
  readonly planId: string;
  readonly party: string;
  /** The plan executed: for a plan made with a sign-message step, the plan as made until the service completes it, then the completed plan. */
  readonly plan: Plan;
  /** Present for a plan made with a sign-message step. */
  readonly signing?: SigningRecord | undefined;
  readonly status: ExecutionStatus;
  /** The ledger end before submitting: tracking reads from here. */
  readonly startOffset: number;
  /** The step indexes submitted. */
  readonly included: readonly number[];
  readonly feeNote: string | null;
  readonly submittedUpdateId: string | null;
  readonly result: ExecutionResult | null;
}
