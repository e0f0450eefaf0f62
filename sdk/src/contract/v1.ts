// The swap API's contract, version 1, as the SDK names it: the same names as the service's
// core/contract/v1.ts (each schema under its spec name, each operation's query as
// <OperationId>Query), over the SDK's own copy of the generated types (../generated/types.ts),
// as the package ships without the service's sources. Another version is a module beside this.
import type { components, operations } from '../generated/types.js';

type Schemas = components['schemas'];
export type QuoteResponse = Schemas['QuoteResponse'];
export type PlanRequest = Schemas['PlanRequest'];
export type AppPlan = Schemas['AppPlan'];
export type ExecutionPlan = Schemas['ExecutionPlan'];
export type PlanStep = Schemas['PlanStep'];
export type Outcome = Schemas['Outcome'];
export type Liveness = Schemas['Liveness'];
export type StatusSummary = Schemas['StatusSummary'];

export type GetQuoteQuery = NonNullable<operations['getQuote']['parameters']['query']>;
export type GetOutcomeQuery = operations['getOutcome']['parameters']['query'];
export type GetLivenessQuery = NonNullable<operations['getLiveness']['parameters']['query']>;
