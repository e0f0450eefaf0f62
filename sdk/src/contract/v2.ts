// The swap API's contract, version 2, as the SDK names it: the same names as the service's
// core/contract/v2.ts, over the SDK's own copy of the generated types (../generated/v2-types.ts).
import type { components, operations } from '../generated/v2-types.js';

type Schemas = components['schemas'];
export type QuoteResponse = Schemas['QuoteResponse'];
export type QuoteVenue = Schemas['QuoteVenue'];
export type SplitQuote = Schemas['SplitQuote'];
export type SplitLeg = Schemas['SplitLeg'];
export type VenueExecution = Schemas['VenueExecution'];
export type Settlement = Schemas['Settlement'];
export type PlanRequest = Schemas['PlanRequest'];
export type SplitLegRequest = Schemas['SplitLegRequest'];
export type SplitPlan = Schemas['SplitPlan'];
export type SplitPlanRef = Schemas['SplitPlanRef'];
export type SplitPlanLeg = Schemas['SplitPlanLeg'];
export type AppPlan = Schemas['AppPlan'];
export type ExecutionPlan = Schemas['ExecutionPlan'];
export type PlanStep = Schemas['PlanStep'];
export type SignMessageStep = Schemas['SignMessageStep'];
export type SignPlanRequest = Schemas['SignPlanRequest'];
export type PlanIntent = Schemas['PlanIntent'];
export type InstrumentRegistry = Schemas['InstrumentRegistry'];
export type Outcome = Schemas['Outcome'];
export type Liveness = Schemas['Liveness'];
export type StatusSummary = Schemas['StatusSummary'];
export type TokenList = Schemas['TokenList'];
export type TokenListing = Schemas['TokenListing'];
export type StatusToken = Schemas['StatusToken'];
export type PlanStatus = Schemas['PlanStatus'];
export type PlanLegStatus = Schemas['PlanLegStatus'];
export type PlanState = Schemas['PlanState'];
export type PlanHistoryEntry = Schemas['PlanHistoryEntry'];
export type PlanStatusEvent = Schemas['PlanStatusEvent'];
export type PlanViewReport = Schemas['PlanViewReport'];
export type PlanViewReceipt = Schemas['PlanViewReceipt'];

export type GetQuoteQuery = NonNullable<operations['getQuote']['parameters']['query']>;
export type GetOutcomeQuery = operations['getOutcome']['parameters']['query'];
export type GetLivenessQuery = NonNullable<operations['getLiveness']['parameters']['query']>;
export type GetPlanStatusQuery = operations['getPlanStatus']['parameters']['query'];
export type StreamPlanStatusQuery = operations['streamPlanStatus']['parameters']['query'];
