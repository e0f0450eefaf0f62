// The sandbox venues on loopback: one HTTP server answering every sandbox venue's documented API
// under its own prefix (`/tradecraft/v1`, `/cantex`, `/oneswap`, `/nightly`, `/temple`), each
// from the sandbox market's pools and books, and the sandbox's manifest at
// GET /sandbox/v1/manifest. The service quotes through its real adapters pointed at these
// prefixes, credentials included, so `make run` runs the code a deployment against the real
// venues runs.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BodyTooLarge, closeServer, listen, readBody } from './loopback-server.js';
import { SANDBOX_VENUE_IDS, type SandboxManifest, type SandboxVenueId } from './manifest.js';
import type { SandboxVenue } from './sandbox-venue.js';
import { cantexWire } from './wire/cantex.js';
import { nightlyWire } from './wire/nightly.js';
import { oneswapWire } from './wire/oneswap.js';
import { templeWire } from './wire/temple.js';
import { tradecraftWire } from './wire/tradecraft.js';
import { SANDBOX_INSTRUMENT_ADMINS, type WireHandler } from './wire/wire.js';

/** Each venue's path on the server: its base URL is the server's URL and this. */
const PREFIXES: Readonly<Record<SandboxVenueId, string>> = {
  tradecraft: '/tradecraft/v1',
  cantex: '/cantex',
  oneswap: '/oneswap',
  nightly: '/nightly',
  temple: '/temple',
};

/** The party Nightly is told quotes are for, before there is a taker. */
export const SANDBOX_NIGHTLY_RECIPIENT = `bestex-quotes::1220${'0'.repeat(64)}`;

/** Request bodies the sandbox venues read are a few hundred bytes. */
const MAX_BODY_BYTES = 16 * 1024;

const MANIFEST_PATH = '/sandbox/v1/manifest';

export interface SandboxVenueServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Each venue's base URL on this server. */
  readonly venues: Readonly<Record<SandboxVenueId, string>>;
  close(): Promise<void>;
}

/** The wire handler of each sandbox venue, over the market's venues by id. */
function wireHandlers(market: readonly SandboxVenue[]): Record<SandboxVenueId, WireHandler> {
  const spec = (id: SandboxVenueId) => {
    const venue = market.find((v) => v.id === id);
    if (!venue) throw new Error(`the sandbox market has no venue ${id}`);
    return venue.spec;
  };
  return {
    tradecraft: tradecraftWire(spec('tradecraft')),
    cantex: cantexWire(spec('cantex'), SANDBOX_INSTRUMENT_ADMINS),
    oneswap: oneswapWire(spec('oneswap')),
    nightly: nightlyWire(spec('nightly')),
    temple: templeWire(spec('temple')),
  };
}

/**
 * Starts the server on `host`:`port` (0: any free port). `manifest` is what GET
 * /sandbox/v1/manifest answers once the whole sandbox listens (503 before).
 */
export async function startSandboxVenueServer(
  market: readonly SandboxVenue[],
  options: { host: string; port: number; manifest?: () => SandboxManifest | null },
): Promise<SandboxVenueServer> {
  const handlers = wireHandlers(market);
  const routes = SANDBOX_VENUE_IDS.map((id) => [PREFIXES[id], handlers[id]] as const);
  const manifest = options.manifest ?? (() => null);
  const server = createServer((request, response) => void serve(routes, manifest, request, response));
  const url = await listen(server, options.host, options.port, 'the sandbox venues', 'set SANDBOX_VENUES_PORT to a free port, or 0 for any');
  return {
    url,
    venues: Object.fromEntries(SANDBOX_VENUE_IDS.map((id) => [id, `${url}${PREFIXES[id]}`])) as Record<SandboxVenueId, string>,
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
