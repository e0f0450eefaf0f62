// The answers to requests that never reach a route: a head node's parser refuses (over the size
// limit: 414 or 431; an unknown method: 501; too slow to arrive: 408; not HTTP at all: 400), a URL
// fastify's router cannot decode, and CONNECT (400). fastify and node answer these with bodies of their own, outside the
// contract, and log nothing; here each is the contract's error shape with the version headers
// and no-store, and gets its access-log line (with `clientError` naming node's parser error).
// Each closes its connection with `Connection: close` and an orderly end, never a reset, so a
// keep-alive client reads the answer and opens a new connection for its next request.
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { REQUEST_COMPLETED } from './access-log.js';
import { crossOriginHeaders } from './cors.js';
import type { ErrorCode } from './error-catalogue.js';
import { errorReply, replyForError, type ErrorReply } from './error-reply.js';
import { newRequestId, REQUEST_ID_HEADER } from './request-id.js';

/** How long a connection answered here may stay open for its client to close it, before it is dropped. */
const CLOSE_GRACE_MS = 5_000;

const HEAD_LIMIT_KB = Math.floor(maxHeaderSize / 1024);

/** node's parser errors, in the caller's terms; any other is 400, "not valid HTTP". */
const PARSER_ERRORS: Readonly<Record<string, readonly [ErrorCode, string]>> = {
  HPE_INVALID_METHOD: ['not_implemented', 'the request method is not one HTTP defines'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'the request did not arrive in time'],
};

/** The request line's start as the parser last held it (node's `rawPacket`): method and target, however much arrived. */
const REQUEST_LINE = /^([A-Z][A-Z0-9!#$%&'*+.^_`|~-]*) (\S*)/;

/**
 * A head over the limit: its request line (414) or its headers (431). node says only that the
 * head overflowed; the bytes it was parsing tell which: a request line not ended within them is
 * the URL's doing.
 */
function overflowOf(packet: Buffer | undefined): [ErrorCode, string] {
  const text = packet?.toString('latin1', 0, Math.min(packet.length, maxHeaderSize + 2)) ?? '';
  if (REQUEST_LINE.test(text) && !text.includes('\r\n')) return ['uri_too_long', `the request line (its URL) is over the ${HEAD_LIMIT_KB} KB limit`];
  return ['headers_too_large', `the request's headers are over the ${HEAD_LIMIT_KB} KB limit`];
}

/** A request line's target after any method token, the parser's refused ones (`get`, `GET\0`) too. */
const TARGET = /^[^ \r\n]* ([^ \r\n]*)/;

/**
 * The path the refused request named, when what arrived of it says: for its contract's version
 * headers (a v2 path's refusal carries 2, whatever its method token) and the cross-origin headers.
 */
const targetOf = (packet: Buffer | undefined): string => TARGET.exec(packet?.toString('latin1', 0, Math.min(packet.length, 256)) ?? '')?.[1] ?? '';

export interface UnroutedAnswers {
  /** fastify's clientErrorHandler: node's parser refused the request (or its connection failed). */
  clientError(err: Error & { code?: string }, socket: Duplex): void;
  /** fastify's frameworkErrors: the router refused a parsed request (a URL it cannot decode). */
  frameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void;
  /** The http server's `connect` listener: without one node drops a CONNECT with no answer. */
  connect(request: IncomingMessage, socket: Duplex): void;
}

interface SocketWithResponse extends Duplex {
  /** node's response in flight on this connection, if any (what its own clientError answer checks). */
  _httpMessage?: ServerResponse | null;
}

/** `versionHeaders`: the version headers of an answer to a request for `target` (its contract's). */
export function unroutedAnswers(logger: Logger, versionHeaders: (target: string) => Readonly<Record<string, string>>): UnroutedAnswers {
  const headersOf = (shaped: ErrorReply, requestId: string, target: string) => ({
    'content-type': 'application/json; charset=utf-8',
    ...versionHeaders(target),
    ...shaped.headers,
    ...crossOriginHeaders(target),
    [REQUEST_ID_HEADER]: requestId,
    connection: 'close',
  });
  const logLine = (reqId: string, method: string | undefined, shaped: ErrorReply, clientError?: string) =>
    logger.info({ reqId, method, route: '(none)', status: shaped.status, code: shaped.body.code, clientError }, REQUEST_COMPLETED);

  /** Ends `socket` in order and drops it if its client does not close it within the grace. */
  const closeInOrder = (socket: Duplex) => {
    const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    socket.once('close', () => clearTimeout(timer));
    socket.end();
    // Whatever else the client sends is read and dropped, so the close is a FIN, not a reset
    // (unread data on a closed socket makes the kernel reset the connection).
    socket.resume();
  };

  const writeRaw = (socket: SocketWithResponse, shaped: ErrorReply, method: string | undefined, clientError: string | undefined, target = '') => {
    const requestId = newRequestId();
    const body = JSON.stringify(shaped.body);
    const headers = { ...headersOf(shaped, requestId, target), 'content-length': String(Buffer.byteLength(body)) };
    let head = `HTTP/1.1 ${shaped.status} ${STATUS_CODES[shaped.status] ?? 'Error'}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    const inFlight = socket._httpMessage;
    // An answer already under way on this connection (pipelining) must not be corrupted: then
    // the connection is only dropped, as node itself does.
    if (inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    socket.write(`${head}\r\n${body}`);
    logLine(requestId, method, shaped, clientError);
    if (inFlight) socket.destroy();
    else closeInOrder(socket);
  };

  return {
    clientError(err, socket) {
      // A reset connection has nothing to answer; a connection already answered here has its
      // answer (the parser reports every later byte as another error).
      if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable) return;
      const packet = (err as { rawPacket?: unknown }).rawPacket;
      const raw = Buffer.isBuffer(packet) ? packet : undefined;
      const [code, message] =
        err.code === 'HPE_HEADER_OVERFLOW' ? overflowOf(raw)
        : (err.code !== undefined && Object.hasOwn(PARSER_ERRORS, err.code) ? PARSER_ERRORS[err.code] : undefined) ?? ['bad_request', 'the request is not valid HTTP/1.1'];
      writeRaw(socket, errorReply(code, message), undefined, err.code, targetOf(raw));
    },
    frameworkError(err, request, reply) {
      const { reply: shaped, unexpected } = replyForError(err);
      if (unexpected) logger.error({ err, reqId: request.id }, 'unexpected framework error');
      const body = JSON.stringify(shaped.body);
      const headers = { ...headersOf(shaped, request.id, request.raw.url ?? ''), 'content-length': String(Buffer.byteLength(body)) };
      // Written on the raw response: fastify made this reply without a route, so its hooks, and
      // the access log that runs when a routed reply finishes, never run for it.
      reply.raw.writeHead(shaped.status, headers).end(body);
      logLine(request.id, request.method, shaped);
    },
    connect(_request, socket) {
      // node hands the socket over without its error listener: a write to a closed peer must not crash the process.
      socket.on('error', () => {});
      writeRaw(socket, errorReply('bad_request', 'CONNECT is not supported: this service is not a proxy'), 'CONNECT', undefined);
    },
  };
}
