// POST /api/v2/plan/signature: an intent plan (OneSwap) completed with the wallet's signature of
// its message (core/plans/intent-plans.ts), for the caller that made it: its key when it sends
// one, its IP when not, as the plan routes bind their plans.
import type { IntentPlans } from '../../../core/plans/intent-plans.js';
import { callerId, type PlanCaller } from '../../../core/plans/service.js';
import type { SignPlanRequest } from '../../../core/contract/v2.js';
import { JSON_TEXT, type OperationHandler } from '../../http/operation.js';

// A plan is one caller's: no shared cache may keep it.
const PLAN_HEADERS = Object.freeze({ 'cache-control': 'no-store', 'content-type': JSON_TEXT });

export const signPlanHandler = (intentPlans: IntentPlans): OperationHandler<unknown, SignPlanRequest> => ({
  async handle({ body, partner, clientIp, annotate }) {
    const caller: PlanCaller = partner ? { route: 'partner', partner, contract: 'v2' } : { route: 'app', ip: clientIp(), contract: 'v2' };
    const json = await intentPlans.complete(callerId(caller), body);
    annotate({ plan: 'completed' });
    return { status: 200, headers: PLAN_HEADERS, body: json };
  },
});
