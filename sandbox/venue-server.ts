// The sandbox venues on loopback: one HTTP server answering every sandbox venue's documented API
// under its own prefix (`/tradecraft/v1`, `/cantex`, `/oneswap`, `/nightly`, `/temple`), each
// from the sandbox market's pools and books. The embedded default quotes through the real
// adapters pointed at it, built by the same function as `VENUES=live` (core/venues/live-venues.ts),
// credentials included, so `make run` runs the code a deployment against the real venues runs.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BodyTooLarge, closeServer, listen, readBody } from './loopback-server.js';
import { createLiveVenues, LIVE_VENUE_IDS, type LiveVenueId, type LiveVenuesConfig } from '../core/venues/live-venues.js';
import type { Venue } from '../core/venues/venue.js';
import type { SandboxVenue } from './sandbox-venue.js';
import { cantexWire } from './wire/cantex.js';
import { nightlyWire } from './wire/nightly.js';
import { oneswapWire } from './wire/oneswap.js';
import { templeWire } from './wire/temple.js';
import { tradecraftWire } from './wire/tradecraft.js';
import { SANDBOX_INSTRUMENT_ADMINS, SANDBOX_VENUE_KEY, type WireHandler } from './wire/wire.js';

/** Each venue's path on the server: its base URL is the server's URL and this. */
const PREFIXES: Readonly<Record<LiveVenueId, string>> = {
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

export interface SandboxVenueServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The real adapters, pointed at this server. */
  readonly venues: readonly Venue[];
  close(): Promise<void>;
}

/** The wire handler of each sandbox venue, over the market's venues by id. */
function wireHandlers(market: readonly SandboxVenue[]): Record<LiveVenueId, WireHandler> {
  const spec = (id: LiveVenueId) => {
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

/** The adapters' configuration for venues served at `url`: the live wiring, with the sandbox's credentials. */
export function sandboxVenuesConfig(url: string, timeoutMs: number): LiveVenuesConfig {
  const venue = (id: LiveVenueId) => ({
    enabled: true,
    baseUrl: `${url}${PREFIXES[id]}`,
    apiKey: id === 'tradecraft' || id === 'nightly' ? null : SANDBOX_VENUE_KEY,
    timeoutMs,
  });
  return {
    venues: Object.fromEntries(LIVE_VENUE_IDS.map((id) => [id, venue(id)])) as LiveVenuesConfig['venues'],
    cantexInstrumentAdmins: SANDBOX_INSTRUMENT_ADMINS,
    nightlyRecipient: SANDBOX_NIGHTLY_RECIPIENT,
  };
}

/** Starts the server on `host`:`port` (0: any free port) and builds the adapters for it. */
export async function startSandboxVenueServer(market: readonly SandboxVenue[], options: { host: string; port: number; timeoutMs: number }): Promise<SandboxVenueServer> {
  const handlers = wireHandlers(market);
  const routes = LIVE_VENUE_IDS.map((id) => [PREFIXES[id], handlers[id]] as const);
  const server = createServer((request, response) => void serve(routes, request, response));
  const url = await listen(server, options.host, options.port, 'the sandbox venues', 'set SANDBOX_VENUES_PORT to a free port, or 0 for any');
  return {
    url,
    venues: createLiveVenues(sandboxVenuesConfig(url, options.timeoutMs)),
    close: () => closeServer(server),
  };
}

async function serve(routes: ReadonlyArray<readonly [string, WireHandler]>, request: IncomingMessage, response: ServerResponse): Promise<void> {
  let status = 404;
  let body = JSON.stringify({ error: 'no such sandbox venue path' });
  try {
    const url = new URL(request.url ?? '/', 'http://sandbox');
    const route = routes.find(([prefix]) => url.pathname === prefix || url.pathname.startsWith(`${prefix}/`));
    if (route) {
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
