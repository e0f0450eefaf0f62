// The clock of an execution: how long a plan and its offer stay answerable.

/** Canton's record-time tolerance: an offer may still be answered this long after its executeBefore. */
export const ANSWER_GRACE_MS = 60_000;
/** The span of a plan's validity, for the outcome query's `since`. */
export const PLAN_VALIDITY_MS = 90_000;
