// operationId -> handler. Every operation in openapi/v1.yaml must appear here; the app refuses to
// start otherwise.
import type { CoreServices } from '../../../core/services.js';
import { livenessHandler, statusHandler } from './health.js';
import type { HandlerMap } from '../../http/operation.js';
import { outcomeHandler } from './outcome.js';
import { appPlanHandler, executePlanHandler } from './plan.js';
import { quoteHandler } from './quote.js';

export function v1OperationMap(core: CoreServices): HandlerMap {
  return {
    getQuote: quoteHandler(core.quotes, core.partnerQuotes),
    createAppPlan: appPlanHandler(core.plans),
    createExecutePlan: executePlanHandler(core.plans),
    getOutcome: outcomeHandler(core.outcomes),
    getLiveness: livenessHandler(core.health),
    getStatus: statusHandler(core.health),
  };
}
