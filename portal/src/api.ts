// The portal's operations (openapi/portal.yaml), called from the page's own origin. The key travels
// only as the x-api-key header of a request, never in a URL; answers are never cached.
import type * as Portal from './contract/portal.js';

/** An answer that is not 2xx, as the contract's `{error, code, action?}` says it, with its Retry-After when it has one. */
export class PortalError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly action: string | null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

const retryAfter = (response: Response): number | null => {
  const value = response.headers.get('retry-after');
  return value !== null && /^[0-9]+$/.test(value) ? Number(value) : null;
};

async function send(method: 'GET' | 'POST', path: string, key: string | null, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (key !== null) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
  } catch {
    throw new PortalError(0, 'network', 'the service could not be reached', 'check your connection and try again');
  }
  if (response.ok) return response;
  const error = (await response.json().catch(() => null)) as Partial<Portal.Error> | null;
  throw new PortalError(
    response.status,
    error?.code ?? 'internal',
    error?.error ?? `the service answered ${response.status}`,
    error?.action ?? null,
    retryAfter(response),
  );
}

async function call<T>(method: 'GET' | 'POST', path: string, key: string | null, body?: unknown): Promise<T> {
  const response = await send(method, path, key, body);
  const answer: unknown = await response.json().catch(() => null);
  if (answer === null) throw new PortalError(response.status, 'internal', 'the service\'s answer was not JSON', 'reload the page and try again');
  return answer as T;
}

export const createKey = (name: string, origins: string[]) =>
  call<Portal.IssuedKey>('POST', '/portal/api/keys', null, origins.length > 0 ? { name, origins } : { name });
export const readKey = (key: string) => call<Portal.KeyView>('GET', '/portal/api/key', key);
export const rotateKey = (key: string) => call<Portal.IssuedKey>('POST', '/portal/api/key/rotate', key);
export const revokeKey = (key: string) => call<Portal.RevokedKey>('POST', '/portal/api/key/revoke', key);
export const setOrigins = (key: string, origins: string[]) => call<Portal.KeyOrigins>('POST', '/portal/api/key/origins', key, { origins });
export const listWebhooks = (key: string) => call<Portal.WebhookEndpoints>('GET', '/portal/api/key/webhooks', key);
export const createWebhook = (key: string, url: string, eventTypes: Portal.WebhookEventType[]) =>
  call<Portal.IssuedWebhookSecret>('POST', '/portal/api/key/webhooks', key, { url, eventTypes });
export const setWebhookEnabled = (key: string, id: string, enabled: boolean) => call<Portal.WebhookEndpoint>('POST', '/portal/api/key/webhooks/update', key, { id, enabled });
export const rotateWebhookSecret = (key: string, id: string) => call<Portal.IssuedWebhookSecret>('POST', '/portal/api/key/webhooks/rotate', key, { id });
export const deleteWebhook = (key: string, id: string) => call<Portal.DeletedWebhookEndpoint>('POST', '/portal/api/key/webhooks/delete', key, { id });
// The endpoint's id in the query: an id, not a secret.
export const listDeliveries = (key: string, endpointId: string) => call<Portal.WebhookDeliveries>('GET', `/portal/api/key/webhooks/deliveries?endpointId=${encodeURIComponent(endpointId)}`, key);
export const replayDelivery = (key: string, endpointId: string, webhookId: string) => call<Portal.WebhookDelivery>('POST', '/portal/api/key/webhooks/replay', key, { endpointId, webhookId });

/** Which of the key's plans: UTC days, both included, and the states kept (all when empty). */
export interface TradeFilter {
  readonly from: string;
  readonly to: string;
  readonly status: readonly Portal.TradeState[];
}

// Days, states and a cursor in the query: none is a secret.
function tradeQuery(filter: TradeFilter, more: Record<string, string> = {}): string {
  const query = new URLSearchParams({ from: filter.from, to: filter.to });
  if (filter.status.length > 0) query.set('status', filter.status.join(','));
  for (const [name, value] of Object.entries(more)) query.set(name, value);
  return query.toString();
}

export const listTrades = (key: string, filter: TradeFilter, limit: number, cursor: string | null) =>
  call<Portal.TradePage>('GET', `/portal/api/key/trades?${tradeQuery(filter, { limit: String(limit), ...(cursor === null ? {} : { cursor }) })}`, key);
/** Without days, the service's default (the last 30 UTC days), which the answer's `from` and `to` name. */
export const tradeSummary = (key: string, days?: Pick<TradeFilter, 'from' | 'to'>) =>
  call<Portal.TradeSummary>('GET', `/portal/api/key/trades/summary${days === undefined ? '' : `?${tradeQuery({ ...days, status: [] })}`}`, key);
/** The plans as the service's CSV, as text. */
export const exportTrades = async (key: string, filter: TradeFilter) => (await send('GET', `/portal/api/key/trades/export?${tradeQuery(filter)}`, key)).text();
