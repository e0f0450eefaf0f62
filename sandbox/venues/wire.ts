// The sandbox venues' wire: each real venue's documented HTTP API, answered from the sandbox
// market's pools and books, so the embedded default quotes through the same adapters
// (core/venues/) a deployment against the real venues runs. One handler per venue; the venue
// server (sandbox/venues/venue-server.ts) serves them all on loopback, each under its own prefix.
import type { IncomingHttpHeaders } from 'node:http';
import { toWire, type Decimal } from '../../core/decimal.js';
import type { Token } from '../../core/tokens.js';
import type { SandboxVenueSpec } from './sandbox-venue.js';

export interface WireRequest {
  readonly method: string;
  /** The path under the venue's base URL, e.g. `/pools` for Tradecraft's `<base>/pools`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Lower-case names, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  /** The request body's text; empty when there is none. */
  readonly body: string;
}

export interface WireResponse {
  readonly status: number;
  /** JSON text, written by hand where the venue sends JSON numbers, so no float ever carries an amount. */
  readonly body: string;
}

export type WireHandler = (request: WireRequest) => WireResponse;

/**
 * One sandbox venue, whole: its market (seeded, the same on every start) and its documented API
 * answering from it, served under its own prefix. A venue is added to the sandbox with its module
 * in this folder and one line in SANDBOX_VENUES (sandbox/venues/venues.ts).
 */
export interface SandboxVenueDefinition {
  readonly id: string;
  /** Its path on the venues' server: its base URL is the server's URL and this. */
  readonly prefix: string;
  /** Whether it takes the sandbox's venue key, as the real venue takes an API key. */
  readonly keyed: boolean;
  spec(): SandboxVenueSpec;
  wire(spec: SandboxVenueSpec): WireHandler;
}

/** The credential the sandbox's keyed venues (Cantex, OneSwap, Temple) accept; any other is refused as the venue refuses it. */
export const SANDBOX_VENUE_KEY = 'sandbox-venue-key';

/**
 * The sandbox's instrument admins (token registry parties), as the venues that name instruments
 * by admin show them: hints as on the real network, made-up fingerprints.
 */
export const SANDBOX_INSTRUMENT_ADMINS: Readonly<Record<Token['instrument'], string>> = {
  Amulet: `DSO::1220${'0a'.repeat(32)}`,
  USDCx: `decentralized-usdc-interchain-rep::1220${'0b'.repeat(32)}`,
  CBTC: `cbtc-network::1220${'0c'.repeat(32)}`,
};

export const jsonReply = (status: number, body: unknown): WireResponse => ({ status, body: JSON.stringify(body) });

/** A decimal as a JSON number's text: plain notation, at most 10 fractional digits. */
export const jsonNumber = (x: Decimal): string => toWire(x);
