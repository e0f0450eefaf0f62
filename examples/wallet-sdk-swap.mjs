// A swap from a partner's backend that holds its users' parties with Canton's wallet SDK
// (@canton-network/wallet-sdk): a party allocated on the participant, a plan from bestex, executed
// through @bestex/sdk/wallet-sdk's provider, printing each status to the end. Run it from the
// repository, with `make run` going:
//
//   node examples/wallet-sdk-swap.mjs             # a participant-hosted (internal) party
//   node examples/wallet-sdk-swap.mjs --external  # a party with its own key, signing here
//
// BESTEX_URL (default http://127.0.0.1:8080) is the service; the sandbox's participant, token and
// token registries come from DATA_DIR/sandbox.json (DATA_DIR as the service reads it, ./data by
// default). On a real network they are the partner's participant, its OAuth token and the
// instrument admins' registries.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CustomLogAdapter, SDK } from '@canton-network/wallet-sdk';
import { createClient, execute } from '@bestex/sdk';
import { walletSdkProvider } from '@bestex/sdk/wallet-sdk';

const sandbox = JSON.parse(readFileSync(path.join(process.env.DATA_DIR || './data', 'sandbox.json'), 'utf8'));
const external = process.argv.includes('--external');
const client = createClient({ baseUrl: process.env.BESTEX_URL || 'http://127.0.0.1:8080' });

// wallet-sdk reads a static token as a JWT (it checks the expiry): the sandbox's own token is one.
const sdk = await SDK.create({
  auth: { method: 'static', token: sandbox.ledgerToken },
  ledgerClientUrl: sandbox.ledger,
  logAdapter: new CustomLogAdapter((level, _context, message) => level === 'error' && console.error(message)),
});

const partyHint = `wallet-sdk-example-${Date.now()}`;
let provider;
if (external) {
  // The key stays with the backend (or in its HSM: pass `signer: async (hash) => signature` instead).
  const keys = sdk.keys.generate();
  const party = await sdk.party.external.create(keys.publicKey, { partyHint }).sign(keys.privateKey).execute();
  provider = walletSdkProvider({ sdk, party: party.partyId, signer: { privateKey: keys.privateKey } });
} else {
  provider = walletSdkProvider({ sdk, party: await sdk.party.internal.allocate({ partyHint }) });
}
const { partyId: party } = await provider.request({ method: 'getPrimaryAccount' });
console.log(`party: ${party} (${external ? 'external, signed here' : 'internal, signed by the participant'})`);

// The sandbox's faucet, on its participant: 1000 CC for the new party (a real party holds its own).
await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '1000' } } });

const quote = await client.quote({ from: 'CC', to: 'USDCx', amount: '100' });
console.log(`quote: tradecraft nets ${quote.venues.find((v) => v.venueId === 'tradecraft').net} USDCx for 100 CC`);
const plan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${partyHint}-1` });
console.log(`plan: ${plan.planId}, floor ${plan.quoteRef.minReceive} USDCx, valid until ${plan.expiry}`);

provider.on('txChanged', (event) => console.log(`wallet: ${event.status}${event.payload?.updateId ? ` (update ${event.payload.updateId})` : ''}`));
const result = await execute(plan, {
  provider,
  // Each instrument admin's token registry: a real network's are its registries' (a Scan's for Amulet).
  registries: sandbox.registries,
  client,
  hooks: { onStatus: (status, detail) => console.log(`status: ${status}${detail.updateId ? ` (update ${detail.updateId})` : ''}${detail.note ? ` - ${detail.note}` : ''}`) },
});
if (result.status === 'COMPLETED') {
  console.log(`received ${result.received} USDCx, ${result.realised?.slippageBps} bps from the quote; the service reads ${result.outcome?.status} (${result.outcome?.agrees ? 'same update' : 'a different update'})`);
} else {
  console.log(`ended ${result.status}${result.error ? `: ${result.error.message}` : ''}`);
}
process.exitCode = result.status === 'COMPLETED' ? 0 : 1;
