// Every sandbox venue, in the order the market lists them: adding a venue to the sandbox is its
// module in this folder (its market and its wire) and one line here.
import { cantexVenue } from './cantex.js';
import { nightlyVenue } from './nightly.js';
import { oneswapVenue } from './oneswap.js';
import { templeVenue } from './temple.js';
import { tradecraftVenue } from './tradecraft.js';
import type { SandboxVenueDefinition } from './wire.js';

export const SANDBOX_VENUES: readonly SandboxVenueDefinition[] = [tradecraftVenue, cantexVenue, oneswapVenue, nightlyVenue, templeVenue];
