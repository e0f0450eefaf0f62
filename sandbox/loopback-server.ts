// What the sandbox's loopback servers (its venues, its ledger, its registries) share: listening,
// reading a bounded request body, answering browsers' preflights, JSON and plain text, closing.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A sandbox server could not take its port: start-up stops with this message, which says what to set. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** Listens on `host`:`port` (0: any free port) and answers the server's URL, `http://<host>:<port>`. */
export async function listen(server: Server, host: string, port: number, what: string, remedy: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new ListenError(`${what} cannot listen on ${host}:${port} (${err.code ?? err.message}); ${remedy}`)));
    server.listen(port, host, () => {
      server.removeAllListeners('error');
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

/** Closes the server, its kept-alive connections included. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A request body over the server's limit. */
export class BodyTooLarge extends Error {}

/** The request body's text, decoded whole (a character split across chunks stays one); BodyTooLarge past `maxBytes`. */
export async function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The CORS headers of a server a browser wallet may call from any origin, as a wallet's own backend
 * would be called: its credential, not the page's origin, guards it.
 */
export const OPEN_CORS = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type', 'access-control-allow-methods': 'GET, POST, PATCH', 'access-control-max-age': '600' };

/** Answers a browser's CORS preflight; whether the request was one. */
export function answeredPreflight(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.method !== 'OPTIONS' || request.headers['access-control-request-method'] === undefined) return false;
  response.writeHead(204, OPEN_CORS);
  response.end();
  return true;
}

/** Writes `body` as a JSON answer, with the open CORS headers. */
export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { ...OPEN_CORS, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** Writes `text` as a plain-text answer, with the open CORS headers. */
export function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { ...OPEN_CORS, 'content-type': 'text/plain; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
