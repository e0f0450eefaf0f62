// The whole sandbox in one call: the seeded market, its venues' server, the sandbox participant
// whose ledger's tradecraft pools are that market's own pools (a swap on the ledger moves the next
// quote), the instrument admins' token registries and a wallet gateway for dApps, each on loopback. The program (sandbox/main.ts) runs it in a process of its own; the sandbox's
// own tests may run it in theirs. Either way the service reaches it only over HTTP.
import { resolveToken, CC } from '../core/tokens.js';
import { SANDBOX_LEDGER_TOKEN } from './ledger/ledger-token.js';
import type { SandboxPool } from './ledger/pool-operator.js';
import { SandboxLedger } from './ledger/sandbox-ledger.js';
import { startSandboxLedgerServer } from './ledger/ledger-server.js';
import { SYNCHRONIZER_ID } from './ledger/routes/context.js';
import { startSandboxGatewayServer } from './gateway/gateway-server.js';
import { startSandboxRegistryServer } from './registry/registry-server.js';
import type { SandboxManifest } from './manifest.js';
import { createSandboxVenues, SANDBOX_POOL_PARTIES } from './venues/market.js';
import { NIGHTLY_SWAP_ADDRESS, nightlyQuoteBook } from './venues/nightly.js';
import { ONESWAP_SWAP_ADDRESS, oneswapIntentBook } from './venues/oneswap-intents.js';
import type { SandboxVenue } from './venues/sandbox-venue.js';
import { SANDBOX_NIGHTLY_RECIPIENT, startSandboxVenueServer } from './venues/venue-server.js';
import { SANDBOX_VENUES } from './venues/venues.js';
import { SANDBOX_INSTRUMENT_ADMINS, SANDBOX_VENUE_KEY } from './venues/wire.js';

/** What the wallet gateway's faucet gives a user who signs in. */
const GATEWAY_WELCOME = { token: 'CC', amount: '1000' };

/** The venues that take a credential, and the one the sandbox accepts. */
const VENUE_KEYS: Record<string, string> = Object.fromEntries(SANDBOX_VENUES.filter((venue) => venue.keyed).map((venue) => [venue.id, SANDBOX_VENUE_KEY]));

export interface SandboxOptions {
  /** The venues' server port on 127.0.0.1 (0: any free port). */
  readonly venuesPort: number;
  /** The ledger's loopback host and port (0: any free port). */
  readonly ledgerHost: string;
  readonly ledgerPort: number;
  /** The token registries' and the wallet gateway's ports on 127.0.0.1 (0, the default: any free port). */
  readonly registryPort?: number;
  readonly gatewayPort?: number;
  /** The ledger's bearer token; SANDBOX_LEDGER_TOKEN by default. */
  readonly ledgerToken?: string;
  /** The pool party per pair (pairKey); the sandbox's own by default. */
  readonly poolParties?: Readonly<Record<string, string>>;
  /** The ledger's clock (tests move it). */
  readonly now?: () => Date;
  readonly onOperatorError?: (err: unknown) => void;
  /** Venue request paths never answered (SANDBOX_HANG_PATHS). */
  readonly hangPaths?: readonly string[];
  /** Whether the participant has Splice's batching utility package; it has by default (`--without-batching-utility`: not). */
  readonly batchingUtility?: boolean;
}

export interface Sandbox {
  readonly manifest: SandboxManifest;
  readonly ledgerToken: string;
  /** The market the venues answer from and the ledger's pools trade in. */
  readonly market: readonly SandboxVenue[];
  readonly ledger: SandboxLedger;
  close(): Promise<void>;
}

/** The tradecraft pools of the market, each under the pool party deposits for its pair go to. */
function sandboxPools(market: readonly SandboxVenue[], poolParties: Readonly<Record<string, string>>): { tradecraft: SandboxVenue['spec']; pools: SandboxPool[] } {
  const tradecraft = market.find((v) => v.id === 'tradecraft')!.spec;
  if (tradecraft.pricing.kind !== 'amm') throw new Error('the sandbox tradecraft venue is not an AMM');
  const { pools: amm } = tradecraft.pricing;
  const pools = Object.entries(poolParties).flatMap(([pair, party]) => {
    const other = pair.split('/').map((symbol) => resolveToken(symbol, 'pair')).find((t) => t !== CC)!;
    const pool = amm.find((p) => p.quote === other);
    return pool ? [{ party, pool, tokens: [CC, other] as const }] : [];
  });
  return { tradecraft, pools };
}

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const market = createSandboxVenues();
  const poolParties = options.poolParties ?? SANDBOX_POOL_PARTIES;
  const ledgerToken = options.ledgerToken ?? SANDBOX_LEDGER_TOKEN;
  const now = options.now ?? (() => new Date());
  // Nightly's quotes and its settlement share one quote book, on the ledger's clock.
  const nightlySpec = market.find((v) => v.id === 'nightly')!.spec;
  const nightly = { spec: nightlySpec, party: NIGHTLY_SWAP_ADDRESS, quotes: nightlyQuoteBook(nightlySpec, now) };
  // OneSwap's intents and their settlement share one intent book, likewise.
  const oneswapSpec = market.find((v) => v.id === 'oneswap')!.spec;
  const oneswap = { spec: oneswapSpec, party: ONESWAP_SWAP_ADDRESS, intents: oneswapIntentBook(oneswapSpec, now) };
  let manifest: SandboxManifest | null = null;
  const venues = await startSandboxVenueServer(market, { host: '127.0.0.1', port: options.venuesPort, manifest: () => manifest, hangPaths: options.hangPaths });
  try {
    const ledger = new SandboxLedger({
      admins: SANDBOX_INSTRUMENT_ADMINS,
      ...sandboxPools(market, poolParties),
      nightly,
      oneswap,
      now,
      onOperatorError: options.onOperatorError,
    });
    const hosted = [...Object.values(SANDBOX_INSTRUMENT_ADMINS), ...Object.values(poolParties), NIGHTLY_SWAP_ADDRESS, ONESWAP_SWAP_ADDRESS];
    const batchingUtility = options.batchingUtility ?? true;
    const ledgerServer = await startSandboxLedgerServer(ledger, { host: options.ledgerHost, port: options.ledgerPort, token: ledgerToken, hosted, batchingUtility });
    // OneSwap's wallet auth checks a signature against the key the participant holds for the party.
    oneswap.intents.partyKeys = (party) => {
      const hostedParty = ledgerServer.participant.party(party);
      return hostedParty && { key: hostedParty.signingKey };
    };
    const registry = await startSandboxRegistryServer(ledger, { host: '127.0.0.1', port: options.registryPort ?? 0, synchronizerId: SYNCHRONIZER_ID }).catch(async (err: unknown) => {
      await ledgerServer.close();
      throw err;
    });
    const gateway = await startSandboxGatewayServer({ host: '127.0.0.1', port: options.gatewayPort ?? 0, ledger: ledgerServer.url, ledgerToken, welcome: GATEWAY_WELCOME }).catch(async (err: unknown) => {
      await Promise.all([ledgerServer.close(), registry.close()]);
      throw err;
    });
    manifest = {
      sandbox: venues.url,
      venues: venues.venues,
      venueKeys: VENUE_KEYS,
      ledger: ledgerServer.url,
      batchingUtility,
      registries: registry.registries,
      walletGateway: gateway.dappApi,
      poolParties,
      instrumentAdmins: SANDBOX_INSTRUMENT_ADMINS,
      nightlyRecipient: SANDBOX_NIGHTLY_RECIPIENT,
    };
    return {
      manifest,
      ledgerToken,
      market,
      ledger,
      close: async () => {
        await Promise.all([venues.close(), gateway.close(), ledgerServer.close(), registry.close()]);
      },
    };
  } catch (err) {
    await venues.close();
    throw err;
  }
}
