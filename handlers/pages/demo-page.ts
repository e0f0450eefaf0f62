// The demo page's markup (GET /demo, handlers/pages/demo.ts): the widget on API version 2, and a
// host script that funds a fresh sandbox party, listens for bestex:plan, executes the v2 plan with
// the SDK and the sandbox wallet, with no registry configuration (a v2 plan names its registries),
// and with a v2 client, which completes a plan whose venue first has the wallet sign a message
// (OneSwap, the best venue at the page's 1,000 CC).
// Kept apart from the route, which decides who may have the page and its key.

/** JSON for a <script>: nothing in it can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/** What the page's script is given: the service's origin, the page's demo key, and the sandbox ledger's address and token. */
export interface DemoSettings {
  readonly origin: string;
  readonly key: string;
  readonly ledgerUrl: string;
  readonly ledgerToken: string;
}

export function demoPage(settings: DemoSettings): string {
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
<p>The widget below quotes every venue and says which of them your wallet can execute. <strong>Create plan</strong> makes a plan
on the best of those with this page's demo key; the page then executes it as your wallet would (the SDK and the sandbox wallet,
told nothing but the plan) and the widget shows each status until the swap completes. Where the best venue is OneSwap, your
wallet first signs OneSwap's message, which proves the party is yours and moves no funds.
Your party, <code id="party"></code>, has been given 2000 CC on the sandbox ledger.</p>
<bestex-swap id="swap" api-version="2" from="CC" to="USDCx" amount="1000"></bestex-swap>
</main>
<script type="module" src="/sdk/widget.js"></script>
<script type="module">
import { createClientV2, execute, sandboxProvider } from '/sdk/sdk.js';
const settings = ${scriptJson(settings)};
const hex = Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('');
const party = 'demo-' + hex.slice(0, 8) + '::1220' + hex;
const swap = document.getElementById('swap');
document.getElementById('party').textContent = party;
swap.setAttribute('api-base', settings.origin);
swap.setAttribute('api-key', settings.key);
swap.setAttribute('party', party);
const provider = sandboxProvider({ ledgerUrl: settings.ledgerUrl, token: settings.ledgerToken, party });
window.demo = { party, funded: provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '2000' } } }) };
const client = createClientV2({ baseUrl: settings.origin, apiKey: settings.key });
swap.addEventListener('bestex:plan', async ({ detail }) => {
  await window.demo.funded;
  window.demo.result = await execute(detail.plan, { provider, client, hooks: swap.executionHooks() });
});
</script>
</body>
</html>
`;
}
