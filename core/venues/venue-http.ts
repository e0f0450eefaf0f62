// What every real venue adapter needs of HTTP: JSON in and out within the quote's deadline (and
// the venue's own timeout, whichever ends first), with every JSON number kept as its source text,
// since a venue that answers `14.887162959697779` must never have that pass through a float on
// its way to an amount.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { parse } from 'lossless-json';
import { Decimal } from '../decimal.js';

/** Any way a venue can fail a request: what a probe reads as "not live" and a quote may map to a rejection. */
export class VenueFailure extends Error {}

/** The venue answered with an HTTP error status. */
export class VenueHttpError extends VenueFailure {
  override readonly name = 'VenueHttpError';
  /** The error body, parsed when it is JSON (numbers as text), else its text. */
  declare readonly body: unknown;

  constructor(
    readonly status: number,
    body: unknown,
  ) {
    super(`venue answered HTTP ${status}`);
    // Not enumerable, so a logged error never carries it: a venue may echo a key or a party in
    // its error body, or send a page of HTML.
    Object.defineProperty(this, 'body', { value: body, enumerable: false });
  }
}

/** The venue's answer could not be read: not JSON, or not the documented shape. */
export class VenueUnreadable extends VenueFailure {
  override readonly name = 'VenueUnreadable';
}

/** The venue did not answer within its timeout or the quote's deadline. */
export class VenueTimeout extends VenueFailure {
  override readonly name = 'VenueTimeout';
}

export interface VenueHttpOptions {
  /** e.g. https://api.tradecraft.fi/v1, no trailing slash. */
  readonly baseUrl: string;
  /** Sent on every request (credentials); never logged. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The venue's own limit per request, inside the quote's deadline. */
  readonly timeoutMs: number;
  /** Replaceable in tests (a `fetch` will do); nodeFetch by default. */
  readonly fetch?: VenueFetch;
}

/** The part of fetch an adapter uses. */
export type VenueFetch = (
  url: string,
  init: { readonly method: string; readonly headers: Record<string, string>; readonly body?: string; readonly signal: AbortSignal },
) => Promise<{ readonly status: number; text(): Promise<string> }>;

/** No venue answer the service reads is near this; a larger one is not read to its end. */
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
export const nodeFetch: VenueFetch = (url, init) =>
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

// Some venues' CDNs refuse Node's default fetch user agent.
const USER_AGENT = 'bestex/1 (+https://github.com/bestex)';

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
  fetch: VenueFetch,
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

export class VenueHttp {
  private readonly fetch: VenueFetch;

  constructor(private readonly options: VenueHttpOptions) {
    this.fetch = options.fetch ?? nodeFetch;
  }

  getJson(path: string, signal: AbortSignal): Promise<unknown> {
    return this.request('GET', path, undefined, signal);
  }

  postJson(path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    return this.request('POST', path, JSON.stringify(body), signal);
  }

  private async request(method: string, path: string, body: string | undefined, deadline: AbortSignal): Promise<unknown> {
    const headers = { accept: 'application/json', 'user-agent': USER_AGENT, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...this.options.headers };
    let text: string;
    let status: number;
    try {
      ({ status, text } = await fetchWithin(this.fetch, `${this.options.baseUrl}${path}`, { method, headers, body }, this.options.timeoutMs, deadline));
    } catch (err) {
      if (!(err instanceof FetchFailed)) throw err;
      if (err.timedOut) throw new VenueTimeout(`no answer from ${method} ${path} in time`);
      throw new VenueUnreadable(`${method} ${path} failed: ${err.code}`);
    }
    let parsed: unknown;
    try {
      parsed = parseJsonKeepingNumbers(text);
    } catch {
      if (status < 200 || status > 299) throw new VenueHttpError(status, text);
      throw new VenueUnreadable(`${method} ${path} answered ${status} with a body that is not JSON`);
    }
    if (status < 200 || status > 299) throw new VenueHttpError(status, parsed);
    return parsed;
  }
}

const DECIMAL_TEXT = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]{1,3})?$/;
/** Text longer than this is no amount any venue quotes. */
const MAX_NUMBER_CHARS = 64;
/**
 * Amounts within 1e-30 to 1e30 only: a venue sending 1e9000000000 would otherwise have the
 * service build a billion-digit string, synchronously, where no deadline can stop it.
 */
const MAX_EXPONENT = 30;

/**
 * A venue's amount (a JSON number's text, or a decimal string) as an exact Decimal; throws
 * VenueUnreadable, naming `field`, for anything else, a negative amount, or one out of range.
 */
export function decimalField(value: unknown, field: string): Decimal {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text.length > MAX_NUMBER_CHARS || !DECIMAL_TEXT.test(text)) throw new VenueUnreadable(`'${field}' is not a number: ${JSON.stringify(value)?.slice(0, MAX_NUMBER_CHARS)}`);
  const amount = new Decimal(text);
  if (amount.isNegative()) throw new VenueUnreadable(`'${field}' is negative: ${text}`);
  if (!amount.isZero() && Math.abs(amount.e) > MAX_EXPONENT) throw new VenueUnreadable(`'${field}' is out of range: ${text}`);
  return amount;
}

/**
 * A VenueHttpError's body as text, whatever its shape: the text itself when it was not JSON, else
 * the JSON again. Venues word their errors differently (a bare string, {"error"}, {"detail"},
 * {"message"}, a code field), so an adapter that must tell one error from another (an unknown
 * pool, a price-impact cap) matches its wording against this rather than against one field.
 */
export function errorBodyText(body: unknown): string {
  return typeof body === 'string' ? body : JSON.stringify(body) ?? '';
}

/** `value` as an object, or VenueUnreadable naming `what`. */
export function objectField(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new VenueUnreadable(`${what} is not an object`);
  return value as Record<string, unknown>;
}
