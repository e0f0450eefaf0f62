// Sends one attempt of a delivery (undici, the HTTP client Node's fetch is built on, used here for
// what fetch does not let a caller set: the connection's own address check). The host is resolved
// as the connection is made and refused when internal (address-guard.ts); an address written in
// the URL is checked the same way before connecting. Redirects are not followed (a 3xx is a
// failed attempt), the attempt has one deadline from connecting to the answer's status, and at
// most 64 KB of the answer is read before the connection is dropped.
import { performance } from 'node:perf_hooks';
import { Agent, buildConnector } from 'undici';
import { guardedLookup, isRefusedAddress, RefusedAddress, systemResolver, type Resolver } from './address-guard.js';
import type { AttemptError } from './store.js';

/** The most of an answer read: a receiver's answer is not used, only its status. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface SenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE: internal addresses allowed (tests, a private network). */
  readonly allowPrivate: boolean;
  readonly timeoutMs: number;
  /** How host names are resolved where internal addresses are refused; the system's resolver by default. */
  readonly resolve?: Resolver;
}

/** One attempt: the answer's status, or why there was none. */
export type Sent = { readonly status: number; readonly error: null; readonly durationMs: number } | { readonly status: null; readonly error: AttemptError; readonly durationMs: number };

/** An attempt cut short because the sender is closing: it is not an attempt, and is sent again. */
export class SendAborted extends Error {
  constructor() {
    super('the attempt was cut short by a shutdown');
  }
}

export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: SenderOptions) {
    const connector = buildConnector({
      timeout: options.timeoutMs,
      ...(options.allowPrivate ? {} : { lookup: guardedLookup(options.resolve ?? systemResolver) }),
    });
    this.agent = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 4_000,
      connect: (connectOptions, callback) => {
        // A literal address is never looked up: it is checked here.
        if (!options.allowPrivate && isRefusedAddress(connectOptions.hostname)) return callback(new RefusedAddress(connectOptions.hostname), null);
        connector(connectOptions, callback);
      },
    });
  }

  /** POSTs `body` to `url`; `closing` aborts it (SendAborted) when the sender shuts down. */
  async send(url: string, headers: Readonly<Record<string, string>>, body: string, closing: AbortSignal): Promise<Sent> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const answer = await this.agent.request({
        origin: new URL(url).origin,
        path: pathOf(url),
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'bestex-webhooks/1' },
        body,
        signal: AbortSignal.any([deadline, closing]),
      });
      const status = answer.statusCode;
      const durationMs = elapsed();
      await drain(answer.body);
      return { status, error: null, durationMs };
    } catch (err) {
      if (closing.aborted) throw new SendAborted();
      return { status: null, error: deadline.aborted ? 'timeout' : errorKind(err), durationMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.destroy();
  }
}

const pathOf = (url: string): string => {
  const parsed = new URL(url);
  return `${parsed.pathname}${parsed.search}`;
};

/** Reads at most MAX_ANSWER_BYTES of the answer and drops the rest with the connection; its failures change nothing. */
async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
  let read = 0;
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (read >= MAX_ANSWER_BYTES) break;
    }
  } catch {
    // The status was answered in time; what followed it does not matter.
  } finally {
    body.destroy();
  }
}

/** The kind of a failed attempt's error, from the error or what it wraps. */
function errorKind(err: unknown): AttemptError {
  const codes: string[] = [];
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  if (codes.includes('ERR_WEBHOOK_REFUSED_ADDRESS')) return 'refused_address';
  if (codes.some((c) => ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT'].includes(c))) return 'timeout';
  if (codes.some((c) => ['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL'].includes(c))) return 'dns_failed';
  if (codes.some((c) => c.startsWith('ERR_TLS') || c.startsWith('ERR_SSL') || c.includes('CERT') || c === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE')) return 'tls_failed';
  return 'connection_failed';
}
