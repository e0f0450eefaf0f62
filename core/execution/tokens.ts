// The token list a wallet needs to execute: each token's symbol, its registry name (CC's is
// Amulet), its instrument admin party, its decimals, its admin's token registry and each venue's
// limits on it where known. Instrument admins and registries are configuration: the sandbox's from
// its manifest, a real network's from CANTEX_INSTRUMENT_ADMINS and TOKEN_REGISTRIES
// (docs/operations.md), so a client needs no registry configuration of its own.
import { toWire, type Decimal } from '../decimal.js';
import { TOKENS, type Token } from '../tokens.js';
import type { Venue } from '../venues/venue.js';
import type { TokenList, TokenListing } from '../contract/v2.js';

/** Every instrument's decimals: Daml Decimals carry 10 fractional digits, and so does every amount here. */
export const TOKEN_DECIMALS = 10;

export interface InstrumentRegistriesConfig {
  /** The instruments' admin parties, by instrument id; null when not configured. */
  readonly instrumentAdmins: Readonly<Record<Token['instrument'], string>> | null;
  /** Each admin party's token registry base URL. */
  readonly registries: Readonly<Record<string, string>>;
}

/** An instrument's admin party and its registry, as far as configured. */
export interface InstrumentRegistry {
  readonly instrument: Token['instrument'];
  readonly admin: string | null;
  readonly registryUrl: string | null;
}

export class InstrumentRegistries {
  constructor(private readonly config: InstrumentRegistriesConfig) {}

  of(token: Token): InstrumentRegistry {
    const admin = this.config.instrumentAdmins?.[token.instrument] ?? null;
    const registryUrl = admin === null ? null : (this.config.registries[admin] ?? null);
    return { instrument: token.instrument, admin, registryUrl };
  }
}

const wire = (value: Decimal | null): string | null => (value === null ? null : toWire(value));

/** Every token the service quotes, in the order of `TOKENS`, each venue's limits in the order of `venues`. */
export function tokenList(registries: InstrumentRegistries, venues: readonly Venue[]): TokenList {
  return {
    tokens: TOKENS.map((token): TokenListing => {
      const { admin, registryUrl } = registries.of(token);
      return {
        symbol: token.symbol,
        registryName: token.instrument,
        instrumentAdmin: admin,
        decimals: TOKEN_DECIMALS,
        registryUrl,
        venueLimits: venues.map((venue) => {
          const limits = venue.limits?.(token) ?? null;
          return { venueId: venue.id, min: wire(limits?.min ?? null), max: wire(limits?.max ?? null) };
        }),
      };
    }),
  };
}
