// GET /demo, in sandbox mode only: the widget in a page of the service's own, with a host script
// that funds a fresh sandbox party, listens for bestex:plan, executes the plan with the SDK and
// the sandbox wallet, and shows each status until COMPLETED with the update id. Plan creation is
// key-gated: the page gets a demo partner key of its own, allowed only from the origin it is
// served to, which must be the service's own address (a forged Host gets no key); one active per
// origin, a new one revoking the one before. Never with VENUES=live.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { errorReply, sendError } from './http/error-reply.js';
import { LOOPBACK_HOSTS } from '../core/config.js';
import type { CoreServices } from '../core/services.js';
import { newKey } from '../core/keys/partner-keys.js';

const DEMO_KEY_NAME = 'demo (sandbox)';

/** JSON for a <script>: nothing in it can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

function page(settings: { origin: string; key: string; ledgerUrl: string; ledgerToken: string; registries: Readonly<Record<string, string>> }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>bestex demo: a swap on the sandbox</title>
<style>body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 44rem; padding: 0 1rem; } code { font-size: 13px; }</style>
</head>
<body>
<main>
<h1>bestex: a swap on the sandbox</h1>
<p>The widget below quotes every venue. <strong>Create plan</strong> makes a plan with this page's demo key; the page then
executes it as your wallet would (the SDK and the sandbox wallet) and the widget shows each status until the swap completes.
Your party, <code id="party"></code>, has been given 1000 CC on the sandbox ledger.</p>
<bestex-swap id="swap" from="CC" to="USDCx" amount="100"></bestex-swap>
</main>
<script type="module" src="/sdk/widget.js"></script>
<script type="module">
import { execute, sandboxProvider } from '/sdk/sdk.js';
const settings = ${scriptJson(settings)};
const hex = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');
const party = 'demo-' + hex.slice(0, 8) + '::1220' + hex;
const swap = document.getElementById('swap');
document.getElementById('party').textContent = party;
swap.setAttribute('api-base', settings.origin);
swap.setAttribute('api-key', settings.key);
swap.setAttribute('party', party);
const provider = sandboxProvider({ ledgerUrl: settings.ledgerUrl, token: settings.ledgerToken, party });
window.demo = { party, funded: provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '1000' } } }) };
swap.addEventListener('bestex:plan', async ({ detail }) => {
  await window.demo.funded;
  window.demo.result = await execute(detail.plan, { provider, registries: settings.registries, hooks: swap.executionHooks() });
});
</script>
</body>
</html>
`;
}

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
      .send(page({ origin, key, ledgerUrl: config.ledgerUrl, ledgerToken: config.ledgerToken!, registries: config.sandboxRegistries }));
  });
}
