// The swap API's contract, version 1 (openapi/v1.yaml), by the spec's own names: each schema under
// its name, each operation's query as <OperationId>Query, a field's enum as <Schema><Field>. Core
// and handlers use these, never a hand copy; another version is a module of its own beside this.
import type { components, operations } from '../../generated/v1/types.js';

type Schemas = components['schemas'];
export type QuoteResponse = Schemas['QuoteResponse'];
export type QuoteVenue = Schemas['QuoteVenue'];
export type ClientFees = Schemas['ClientFees'];
export type RejectionCode = Schemas['RejectionCode'];
export type Liveness = Schemas['Liveness'];
export type LivenessState = Liveness['state'];
export type StatusSummary = Schemas['StatusSummary'];

export type GetQuoteQuery = NonNullable<operations['getQuote']['parameters']['query']>;
export type GetLivenessQuery = NonNullable<operations['getLiveness']['parameters']['query']>;
export type PlanRequest = Schemas['PlanRequest'];
export type ExecutionPlan = Schemas['ExecutionPlan'];
export type AppPlan = Schemas['AppPlan'];
export type PlanStep = Schemas['PlanStep'];
export type QuoteRef = Schemas['QuoteRef'];
export type AppliedSchema = Schemas['AppliedSchema'];
export type B2cFee = Schemas['B2cFee'];
export type GetOutcomeQuery = operations['getOutcome']['parameters']['query'];
export type Outcome = Schemas['Outcome'];
export type OutcomeStatus = Outcome['status'];
