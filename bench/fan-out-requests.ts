// The five venue requests one fresh keyless quote of CC -> USDCx makes, as the service's adapters
// (core/venues/*.ts, built by createLiveVenues from the sandbox's manifest) send them: what the
// bare fan-out baseline (bench/fan-out-baseline.ts) sends for each of its requests. Pure, so
// test/bench/bench.test.ts can check it against what the real adapters send.
import type { SandboxManifest } from '../sandbox/manifest.js';

export type FanOutManifest = Pick<SandboxManifest, 'venues' | 'venueKeys' | 'instrumentAdmins' | 'nightlyRecipient'>;

export interface VenueRequest {
  readonly venueId: string;
  /** The venue's `http://host:port`. */
  readonly origin: string;
  readonly method: 'GET' | 'POST';
  /** Path and query. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

// The adapters' own headers (core/venues/venue-http.ts), before each venue's credential.
const USER_AGENT = 'bestex/1 (+https://github.com/bestex)';
const GET_HEADERS = { accept: 'application/json', 'user-agent': USER_AGENT };
const POST_HEADERS = { ...GET_HEADERS, 'content-type': 'application/json' };

/**
 * `raw` as the service's Decimal prints it (toFixed: no trailing fractional zeros), which is how
 * the adapters put an amount on the wire; null when it is no plain decimal.
 */
export function decimalText(raw: string): string | null {
  const match = /^([0-9]+)(?:\.([0-9]*))?$/.exec(raw);
  if (!match) return null;
  const whole = match[1]!.replace(/^0+(?=[0-9])/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/**
 * The requests for a quote of `amount` (decimalText's form) CC for USDCx, in createLiveVenues'
 * order. The manifest is read once: the baseline builds only what a quote's amount changes.
 */
export function fanOutRequests(manifest: FanOutManifest): (amount: string) => VenueRequest[] {
  const venue = (venueId: string) => {
    const url = manifest.venues[venueId];
    if (url === undefined) throw new Error(`the sandbox's manifest names no venue ${venueId}`);
    const base = new URL(url);
    const prefix = base.pathname.replace(/\/$/, '');
    return (method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): VenueRequest => ({
      venueId,
      origin: base.origin,
      method,
      path: `${prefix}${path}`,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  };
  const tradecraft = venue('tradecraft');
  const cantex = venue('cantex');
  const oneswap = venue('oneswap');
  const nightly = venue('nightly');
  const temple = venue('temple');
  const key = (venueId: string): string => manifest.venueKeys[venueId] ?? '';
  const cantexHeaders = { ...POST_HEADERS, authorization: `Bearer ${key('cantex')}` };
  const oneswapHeaders = { ...GET_HEADERS, 'x-api-key': key('oneswap') };
  const templeHeaders = { ...GET_HEADERS, 'x-api-key': key('temple') };
  const admins = manifest.instrumentAdmins;
  return (amount) => [
    tradecraft('GET', `/quoteForFixedInput/CC/USDCx?givingAmount=${amount}`, GET_HEADERS),
    cantex('POST', '/v2/pools/quote', cantexHeaders, {
      sellAmount: amount,
      sellInstrumentId: 'Amulet',
      sellInstrumentAdmin: admins.Amulet,
      buyInstrumentId: 'USDCx',
      buyInstrumentAdmin: admins.USDCx,
    }),
    oneswap('GET', `/api/v1/quote?${new URLSearchParams({ from: 'Amulet', to: 'USDCx', amount }).toString()}`, oneswapHeaders),
    nightly('POST', '/nswap/quote', POST_HEADERS, { fromToken: 'Amulet', toToken: 'USDCx', amount, recipient: manifest.nightlyRecipient }),
    temple('GET', '/api/v1/market/orderbook?symbol=Amulet/USDCx&levels=100', templeHeaders),
  ];
}
