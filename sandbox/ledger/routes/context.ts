// What every endpoint of the sandbox participant works on: the ledger, the participant's parties
// and users, the packages it has, and the prepared transactions it keeps for execution; with the
// participant's fixed facts (its synchronizer, its list limit).
import type { KnownIds } from '../event-format.js';
import type { Participant } from '../participant.js';
import type { SandboxLedger } from '../sandbox-ledger.js';
import type { LedgerCommand, PreparedCommit } from '../staging.js';

/** The participant's `http-list-max-elements-limit`: a longer list is refused with 413, as Canton does. */
export const MAX_LIST_ELEMENTS = 1000;
export const SYNCHRONIZER_ID = `sandbox::1220${'5'.repeat(64)}`;

export interface Context {
  readonly ledger: SandboxLedger;
  readonly participant: Participant;
  readonly token: string;
  /** Prepared transactions by their base64, oldest first: what `execute` is handed back. */
  readonly prepared: Map<string, PreparedEntry>;
  readonly batchingUtility: boolean;
  readonly known: KnownIds;
}

/** A JsCommands as the participant read and checked it. */
export interface Submission {
  readonly actAs: string[];
  readonly readAs: string[];
  readonly commandId: string;
  readonly userId: string;
  readonly submissionId: string;
  readonly commands: LedgerCommand[];
  readonly disclosed: ReadonlySet<string>;
}

export interface PreparedEntry {
  readonly submission: Submission;
  readonly prepared: PreparedCommit;
  readonly hash: Buffer;
}
