// operationId -> handler for openapi/v2.yaml (served bundled, generated/v2/openapi.yaml). Every
// operation of the spec must appear here; the app refuses to start otherwise.
import type { CoreServices } from '../../../core/services.js';
import { livenessHandler, statusHandler } from './health.js';
import type { HandlerMap } from '../../http/operation.js';
import { outcomeHandler } from './outcome.js';
import { appPlanHandler, executePlanHandler } from './plan.js';
import { planEventsHandler, planReportHandler, planStatusHandler } from './plan-status.js';
import { quoteHandler } from './quote.js';
import { signPlanHandler } from './sign-plan.js';
import { tokensHandler } from './tokens.js';

export function v2OperationMap(core: CoreServices): HandlerMap {
  return {
    getQuote: quoteHandler(core.v2Quotes),
    createAppPlan: appPlanHandler(core.plans),
    createExecutePlan: executePlanHandler(core.plans),
    signPlan: signPlanHandler(core.intentPlans),
    getOutcome: outcomeHandler(core.outcomes),
    getLiveness: livenessHandler(core.health),
    getStatus: statusHandler(core.health),
    getTokens: tokensHandler(() => core.tokenList()),
    getPlanStatus: planStatusHandler(core.planStatus),
    streamPlanStatus: planEventsHandler(core.planStatus, core.config.sseHeartbeatMs),
    reportPlanView: planReportHandler(core.planStatus),
  };
}
