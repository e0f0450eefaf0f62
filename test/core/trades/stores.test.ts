// Where the trade ledger is kept, as operators run the service: several instances on one Redis
// write one ledger (a plan made on either, followed by whichever holds the lease, read the same
// from both), and one instance alone keeps it in its data folder across a restart.
import t from 'tap';
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import type { TradePage } from '../../../core/contract/portal.js';
import { listen, testApp, type TestApp } from '../../helpers/app.js';
import { issueKey } from '../../helpers/keys.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { fund, testSandbox, type TestSandbox } from '../../helpers/sandbox.js';
import { tempDir } from '../../helpers/temp.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());
let takers = 0;

async function fundedTaker(sandbox: TestSandbox) {
  const party = `trades-${++takers}::1220${'5'.repeat(64)}`;
  await fund(sandbox, party, { CC: '100', USDCx: '100' });
  return { party, provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }) };
}

const trades = async (base: string, key: string): Promise<TradePage['trades']> => {
  const answer = await fetch(`${base}/portal/api/key/trades`, { headers: { 'x-api-key': key } });
  if (answer.status !== 200) throw new Error(`trades: ${answer.status} ${await answer.text()}`);
  return ((await answer.json()) as TradePage).trades;
};

/** Reads the ledger until `done` holds of it (the follower reads every 50 ms here); never a fixed wait. */
async function until(base: string, key: string, done: (rows: TradePage['trades']) => boolean): Promise<TradePage['trades']> {
  for (let i = 0; i < 600; i++) {
    const rows = await trades(base, key);
    if (done(rows)) return rows;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the ledger never read as expected');
}

const plan = (base: string, key: string, party: string, idempotencyKey: string) =>
  createClientV2({ baseUrl: base, apiKey: key }).plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey }) as Promise<V2.ExecutionPlan>;

t.test('"on Redis, two instances write one ledger: a plan made on either reads the same from both, followed to its outcome"', redisSkip(redis), async (t) => {
  const env = { REDIS_URL: `${redis!.url}/7`, PLAN_STATUS_POLL_MS: '50' };
  const a: TestApp = await testApp({ env });
  t.teardown(a.close);
  const b = await testApp({ env: { ...env, SANDBOX_URL: a.sandbox!.manifest.sandbox, LEDGER_TOKEN: a.sandbox!.ledgerToken } });
  t.teardown(b.close);
  const [baseA, baseB] = [await listen(a.server), await listen(b.server)];
  const { key } = await issueKey(a.core.keyStore, { name: 'two instances' });
  const first = await fundedTaker(a.sandbox!);
  const second = await fundedTaker(a.sandbox!);
  const onA = await plan(baseA, key, first.party, `${first.party}-a`);
  const onB = await plan(baseB, key, second.party, `${second.party}-b`);
  t.equal((await execute(onA, { provider: first.provider, client: createClientV2({ baseUrl: baseA, apiKey: key }) })).status, 'COMPLETED');
  t.equal((await execute(onB, { provider: second.provider, client: createClientV2({ baseUrl: baseB, apiKey: key }) })).status, 'COMPLETED');
  const fromA = await until(baseA, key, (rows) => rows.length === 2 && rows.every((r) => r.state === 'completed'));
  t.strictSame(fromA.map((r) => r.planId).sort(), [onA.planId, onB.planId].sort(), 'both plans, whichever instance made them');
  t.strictSame(await trades(baseB, key), fromA, 'the other instance reads the same ledger');
});

t.test('"one instance keeps its ledger in its data folder: after a restart nothing is lost, and the plan is followed on"', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(() => sandbox.close());
  const env = { DATA_DIR: tempDir(t, 'bestex-trades-'), SANDBOX_URL: sandbox.manifest.sandbox, LEDGER_TOKEN: sandbox.ledgerToken, PLAN_STATUS_POLL_MS: '50' };
  const first = await testApp({ env });
  const { key } = await issueKey(first.core.keyStore, { name: 'restarted' });
  const { party, provider } = await fundedTaker(sandbox);
  const firstBase = await listen(first.server);
  const made = await plan(firstBase, key, party, `${party}-restart`);
  const before = await trades(firstBase, key);
  await first.close();
  const second = await testApp({ env });
  t.teardown(second.close);
  const base = await listen(second.server);
  t.strictSame(await trades(base, key), before, 'the ledger as it was before the restart');
  t.equal((await execute(made, { provider, client: createClientV2({ baseUrl: base, apiKey: key }) })).status, 'COMPLETED');
  const [done] = await until(base, key, (rows) => rows[0]?.state === 'completed');
  t.equal(done!.planId, made.planId, 'followed to its outcome by the restarted instance');
  t.not(done!.received, null);
});
