// The dApp: connects to the user's wallet through Canton's dApp providers (dapp-sdk's), quotes and
// plans with bestex, and executes the plan with @bestex/sdk through that wallet, writing each
// status to the page. Two kinds of wallet, as dapp-sdk reaches them:
//  - a browser extension: `DappSyncProvider` over `WindowTransport`, to the extension that answered
//    the page's SPLICE_WALLET_EXT_READY;
//  - a remote wallet gateway: `DappAsyncProvider` over HTTP and server-sent events, signed in
//    through the gateway's login page, which hands the session back to this page.
// ./config.json says where bestex, the registries and the gateway are (run.mjs writes it from the
// sandbox's manifest; a real dApp has them in its own configuration).
import { DappAsyncProvider, DappSyncProvider } from '@canton-network/core-provider-dapp';
import { WindowTransport } from '@canton-network/core-rpc-transport';
import { createClient, execute } from '@bestex/sdk';

const config = await (await fetch('./config.json')).json();
const client = createClient({ baseUrl: config.bestex });
const $ = (id) => document.getElementById(id);
const log = (line) => {
  $('log').textContent += `${line}\n`;
  console.log(line);
};

/** The extension that answers the page's ready call: its routing target, or null after a second of silence. */
function discoverExtension() {
  return new Promise((resolve) => {
    const timer = setTimeout(() => done(null), 1000);
    const heard = (event) => {
      if (event.source === window && event.data?.type === 'SPLICE_WALLET_EXT_ACK') done(event.data.target ?? null);
    };
    const done = (target) => {
      clearTimeout(timer);
      window.removeEventListener('message', heard);
      resolve(target);
    };
    window.addEventListener('message', heard);
    window.postMessage({ type: 'SPLICE_WALLET_EXT_READY' }, '*');
  });
}

async function connectRemote() {
  const provider = new DappAsyncProvider(config.walletGateway);
  const connection = await provider.request({ method: 'connect' });
  if (!connection.isConnected) {
    // The gateway's login page signs the user in and posts the session to this window, which the
    // provider hears; statusChanged says it has it.
    const signedIn = new Promise((resolve) => provider.on('statusChanged', resolve));
    log(`wallet: sign in at ${connection.userUrl}`);
    window.open(connection.userUrl, 'bestex-wallet-login', 'popup,width=480,height=640');
    await signedIn;
  }
  return provider;
}

async function connectExtension() {
  const target = await discoverExtension();
  if (!target) throw new Error('no wallet extension answered this page: install one (run.mjs loads the sandbox extension)');
  const provider = new DappSyncProvider(new WindowTransport(window, { target }));
  const connection = await provider.request({ method: 'connect' });
  if (!connection.isConnected) throw new Error(`the extension did not connect: ${connection.reason ?? 'no reason given'}`);
  return provider;
}

let provider = null;
let party = null;

$('connect').addEventListener('click', async () => {
  const kind = document.querySelector('input[name="wallet"]:checked').value;
  try {
    provider = kind === 'remote' ? await connectRemote() : await connectExtension();
    party = (await provider.request({ method: 'getPrimaryAccount' })).partyId;
    $('account').textContent = `Connected (${kind === 'remote' ? 'remote gateway' : 'extension'}): ${party}`;
    log(`connected: ${kind}`);
    $('swap').disabled = false;
  } catch (err) {
    log(`could not connect: ${err.message ?? JSON.stringify(err)}`);
  }
});

$('swap').addEventListener('click', async () => {
  $('swap').disabled = true;
  try {
    const amount = $('amount').value.trim();
    const quote = await client.quote({ from: 'CC', to: 'USDCx', amount });
    log(`quote: tradecraft nets ${quote.venues.find((v) => v.venueId === 'tradecraft').net} USDCx for ${amount} CC`);
    const plan = await client.plan({ from: 'CC', to: 'USDCx', amount, venueId: 'tradecraft', takerParty: party, idempotencyKey: crypto.randomUUID() });
    log(`plan: floor ${plan.quoteRef.minReceive} USDCx, valid until ${plan.expiry}`);
    const result = await execute(plan, {
      provider,
      registries: config.registries,
      client,
      hooks: {
        onStatus: (status, detail) => log(`status: ${status}${detail.updateId ? ` (update ${detail.updateId})` : ''}${detail.note ? ` - ${detail.note}` : ''}`),
        // A remote gateway waits for its user on its own page: a link the user follows, which no popup blocker stops.
        onApproval: ({ url }) => {
          $('approval-link').href = url;
          $('approval').hidden = false;
          log('wallet: approve the swap in your wallet');
        },
      },
    });
    $('approval').hidden = true;
    log(result.status === 'COMPLETED' ? `result: COMPLETED, received ${result.received} USDCx` : `result: ${result.status}${result.error ? ` - ${result.error.message}` : ''}`);
  } catch (err) {
    log(`result: failed - ${err.message ?? JSON.stringify(err)}`);
  } finally {
    $('swap').disabled = false;
  }
});
