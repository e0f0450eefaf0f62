// CIP-0112's batching utility (Splice's package splice-util-token-standard-wallet, module
// Splice.Util.Token.Wallet.BatchingUtilityV2): the one command that runs a plan's deposit and its
// fee legs (a split plan's every deposit and fee leg) in one transaction, whether the wallet's
// participant has the package to run it, and the refusal of a split plan where it has not.
//
// The utility threads holdings: each TransferFactory_Transfer action is given every holding the
// map holds for its instrument (its own inputHoldingCids are replaced), and its change goes back
// into the map for the next action of that instrument. So the fee legs of one instrument share
// holdings, and the map only has to cover each instrument's total.
import { BestexError } from './errors.js';
import { ledgerApi, type CantonProvider, type DisclosedContract, type LedgerCommand } from './provider.js';
import { readRefusal } from './refusals.js';

export const BATCHING_PACKAGE = 'splice-util-token-standard-wallet';
export const BATCHING_UTILITY = `#${BATCHING_PACKAGE}:Splice.Util.Token.Wallet.BatchingUtilityV2:BatchingUtility`;
export const EXECUTE_BATCH = 'BatchingUtility_ExecuteBatch';
const TRANSFER_ACTION = 'TSA_TransferFactory_TransferV1';

/** Canton's refusal of a query or a command naming a package the participant does not have. */
export const PACKAGE_NAMES_NOT_FOUND = 'PACKAGE_NAMES_NOT_FOUND';

export const NO_BATCHING_NOTE = `the wallet's participant lacks the batching package ${BATCHING_PACKAGE} (CIP-0112), so the fee legs cannot ride atomically with the deposit: the deposit goes alone, fee-less`;

/**
 * A split plan's legs go in one batch or not at all (one deposit alone would leave the others'
 * floors and fees unbound to it): without the package the plan is refused, before the wallet
 * signs anything (`asked`), or once the ledger refused the batch whole (`refused`).
 */
export function splitNeedsBatching(when: 'asked' | 'refused'): BestexError {
  const what = when === 'asked' ? 'nothing was signed or submitted' : 'the ledger refused the batch whole (PACKAGE_NAMES_NOT_FOUND), so nothing landed, and no deposit is sent alone';
  return new BestexError(`the wallet's participant lacks the batching package ${BATCHING_PACKAGE} (CIP-0112), which a split plan needs to submit its legs together: ${what}`, {
    status: null,
    code: 'batching_unavailable',
    action: 'plan the best single venue (the quote\'s bestExecutable) instead of the split',
  });
}

/** A TransferFactory_Transfer choice argument, as the SDK sends it. */
export interface TransferArgument {
  readonly expectedAdmin: string;
  readonly transfer: {
    readonly sender: string;
    readonly receiver: string;
    readonly amount: string;
    readonly instrumentId: { readonly admin: string; readonly id: string };
    readonly requestedAt: string;
    readonly executeBefore: string;
    readonly inputHoldingCids: readonly string[];
    readonly meta: { readonly values: Readonly<Record<string, string>> };
  };
  readonly extraArgs: { readonly context: unknown; readonly meta: { readonly values: Readonly<Record<string, string>> } };
}

/** One transfer of the batch: its factory and its argument. */
export interface BatchTransfer {
  readonly factoryId: string;
  readonly argument: TransferArgument;
}

/** The taker's holdings the batch starts from: of one instrument (`admin`, `id`). */
export interface BatchInputs {
  readonly admin: string;
  readonly id: string;
  readonly contractIds: readonly string[];
}

/** Whether the package is there, not there, or the participant could not be asked. */
export type BatchingSupport = 'present' | 'absent' | 'unknown';

/** Whether `err`, thrown by a wallet's `method`, is the ledger saying it lacks a package. */
export function lacksPackage(err: unknown, method: string): boolean {
  const refusal = readRefusal(err, method);
  return refusal.kind === 'refused' && refusal.ledgerCode === PACKAGE_NAMES_NOT_FOUND;
}

/**
 * Asks the wallet's participant (through the wallet's `ledgerApi`) which version of the package it
 * would use for `party`: Canton answers 404 PACKAGE_NAMES_NOT_FOUND when it has none, and the JSON
 * Ledger API's document says an answer leaves packagePreference out when it finds no preferred
 * package, so a 200 without one is "no package" too. Only an answer naming the package is
 * "present"; an answer naming another, or no answer at all, says nothing.
 */
export async function batchingSupport(provider: CantonProvider, party: string): Promise<BatchingSupport> {
  try {
    const answer = await ledgerApi<{ packagePreference?: { packageReference?: { packageName?: unknown } } } | null>(provider, 'get', '/v2/interactive-submission/preferred-package-version', undefined, {
      'package-name': BATCHING_PACKAGE,
      parties: party,
    });
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return 'unknown';
    if (answer.packagePreference === undefined || answer.packagePreference === null) return 'absent';
    return answer.packagePreference.packageReference?.packageName === BATCHING_PACKAGE ? 'present' : 'unknown';
  } catch (err) {
    // ledgerApi wraps the wallet's error; its cause is what the wallet threw.
    return lacksPackage((err as { cause?: unknown }).cause ?? err, 'ledgerApi') ? 'absent' : 'unknown';
  }
}

/** Daml's `basicAccount user`: no provider, no id. */
const basicAccount = (owner: string) => ({ provider: null, id: null, owner });

/**
 * The HoldingMap (`byAdminAndAccount : Map ScopedAccount (TextMap [ContractId Holding])`): a Daml
 * Map is a JSON list of [key, value] pairs, a TextMap an object; instruments of one admin share
 * its key.
 */
function holdingMap(user: string, inputs: readonly BatchInputs[]) {
  const byAdmin = new Map<string, Record<string, string[]>>();
  for (const { admin, id, contractIds } of inputs) {
    const ids = byAdmin.get(admin) ?? {};
    ids[id] = [...(ids[id] ?? []), ...contractIds];
    byAdmin.set(admin, ids);
  }
  return { byAdminAndAccount: [...byAdmin].map(([admin, ids]) => [{ admin, account: basicAccount(user) }, ids]) };
}

/**
 * One CreateAndExerciseCommand: a BatchingUtility of `user`, its ExecuteBatch running `transfers`
 * in order from `inputs`, archived after.
 */
export function batchCommand(user: string, inputs: readonly BatchInputs[], transfers: readonly BatchTransfer[]): LedgerCommand {
  return {
    CreateAndExerciseCommand: {
      templateId: BATCHING_UTILITY,
      createArguments: { user },
      choice: EXECUTE_BATCH,
      choiceArgument: {
        inputHoldingMap: holdingMap(user, inputs),
        actions: transfers.map(({ factoryId, argument }) => ({
          tag: TRANSFER_ACTION,
          value: { cid: factoryId, arg: { ...argument, transfer: { ...argument.transfer, inputHoldingCids: [] } } },
        })),
        archiveAfterExecution: true,
      },
    },
  };
}

/** The factories' disclosed contracts, each once. */
export function distinctDisclosures(disclosed: readonly DisclosedContract[]): DisclosedContract[] {
  const seen = new Set<string>();
  return disclosed.filter((d) => {
    const key = d.contractId ?? d.createdEventBlob;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
