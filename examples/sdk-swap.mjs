// A swap through @bestex/sdk against `make run`: quote -> plan -> execute through the sandbox
// wallet, printing each status to the end. Run it from the repository, with `make run` going:
//
//   node examples/sdk-swap.mjs
//
// BESTEX_URL (default http://127.0.0.1:8080) is the service; the sandbox's ledger, token and token
// registries come from DATA_DIR/sandbox.json (DATA_DIR as the service reads it, ./data by default).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createClient, execute } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';

const sandbox = JSON.parse(readFileSync(path.join(process.env.DATA_DIR || './data', 'sandbox.json'), 'utf8'));
const party = `sdk-example::1220${randomBytes(32).toString('hex')}`;
const provider = sandboxProvider({ ledgerUrl: sandbox.ledger, token: sandbox.ledgerToken, party });
const client = createClient({ baseUrl: process.env.BESTEX_URL || 'http://127.0.0.1:8080' });

// The sandbox's faucet: 1000 CC for the new party (a real wallet holds its own).
await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '1000' } } });

const quote = await client.quote({ from: 'CC', to: 'USDCx', amount: '100' });
console.log(`quote: tradecraft nets ${quote.venues.find((v) => v.venueId === 'tradecraft').net} USDCx for 100 CC`);
const plan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `example-${Date.now()}` });
console.log(`plan: ${plan.planId}, floor ${plan.quoteRef.minReceive} USDCx, valid until ${plan.expiry}`);

const result = await execute(plan, {
  provider,
  // Each instrument admin's token registry: a real network's are its registries' (a Scan's for Amulet).
  registries: sandbox.registries,
  client,
  hooks: { onStatus: (status, detail) => console.log(`status: ${status}${detail.updateId ? ` (update ${detail.updateId})` : ''}${detail.note ? ` - ${detail.note}` : ''}`) },
});
console.log(`received ${result.received} USDCx, ${result.realised?.slippageBps} bps from the quote; the service reads ${result.outcome?.status} (${result.outcome?.agrees ? 'same update' : 'a different update'})`);
process.exitCode = result.status === 'COMPLETED' ? 0 : 1;
