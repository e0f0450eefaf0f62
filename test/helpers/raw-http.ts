// Sends bytes to a listening server over a plain TCP connection and reads back one HTTP/1.1
// answer, for requests no HTTP client would send (malformed heads, methods and targets). The
// answer is parsed by hand; a connection closed with nothing sent reads as status 0.
import { connect } from 'node:net';
import type { Answer } from './contract-answers.js';

export interface RawAnswer extends Answer {
  /** The connection was closed by the server after the answer (or instead of one). */
  readonly closed: boolean;
}

function parse(bytes: Buffer, closed: boolean): RawAnswer | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return closed ? { status: 0, headers: {}, body: bytes.toString('latin1'), closed } : null;
  const lines = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let rest = bytes.subarray(end + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const chunks: Buffer[] = [];
    for (;;) {
      const eol = rest.indexOf('\r\n');
      if (eol < 0) return closed ? { status, headers, body: Buffer.concat(chunks).toString('utf8'), closed } : null;
      const size = parseInt(rest.subarray(0, eol).toString('latin1'), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(chunks).toString('utf8'), closed };
      if (rest.length < eol + 2 + size + 2) return closed ? { status, headers, body: Buffer.concat(chunks).toString('utf8'), closed } : null;
      chunks.push(rest.subarray(eol + 2, eol + 2 + size));
      rest = rest.subarray(eol + 2 + size + 2);
    }
  }
  const length = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (length === undefined || status === 204 || status === 304) return length === undefined && !closed && status !== 204 && status !== 304 ? null : { status, headers, body: rest.toString('utf8'), closed };
  if (rest.length < length) return closed ? { status, headers, body: rest.toString('utf8'), closed } : null;
  return { status, headers, body: rest.subarray(0, length).toString('utf8'), closed };
}

/**
 * Writes `request` to host:port and resolves with the first answer, once it is complete (its
 * Content-Length read, or the connection closed). `headOnly` for an answer to HEAD, which has a
 * Content-Length but no body. Gives up after `timeoutMs` with what it has.
 */
export function rawExchange(port: number, request: Buffer | string, options: { headOnly?: boolean; timeoutMs?: number } = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    let settled = false;
    const settle = (answer: RawAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const attempt = (closed: boolean) => {
      const bytes = Buffer.concat(received);
      const answer = options.headOnly && bytes.includes('\r\n\r\n') ? parse(bytes.subarray(0, bytes.indexOf('\r\n\r\n') + 4), true) : parse(bytes, closed);
      if (answer) settle({ ...answer, closed: closed || answer.closed });
      else if (closed) settle({ status: 0, headers: {}, body: bytes.toString('latin1'), closed });
    };
    const timer = setTimeout(() => attempt(true), options.timeoutMs ?? 5000);
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      attempt(false);
    });
    socket.on('end', () => attempt(true));
    socket.on('close', () => attempt(true));
    socket.on('error', () => attempt(true));
    socket.write(request);
  });
}
