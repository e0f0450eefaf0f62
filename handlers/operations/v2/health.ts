// GET /api/v2/liveness and GET /api/v2/status: the venues' liveness and the service's status, read
// from the core's health (the same answers as v1's).
import { statusSummary, venueLiveness, type HealthOptions } from '../../../core/health/status.js';
import type { GetLivenessQuery } from '../../../core/contract/v2.js';
import { json, type OperationHandler } from '../../http/operation.js';

export const livenessHandler = (health: HealthOptions): OperationHandler<GetLivenessQuery> => ({
  handle: ({ query }) => json(200, venueLiveness(query, health), 'no-store'),
});

export const statusHandler = (health: HealthOptions): OperationHandler => ({
  handle: () => json(200, statusSummary(health), 'public, s-maxage=60'),
});
