// The endpoints a partner key registers for its plans' events, by the key's record id (`key_...`),
// so a key's rotation keeps them. Each has an https URL (plain http, and an internal address, only
// where the operator allows private addresses), the event types it hears (every type by default),
// whether it is enabled, and its signing secret, shown once when it is made or rotated. A rotation
// keeps the replaced secret signing for ROTATION_GRACE_MS, so a receiver can switch without a gap.
// Every change is logged with the key's and the endpoint's ids, never a secret or a URL (which
// may hold a token of the partner's).
import { randomBytes } from 'node:crypto';
import { DomainError } from '../errors.js';
import type { CoreLog } from '../log.js';
import { isRefusedAddress } from './address-guard.js';
import { isPlanEventType, PLAN_EVENT_TYPES, type PlanEventType } from './messages.js';
import { newSigningSecret, type SecretBox } from './secrets.js';
import type { StoredEndpoint, WebhookStore } from './store.js';

export const MAX_ENDPOINTS_PER_KEY = 5;
/** How long a replaced secret keeps signing after a rotation. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;
export const MAX_URL_LENGTH = 2048;

/** An endpoint as its partner sees it: no secret. */
export interface EndpointView {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: readonly PlanEventType[];
  readonly enabled: boolean;
  readonly createdAt: string;
  /** Until when the secret a rotation replaced still signs; null when none does. */
  readonly previousSecretExpiresAt: string | null;
}

/** An endpoint made or rotated: its secret, shown this once. */
export interface IssuedSecret {
  readonly endpoint: EndpointView;
  readonly secret: string;
}

export interface NewEndpoint {
  readonly url: string;
  readonly eventTypes?: readonly string[];
  readonly enabled?: boolean;
}

export interface EndpointChanges {
  readonly url?: string;
  readonly eventTypes?: readonly string[];
  readonly enabled?: boolean;
}

export interface EndpointOptions {
  readonly store: WebhookStore;
  readonly box: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE. */
  readonly allowPrivate: boolean;
  readonly now: () => Date;
  readonly log: CoreLog;
}

export class WebhookEndpoints {
  constructor(private readonly options: EndpointOptions) {}

  async list(partnerId: string): Promise<EndpointView[]> {
    const now = this.options.now();
    return (await this.options.store.endpoints(partnerId)).map((e) => viewOf(e, now));
  }

  /** Registers an endpoint; bad_request for a URL or event type it cannot take, or past MAX_ENDPOINTS_PER_KEY. */
  async create(partnerId: string, request: NewEndpoint): Promise<IssuedSecret> {
    const { store, box, now, log } = this.options;
    const url = checkedUrl(request.url, this.options.allowPrivate);
    const eventTypes = checkedEventTypes(request.eventTypes ?? PLAN_EVENT_TYPES);
    const id = `we_${randomBytes(15).toString('base64url')}`;
    const secret = newSigningSecret();
    const endpoint: StoredEndpoint = {
      id,
      partnerId,
      url,
      eventTypes,
      enabled: request.enabled ?? true,
      createdAt: now().toISOString(),
      secret: box.seal(id, secret),
      previousSecret: null,
      previousSecretUntil: null,
    };
    if (!(await store.addEndpoint(endpoint, MAX_ENDPOINTS_PER_KEY))) {
      throw new DomainError('bad_request', `a key has at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints: delete one first`);
    }
    log.info({ keyId: partnerId, endpointId: id, portalAction: 'webhook-created' }, 'portal: webhook endpoint created');
    return { endpoint: viewOf(endpoint, now()), secret };
  }

  /** Changes what is given; bad_request for a URL or event type it cannot take (checked first), not_found for an endpoint the key does not have. */
  async update(partnerId: string, id: string, changes: EndpointChanges): Promise<EndpointView> {
    const url = changes.url === undefined ? undefined : checkedUrl(changes.url, this.options.allowPrivate);
    const eventTypes = changes.eventTypes === undefined ? undefined : checkedEventTypes(changes.eventTypes);
    const current = await this.owned(partnerId, id);
    const changed: StoredEndpoint = { ...current, url: url ?? current.url, eventTypes: eventTypes ?? current.eventTypes, enabled: changes.enabled ?? current.enabled };
    if (!(await this.options.store.replaceEndpoint(changed))) throw unknownEndpoint(id);
    this.options.log.info({ keyId: partnerId, endpointId: id, portalAction: 'webhook-updated', enabled: changed.enabled }, 'portal: webhook endpoint updated');
    return viewOf(changed, this.options.now());
  }

  /** Removes the endpoint with its queued and past deliveries. */
  async remove(partnerId: string, id: string): Promise<void> {
    if (!(await this.options.store.removeEndpoint(partnerId, id))) throw unknownEndpoint(id);
    this.options.log.info({ keyId: partnerId, endpointId: id, portalAction: 'webhook-deleted' }, 'portal: webhook endpoint deleted');
  }

  /** A new secret; the one it replaces signs too for ROTATION_GRACE_MS. */
  async rotate(partnerId: string, id: string): Promise<IssuedSecret> {
    const { store, box, now, log } = this.options;
    const current = await this.owned(partnerId, id);
    const secret = newSigningSecret();
    const at = now();
    const rotated: StoredEndpoint = { ...current, secret: box.seal(id, secret), previousSecret: current.secret, previousSecretUntil: new Date(at.getTime() + ROTATION_GRACE_MS).toISOString() };
    if (!(await store.replaceEndpoint(rotated))) throw unknownEndpoint(id);
    log.info({ keyId: partnerId, endpointId: id, portalAction: 'webhook-secret-rotated' }, 'portal: webhook endpoint secret rotated');
    return { endpoint: viewOf(rotated, at), secret };
  }

  /** The partner's endpoint `id`; not_found when it has none of that id. */
  async owned(partnerId: string, id: string): Promise<StoredEndpoint> {
    const endpoint = (await this.options.store.endpoints(partnerId)).find((e) => e.id === id);
    if (!endpoint) throw unknownEndpoint(id);
    return endpoint;
  }

  /** The partner's enabled endpoints that hear `type`. */
  async subscribed(partnerId: string, type: PlanEventType): Promise<StoredEndpoint[]> {
    return (await this.options.store.endpoints(partnerId)).filter((e) => e.enabled && e.eventTypes.includes(type));
  }

  /** The secrets an attempt at `now` is signed with: the current one, and the replaced one during its grace period; empty when none opens. */
  signingSecrets(endpoint: StoredEndpoint, now: Date): string[] {
    const { box } = this.options;
    const inGrace = endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null && now.getTime() < Date.parse(endpoint.previousSecretUntil);
    const sealed = inGrace ? [endpoint.secret, endpoint.previousSecret!] : [endpoint.secret];
    return sealed.map((s) => box.open(endpoint.id, s)).filter((s): s is string => s !== null);
  }
}

function viewOf(endpoint: StoredEndpoint, now: Date): EndpointView {
  const until = endpoint.previousSecretUntil;
  return {
    id: endpoint.id,
    url: endpoint.url,
    eventTypes: endpoint.eventTypes,
    enabled: endpoint.enabled,
    createdAt: endpoint.createdAt,
    previousSecretExpiresAt: until !== null && now.getTime() < Date.parse(until) ? until : null,
  };
}

const unknownEndpoint = (id: string): DomainError => new DomainError('not_found', `this key has no webhook endpoint ${id}`);

/**
 * The URL as it is stored: https (http too where private addresses are allowed), no credentials or
 * fragment, and where they are not allowed, no host that is an internal address or names this
 * machine. A name that resolves to an internal address is refused when a delivery connects.
 */
export function checkedUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new DomainError('bad_request', 'url must be an absolute https URL, such as https://hooks.wallet.example/bestex');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new DomainError('bad_request', allowPrivate ? 'url must be an http or https URL' : 'url must be an https URL: webhooks are sent over TLS only');
  if (url.username || url.password) throw new DomainError('bad_request', 'url must not hold a user name or password: authenticate deliveries by their signature');
  if (url.hash) throw new DomainError('bad_request', 'url must not have a fragment (#...)');
  const host = url.hostname.toLowerCase();
  if (!allowPrivate && (isRefusedAddress(host) || host === 'localhost' || host.endsWith('.localhost'))) {
    throw new DomainError('bad_request', 'url must not name a private, loopback, link-local or otherwise internal address');
  }
  if (url.href.length > MAX_URL_LENGTH) throw new DomainError('bad_request', `url must be at most ${MAX_URL_LENGTH} characters`);
  return url.href;
}

/** The types, each once, in the order a plan reaches them; bad_request for none or an unknown one. */
function checkedEventTypes(raw: readonly string[]): PlanEventType[] {
  const unknown = raw.find((type) => !isPlanEventType(type));
  if (unknown !== undefined) throw new DomainError('bad_request', `eventTypes: ${JSON.stringify(unknown)} is not an event type (${PLAN_EVENT_TYPES.join(', ')})`);
  if (raw.length === 0) throw new DomainError('bad_request', 'eventTypes must name at least one event type');
  return PLAN_EVENT_TYPES.filter((type) => raw.includes(type));
}
