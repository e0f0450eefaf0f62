// What the sandbox tells whoever uses it, the only way the service learns of it: where each venue
// and the ledger listen, the parties and credentials a deployment would configure for real venues
// and a real participant. Announced once as a JSON line on stdout when the sandbox listens (with
// the process id, and the ledger's token when the sandbox chose it), kept in DATA_DIR/sandbox.json
// for the wallet CLI (with the token, readable by its owner only), and served without the token
// at GET /sandbox/v1/manifest on the venues' server, whose URL is SANDBOX_URL.
import type { Token } from '../core/tokens.js';

export interface SandboxManifest {
  /** The venues' server: SANDBOX_URL for a service that uses this sandbox. */
  readonly sandbox: string;
  /** Each venue's base URL by venue id, as a deployment sets `<VENUE>_URL`. */
  readonly venues: Readonly<Record<string, string>>;
  /** The credential each keyed venue accepts, as a deployment sets `<VENUE>_API_KEY`. */
  readonly venueKeys: Readonly<Record<string, string>>;
  /** The sandbox participant's JSON Ledger API. */
  readonly ledger: string;
  /**
   * Whether that participant has Splice's batching utility package (splice-util-token-standard-wallet),
   * so that a deposit and its fee legs can be one CIP-0112 batch; `--without-batching-utility` starts it without.
   */
  readonly batchingUtility: boolean;
  /** Each instrument admin's token registry (Splice's off-ledger API, no credential), by admin party. */
  readonly registries: Readonly<Record<string, string>>;
  /**
   * A wallet gateway's remote dApp API (as Splice's Wallet Gateway serves it), for dApps that reach
   * a user's wallet through dapp-sdk: its login page gives a new funded party, its approval page
   * submits through the participant.
   */
  readonly walletGateway: string;
  /** The tradecraft pool party per pair, by pairKey (TRADECRAFT_POOL_PARTIES). */
  readonly poolParties: Readonly<Record<string, string>>;
  /** The token registry's parties by instrument (CANTEX_INSTRUMENT_ADMINS). */
  readonly instrumentAdmins: Readonly<Record<Token['instrument'], string>>;
  /** The party Nightly is told quotes are for (NIGHTLY_RECIPIENT). */
  readonly nightlyRecipient: string;
}

/** What DATA_DIR/sandbox.json holds, and the line the sandbox prints once it listens (there without the token when LEDGER_TOKEN set it). */
export interface SandboxAnnouncement extends SandboxManifest {
  /** The bearer token the sandbox ledger accepts. */
  readonly ledgerToken: string;
  readonly pid: number;
}

/** The file under DATA_DIR where a running sandbox says where it is. */
export const ANNOUNCEMENT_FILE = 'sandbox.json';
