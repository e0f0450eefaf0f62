// The sandbox venues on loopback: one HTTP server answering every sandbox venue's documented API
// under its own prefix (`/tradecraft/v1`, `/cantex`, `/oneswap`, `/nightly`, `/temple`), each
// from the sandbox market's pools and books, and the sandbox's manifest at
// GET /sandbox/v1/manifest. The service quotes through its real adapters pointed at these
// prefixes, credentials included, so `make run` runs the code a deployment against the real
// venues runs.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BodyTooLarge, closeServer, listen, readBody } from '../loopback-server.js';
import type { SandboxManifest } from '../manifest.js';
import type { SandboxVenue } from './sandbox-venue.js';
import { SANDBOX_VENUES } from './venues.js';
import type { WireHandler } from './wire.js';

/** The party Nightly is told quotes are for, before there is a taker. */
export const SANDBOX_NIGHTLY_RECIPIENT = `bestex-quotes::1220${'0'.repeat(64)}`;

/** Request bodies the sandbox venues read are a few hundred bytes. */
const MAX_BODY_BYTES = 16 * 1024;

const MANIFEST_PATH = '/sandbox/v1/manifest';

export interface SandboxVenueServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Each venue's base URL on this server, by venue id. */
  readonly venues: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

/** Each sandbox venue's prefix and wire handler, over the market's venue of the same id. */
function routesOver(market: readonly SandboxVenue[]): Array<readonly [string, WireHandler]> {
  return SANDBOX_VENUES.map((venue) => {
    const priced = market.find((v) => v.id === venue.id);
    if (!priced) throw new Error(`the sandbox market has no venue ${venue.id}`);
    return [venue.prefix, venue.wire(priced.spec)] as const;
  });
}

/**
 * Starts the server on `host`:`port` (0: any free port). `manifest` is what GET
 * /sandbox/v1/manifest answers once the whole sandbox listens (503 before). A request whose path
 * starts with one of `hangPaths` is read and never answered, as a venue that hangs (closing the
 * server drops it).
 */
export async function startSandboxVenueServer(
  market: readonly SandboxVenue[],
  options: { host: string; port: number; manifest?: () => SandboxManifest | null; hangPaths?: readonly string[] },
): Promise<SandboxVenueServer> {
  const routes = routesOver(market);
  const manifest = options.manifest ?? (() => null);
  const hangPaths = options.hangPaths ?? [];
  const server = createServer((request, response) => {
    if (hangPaths.some((prefix) => (request.url ?? '').startsWith(prefix))) return void request.resume();
    void serve(routes, manifest, request, response);
  });
  const url = await listen(server, options.host, options.port, 'the sandbox venues', 'set SANDBOX_VENUES_PORT to a free port, or 0 for any');
  return {
    url,
    venues: Object.fromEntries(SANDBOX_VENUES.map((venue) => [venue.id, `${url}${venue.prefix}`])),
    close: () => closeServer(server),
  };
}

async function serve(
  routes: ReadonlyArray<readonly [string, WireHandler]>,
  manifest: () => SandboxManifest | null,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let status = 404;
  let body = JSON.stringify({ error: 'no such sandbox venue path' });
  try {
    const url = new URL(request.url ?? '/', 'http://sandbox');
    if (url.pathname === MANIFEST_PATH && request.method === 'GET') {
      const current = manifest();
      [status, body] = current ? [200, JSON.stringify(current)] : [503, JSON.stringify({ error: 'the sandbox is still starting' })];
    }
    // The index a person opening the sandbox's URL sees: where each venue and the ledger answer.
    if (url.pathname === '/' && request.method === 'GET') {
      const current = manifest();
      [status, body] = current
        ? [200, JSON.stringify({ venues: current.venues, ledger: current.ledger, manifest: `${current.sandbox}${MANIFEST_PATH}` }, null, 2)]
        : [503, JSON.stringify({ error: 'the sandbox is still starting' })];
    }
    const route = routes.find(([prefix]) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`));
    if (route && url.pathname !== MANIFEST_PATH) {
      const [prefix, handler] = route;
      const answer = handler({
        method: request.method ?? 'GET',
        path: decodeURIComponent(url.pathname.slice(prefix.length)) || '/',
        query: url.searchParams,
        headers: request.headers,
        body: await readBody(request, MAX_BODY_BYTES),
      });
      ({ status, body } = answer);
    }
  } catch (err) {
    // A request the server cannot take apart is the caller's fault; anything else is the sandbox's.
    [status, body] =
      err instanceof BodyTooLarge ? [413, JSON.stringify({ error: 'request body too large' })]
      : err instanceof URIError ? [400, JSON.stringify({ error: 'malformed request path' })]
      : [500, JSON.stringify({ error: 'the sandbox venue failed' })];
  }
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}
