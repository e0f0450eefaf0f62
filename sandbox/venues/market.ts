// The sandbox market: five venues with distinct mechanics over seeded, plausible CC-paired
// liquidity (CC ~ 0.15 USDCx, CBTC ~ 100,000 USDCx), each venue's seeds in its own module of
// sandbox/venues/. Deterministic on every start, so the spec's examples are reproducible. The
// README's "Sandbox market" section mirrors these seeds.
import { SandboxVenue } from './sandbox-venue.js';
import { SANDBOX_VENUES } from './venues.js';

/**
 * The sandbox tradecraft pools' parties, by pair: where a sandbox plan's deposit goes (the
 * TRADECRAFT_POOL_PARTIES default in sandbox mode).
 */
export const SANDBOX_POOL_PARTIES: Readonly<Record<string, string>> = {
  'CC/USDCx': `tradecraft-pool-cc-usdcx::1220${'c'.repeat(64)}`,
  'CC/CBTC': `tradecraft-pool-cc-cbtc::1220${'d'.repeat(64)}`,
};

export function createSandboxVenues(): SandboxVenue[] {
  return SANDBOX_VENUES.map((venue) => new SandboxVenue(venue.spec()));
}
