// createClientV2's watch against the real service on its sandbox, as a partner and a keyless app
// use the package: "the events of a completed swap agree with execute()'s result" (planned, deposit
// seen while the pool waits, completed; what was received and the ledger updates the SDK's own),
// for a keyless plan read with its statusToken taken from the plan and a keyed plan read with its
// key; "a dropped stream resumes from the last seq, none missed or repeated" through the service's
// own lastEventId; and "a plan the caller may not read is plan_not_found".
import t, { type Test } from 'tap';
import { BestexError, createClientV2, execute, type ExecutionResult, type Fetch, type PlanWatch, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { listen, testApp } from '../helpers/app.js';
import { issueKey } from '../helpers/keys.js';

const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1', PLAN_STATUS_POLL_MS: '50', SSE_HEARTBEAT_MS: '200' } });
t.teardown(app.close);
const baseUrl = await listen(app.server);
const { key } = await issueKey(app.core.keyStore);
const sandbox = app.sandbox!;

let takers = 0;
async function taker() {
  const party = `sdk-watch-${++takers}::1220${'9'.repeat(64)}`;
  const provider = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party });
  await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '100' } } });
  return { party, provider };
}

async function collect(watch: PlanWatch): Promise<V2.PlanStatusEvent[]> {
  const events: V2.PlanStatusEvent[] = [];
  for await (const event of watch) events.push(event);
  return events;
}

/** What the service's events of a completed swap must say, held to the SDK's own result. */
function agrees(t: Test, events: readonly V2.PlanStatusEvent[], result: ExecutionResult): void {
  t.equal(result.status, 'COMPLETED', 'the wallet\'s own view: completed');
  t.strictSame(events.map((e) => e.seq), events.map((_, i) => i + 1), 'every event from 1, none missed or repeated');
  t.strictSame(events.map((e) => e.status.state), ['planned', 'deposit_seen', 'completed']);
  t.strictSame(events.map((e) => e.type), ['plan.planned', 'plan.deposit_seen', 'plan.completed'], 'each event\'s type is its state');
  t.ok(events.every((e) => e.planId === result.planId && e.status.terminal === (e.seq === events.length)), 'of the plan executed, terminal last only');
  const last = events.at(-1)!.status;
  t.equal(last.received, result.received, 'received: what the wallet received');
  t.match(last.legs, [{ leg: 0, venueId: 'tradecraft', state: 'completed', basis: 'ledger', depositUpdateId: result.submittedUpdateId, settlementUpdateId: result.depositUpdateId, received: result.received }], 'its deposit and settling updates the SDK\'s own');
  t.strictSame(last.history.map((h) => h.state), ['planned', 'deposit_seen', 'completed']);
}

type PlanOf<C extends ReturnType<typeof createClientV2>> = Awaited<ReturnType<C['plan']>>;

/**
 * A 100 CC plan on tradecraft executed through the sandbox wallet while `watch` follows it; the
 * pool answers only once the watch has heard the deposit, so each state is an event of its own.
 */
async function executeWatched(client: ReturnType<typeof createClientV2>, follow: (plan: PlanOf<typeof client>) => PlanWatch) {
  const { party, provider } = await taker();
  const plan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-plan` });
  sandbox.ledger.setOperatorPaused(true);
  const watch = follow(plan);
  const heard: Array<V2.PlanState> = [];
  // Heard, or the watch ended without it (the checks below then say so).
  const deposited = new Promise<void>((resolve) => {
    void (async () => {
      for await (const event of watch) {
        heard.push(event.status.state);
        if (event.status.state === 'deposit_seen') resolve();
      }
    })()
      .catch(() => undefined)
      .finally(resolve);
  });
  const executed = execute(plan as Parameters<typeof execute>[0], { provider, client });
  await deposited;
  sandbox.ledger.setOperatorPaused(false);
  const result = await executed;
  await watch.done;
  return { plan, result, events: await collect(watch), heard };
}

t.test('"the events of a completed swap agree with execute()\'s result": a keyless plan, watched with its statusToken taken from the plan, from its first event', async (t) => {
  const keyless = createClientV2({ baseUrl });
  const { plan, result, events, heard } = await executeWatched(keyless, (plan) => keyless.watch(plan, { lastEventId: 0 }));
  t.match((plan as V2.AppPlan).statusToken, /^st_/, 'a keyless plan carries its statusToken');
  agrees(t, events, result);
  t.strictSame(heard, ['planned', 'deposit_seen', 'completed'], 'heard as they came');
  t.strictSame(await keyless.getPlanStatus(plan), events.at(-1)!.status, 'getPlanStatus: the last event\'s status');
  await t.rejects(keyless.watch(plan.planId).done, { name: 'BestexError', status: 404, code: 'plan_not_found' }, 'without its token: plan_not_found');
});

t.test('"a keyed plan is read with its key", and "a dropped stream resumes from the last seq": the first connection cut after its first event', async (t) => {
  const urls: string[] = [];
  // The platform's fetch, but the first stream is cut once it has carried the plan's first event.
  const cutting: Fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    const url = String(input);
    if (!url.includes('/api/v2/plan/events')) return response;
    urls.push(url);
    if (urls.length > 1 || !response.body) return response;
    const reader = response.body.getReader();
    let text = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = await reader.read();
        if (chunk.done) return controller.close();
        controller.enqueue(chunk.value);
        text += new TextDecoder().decode(chunk.value);
        if (/^id: 1$/m.test(text) && text.endsWith('\n\n')) {
          await reader.cancel();
          controller.error(new Error('connection reset'));
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const keyed = createClientV2({ baseUrl, apiKey: key, fetch: cutting });
  const { plan, result, events } = await executeWatched(keyed, (plan) => keyed.watch(plan.planId, { lastEventId: 0 }));
  t.equal((plan as V2.ExecutionPlan).statusToken, undefined, 'a keyed plan carries no token');
  agrees(t, events, result);
  t.equal(urls.length, 2, 'opened again once');
  t.equal(new URL(urls[1]!).searchParams.get('lastEventId'), '1', 'from the last seq received');
  const error = await createClientV2({ baseUrl }).watch(plan.planId).done.catch((err: unknown) => err);
  t.ok(error instanceof BestexError && error.code === 'plan_not_found', 'without its key: plan_not_found');
});
