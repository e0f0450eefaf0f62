// GET /demo, in sandbox mode only: the demo page (demo-page.ts), where the widget plans a swap and
// the page executes it on the sandbox. Plan creation is key-gated: the page gets a demo partner key
// of its own, allowed only from the origin it is served to, which must be the service's own
// address (a forged Host gets no key); one active per origin, a new one revoking the one before.
// Never with VENUES=live.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { errorReply, sendError } from '../http/error-reply.js';
import { LOOPBACK_HOSTS } from '../../core/config.js';
import type { CoreServices } from '../../core/services.js';
import { newKey } from '../../core/keys/partner-keys.js';
import { demoPage } from './demo-page.js';

const DEMO_KEY_NAME = 'demo (sandbox)';

export function registerDemo(server: FastifyInstance, core: CoreServices): void {
  const { config, keyStore } = core;
  if (config.venuesMode !== 'sandbox' || config.ledgerToken === null) return;
  const keys = new Map<string, Promise<string>>();
  /** The demo key for `origin`: made once per origin while the service runs, the one before revoked. */
  const keyFor = (origin: string) => {
    let key = keys.get(origin);
    if (!key) {
      key = (async () => {
        for (const old of await keyStore.list()) {
          if (old.name === DEMO_KEY_NAME && old.status === 'active' && old.origins?.length === 1 && old.origins[0] === origin) await keyStore.revoke({ id: old.id }, new Date());
        }
        const issued = newKey(DEMO_KEY_NAME, 'partner-default', new Date(), [origin]);
        await keyStore.add(issued.record);
        return issued.key;
      })();
      keys.set(origin, key);
      key.catch(() => keys.delete(origin));
    }
    return key;
  };
  /** The origins the service itself answers at: its HOST (and the loopback names) with its bound port. */
  const ownOrigins = (): string[] => {
    const address = server.server.address() as AddressInfo | string | null;
    if (address === null || typeof address === 'string') return [];
    const { port } = address;
    const hosts = new Set([config.host.includes(':') ? `[${config.host}]` : config.host, ...LOOPBACK_HOSTS]);
    return [...hosts].map((host) => `http://${host}:${port}`);
  };
  server.get('/demo', async (request, reply) => {
    const origin = `${request.protocol}://${request.host}`;
    if (!ownOrigins().includes(origin)) return sendError(reply, errorReply('not_found', `no such path: GET /demo at ${request.host}: open it at the service's own address`));
    const key = await keyFor(origin);
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      // The page holds a ledger token and a demo key: no other site may frame it and click for a visitor.
      .header('content-security-policy', "frame-ancestors 'none'")
      .header('x-frame-options', 'DENY')
      .send(demoPage({ origin, key, ledgerUrl: config.ledgerUrl, ledgerToken: config.ledgerToken! }));
  });
}
