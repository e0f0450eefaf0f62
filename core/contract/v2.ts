// The swap API's contract, version 2 (openapi/v2.yaml, bundled with the shapes it takes from v1),
// by the spec's own names: each schema under its name, each operation's query as
// <OperationId>Query. Core and handlers use these, never a hand copy.
import type { components, operations } from '../../generated/v2/types.js';

type Schemas = components['schemas'];
export type QuoteResponse = Schemas['QuoteResponse'];
export type QuoteVenue = Schemas['QuoteVenue'];
export type SplitQuote = Schemas['SplitQuote'];
export type SplitLeg = Schemas['SplitLeg'];
export type Liveness = Schemas['Liveness'];
export type StatusSummary = Schemas['StatusSummary'];
export type TokenList = Schemas['TokenList'];
export type TokenListing = Schemas['TokenListing'];
export type VenueLimit = Schemas['VenueLimit'];

export type GetQuoteQuery = NonNullable<operations['getQuote']['parameters']['query']>;
export type GetLivenessQuery = NonNullable<operations['getLiveness']['parameters']['query']>;
export type PlanRequest = Schemas['PlanRequest'];
export type SplitLegRequest = Schemas['SplitLegRequest'];
export type SplitPlan = Schemas['SplitPlan'];
export type SplitPlanRef = Schemas['SplitPlanRef'];
export type SplitPlanLeg = Schemas['SplitPlanLeg'];
export type ExecutionPlan = Schemas['ExecutionPlan'];
export type AppPlan = Schemas['AppPlan'];
export type PlanStep = Schemas['PlanStep'];
export type VenueExecution = Schemas['VenueExecution'];
export type GetOutcomeQuery = operations['getOutcome']['parameters']['query'];
export type Outcome = Schemas['Outcome'];
export type SignMessageStep = Schemas['SignMessageStep'];
export type PlanIntent = Schemas['PlanIntent'];
export type SignPlanRequest = Schemas['SignPlanRequest'];
export type PlanStatus = Schemas['PlanStatus'];
export type PlanLegStatus = Schemas['PlanLegStatus'];
export type PlanState = Schemas['PlanState'];
export type PlanHistoryEntry = Schemas['PlanHistoryEntry'];
export type PlanStatusEvent = Schemas['PlanStatusEvent'];
export type PlanWebhook = Schemas['PlanWebhook'];
export type GetPlanStatusQuery = operations['getPlanStatus']['parameters']['query'];
export type StreamPlanStatusQuery = operations['streamPlanStatus']['parameters']['query'];
export type PlanViewReport = Schemas['PlanViewReport'];
export type PlanViewReceipt = Schemas['PlanViewReceipt'];
