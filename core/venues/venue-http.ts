// What every real venue adapter needs of HTTP: JSON in and out within the quote's deadline (and
// the venue's own timeout, whichever ends first), no amount passing through a float: a venue that
// sends amounts as JSON numbers names their fields (`amountFields`), and those keep their source
// text; a venue that sends them as strings is read with JSON.parse.
import { Decimal } from '../decimal.js';
import { FetchFailed, fetchWithin, originFetch, type HttpFetch } from '../http-client.js';
import { parseJsonKeepingFields } from '../json-numbers.js';
import type { Deadline } from './venue.js';

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
  /** Replaceable in tests (a `fetch` will do); a kept-alive pool to `baseUrl`'s origin by default. */
  readonly fetch?: HttpFetch;
  /**
   * The members, at any depth of an answer, whose JSON numbers are amounts: read as their source
   * text. Without them the answer is read with JSON.parse, for a venue whose amounts are strings
   * (a number where an adapter expects an amount is then refused, never rounded).
   */
  readonly amountFields?: readonly string[];
}

// Some venues' CDNs refuse Node's default fetch user agent.
const USER_AGENT = 'bestex/1 (+https://github.com/bestex)';

export class VenueHttp {
  private readonly fetch: HttpFetch;
  private readonly parse: (text: string) => unknown;
  // Made once: every request of this venue sends the same headers.
  private readonly getHeaders: Record<string, string>;
  private readonly postHeaders: Record<string, string>;

  constructor(private readonly options: VenueHttpOptions) {
    this.fetch = options.fetch ?? originFetch(options.baseUrl);
    const fields = options.amountFields && new Set(options.amountFields);
    this.parse = fields ? (text) => parseJsonKeepingFields(text, fields) : (text) => JSON.parse(text) as unknown;
    this.getHeaders = { accept: 'application/json', 'user-agent': USER_AGENT, ...options.headers };
    this.postHeaders = { accept: 'application/json', 'user-agent': USER_AGENT, 'content-type': 'application/json', ...options.headers };
  }

  /**
   * `deadline`: a quote's, or `untilAborted(signal)` for a probe, which only the venue's own timeout
   * ends. `headers`: this request's own, beside the venue's (an end user's credential); never logged.
   */
  getJson(path: string, deadline: Deadline, headers?: Readonly<Record<string, string>>): Promise<unknown> {
    return this.request('GET', path, undefined, deadline, headers);
  }

  postJson(path: string, body: unknown, deadline: Deadline, headers?: Readonly<Record<string, string>>): Promise<unknown> {
    return this.request('POST', path, JSON.stringify(body), deadline, headers);
  }

  private async request(method: string, path: string, body: string | undefined, deadline: Deadline, own: Readonly<Record<string, string>> | undefined): Promise<unknown> {
    const shared = body === undefined ? this.getHeaders : this.postHeaders;
    const headers = own ? { ...shared, ...own } : shared;
    let text: string;
    let status: number;
    try {
      ({ status, text } = await fetchWithin(this.fetch, `${this.options.baseUrl}${path}`, { method, headers, body }, this.options.timeoutMs, deadline.signal, deadline.endsAt));
    } catch (err) {
      if (!(err instanceof FetchFailed)) throw err;
      if (err.timedOut) throw new VenueTimeout(`no answer from ${method} ${path} in time`);
      throw new VenueUnreadable(`${method} ${path} failed: ${err.code}`);
    }
    let parsed: unknown;
    try {
      parsed = this.parse(text);
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
