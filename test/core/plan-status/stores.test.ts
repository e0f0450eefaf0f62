// Where plans' status is kept, as operators run the service: several instances on one Redis,
// where one follows the ledger (the lease holder) and a client on any instance receives every
// event, one event per state whoever follows; and one instance alone, whose plans and their
// events survive its restart in its data folder, the follower resuming them.
import t from 'tap';
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import type { PlanStatus, PlanStatusEvent } from '../../../core/contract/v2.js';
import { listen, testApp, type TestApp } from '../../helpers/app.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { tempDir } from '../../helpers/temp.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());
let takers = 0;

async function fundedTaker(app: TestApp | { manifest: { ledger: string }; ledgerToken: string }) {
  const sandbox = 'manifest' in app ? app : app.sandbox!;
  const party = `stores-${++takers}::1220${'8'.repeat(64)}`;
  const response = await fetch(new URL('/sandbox/v1/fund', sandbox.manifest.ledger), {
    method: 'POST',
    headers: { authorization: `Bearer ${sandbox.ledgerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party, token: 'CC', amount: '100' }),
  });
  if (response.status !== 200) throw new Error(`fund: ${response.status}`);
  return { party, provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }) };
}

async function terminal(base: string, planId: string, token: string): Promise<PlanStatus> {
  for (let i = 0; i < 600; i++) {
    const answer = await fetch(`${base}/api/v2/plan/status?planId=${planId}&token=${token}`);
    const body = (await answer.json()) as PlanStatus;
    if (answer.status === 200 && body.terminal) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('never terminal');
}

const plan = (base: string, party: string, key: string) =>
  createClientV2({ baseUrl: base }).plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: key }) as Promise<V2.AppPlan>;

t.test('"on Redis, a client on any instance receives every event, one per state, whichever instance follows the ledger"', redisSkip(redis), async (t) => {
  const env = { REDIS_URL: `${redis!.url}/3`, PLAN_STATUS_POLL_MS: '50' };
  const a = await testApp({ env });
  t.teardown(a.close);
  const b = await testApp({ env: { ...env, SANDBOX_URL: a.sandbox!.manifest.sandbox, LEDGER_TOKEN: a.sandbox!.ledgerToken } });
  t.teardown(b.close);
  const [baseA, baseB] = [await listen(a.server), await listen(b.server)];
  const { party, provider } = await fundedTaker(a);
  const made = await plan(baseA, party, `${party}-redis`);
  const streamed = fetch(`${baseB}/api/v2/plan/events?planId=${made.planId}&token=${made.statusToken}&lastEventId=0`).then((r) => r.text());
  const result = await execute(made, { provider, client: createClientV2({ baseUrl: baseA }) });
  t.equal(result.status, 'COMPLETED');
  const events = [...(await streamed).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as PlanStatusEvent);
  t.strictSame(events.map((e) => e.seq), events.map((_, i) => i + 1), "the other instance's client: every event in order");
  t.equal(events.at(-1)!.status.state, 'completed');
  t.equal(new Set(events.map((e) => e.status.state)).size, events.length, 'one event per state: no follower appended twice');
  const [onA, onB] = [await terminal(baseA, made.planId, made.statusToken!), await terminal(baseB, made.planId, made.statusToken!)];
  t.strictSame(onA, onB, 'both instances answer the same status');
  t.strictSame(onB, events.at(-1)!.status, 'the same as the last event');
});

t.test('"with the lease holder gone, another instance follows: a plan made after it stopped still completes"', redisSkip(redis), async (t) => {
  const env = { REDIS_URL: `${redis!.url}/4`, PLAN_STATUS_POLL_MS: '50' };
  const sandbox = await testSandbox();
  t.teardown(() => sandbox.close());
  const shared = { ...env, SANDBOX_URL: sandbox.manifest.sandbox, LEDGER_TOKEN: sandbox.ledgerToken };
  const a = await testApp({ env: shared });
  const b = await testApp({ env: shared });
  t.teardown(b.close);
  const baseB = await listen(b.server);
  // A started first and holds the lease: it goes, and B takes the lease once it lapses.
  await a.close();
  const { party, provider } = await fundedTaker(sandbox);
  const made = await plan(baseB, party, `${party}-lease`);
  const result = await execute(made, { provider, client: createClientV2({ baseUrl: baseB }) });
  t.equal(result.status, 'COMPLETED');
  const done = await terminal(baseB, made.planId, made.statusToken!);
  t.equal(done.state, 'completed');
  t.equal(done.received, result.received);
});

t.test('"one instance keeps its plans in its data folder: after a restart the status is there and the follower resumes it"', async (t) => {
  const sandbox = await testSandbox();
  t.teardown(() => sandbox.close());
  const env = { DATA_DIR: tempDir(t, 'bestex-status-'), SANDBOX_URL: sandbox.manifest.sandbox, LEDGER_TOKEN: sandbox.ledgerToken, PLAN_STATUS_POLL_MS: '50' };
  const first = await testApp({ env });
  const { party, provider } = await fundedTaker(sandbox);
  const made = await plan(await listen(first.server), party, `${party}-restart`);
  await first.close();
  const second = await testApp({ env });
  t.teardown(second.close);
  const base = await listen(second.server);
  const kept = (await (await fetch(`${base}/api/v2/plan/status?planId=${made.planId}&token=${made.statusToken}`)).json()) as PlanStatus;
  t.match(kept, { planId: made.planId, state: 'planned', seq: 1 }, 'kept across the restart');
  const result = await execute(made, { provider, client: createClientV2({ baseUrl: base }) });
  t.equal(result.status, 'COMPLETED');
  const done = await terminal(base, made.planId, made.statusToken!);
  t.equal(done.state, 'completed', 'followed to its outcome by the restarted instance');
  t.equal(done.history[0]!.at, kept.history[0]!.at, 'its history continues the one kept before the restart');
});
