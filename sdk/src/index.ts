// @bestex/sdk: the bestex API client and the execution client. Importing it touches no window,
// document or storage: safe under server-side rendering.
export { BestexError, type BestexErrorDetails, type SdkErrorCode } from './errors.js';
export { API_VERSION, API_VERSION_2, createClient, createClientV2, type BestexClient, type BestexClientV2, type ClientOptions } from './client.js';
export type { PlanRef, PlanStatusOptions, PlanWatch, WatchOptions } from './plan-status.js';
// The contract's types; its queries under the names this package has published them by.
export type {
  AppPlan,
  ExecutionPlan,
  GetLivenessQuery as LivenessQuery,
  GetOutcomeQuery as OutcomeQuery,
  GetQuoteQuery as QuoteQuery,
  Liveness,
  Outcome,
  PlanRequest,
  PlanStep,
  QuoteResponse,
  StatusSummary,
} from './contract/v1.js';
// Version 2's types, by the spec's names: V2.QuoteResponse, V2.AppPlan, ...
export type * as V2 from './contract/v2.js';
export { execute, resume, withdraw, type ExecuteOptions } from './execution/entry-points.js';
export {
  isTerminal,
  TERMINAL_STATUSES,
  type ApprovalRequest,
  type ExecutionHooks,
  type ExecutionRecord,
  type ExecutionResult,
  type ExecutionStatus,
  type LegResult,
  type LegStatus,
  type LegUpdate,
  type Realised,
  type ServiceReading,
  type SignatureRequest,
  type SigningRecord,
  type StatusDetail,
  type StepState,
  type StepUpdate,
} from './execution/types.js';
export {
  checkPlan,
  isPlanV2,
  isSigningPlan,
  isSplitPlan,
  type AnyPlanStep,
  type CheckedPlan,
  type DepositPlanV2,
  type DepositSplitPlan,
  type Plan,
  type PlanV1,
  type PlanV2,
  type SignMessageStep,
  type SigningPlanV2,
  type SigningSplitPlan,
  type SplitPlan,
} from './plan.js';
export { readRefusal, DAPP_SDK_ERRORS, type Refusal } from './refusals.js';
export {
  PROVIDER_ERRORS,
  type CantonProvider,
  type DisclosedContract,
  type LedgerApiParams,
  type LedgerCommand,
  type PrepareExecuteAndWaitResult,
  type PrepareExecuteParams,
  type ProviderRequest,
  type RpcTypes as DappRpcTypes,
  type TxChangedEvent,
  type WalletAccount,
} from './provider.js';
export type { AbortSignalLike, Fetch } from './platform.js';
export { localStorageStorage, memoryStorage, type ExecutionStorage, type WebStorage } from './execution/storage.js';
export type { components, paths } from './generated/types.js';
