// The key portal's webhook operations (openapi/portal.yaml, tag webhooks): each reads its validated
// request, makes one call to the webhooks (core/webhooks/) for the signed-in key's record id and
// shapes the answer. A signing secret appears in the answers to creation and rotation only;
// every answer is no-store, and the access line names the key's id and what was done.
import type * as Portal from '../../../core/contract/portal.js';
import type { WebhookDispatcher } from '../../../core/webhooks/dispatcher.js';
import type { EndpointView } from '../../../core/webhooks/endpoints.js';
import { webhookIdOf } from '../../../core/webhooks/messages.js';
import type { Delivery } from '../../../core/webhooks/store.js';
import { MAX_ENDPOINTS_PER_KEY } from '../../../core/webhooks/endpoints.js';
import type { HandlerMap, OperationHandler, OperationResult } from '../../http/operation.js';

const NO_STORE = Object.freeze({ 'cache-control': 'no-store' });

const answer = (status: number, body: unknown): OperationResult => ({ status, headers: NO_STORE, body });

const endpointOf = (view: EndpointView): Portal.WebhookEndpoint => ({
  id: view.id,
  url: view.url,
  eventTypes: [...view.eventTypes],
  enabled: view.enabled,
  createdAt: view.createdAt,
  previousSecretExpiresAt: view.previousSecretExpiresAt,
});

const iso = (ms: number): string => new Date(ms).toISOString();

const deliveryOf = (d: Delivery): Portal.WebhookDelivery => ({
  endpointId: d.endpointId,
  webhookId: webhookIdOf(d.planId, d.seq),
  type: d.type,
  planId: d.planId,
  seq: d.seq,
  state: d.state,
  createdAt: iso(d.createdAt),
  nextAttemptAt: d.state === 'pending' && d.nextAttemptAt !== null ? iso(d.nextAttemptAt) : null,
  attempts: d.attempts.map((a) => ({ at: iso(a.at), status: a.status, error: a.error, durationMs: a.durationMs })),
});

export function webhookOperations(webhooks: WebhookDispatcher): HandlerMap {
  const { endpoints } = webhooks;
  const listWebhookEndpoints: OperationHandler = {
    async handle({ partner, annotate }) {
      const listed = await endpoints.list(partner!.id);
      annotate({ portalAction: 'webhooks-viewed' });
      const body: Portal.WebhookEndpoints = { endpoints: listed.map(endpointOf), maxEndpoints: MAX_ENDPOINTS_PER_KEY };
      return answer(200, body);
    },
  };
  const createWebhookEndpoint: OperationHandler<unknown, Portal.NewWebhookEndpoint> = {
    async handle({ partner, body, annotate }) {
      const issued = await endpoints.create(partner!.id, body);
      annotate({ portalAction: 'webhook-created' });
      const answered: Portal.IssuedWebhookSecret = { endpoint: endpointOf(issued.endpoint), secret: issued.secret };
      return answer(201, answered);
    },
  };
  const updateWebhookEndpoint: OperationHandler<unknown, Portal.WebhookEndpointUpdate> = {
    async handle({ partner, body: { id, ...changes }, annotate }) {
      const updated = await endpoints.update(partner!.id, id, changes);
      annotate({ portalAction: 'webhook-updated' });
      return answer(200, endpointOf(updated));
    },
  };
  const deleteWebhookEndpoint: OperationHandler<unknown, Portal.WebhookEndpointRef> = {
    async handle({ partner, body, annotate }) {
      await endpoints.remove(partner!.id, body.id);
      annotate({ portalAction: 'webhook-deleted' });
      const answered: Portal.DeletedWebhookEndpoint = { id: body.id, deleted: true };
      return answer(200, answered);
    },
  };
  const rotateWebhookSecret: OperationHandler<unknown, Portal.WebhookEndpointRef> = {
    async handle({ partner, body, annotate }) {
      const issued = await endpoints.rotate(partner!.id, body.id);
      annotate({ portalAction: 'webhook-secret-rotated' });
      const answered: Portal.IssuedWebhookSecret = { endpoint: endpointOf(issued.endpoint), secret: issued.secret };
      return answer(200, answered);
    },
  };
  const listWebhookDeliveries: OperationHandler<Portal.ListWebhookDeliveriesQuery> = {
    async handle({ partner, query, annotate }) {
      const deliveries = await webhooks.deliveries(partner!.id, query?.endpointId ?? null);
      annotate({ portalAction: 'webhook-deliveries-viewed' });
      const body: Portal.WebhookDeliveries = { deliveries: deliveries.map(deliveryOf) };
      return answer(200, body);
    },
  };
  const replayWebhookDelivery: OperationHandler<unknown, Portal.ReplayRequest> = {
    async handle({ partner, body, annotate }) {
      const replayed = await webhooks.replay(partner!.id, body.endpointId, body.webhookId);
      annotate({ portalAction: 'webhook-replayed' });
      return answer(200, deliveryOf(replayed));
    },
  };
  return { listWebhookEndpoints, createWebhookEndpoint, updateWebhookEndpoint, deleteWebhookEndpoint, rotateWebhookSecret, listWebhookDeliveries, replayWebhookDelivery };
}
