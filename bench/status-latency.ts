// Status latency: plans made on the sandbox, keyless and keyed in turn, each executed by the SDK's
// sandbox wallet through the real sandbox ledger, each plan's event stream opened (and its first
// event read) before its deposit. For every state change read from the ledger, the time from the
// ledger update's record time (the event's `at`) to the event's arrival at the stream's client.
// The sandbox ledger stamps record times with this machine's clock, as the service and this
// process read it: the difference is a latency here, where across machines it would hold their
// clocks' skew too. The keyed plans' partner has an endpoint registered at a receiver in this
// process (bench/webhook-receiver.ts): the same difference is taken on each delivery's arrival
// there, and every delivery's signature is checked after the run.
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Webhook } from 'standardwebhooks';
import type { PlanStatusEvent } from '../core/contract/v2.js';
import type { RunningSandbox } from './deployment.js';
import { openEventStream } from './sse-client.js';
import { startWebhookReceiver, type Delivered, type WebhookReceiver } from './webhook-receiver.js';

/** Plans executed; every other one keyed. */
export const STATUS_PLANS = 200;
/** Between two plans' starts: ten plans a second, 20 s for all of them. */
export const ARRIVAL_MS = 100;
/** How long a plan's stream may take to bring its terminal event once its deposit is submitted. */
export const PLAN_TIMEOUT_MS = 30_000;
/** The SDK's ends in which nothing reached the ledger. */
const NOTHING_ON_LEDGER: ReadonlySet<string> = new Set(['REFUSED', 'USER_REJECTED', 'SUBMIT_FAILED']);
/** States whose `at` is the service's clock (made, expired, unobserved), not a ledger update's record time. */
const SERVICE_CLOCK: ReadonlySet<string> = new Set(['plan.awaiting_signature', 'plan.planned', 'plan.expired', 'plan.unobserved']);

export interface LatencyRun {
  readonly plans: number;
  readonly keyed: number;
  /**
   * One per state change read from the ledger, in ms: its arrival at the client less the update's
   * record time; Infinity for each plan whose terminal event did not arrive within PLAN_TIMEOUT_MS.
   */
  readonly latenciesMs: readonly number[];
  /** Plans whose terminal event did not arrive within PLAN_TIMEOUT_MS. */
  readonly unarrived: number;
  /** How many plans ended in each terminal state. */
  readonly ends: Readonly<Record<string, number>>;
  /** Plans that could not be made or executed (an invalid run), one line each. */
  readonly failures: readonly string[];
  readonly elapsedMs: number;
  readonly webhooks: WebhookRun;
}

/** The keyed plans' events as their partner's endpoint received them. */
export interface WebhookRun {
  /**
   * One per state change read from the ledger, in ms: its first delivery's arrival at the receiver
   * less the update's record time; Infinity for each keyed plan whose terminal event was not
   * delivered within PLAN_TIMEOUT_MS.
   */
  readonly latenciesMs: readonly number[];
  /** Keyed plans whose terminal event was not delivered within PLAN_TIMEOUT_MS. */
  readonly undelivered: number;
  /** Events of keyed plans, before a terminal event that was delivered, that never were. */
  readonly missing: number;
  /** Requests the receiver got, and how many of them repeated a `webhook-id` it had already received (an attempt made again). */
  readonly requests: number;
  readonly repeated: number;
  /** Requests whose signature `standardwebhooks` did not verify with the endpoint's secret. */
  readonly unverified: number;
}

export interface LatencyTarget {
  /** The service's origin. */
  readonly url: string;
  readonly sandbox: RunningSandbox;
  readonly ledgerToken: string;
  /** A partner key the service holds, for the keyed plans. */
  readonly apiKey: string;
  /** Names this run's parties and idempotency keys apart from any other run's. */
  readonly runId: string;
}

/** The nearest-rank percentile `p` (0 to 1) of `values`; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * p) - 1)]!;
}

/** Registers `receiver` as the partner's endpoint through the key portal's API, as a partner does; its signing secret. */
async function registerEndpoint(url: string, apiKey: string, receiver: WebhookReceiver): Promise<string> {
  const response = await fetch(`${url}/portal/api/key/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ url: receiver.url }),
  });
  if (response.status !== 201) throw new Error(`registering the bench's webhook endpoint: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { secret: string }).secret;
}

export async function measureStatusLatency(target: LatencyTarget): Promise<LatencyRun> {
  const receiver = await startWebhookReceiver();
  try {
    const secret = await registerEndpoint(target.url, target.apiKey, receiver);
    const run = await measure(target, receiver);
    const verifier = new Webhook(secret);
    let unverified = 0;
    for (const { body, headers } of receiver.delivered) {
      try {
        verifier.verify(body, headers);
      } catch {
        unverified += 1;
      }
    }
    const ids = new Set(receiver.delivered.map((d) => d.headers['webhook-id']));
    return { ...run, webhooks: { ...run.webhooks, requests: receiver.delivered.length, repeated: receiver.delivered.length - ids.size, unverified } };
  } finally {
    await receiver.close();
  }
}

/** What the plans' run reads; the receiver's requests are counted and verified after it. */
type PlansRun = Omit<LatencyRun, 'webhooks'> & { readonly webhooks: Pick<WebhookRun, 'latenciesMs' | 'undelivered' | 'missing'> };

async function measure(target: LatencyTarget, receiver: WebhookReceiver): Promise<PlansRun> {
  const { url, sandbox, ledgerToken, apiKey, runId } = target;
  const ledger = sandbox.announcement.ledger;
  const keyless = createClientV2({ baseUrl: url });
  const keyed = createClientV2({ baseUrl: url, apiKey });
  const fund = async (party: string, token: string, amount: string) => {
    const response = await fetch(new URL('/sandbox/v1/fund', ledger), {
      method: 'POST',
      headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ party, token, amount }),
    });
    if (response.status !== 200) throw new Error(`funding ${token}: ${response.status} ${await response.text()}`);
  };

  const latenciesMs: number[] = [];
  const ends: Record<string, number> = {};
  const failures: string[] = [];
  let unarrived = 0;
  const webhookLatenciesMs: number[] = [];
  let undelivered = 0;
  let missing = 0;

  /** A keyed plan's deliveries once its wait is over: `delivered`, whether its terminal event was. */
  function readDeliveries(planId: string, delivered: boolean): void {
    if (!delivered) {
      undelivered += 1;
      webhookLatenciesMs.push(Number.POSITIVE_INFINITY);
      return;
    }
    // The first arrival of each event: an attempt cut short may be made again.
    const first = new Map<number, Delivered>();
    for (const d of receiver.of(planId)) if (!first.has(d.envelope!.data.seq)) first.set(d.envelope!.data.seq, d);
    const last = Math.max(...[...first.values()].filter((d) => d.envelope!.data.status.terminal).map((d) => d.envelope!.data.seq));
    for (let seq = 1; seq <= last; seq++) if (!first.has(seq)) missing += 1;
    for (const { envelope, receivedAtMs } of first.values()) if (!SERVICE_CLOCK.has(envelope!.data.type)) webhookLatenciesMs.push(receivedAtMs - Date.parse(envelope!.data.at));
  }

  async function onePlan(i: number): Promise<void> {
    const withKey = i % 2 === 1;
    const party = `${runId}-${i}::1220${'5'.repeat(64)}`;
    await fund(party, 'CC', '100');
    await fund(party, 'USDCx', '1000');
    const request = { from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${runId}-status-${i}` } as const;
    const plan = (await (withKey ? keyed : keyless).plan(request)) as V2.AppPlan | V2.ExecutionPlan;
    const stream = await openEventStream<PlanStatusEvent>(
      `${url}/api/v2/plan/events?planId=${plan.planId}${withKey ? '' : `&token=${(plan as V2.AppPlan).statusToken}`}`,
      withKey ? { 'x-api-key': apiKey } : {},
    );
    try {
      await stream.first;
      // The SDK follows the swap on the ledger too; it is stopped once the service's stream has ended.
      const stopWaiting = new AbortController();
      const executed = execute(plan, { provider: sandboxProvider({ ledgerUrl: ledger, token: ledgerToken, party }), signal: stopWaiting.signal });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), PLAN_TIMEOUT_MS)));
      const [ended, delivered] = await Promise.all([
        Promise.race([
          stream.ended.then(() => 'ended' as const),
          // Nothing on the ledger: the plan's status cannot change, and no latency is read.
          executed.then((result) => (NOTHING_ON_LEDGER.has(result.status) ? Promise.reject(new Error(`the SDK's execution ended ${result.status}`)) : new Promise<never>(() => undefined))),
          late,
        ]),
        // A keyed plan's partner is sent the same events, within the same time.
        withKey ? Promise.race([receiver.terminal(plan.planId).then(() => 'delivered' as const), late]) : null,
      ]).finally(() => {
        clearTimeout(timer);
        stopWaiting.abort();
      });
      await executed;
      if (withKey) readDeliveries(plan.planId, delivered === 'delivered');
      const last = stream.events.at(-1)?.data;
      if (ended === 'late') {
        unarrived += 1;
        latenciesMs.push(Number.POSITIVE_INFINITY);
        return;
      }
      if (!last?.status.terminal) throw new Error(`its stream ended at ${last?.type ?? 'no event'}, not at a terminal event`);
      ends[last.status.state] = (ends[last.status.state] ?? 0) + 1;
      for (const { data, receivedAtMs } of stream.events) if (!SERVICE_CLOCK.has(data.type)) latenciesMs.push(receivedAtMs - Date.parse(data.at));
    } finally {
      stream.close();
    }
  }

  // An open loop: plans start at a steady pace whatever became of the earlier ones, as independent
  // takers' do, so the follower learns new plans while it waits on others' deposits.
  const started = Date.now();
  const running: Array<Promise<void>> = [];
  for (let i = 0; i < STATUS_PLANS; i++) {
    const wait = started + i * ARRIVAL_MS - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    running.push(onePlan(i).catch((err: unknown) => void failures.push(`plan ${i} (${i % 2 === 1 ? 'keyed' : 'keyless'}): ${err instanceof Error ? err.message : String(err)}`)));
  }
  await Promise.all(running);
  return {
    plans: STATUS_PLANS,
    keyed: Math.floor(STATUS_PLANS / 2),
    latenciesMs,
    unarrived,
    ends,
    failures,
    elapsedMs: Date.now() - started,
    webhooks: { latenciesMs: webhookLatenciesMs, undelivered, missing },
  };
}
