// One access-log line per request, written as its answer is handed to the socket (the app's onSend
// hook): the request id (the one its answer carries in x-request-id), method, route pattern,
// status and latency, plus the fields a handler annotated and, on an error, its code. Never the
// URL (its query may hold a party id) and never headers (they may hold a key).
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import type { OutcomeStatus } from '../../core/contract/v1.js';
import type { RateLimitName } from '../../core/metrics.js';
import type { ErrorCode } from './error-catalogue.js';
import type { RequestMetrics } from './prometheus-metrics.js';

/** What a handler may add to its request's access-log line: a closed set, so no secret or party id can be. */
export interface AccessLogFields {
  /** `hit`: the base body came from a cache (this instance's or the shared one) or a computation in flight; `miss`: this request started its computation. */
  quoteCache?: 'hit' | 'miss';
  /** The caller's attribution slug (schema-checked). */
  ref?: string;
  /** On plans: `created` when this request made the plan, `replayed` when it got a plan made before under its idempotencyKey; `completed` when a plan's signature completed it (or a retry got it again). */
  plan?: 'created' | 'replayed' | 'completed';
  /** On outcomes: the status answered (never the party asked about). */
  outcome?: OutcomeStatus | 'venue_failed';
  /** The verified key's record id (`key_...`, never the key): attributes a keyed request's traffic. */
  partnerId?: string;
  /** On the key portal's operations: the signed-in or new key's record id (`key_...`, never the key); portal traffic is not API traffic, so it is not `partnerId`. */
  keyId?: string;
  /** On the key portal's operations: what was done to the key, or to its webhook endpoints, or what of its trades was read. */
  portalAction?:
    | 'created'
    | 'viewed'
    | 'rotated'
    | 'revoked'
    | 'origins-set'
    | 'webhooks-viewed'
    | 'webhook-created'
    | 'webhook-updated'
    | 'webhook-deleted'
    | 'webhook-secret-rotated'
    | 'webhook-deliveries-viewed'
    | 'webhook-replayed'
    | 'trades-viewed'
    | 'trades-summarised'
    | 'trades-exported';
  /** On every error answer: its code, so an operator can tell refusals of one status apart. */
  code?: ErrorCode;
  /** On a 429: the limit that refused it. */
  rateLimit?: RateLimitName;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Extra fields for this request's access-log line; null until a handler annotates one. */
    logFields: AccessLogFields | null;
    /** The route pattern, set by the operation routes: fastify's routeOptions builds a dozen-field object on each read. */
    routeUrl: string | null;
    /** The operation's id, set by the operation routes as they run its handler; null for any other request. */
    operationId: string | null;
    /** performance.now() when the request was routed: its latency is counted from here. */
    receivedAt: number;
  }
}

export const REQUEST_COMPLETED = 'request completed';

const { chindingsSym, endSym, formattersSym, hooksSym, lsCacheSym, messageKeySym, mixinSym, needsMetadataGsym, streamSym, timeSym } = pino.symbols;
// Exported by pino at run time, not in its type declarations.
const { msgPrefixSym } = pino.symbols as unknown as { readonly msgPrefixSym: symbol };

/** A part of a pino logger's lines, by the symbol pino exports for it. */
const part = <T>(logger: Logger, sym: symbol): T => (logger as unknown as Record<symbol, T>)[sym] as T;

interface LineStream {
  write(line: string): unknown;
}

/** Whether `s` is printable ASCII but '"' and '\', so its JSON text is itself between quotes. */
function isPlain(s: string): boolean {
  // A loop, not a regular expression: for the few short strings per line it costs a tenth.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** The JSON text of `s`, exactly as JSON.stringify writes it. */
export const jsonString = (s: string): string => (isPlain(s) ? `"${s}"` : JSON.stringify(s));

/**
 * The access-log line as `log.info(fields, 'request completed')` writes it, byte for byte, built
 * directly: pino's generic serialiser (a serializer, stringifier and escape check per key) cost
 * a cached quote ~12,000 of its ~108,000 instructions, this ~3,000 (valgrind, 20,000 requests).
 * Null when the logger does something to its lines that this does not (a mixin, a log formatter,
 * a message prefix, a stream-write hook, a stream that routes by level): those get pino's line.
 */
export function directLineWriter(logger: Logger): ((fields: string) => void) | null {
  const stream = part<LineStream>(logger, streamSym);
  const routesByLevel = (stream as unknown as Record<symbol, unknown>)[needsMetadataGsym] === true;
  const reshapes = part<unknown>(logger, mixinSym) || part<{ log?: unknown }>(logger, formattersSym).log || part<unknown>(logger, msgPrefixSym);
  if (reshapes || part<{ streamWrite?: unknown }>(logger, hooksSym).streamWrite || routesByLevel) return null;
  const levelText = part<Record<number, string>>(logger, lsCacheSym)[logger.levels.values.info!];
  const time = part<() => string>(logger, timeSym).bind(logger);
  const message = `,"${part<string>(logger, messageKeySym)}":"${REQUEST_COMPLETED}"${part<string>(logger, endSym)}`;
  return (fields) => {
    if (logger.isLevelEnabled('info')) stream.write(`${levelText}${time()}${part<string>(logger, chindingsSym)}${fields}${message}`);
  };
}

/**
 * `ms` rounded to the microsecond, as JSON writes that number (`String(Math.round(ms * 1000) /
 * 1000)`), built from the whole microseconds: a double's shortest text cost each line ~900
 * instructions (callgrind), a small integer's a few dozen.
 */
export function latencyText(ms: number): string {
  const us = Math.round(ms * 1000);
  const fraction = us % 1000;
  const whole = (us - fraction) / 1000;
  if (fraction === 0) return String(whole);
  const digits = fraction < 10 ? `00${fraction}` : fraction < 100 ? `0${fraction}` : String(fraction);
  return `${whole}.${digits.charCodeAt(2) !== 0x30 ? digits : digits.charCodeAt(1) !== 0x30 ? digits.slice(0, 2) : digits.slice(0, 1)}`;
}

/** `,"key":value` for each annotated field that is set, in the order annotated, as pino writes them. */
function annotatedFields(fields: AccessLogFields | null): string {
  let text = '';
  if (!fields) return text;
  for (const key in fields) {
    const value = fields[key as keyof AccessLogFields];
    if (value !== undefined) text += `,"${key}":${jsonString(value)}`;
  }
  return text;
}

/**
 * Writes each answer's access line, counts it in its key's usage and in the metrics. Called from
 * the app's onSend hook, as fastify hands the answer over: fastify's own completion logging listens
 * for every response's end (two listeners added and removed, a child logger, two clock reads),
 * which cost a cached quote ~4 % of its CPU. So the latency is to the answer's hand-over, and a
 * response that fails while it streams is logged as answered.
 */
export class AccessLog {
  private readonly writeLine: ((fields: string) => void) | null;

  /**
   * `metrics` hears each finished request too, and `countUsage` counts it in its key's usage: the
   * access log already runs once per request, where another hook would add a step.
   */
  constructor(
    private readonly logger: Logger,
    private readonly metrics: RequestMetrics | null = null,
    private readonly countUsage: ((request: FastifyRequest) => void) | null = null,
  ) {
    this.writeLine = directLineWriter(logger);
  }

  /** `,"method":...,"route":...,"status":` by route and method, made once each: both come from closed sets (the routes registered, the methods HTTP defines). */
  private readonly methodsAndRoutes = new Map<string, Map<string, string>>();

  private methodAndRoute(method: string, route: string): string {
    let byMethod = this.methodsAndRoutes.get(route);
    if (byMethod === undefined) this.methodsAndRoutes.set(route, (byMethod = new Map()));
    let text = byMethod.get(method);
    if (text === undefined) byMethod.set(method, (text = `,"method":${jsonString(method)},"route":${jsonString(route)},"status":`));
    return text;
  }

  answered(request: FastifyRequest, reply: FastifyReply): void {
    const elapsedMs = performance.now() - request.receivedAt;
    this.metrics?.requestCompleted(request, reply, elapsedMs);
    this.countUsage?.(request);
    const route = request.routeUrl ?? request.routeOptions.url ?? '(none)';
    // A keyed request is billable traffic when it was served: never when refused, over its rate
    // limit (429) included.
    const billable = request.logFields?.partnerId === undefined ? undefined : reply.statusCode < 400;
    if (this.writeLine) {
      const billing = billable === undefined ? '' : `,"billable":${billable}`;
      // The id needs no escaping: requestIdOf (request-id.ts) gives only well-formed ids, whose
      // characters are JSON's own. Scanning it cost each line more than writing it.
      this.writeLine(
        `,"reqId":"${request.id}"${this.methodAndRoute(request.method, route)}${reply.statusCode},"latencyMs":${latencyText(elapsedMs)}${annotatedFields(request.logFields)}${billing}`,
      );
      return;
    }
    const line = { reqId: request.id, method: request.method, route, status: reply.statusCode, latencyMs: Math.round(elapsedMs * 1000) / 1000, ...request.logFields, billable };
    this.logger.info(line, REQUEST_COMPLETED);
  }
}
