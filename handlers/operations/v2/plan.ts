// The two v2 plan routes, over the same core as v1's (core/plans/service.ts), asked in v2: the
// keyless first-party route, known by its caller's IP, and the keyed partner route. A v2 plan's
// idempotency records are v2's own. A replay of a plan already made is answered before the
// request is counted in a rate-limit window (handlers/http/operation-routes.ts).
import type { FieldCodes } from '../../http/validation-error.js';
import { parsePlanRequest, refuseFeeParams, type PlanParams } from '../../../core/plans/params.js';
import type { HeldPlan, PlanCaller, PlanService } from '../../../core/plans/service.js';
import type { PlanRequest } from '../../../core/contract/v2.js';
import { FEE_FIELD_CODES } from './fee-field-codes.js';
import { JSON_TEXT, type OperationContext, type OperationHandler, type OperationResult } from '../../http/operation.js';

// A plan is one caller's: no shared cache may keep it.
const PLAN_HEADERS = Object.freeze({ 'cache-control': 'no-store', 'content-type': JSON_TEXT });

const PARTNER_FIELD_CODES: FieldCodes = new Map([...FEE_FIELD_CODES, ['takerParty', 'bad_party']]);

const planResult = (json: string): OperationResult => ({ status: 200, headers: PLAN_HEADERS, body: json });

type Context = OperationContext<unknown, PlanRequest>;

function planHandler(plans: PlanService, route: PlanCaller['route']): OperationHandler<unknown, PlanRequest> {
  const callerOf = ({ partner, clientIp }: Context): PlanCaller =>
    route === 'partner' ? { route, partner: partner!, contract: 'v2' } : { route, ip: clientIp(), contract: 'v2' };
  // The request as parsed and looked up by `replay`, which the route runs first, for `handle`: the
  // body is parsed and the idempotency record read once per request.
  const looked = new WeakMap<Context, { params: PlanParams; caller: PlanCaller; held: HeldPlan }>();
  const lookUp = async (context: Context) => {
    const params = parsePlanRequest(context.body, route);
    const caller = callerOf(context);
    return { params, caller, held: await plans.lookup(params, caller, context.counts?.window, context.counts?.key) };
  };
  return {
    fieldCodes: route === 'partner' ? PARTNER_FIELD_CODES : undefined,
    guard: route === 'app' ? ({ body }) => refuseFeeParams(body) : undefined,
    countsWithReads: true,
    async replay(context) {
      const request = await lookUp(context);
      if (request.held.replay === null) {
        looked.set(context, request);
        return null;
      }
      context.annotate({ plan: 'replayed' });
      return planResult(request.held.replay);
    },
    async handle(context) {
      const { params, caller, held } = looked.get(context) ?? (await lookUp(context));
      const { json, replayed } = await plans.create(params, caller, held.record, held.quotaCount);
      context.annotate({ plan: replayed ? 'replayed' : 'created' });
      return planResult(json);
    },
  };
}

export const appPlanHandler = (plans: PlanService) => planHandler(plans, 'app');
export const executePlanHandler = (plans: PlanService) => planHandler(plans, 'partner');
