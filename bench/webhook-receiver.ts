// A partner's webhook endpoint for the plan status section, as small as a server can be so that
// what it measures is the service: each request answered 200 as soon as its body has arrived, and
// kept with the wall-clock time it arrived. Signatures are checked after the run, off the measured
// path (bench/status-latency.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlanWebhook } from '../core/contract/v2.js';
import { HOST } from './processes.js';

export interface Delivered {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Date.now() when the request's last byte arrived. */
  readonly receivedAtMs: number;
  /** The body parsed; null when it is not a plan event's envelope. */
  readonly envelope: PlanWebhook | null;
}

export interface WebhookReceiver {
  /** The endpoint's URL, on loopback. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly delivered: readonly Delivered[];
  /** A plan's deliveries, in arrival order. */
  of(planId: string): readonly Delivered[];
  /** Settles once a delivery of a terminal event of `planId` has arrived. */
  terminal(planId: string): Promise<void>;
  close(): Promise<void>;
}

const parsed = (body: string): PlanWebhook | null => {
  try {
    const envelope = JSON.parse(body) as PlanWebhook;
    return typeof envelope?.data?.planId === 'string' ? envelope : null;
  } catch {
    return null;
  }
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const delivered: Delivered[] = [];
  const byPlan = new Map<string, Delivered[]>();
  const ended = new Set<string>();
  const waiting = new Map<string, () => void>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const receivedAtMs = Date.now();
      response.writeHead(200, { 'content-length': '0' }).end();
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
      const envelope = parsed(body);
      const kept = { headers, body, receivedAtMs, envelope };
      delivered.push(kept);
      if (envelope === null) return;
      const planId = envelope.data.planId;
      const ofPlan = byPlan.get(planId);
      if (ofPlan) ofPlan.push(kept);
      else byPlan.set(planId, [kept]);
      if (envelope.data.status.terminal) {
        ended.add(planId);
        waiting.get(planId)?.();
        waiting.delete(planId);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return {
    url: `http://${HOST}:${(server.address() as AddressInfo).port}/bench/webhooks`,
    delivered,
    of: (planId) => byPlan.get(planId) ?? [],
    terminal: (planId) => (ended.has(planId) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(planId, resolve))),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
