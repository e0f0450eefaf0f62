// The key portal's operations (openapi/portal.yaml): each reads its validated request, makes one
// call to the portal (core/portal/portal.ts) and shapes the answer; the webhook operations are
// webhooks.ts's, the trade ledger's trades.ts's. A key appears in the answers to creation and rotation only; every answer is
// no-store, and the access line names the key's id and what was done to it.
import type { KeyRecord } from '../../../core/keys/partner-keys.js';
import type { IssuedKey, KeyPortal } from '../../../core/portal/portal.js';
import type { WebhookDispatcher } from '../../../core/webhooks/dispatcher.js';
import type * as Portal from '../../../core/contract/portal.js';
import type { HandlerMap, OperationContext, OperationHandler, OperationResult } from '../../http/operation.js';
import type { TradeLedger } from '../../../core/trades/ledger.js';
import { tradeOperations } from './trades.js';
import { webhookOperations } from './webhooks.js';

const NO_STORE = Object.freeze({ 'cache-control': 'no-store' });

const answer = (status: number, body: unknown): OperationResult => ({ status, headers: NO_STORE, body });

/** A Host that fits the curl shown: anything else (absent, overlong, odd) is replaced by the service's own address. */
const SHOWABLE_BASE = /^https?:\/\/[A-Za-z0-9.\-:[\]]{1,200}$/;

/** A keyed quote with the new key, as a shell command the partner can paste. */
function curlOf(key: string, base: string): string {
  return `curl -H 'x-api-key: ${key}' '${base}/api/quote?from=CC&to=USDCx&amount=100'`;
}

function issued({ key, record }: IssuedKey, base: string): Portal.IssuedKey {
  return { id: record.id, key, name: record.name, createdAt: record.createdAt, schemaId: record.schemaId, origins: originsOf(record), curl: curlOf(key, base) };
}

const originsOf = (record: KeyRecord): string[] | null => (record.origins ? [...record.origins] : null);

export function portalOperationMap(portal: KeyPortal, webhooks: WebhookDispatcher, trades: TradeLedger, fallbackBase: string): HandlerMap {
  const baseOf = (context: OperationContext<unknown, unknown>): string => {
    const base = context.baseUrl();
    return SHOWABLE_BASE.test(base) ? base : fallbackBase;
  };
  const createPortalKey: OperationHandler<unknown, Portal.NewKeyRequest> = {
    async handle(context) {
      const created = await portal.create(context.body, context.clientIp());
      context.annotate({ keyId: created.record.id, portalAction: 'created' });
      return answer(201, issued(created, baseOf(context)));
    },
  };
  const getPortalKey: OperationHandler = {
    async handle({ partner, annotate }) {
      const view = await portal.view(partner!);
      annotate({ portalAction: 'viewed' });
      const { record, feeTerms } = view;
      const body: Portal.KeyView = {
        id: record.id,
        name: record.name,
        createdAt: record.createdAt,
        status: 'active',
        origins: originsOf(record),
        feeTerms: { schemaId: feeTerms.schemaId, overrideId: feeTerms.overrideId, serviceBps: feeTerms.serviceBps, integratorCapBps: feeTerms.integratorCapBps },
        window: { ...view.window },
        attribution: view.attribution,
        usage: { days: view.usage.map((d) => ({ date: d.date, requests: { ...d.requests }, rateLimited: { ...d.rateLimited } })) },
      };
      return answer(200, body);
    },
  };
  const rotatePortalKey: OperationHandler = {
    async handle(context) {
      const rotated = await portal.rotate(context.partner!);
      context.annotate({ portalAction: 'rotated' });
      return answer(200, issued(rotated, baseOf(context)));
    },
  };
  const revokePortalKey: OperationHandler = {
    async handle({ partner, annotate }) {
      const record = await portal.revoke(partner!);
      annotate({ portalAction: 'revoked' });
      const body: Portal.RevokedKey = { id: record.id, status: 'revoked', revokedAt: record.revokedAt! };
      return answer(200, body);
    },
  };
  const setPortalKeyOrigins: OperationHandler<unknown, Portal.OriginsRequest> = {
    async handle({ partner, body, annotate }) {
      const record = await portal.setOrigins(partner!, body.origins);
      annotate({ portalAction: 'origins-set' });
      const answered: Portal.KeyOrigins = { id: record.id, origins: originsOf(record) };
      return answer(200, answered);
    },
  };
  return { createPortalKey, getPortalKey, rotatePortalKey, revokePortalKey, setPortalKeyOrigins, ...webhookOperations(webhooks), ...tradeOperations(trades) };
}
