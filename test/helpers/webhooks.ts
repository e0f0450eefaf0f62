// Partner webhooks in tests: a receiver (a local HTTP server that keeps every request and answers
// as the test says: a status, or nothing at all, for a time-out), plan events as the plan status
// store hands them to the sink, and a dispatcher on a test's configuration with its log kept.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PlanStatusEvent } from '../../core/contract/v2.js';
import type { CoreLog } from '../../core/log.js';
import type { WebhookDispatcher } from '../../core/webhooks/dispatcher.js';
import { openWebhooks, type WebhookOptions } from '../../core/webhooks/open.js';
import { testConfig } from './app.js';

export interface Received {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly path: string;
}

/** What the receiver answers a request with: a status, or `hang` (no answer until it closes). */
export type Answer = number | 'hang';

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Resolves once `check` holds of what was received, checked as each request arrives. */
  until(check: (received: readonly Received[]) => boolean): Promise<void>;
  close(): Promise<void>;
}

/** A receiver on 127.0.0.1 answering each request with `answer(request, index)` (200 by default); closed when `t` ends. */
export async function startReceiver(t: { teardown(fn: () => unknown): void }, answer: (request: Received, index: number) => Answer = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const waiting = new Set<() => void>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      const kept: Received = { headers, body, path: request.url ?? '/' };
      const index = received.length;
      received.push(kept);
      const status = answer(kept, index);
      if (status !== 'hang') response.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      for (const check of waiting) check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  t.teardown(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/bestex`,
    received,
    until: (check) =>
      new Promise<void>((resolve) => {
        const settle = () => {
          if (!check(received)) return;
          waiting.delete(settle);
          resolve();
        };
        waiting.add(settle);
        settle();
      }),
    close,
  };
}

/** A plan id as the service makes them. */
export const planIdOf = (n: number): string => `pl_${String(n).padStart(22, 'A')}`;

/** A plan's event `seq`, reaching `state`. */
export function planEvent(planId: string, seq: number, state: PlanStatusEvent['status']['state'] = 'planned'): PlanStatusEvent {
  const at = new Date(Date.UTC(2026, 10, 26, 12, 0, seq)).toISOString();
  const terminal = !['awaiting_signature', 'planned', 'deposit_seen'].includes(state);
  return {
    type: `plan.${state}`,
    planId,
    seq,
    at,
    status: {
      planId,
      state,
      terminal,
      seq,
      updatedAt: at,
      expiry: '2026-11-26T12:05:00.000Z',
      pair: { give: 'Amulet', want: 'USDCx' },
      amount: '100',
      minReceive: '14.9',
      received: state === 'completed' ? '15' : null,
      legs: [{ leg: 0, venueId: 'tradecraft', amount: '100', minReceive: '14.9', state, basis: 'ledger', depositUpdateId: null, settlementUpdateId: null, received: state === 'completed' ? '15' : null }],
      history: Array.from({ length: seq }, (_, i) => ({ state: i + 1 === seq ? state : 'planned', seq: i + 1, at })),
    },
  };
}

export interface Logged {
  readonly level: 'info' | 'warn' | 'error';
  readonly fields: Record<string, unknown>;
  readonly message: string;
}

/** A log that keeps its lines. */
export function keptLog(): CoreLog & { readonly lines: Logged[] } {
  const lines: Logged[] = [];
  const at = (level: Logged['level']) => (fields: Record<string, unknown>, message: string) => void lines.push({ level, fields, message });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Fast retries for tests: 20 ms first, at most 80 ms apart, given up after 3 s; a time-out a loaded machine does not reach. */
export const FAST_RETRIES: Record<string, string> = {
  WEBHOOK_FIRST_RETRY_MS: '20',
  WEBHOOK_MAX_ATTEMPT_INTERVAL_MS: '80',
  WEBHOOK_RETRY_FOR_MS: '3000',
  WEBHOOK_TIMEOUT_MS: '5000',
};

/** A dispatcher on a test configuration (its own DATA_DIR unless `env` names one), closed when `t` ends unless closed before. */
export async function testDispatcher(
  t: { teardown(fn: () => unknown): void },
  env: Record<string, string> = {},
  options: WebhookOptions = {},
): Promise<{ dispatcher: WebhookDispatcher; log: ReturnType<typeof keptLog>; dataDir: string; close: () => Promise<void> }> {
  const log = keptLog();
  const config = testConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', ...FAST_RETRIES, ...env });
  const dispatcher = await openWebhooks(config, log, options);
  let closed: Promise<void> | null = null;
  const close = () => (closed ??= dispatcher.close());
  t.teardown(close);
  return { dispatcher, log, dataDir: config.dataDir, close };
}
