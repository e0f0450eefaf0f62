// The execution client: runs a plan through the user's own CIP-0103 wallet and tracks it on the
// user's own ledger view to its end, reporting every change through hooks.
//
// States (`ExecutionStatus`), terminal ones marked *:
//   SUBMITTING       the plan passed the SDK's checks; the wallet is asked to sign and submit
//   INITIATED        the deposit (with its fee legs, when batched) is on the ledger, awaiting the venue
//   COMPLETED*       the venue accepted and the payout is on the ledger (fee escrow released)
//   SLIPPAGE_FAILED* the venue could not pay the floor and rejected: the deposit came back
//   EXPIRED*         no answer before the plan's expiry (the deposit comes back when the venue
//                    rejects it late, or when `withdraw` takes it back)
//   WITHDRAWN*       the taker took the deposit back before any answer
//   USER_REJECTED*   the user refused to sign in the wallet (EIP-1193 4001); nothing was submitted
//   SUBMIT_FAILED*   the wallet or the ledger refused the submission; nothing was submitted
//   REFUSED*         the SDK refused the plan before anything was signed: expired, not checkable,
//                    or more than the taker can cover
// A plan is submitted under `commandId = planId`, so the ledger runs it at most once whoever
// retries; executing a plan that is executing returns the same promise; `resume` continues a
// stored execution without submitting again.
import type { BestexClient } from './client.js';
import type { Outcome, PlanStep } from './contract/v1.js';
import { isTerminal, NOTHING_SUBMITTED, RECORD_VERSION, type ExecutionHooks, type ExecutionRecord, type ExecutionResult, type ExecutionStatus, type Realised, type StatusDetail, type StepState } from './execution.js';
import { divide, fromUnits, toUnits } from './decimal.js';
import { BestexError } from './errors.js';
import { batchCommand, batchingSupport, distinctDisclosures, NO_BATCHING_NOTE, PACKAGE_NAMES_NOT_FOUND, type BatchTransfer } from './batching.js';
import { holdingsOf, ledgerEnd, openOffersOf, transactionsOf, type OwnHolding } from './ledger-view.js';
import { checkPlan, type Plan } from './plan.js';
import type { AbortSignalLike, Fetch } from './platform.js';
import { readRefusal } from './refusals.js';
import { ledgerApi, type CantonProvider, type DisclosedContract, type LedgerCommand, type ProviderRequest, type TxChangedEvent, type WalletAccount } from './provider.js';
import { memoryStorage, type ExecutionStorage } from './storage.js';
import { CHOICES, REASON_KEY, TRANSFER_FACTORY, TRANSFER_INSTRUCTION } from './token-standard.js';
import { feesReleased, START, track, type DepositTarget, type Tracked } from './tracking.js';

export interface ExecuteOptions {
  readonly provider: CantonProvider;
  /** The taker; the wallet's primary account by default. */
  readonly party?: string | undefined;
  /**
   * Each instrument admin's token registry base URL (such as a Scan's for Amulet), by admin party,
   * for the transfer factory and choice contexts. The sandbox names its own in its manifest
   * (`registries`; `sandboxRegistries` reads it). A registry is asked directly, with no credential.
   */
  readonly registries?: Readonly<Record<string, string>> | undefined;
  /** One registry for every instrument, where `registries` does not name the admin. */
  readonly registryUrl?: string | undefined;
  readonly hooks?: ExecutionHooks | undefined;
  /** Where the execution is recorded for `resume`; one in-memory store per page or process by default. */
  readonly storage?: ExecutionStorage | undefined;
  /** Stops waiting (the swap goes on): the promise then resolves with the state reached. */
  readonly signal?: AbortSignalLike | undefined;
  /** The service, to cross-check the outcome with GET /api/outcome. */
  readonly client?: BestexClient | undefined;
  /** For the registry calls; the platform's by default. */
  readonly fetch?: Fetch | undefined;
  /** How often the ledger is read while waiting; 250 ms by default. */
  readonly pollIntervalMs?: number | undefined;
}

/** How far in the past a transfer's requestedAt is set. */
const REQUESTED_AT_SKEW_MS = 60_000;
/** Canton's record-time tolerance: an offer may still be answered this long after its executeBefore. */
const ANSWER_GRACE_MS = 60_000;
/** The span of a plan's validity, for the outcome query's `since`. */
const PLAN_VALIDITY_MS = 90_000;
const CROSS_CHECK_BUDGET_MS = 6_000;
/** Ledger reads that may fail in a row while tracking before the execution gives up (and can be resumed). */
const READ_ATTEMPTS = 5;

const defaultStorage = memoryStorage();
const running = new Map<string, Promise<ExecutionResult>>();

function safely(hooks: ExecutionHooks | undefined, call: (hooks: ExecutionHooks) => unknown): void {
  if (!hooks) return;
  try {
    const returned = call(hooks);
    // An async hook's rejection too: unhandled, it would end a Node process.
    if (returned instanceof Promise) returned.catch(() => undefined);
  } catch {
    // A hook is the host's code: its failure must never break the swap it watches.
  }
}

const sleep = (ms: number, signal?: AbortSignalLike) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

async function takerOf(options: ExecuteOptions): Promise<string> {
  if (options.party) return options.party;
  try {
    const account = (await options.provider.request({ method: 'getPrimaryAccount' } satisfies ProviderRequest)) as WalletAccount;
    return account.partyId;
  } catch (err) {
    if (readRefusal(err, 'getPrimaryAccount').kind === 'unsupported') {
      throw new BestexError('the wallet does not offer getPrimaryAccount: pass the taker as options.party', { status: null, code: 'wallet_unsupported', cause: err });
    }
    throw err;
  }
}

function targetOf(plan: Plan, party: string): DepositTarget {
  const deposit = plan.steps[0]!;
  const notBefore = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS - ANSWER_GRACE_MS).toISOString();
  return { party, pool: deposit.target, instrument: deposit.instrument, amount: deposit.amount, memo: deposit.memo ?? '', want: plan.quoteRef.pair.want, executeBefore: deposit.expiresAt, notBefore };
}

/** The taker's unlocked holdings, largest first. */
const freeHoldings = (holdings: readonly OwnHolding[]) => holdings.filter((h) => !h.locked).sort((a, b) => (a.units === b.units ? 0 : a.units > b.units ? -1 : 1));

/** Holdings of `instrument` that together hold `needed` units, largest first; null when all of them hold less. */
function cover(free: readonly OwnHolding[], instrument: string, needed: bigint): OwnHolding[] | null {
  const chosen: OwnHolding[] = [];
  let total = 0n;
  for (const holding of free) {
    if (total >= needed) break;
    if (holding.instrument !== instrument) continue;
    chosen.push(holding);
    total += holding.units;
  }
  return total >= needed ? chosen : null;
}

const spendable = (holdings: readonly OwnHolding[], instrument: string) => fromUnits(holdings.filter((h) => h.instrument === instrument && !h.locked).reduce((s, h) => s + h.units, 0n));

/**
 * The holdings a batch of `steps` starts from, by instrument: enough for every step of that
 * instrument together, since the batch threads one transfer's change into the next. Or, when an
 * instrument falls short, what it lacks, in words.
 */
function batchInputs(steps: readonly PlanStep[], holdings: readonly OwnHolding[]): { inputs: Map<string, OwnHolding[]> } | { short: string } {
  const free = freeHoldings(holdings);
  const inputs = new Map<string, OwnHolding[]>();
  for (const instrument of new Set(steps.map((s) => s.instrument))) {
    const of = steps.filter((s) => s.instrument === instrument);
    const needed = of.reduce((sum, s) => sum + toUnits(s.amount), 0n);
    const chosen = cover(free, instrument, needed);
    if (chosen) {
      inputs.set(instrument, chosen);
      continue;
    }
    const legs = of.filter((s) => s.kind !== 'venue-deposit');
    const deposit = of.find((s) => s.kind === 'venue-deposit');
    const what = legs.length === 1 ? `the ${legs[0]!.kind} leg needs ${legs[0]!.amount} ${instrument}` : `the ${legs.map((l) => l.kind).join(' and ')} legs need ${fromUnits(legs.reduce((sum, l) => sum + toUnits(l.amount), 0n))} ${instrument} together`;
    const held = spendable(holdings, instrument);
    return {
      short: `${what}${deposit ? ` besides the deposit's ${deposit.amount}` : ''} and the party holds ${held} ${instrument} spendable, ${fromUnits(needed - toUnits(held))} short: the deposit goes alone, fee-less`,
    };
  }
  return { inputs };
}

interface Factory {
  readonly factoryId: string;
  readonly choiceContext: { readonly choiceContextData?: unknown; readonly disclosedContracts?: readonly DisclosedContract[] };
}

/** The registry that serves `admin`'s instruments: from `registries`, else the one `registryUrl`. */
function registryOf(options: ExecuteOptions, admin: string): string {
  const url = options.registries?.[admin] ?? options.registryUrl;
  if (!url) {
    throw new BestexError(`no token registry is configured for the instrument admin ${admin}: pass registries (by admin) or registryUrl`, { status: null, code: 'registry_unconfigured' });
  }
  return url.replace(/\/+$/, '');
}

/** A call to an instrument admin's token registry, asked directly, as public registries are: no credential. */
async function registry<T>(options: ExecuteOptions, admin: string, resource: string, body: unknown): Promise<T> {
  const fetcher = options.fetch ?? globalThis.fetch;
  const url = `${registryOf(options, admin)}${resource}`;
  let response: Response;
  try {
    response = await fetcher(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    throw new BestexError(`the registry at ${url} cannot be reached: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'submit_failed', cause: err });
  }
  if (!response.ok) {
    const refusal = (await response.json().catch(() => null)) as { error?: unknown } | null;
    throw new BestexError(`the registry refused ${resource} (HTTP ${response.status}${typeof refusal?.error === 'string' ? `: ${refusal.error}` : ''})`, { status: response.status, code: 'submit_failed' });
  }
  return (await response.json()) as T;
}

const transferFactory = (options: ExecuteOptions, admin: string, body: unknown) => registry<Factory>(options, admin, '/registry/transfer-instruction/v1/transfer-factory', body);

/** A step to transfer, from the instrument admin's holdings: `inputs`, or none where a batch gives them. */
interface Leg {
  readonly step: PlanStep;
  readonly admin: string;
  readonly inputs: readonly string[];
}

/** One TransferFactory_Transfer per leg, with its factory from the admin's registry and the factory's disclosed contracts. */
async function transfersOf(options: ExecuteOptions, plan: Plan, party: string, legs: readonly Leg[]): Promise<{ transfers: BatchTransfer[]; disclosed: DisclosedContract[] }> {
  const transfers: BatchTransfer[] = [];
  const disclosed: DisclosedContract[] = [];
  // Set in the past, as Canton's own token-standard code does: a participant whose clock runs
  // behind the wallet's refuses a transfer requested in its future.
  const requestedAt = new Date(Date.now() - REQUESTED_AT_SKEW_MS).toISOString();
  for (const { step, admin, inputs } of legs) {
    const transfer = {
      sender: party,
      receiver: step.target,
      amount: step.amount,
      instrumentId: { admin, id: step.instrument },
      requestedAt,
      executeBefore: step.expiresAt,
      inputHoldingCids: inputs,
      meta: { values: { [REASON_KEY]: step.memo ?? `${plan.planId} ${step.kind}` } },
    };
    const factory = await transferFactory(options, admin, { choiceArguments: { expectedAdmin: admin, transfer, extraArgs: { context: { values: {} }, meta: { values: {} } } }, excludeDebugFields: true });
    disclosed.push(...(factory.choiceContext.disclosedContracts ?? []));
    transfers.push({ factoryId: factory.factoryId, argument: { expectedAdmin: admin, transfer, extraArgs: { context: factory.choiceContext.choiceContextData ?? { values: {} }, meta: { values: {} } } } });
  }
  return { transfers, disclosed };
}

/** The deposit alone, as one ExerciseCommand spending `inputs`. */
async function depositCommand(options: ExecuteOptions, plan: Plan, party: string, inputs: readonly OwnHolding[]) {
  const { transfers, disclosed } = await transfersOf(options, plan, party, [{ step: plan.steps[0]!, admin: inputs[0]!.admin, inputs: inputs.map((h) => h.contractId) }]);
  const commands: LedgerCommand[] = transfers.map(({ factoryId, argument }) => ({
    ExerciseCommand: { templateId: TRANSFER_FACTORY.id, contractId: factoryId, choice: CHOICES.transfer, choiceArgument: argument },
  }));
  return { commands, disclosed };
}

/**
 * The deposit and its fee legs as one CIP-0112 batch: the registries are asked for each transfer
 * as the batch sends it, with no inputs of its own (the utility gives each the holdings it threads).
 */
async function batchedCommand(options: ExecuteOptions, plan: Plan, party: string, included: readonly number[], inputs: ReadonlyMap<string, readonly OwnHolding[]>) {
  const legs = included.map((i) => {
    const step = plan.steps[i]!;
    return { step, admin: inputs.get(step.instrument)![0]!.admin, inputs: [] };
  });
  const { transfers, disclosed } = await transfersOf(options, plan, party, legs);
  const held = [...inputs].map(([id, holdings]) => ({ admin: holdings[0]!.admin, id, contractIds: holdings.map((h) => h.contractId) }));
  return { commands: [batchCommand(party, held, transfers)], disclosed: distinctDisclosures(disclosed) };
}

type Submitted =
  | { readonly updateId: string | null; readonly duplicate?: true; readonly uncertain?: true }
  | { readonly refused: ExecutionStatus; readonly error: BestexError; readonly ledgerCode?: string | null };

const SUBMIT_METHODS = ['prepareExecuteAndWait', 'prepareExecute'] as const;

/** What a refused submission means for the execution: only one that may have reached the ledger is tracked. */
function answerTo(err: unknown, method: string): Submitted {
  const refusal = readRefusal(err, method);
  const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? JSON.stringify(err));
  switch (refusal.kind) {
    case 'duplicate':
      return { updateId: null, duplicate: true };
    case 'uncertain':
      return { updateId: null, uncertain: true };
    case 'user-rejected':
      return { refused: 'USER_REJECTED', error: new BestexError('the user declined to sign the plan in the wallet', { status: null, code: 'user_rejected', cause: err }) };
    case 'unsupported':
      return { refused: 'SUBMIT_FAILED', error: new BestexError(`the wallet does not offer ${refusal.method}: ${message}`, { status: null, code: 'submit_failed', cause: err }) };
    case 'refused':
      return { refused: 'SUBMIT_FAILED', ledgerCode: refusal.ledgerCode, error: new BestexError(`the wallet did not submit the plan: ${message}`, { status: null, code: 'submit_failed', cause: err }) };
  }
}

/**
 * Asks the wallet to sign and submit: prepareExecuteAndWait, or prepareExecute where the wallet
 * has no AndWait (the result is then found on the ledger, so a dropped txChanged changes nothing).
 * A wallet with neither cannot submit: that is said at once, naming both methods.
 */
async function submit(provider: CantonProvider, params: { commands: LedgerCommand[]; disclosed: DisclosedContract[]; commandId: string; party: string }, approve: (url: string) => void): Promise<Submitted> {
  const request = { commands: params.commands, commandId: params.commandId, actAs: [params.party], readAs: [params.party], disclosedContracts: params.disclosed };
  let missing: unknown;
  for (const method of SUBMIT_METHODS) {
    try {
      const answer = (await provider.request({ method, params: request } satisfies ProviderRequest)) as { tx?: { payload?: { updateId?: string } }; userUrl?: unknown } | null;
      // A remote gateway answers prepareExecute with the page where the user approves: the
      // transaction waits there, and is then found on the ledger.
      if (typeof answer?.userUrl === 'string') approve(answer.userUrl);
      return { updateId: answer?.tx?.payload?.updateId ?? null };
    } catch (err) {
      if (readRefusal(err, method).kind !== 'unsupported') return answerTo(err, method);
      missing = err;
    }
  }
  return {
    refused: 'SUBMIT_FAILED',
    error: new BestexError(`the wallet offers neither ${SUBMIT_METHODS.join(' nor ')}: it cannot sign and submit (a ledger connection, such as Canton's LedgerProvider, is not a wallet)`, { status: null, code: 'submit_failed', cause: missing }),
  };
}

/** ceil(a / b) for b > 0: a worse payout is never understated, a better one never overstated. */
const ceilDiv = (a: bigint, b: bigint): bigint => (a > 0n ? (a + b - 1n) / b : a / b);

function realised(plan: Plan, received: bigint): Realised {
  const net = toUnits(plan.quoteRef.net);
  return {
    price: fromUnits(divide(received, toUnits(plan.quoteRef.amount))),
    slippageBps: Number(ceilDiv((net - received) * 10_000n, net)),
    aboveFloor: fromUnits(received - toUnits(plan.quoteRef.minReceive)),
  };
}

/** The service's reading of the swap, polled while it is pending (briefly), compared with the SDK's. */
async function crossCheck(client: BestexClient, plan: Plan, party: string, depositUpdateId: string | null, signal?: AbortSignalLike): Promise<ExecutionResult['outcome']> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The service's reading is a cross-check: it may hold the final status back this long at most.
  const budget = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), CROSS_CHECK_BUDGET_MS)));
  try {
    return await Promise.race([readOutcome(client, plan, party, depositUpdateId, signal), budget]);
  } finally {
    clearTimeout(timer);
  }
}

async function readOutcome(client: BestexClient, plan: Plan, party: string, depositUpdateId: string | null, signal?: AbortSignalLike): Promise<ExecutionResult['outcome']> {
  const deposit = plan.steps[0]!;
  const since = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS).toISOString();
  const query = { party, since, deadline: plan.expiry, escrow: deposit.target, amount: deposit.amount, minReceive: plan.quoteRef.minReceive, want: plan.quoteRef.pair.want };
  let outcome: Outcome | null = null;
  for (let i = 0; i < 20 && !signal?.aborted; i++) {
    try {
      outcome = await client.outcome(query);
    } catch {
      return null;
    }
    if (outcome.status !== 'pending') break;
    await sleep(250, signal);
  }
  return outcome ? { status: outcome.status, depositUpdateId: outcome.depositUpdateId, agrees: outcome.depositUpdateId === depositUpdateId } : null;
}

class Execution {
  private record: ExecutionRecord;
  private state: Tracked;
  /** The submission found the plan already on the ledger. */
  private duplicate = false;
  /** The wallet said (txChanged) that the latest submission failed. */
  private walletFailed = false;
  private readonly onTx = (event: TxChangedEvent) => {
    if (event.commandId === this.plan.planId && event.status === 'failed') this.walletFailed = true;
  };
  private readonly storage: ExecutionStorage;
  /** Shows the user the wallet's approval page: the host's hook, or else a new browser window, as dapp-sdk opens it. */
  private readonly approve = (url: string): void => {
    const hooks = this.options.hooks;
    if (hooks?.onApproval) return safely(hooks, (h) => h.onApproval?.({ planId: this.plan.planId, url }));
    const open = (globalThis as { open?: (url: string, target: string) => unknown }).open;
    if (typeof open === 'function') open(url, '_blank');
  };

  constructor(
    private readonly options: ExecuteOptions,
    record: ExecutionRecord,
  ) {
    this.record = record;
    this.storage = options.storage ?? defaultStorage;
    this.state = { ...START, offset: record.startOffset };
  }

  private get plan(): Plan {
    return this.record.plan;
  }

  private async save(changes: Partial<ExecutionRecord>): Promise<void> {
    this.record = { ...this.record, ...changes };
    await this.storage.set(this.record);
  }

  private status(status: ExecutionStatus, detail: Omit<StatusDetail, 'planId'> = {}): void {
    safely(this.options.hooks, (h) => h.onStatus?.(status, { planId: this.plan.planId, ...detail }));
  }

  private step(index: number, state: StepState, updateId?: string): void {
    const step = this.plan.steps[index];
    if (step) safely(this.options.hooks, (h) => h.onStep?.(updateId === undefined ? { index, step, state } : { index, step, state, updateId }));
  }

  /** Ends the execution in `status`: recorded, reported, and returned. */
  async finish(status: ExecutionStatus, error: BestexError | null = null): Promise<ExecutionResult> {
    this.options.provider.removeListener('txChanged', this.onTx as (payload: never) => void);
    const { state, plan } = this;
    const received = state.received;
    const outcome = this.options.client && ['COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN'].includes(status) ? await crossCheck(this.options.client, plan, this.record.party, state.depositUpdateId, this.options.signal) : null;
    const result: ExecutionResult = {
      planId: plan.planId,
      party: this.record.party,
      status,
      depositUpdateId: state.depositUpdateId,
      submittedUpdateId: state.offerUpdateId ?? this.record.submittedUpdateId,
      received: received === null ? null : fromUnits(received),
      realised: received === null ? null : realised(plan, received),
      fees: { included: this.record.included.length > 1, released: feesReleased(state), note: this.record.feeNote },
      outcome,
      error,
    };
    await this.save({ status, result: isTerminal(status) ? result : null });
    // A wait stopped mid-way changes no state: there is nothing new to report.
    if (isTerminal(status)) {
      const disagreement = outcome && !outcome.agrees ? `the service reads ${outcome.status} with update ${outcome.depositUpdateId ?? '(none)'}, not the wallet's` : null;
      const note = error?.message ?? disagreement ?? this.record.feeNote;
      this.status(status, {
        ...(state.depositUpdateId ? { updateId: state.depositUpdateId } : {}),
        ...(status === 'COMPLETED' && result.received !== null ? { received: result.received } : {}),
        ...(error ? { error } : {}),
        ...(note ? { note } : {}),
      });
    }
    return result;
  }

  /** Checks, chooses the holdings, submits once, then tracks. */
  async run(): Promise<ExecutionResult> {
    const { provider } = this.options;
    if (this.options.signal?.aborted) {
      return this.refuse(new BestexError('the execution was stopped before anything was signed', { status: null, code: 'aborted' }));
    }
    let checked;
    try {
      checked = checkPlan(this.plan, new Date());
    } catch (err) {
      return this.refuse(err);
    }
    const holdings = await holdingsOf(provider, this.record.party);
    const depositInputs = cover(freeHoldings(holdings), checked.deposit.instrument, toUnits(checked.deposit.amount));
    if (!depositInputs) {
      const { deposit } = checked;
      return this.refuse(
        new BestexError(`the party cannot cover the venue-deposit step: it needs ${deposit.amount} ${deposit.instrument} to deposit; it holds ${spendable(holdings, deposit.instrument)} ${deposit.instrument} spendable`, {
          status: null,
          code: 'insufficient_funds',
        }),
      );
    }
    let included = [0];
    let feeNote: string | null = null;
    let inputs: ReadonlyMap<string, readonly OwnHolding[]> | null = null;
    if (checked.feeLegs.length > 0) {
      const chosen = batchInputs(this.plan.steps, holdings);
      if ('short' in chosen) feeNote = chosen.short;
      else if ((await batchingSupport(provider, this.record.party)) === 'absent') feeNote = NO_BATCHING_NOTE;
      else {
        included = this.plan.steps.map((_, i) => i);
        inputs = chosen.inputs;
      }
    }
    const startOffset = await ledgerEnd(provider);
    await this.save({ status: 'SUBMITTING', startOffset, included, feeNote });
    this.state = { ...START, offset: startOffset };
    this.status('SUBMITTING', feeNote ? { note: feeNote } : {});
    this.plan.steps.forEach((_, i) => this.step(i, included.includes(i) ? 'pending' : 'skipped'));
    const commandId = this.plan.planId;
    let submitted: Submitted;
    provider.on('txChanged', this.onTx as (payload: never) => void);
    try {
      const built = inputs ? await batchedCommand(this.options, this.plan, this.record.party, included, inputs) : await depositCommand(this.options, this.plan, this.record.party, depositInputs);
      this.walletFailed = false;
      submitted = await this.submitWatching({ ...built, commandId, party: this.record.party });
      if (inputs && 'refused' in submitted && submitted.ledgerCode === PACKAGE_NAMES_NOT_FOUND) {
        // The participant could not be asked beforehand, and lacks the package: the batch was
        // refused whole, nothing landed, so the deposit goes alone under the same commandId.
        feeNote = NO_BATCHING_NOTE;
        included = [0];
        await this.save({ included, feeNote });
        this.plan.steps.forEach((_, i) => i > 0 && this.step(i, 'skipped'));
        const alone = await depositCommand(this.options, this.plan, this.record.party, depositInputs);
        this.walletFailed = false;
        submitted = await this.submitWatching({ ...alone, commandId, party: this.record.party });
      }
    } catch (err) {
      // The registry or the ledger could not be read to build the commands: nothing reached the wallet.
      const error = err instanceof BestexError ? err : new BestexError(`the plan's transfers could not be built: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'submit_failed', cause: err });
      return this.finish(error.code === 'registry_unconfigured' ? 'REFUSED' : 'SUBMIT_FAILED', error);
    }
    if ('refused' in submitted) return this.finish(submitted.refused, submitted.error);
    if (submitted.duplicate) {
      // The ledger already ran this plan's commandId: an earlier submission (another tab, another
      // process) is tracked instead, read from the oldest offset the participant keeps.
      this.duplicate = true;
      const { participantPrunedUpToInclusive } = await ledgerApi<{ participantPrunedUpToInclusive?: number }>(provider, 'get', '/v2/state/latest-pruned-offsets');
      await this.save({ startOffset: participantPrunedUpToInclusive ?? 0 });
      this.state = { ...START, offset: this.record.startOffset };
    }
    await this.save({ status: 'INITIATED', submittedUpdateId: submitted.updateId });
    return this.follow();
  }

  /**
   * Submits, watching the ledger meanwhile: a wallet that never answers (its connection dropped
   * after it submitted) does not hold the execution up. The deposit found on the taker's view is
   * the answer; none by the plan's expiry (and the ledger's tolerance), and it is tracked as a
   * submission that may have been made, which ends it there.
   */
  private async submitWatching(params: Parameters<typeof submit>[1]): Promise<Submitted> {
    let answered = false;
    const asked = submit(this.options.provider, params, this.approve).finally(() => {
      answered = true;
    });
    const target = targetOf(this.plan, this.record.party);
    const giveUpAt = Date.parse(target.executeBefore) + ANSWER_GRACE_MS;
    // The watch reads into a state of its own, taken over only if it wins: the wallet's answer,
    // when it comes first, leaves the tracking state as it was.
    let watching = this.state;
    const watched = (async (): Promise<Tracked | 'gave-up' | null> => {
      for (;;) {
        await sleep(this.options.pollIntervalMs ?? 250, this.options.signal);
        if (answered) return null;
        try {
          watching = track(watching, await transactionsOf(this.options.provider, this.record.party, watching.offset), target, this.record.submittedUpdateId);
          if (watching.offerCid !== null) return watching;
        } catch {
          // An unreadable ledger: the wallet's answer is waited for, or the next read.
        }
        if (answered) return null;
        if (Date.now() >= giveUpAt || this.options.signal?.aborted) return 'gave-up';
      }
    })();
    const first = await Promise.race([asked.then((submitted) => ({ submitted })), watched.then((seen) => ({ seen }))]);
    if ('submitted' in first) return first.submitted;
    if (first.seen === null) return asked;
    if (first.seen === 'gave-up') return { updateId: null, uncertain: true };
    this.state = first.seen;
    return { updateId: first.seen.offerUpdateId };
  }

  private async refuse(err: unknown): Promise<ExecutionResult> {
    const error = err instanceof BestexError ? err : new BestexError(String(err), { status: null, code: 'plan_unverifiable', cause: err });
    return this.finish('REFUSED', error);
  }

  /** Tracks the deposit on the taker's ledger view until it ends, the wait is stopped, or the plan is long past its expiry. */
  async follow(): Promise<ExecutionResult> {
    const { provider, signal } = this.options;
    const target = targetOf(this.plan, this.record.party);
    const giveUpAt = Date.parse(target.executeBefore) + ANSWER_GRACE_MS;
    let announced = this.record.status === 'INITIATED' && this.state.offerCid !== null;
    const answered = new Set<number>();
    let failedReads = 0;
    for (;;) {
      try {
        this.state = track(this.state, await transactionsOf(provider, this.record.party, this.state.offset), target, this.record.submittedUpdateId);
        failedReads = 0;
      } catch (err) {
        // A passing failure to read is waited out; a lasting one ends the wait (resume goes on later).
        if (++failedReads >= READ_ATTEMPTS) {
          provider.removeListener('txChanged', this.onTx as (payload: never) => void);
          throw err;
        }
        await sleep(this.options.pollIntervalMs ?? 250, signal);
        continue;
      }
      if (this.state.offerCid !== null && !announced) {
        announced = true;
        if (this.record.status !== 'INITIATED') await this.save({ status: 'INITIATED' });
        this.record.included.forEach((i) => this.step(i, 'submitted', this.state.offerUpdateId!));
        this.status('INITIATED', {
          updateId: this.state.offerUpdateId!,
          ...(this.duplicate ? { duplicate: true, note: 'this plan was submitted before, under the same commandId: that submission is tracked, nothing new was sent' } : this.record.feeNote ? { note: this.record.feeNote } : {}),
        });
      }
      this.reportFeeLegs(answered);
      const outcome = this.state.outcome;
      if (outcome) {
        this.step(0, outcome === 'COMPLETED' ? 'accepted' : 'returned', this.state.depositUpdateId ?? undefined);
        // A fee leg answered after the payout's transaction reads as not answered yet (fees.released null).
        return this.finish(outcome);
      }
      if (this.state.offerCid === null && this.walletFailed && !this.duplicate) {
        return this.finish('SUBMIT_FAILED', new BestexError('the wallet reported that the transaction failed', { status: null, code: 'submit_failed' }));
      }
      if (Date.now() >= giveUpAt) {
        if (this.state.offerCid === null) {
          return this.finish('SUBMIT_FAILED', new BestexError('the deposit never reached the ledger before the plan expired', { status: null, code: 'submit_failed' }));
        }
        return this.finish('EXPIRED', null);
      }
      if (signal?.aborted) return this.finish(this.state.offerCid === null ? 'SUBMITTING' : 'INITIATED');
      await sleep(this.options.pollIntervalMs ?? 250, signal);
    }
  }

  /** Each fee leg's answer, once, on the plan step it is: matched by receiver and amount. */
  private reportFeeLegs(answered: Set<number>): void {
    for (const leg of this.state.feeLegs) {
      const answer = this.state.feeAnswers[leg.cid];
      if (!answer) continue;
      const index = this.record.included.find((i) => i > 0 && !answered.has(i) && this.plan.steps[i]!.target === leg.receiver && toUnits(this.plan.steps[i]!.amount) === toUnits(leg.amount));
      if (index === undefined) continue;
      answered.add(index);
      this.step(index, answer);
    }
  }

  /** Whether the plan's deposit offer is on the ledger (read once, from the record's start). */
  async onLedger(): Promise<boolean> {
    const target = targetOf(this.plan, this.record.party);
    this.state = track(this.state, await transactionsOf(this.options.provider, this.record.party, this.state.offset), target, this.record.submittedUpdateId);
    return this.state.offerCid !== null;
  }

  /** Takes back the deposit offer no pool answered: one withdraw, under its own commandId, with the registry's choice context. */
  async withdraw(): Promise<ExecutionResult> {
    const { provider } = this.options;
    const nothing = () => new BestexError(`no open deposit of ${this.plan.planId} to withdraw: the venue answered it, or it was withdrawn`, { status: null, code: 'nothing_to_withdraw' });
    if (!(await this.onLedger()) || this.state.outcome !== null) throw nothing();
    const offerCid = this.state.offerCid!;
    const offer = (await openOffersOf(provider, this.record.party)).find((open) => open.contractId === offerCid);
    if (!offer) throw nothing();
    const context = await registry<Factory['choiceContext']>(this.options, offer.transfer.instrumentId.admin, `/registry/transfer-instruction/v1/${encodeURIComponent(offerCid)}/choice-contexts/withdraw`, { meta: {}, excludeDebugFields: true });
    const command: LedgerCommand = {
      ExerciseCommand: {
        templateId: TRANSFER_INSTRUCTION.id,
        contractId: offerCid,
        choice: CHOICES.withdraw,
        choiceArgument: { extraArgs: { context: context.choiceContextData ?? { values: {} }, meta: { values: {} } } },
      },
    };
    const submitted = await submit(provider, { commands: [command], disclosed: [...(context.disclosedContracts ?? [])], commandId: `${this.plan.planId}-withdraw`, party: this.record.party }, this.approve);
    if ('refused' in submitted) throw submitted.error;
    return this.follow();
  }
}

function newRecord(plan: Plan, party: string): ExecutionRecord {
  return { version: RECORD_VERSION, planId: plan.planId, party, plan, status: 'SUBMITTING', startOffset: 0, included: [0], feeNote: null, submittedUpdateId: null, result: null };
}

/** Continues a stored, unfinished execution: tracking only, never a second submission. */
function continueFrom(record: ExecutionRecord, options: ExecuteOptions): Promise<ExecutionResult> {
  if (record.result && isTerminal(record.status)) return Promise.resolve(record.result);
  return new Execution(options, record).follow();
}

function once(planId: string, start: () => Promise<ExecutionResult>): Promise<ExecutionResult> {
  const current = running.get(planId);
  if (current) return current;
  const promise = start().finally(() => running.delete(planId));
  running.set(planId, promise);
  return promise;
}

/**
 * Runs `plan` through the user's wallet and tracks it to its end. Resolves with the result in every
 * end state (check `status`); rejects only when the wallet or the ledger cannot be read at all, or
 * the storage cannot be written (the execution can then be resumed).
 */
export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecutionResult> {
  const planId = typeof (plan as { planId?: unknown })?.planId === 'string' ? plan.planId : '';
  return once(planId, async () => {
    const party = await takerOf(options);
    const stored = await (options.storage ?? defaultStorage).get(planId);
    // Only an execution that may have reached the ledger is continued; one that submitted nothing
    // runs again, and so does one left while the wallet was asked (resubmitting under the same
    // commandId is safe: the ledger runs it at most once).
    if (stored && stored.party === party && !NOTHING_SUBMITTED.includes(stored.status)) {
      if (stored.status !== 'SUBMITTING' || (await new Execution(options, stored).onLedger())) return continueFrom(stored, options);
    }
    const execution = new Execution(options, newRecord(plan, party));
    return execution.run();
  });
}

/** Continues tracking a stored execution after a reload or a crash, without submitting again. */
export function resume(planId: string, options: ExecuteOptions): Promise<ExecutionResult> {
  return once(planId, async () => {
    const stored = await (options.storage ?? defaultStorage).get(planId);
    if (!stored) throw new BestexError(`no execution of ${planId} is stored here: execute the plan, or pass the storage it was executed with`, { status: null, code: 'unknown_plan' });
    return continueFrom(stored, options);
  });
}

/** Takes back the deposit of a stored execution that no pool has answered; resolves with the result (WITHDRAWN). */
export async function withdraw(planId: string, options: ExecuteOptions): Promise<ExecutionResult> {
  const stored = await (options.storage ?? defaultStorage).get(planId);
  if (!stored) throw new BestexError(`no execution of ${planId} is stored here: pass the storage it was executed with`, { status: null, code: 'unknown_plan' });
  // An execution still waiting for an answer sees the withdraw on the ledger and ends with it.
  return new Execution(options, { ...stored, result: null }).withdraw();
}
