// The service's HTTP client, shared by the venue and ledger adapters: one request within its own
// timeout and the caller's deadline, over node:http(s) with kept-alive connections, its JSON read
// with every number kept as its source text, since a venue that answers `14.887162959697779` must
// never have that pass through a float on its way to an amount.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { parse } from 'lossless-json';

/** The part of fetch the adapters use. */
export type HttpFetch = (
  url: string,
  init: { readonly method: string; readonly headers: Record<string, string>; readonly body?: string; readonly signal: AbortSignal },
) => Promise<{ readonly status: number; text(): Promise<string> }>;

/** No venue or ledger answer the service reads is near this; a larger one is not read to its end. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

// Kept-alive connections per origin, as fetch keeps them: a quote then costs no TCP handshake.
// An idle one is dropped after 4 s (fetch's default), before a server or load balancer that
// closes idle connections without saying so could leave a dead one to be reused.
const IDLE_MS = 4_000;
const AGENTS = { 'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_MS }), 'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_MS }) };

/** An answer longer than MAX_RESPONSE_BYTES; its code is what a VenueUnreadable names. */
class ResponseTooLarge extends Error {
  readonly code = 'ERR_RESPONSE_TOO_LARGE';
}

/**
 * That part of fetch over node:http(s), with kept-alive connections. fetch's streams, signal
 * plumbing and request objects cost ~1.5 ms of CPU per venue request here (a fresh quote asks
 * five venues), against ~0.3 ms this way. Unlike fetch it follows no redirect (a venue's 3xx is
 * an error, and no credential goes to another host) and asks for no compression.
 */
export const nodeFetch: HttpFetch = (url, init) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const headers = init.body === undefined ? init.headers : { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) };
    const agent = target.protocol === 'https:' ? AGENTS['https:'] : AGENTS['http:'];
    const request = send(target, { method: init.method, headers, agent, signal: init.signal }, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) request.destroy(new ResponseTooLarge('the answer is too large'));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, text: async () => text });
      });
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(init.body);
  });

/** JSON text with every number as its source text (a string), so none is rounded by a float. */
export function parseJsonKeepingNumbers(text: string): unknown {
  return parse(text, null, (value: string) => value);
}

/**
 * A request that got no answer. `timedOut`: the request's own timeout or the caller's deadline
 * passed (`byDeadline` says which); else `code` names the failure: node:http's code, or fetch's
 * cause's, never a message, which may quote the whole URL.
 */
export class FetchFailed extends Error {
  override readonly name = 'FetchFailed';
  constructor(
    readonly timedOut: boolean,
    readonly byDeadline: boolean,
    readonly code: string,
  ) {
    super(timedOut ? 'no answer in time' : `request failed: ${code}`);
  }
}

/** One request and its whole answer's text, within `timeoutMs` and the caller's `deadline`; FetchFailed without an answer. */
export async function fetchWithin(
  fetch: HttpFetch,
  url: string,
  init: { readonly method: string; readonly headers: Record<string, string>; readonly body?: string },
  timeoutMs: number,
  deadline: AbortSignal,
): Promise<{ status: number; text: string }> {
  // A timer of our own rather than AbortSignal.timeout, whose timer does not keep the process
  // alive: a request that nothing else waits on would then never end.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const signal = AbortSignal.any([deadline, timeout.signal]);
  try {
    const response = await fetch(url, { ...init, signal });
    return { status: response.status, text: await response.text() };
  } catch (err) {
    if (signal.aborted) throw new FetchFailed(true, deadline.aborted, 'timeout');
    const code = (err as { code?: unknown }).code ?? (err as { cause?: { code?: unknown } }).cause?.code;
    throw new FetchFailed(false, false, typeof code === 'string' ? code : (err as Error).name);
  } finally {
    clearTimeout(timer);
  }
}
