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
import type { BestexClient, Outcome, PlanStep } from './client.js';
import { isTerminal, NOTHING_SUBMITTED, RECORD_VERSION, type ExecutionHooks, type ExecutionRecord, type ExecutionResult, type ExecutionStatus, type Realised, type StatusDetail, type StepState } from './execution.js';
import { divide, fromUnits, toUnits } from './decimal.js';
import { BestexError } from './errors.js';
import { holdingsOf, ledgerEnd, openOffersOf, transactionsOf, type OwnHolding } from './ledger-view.js';
import { checkPlan, type Plan } from './plan.js';
import { ledgerApi, PROVIDER_ERRORS, providerErrorCode, type CantonProvider, type DisclosedContract, type LedgerCommand, type TxChangedEvent, type WalletAccount } from './provider.js';
import { memoryStorage, type ExecutionStorage } from './storage.js';
import { CHOICES, REASON_KEY, TRANSFER_FACTORY, TRANSFER_INSTRUCTION } from './token-standard.js';
import { START, track, type DepositTarget, type Tracked } from './tracking.js';

export interface ExecuteOptions {
  readonly provider: CantonProvider;
  /** The taker; the wallet's primary account by default. */
  readonly party?: string;
  /** The token registry's base URL, for the transfer factory; asked through the wallet's `ledgerApi` by default. */
  readonly registryUrl?: string;
  readonly hooks?: ExecutionHooks;
  /** Where the execution is recorded for `resume`; one in-memory store per page or process by default. */
  readonly storage?: ExecutionStorage;
  /** Stops waiting (the swap goes on): the promise then resolves with the state reached. */
  readonly signal?: AbortSignal;
  /** The service, to cross-check the outcome with GET /api/outcome. */
  readonly client?: BestexClient;
  /** For the registry call with `registryUrl`. */
  readonly fetch?: typeof globalThis.fetch;
  /** How often the ledger is read while waiting; 250 ms by default. */
  readonly pollIntervalMs?: number;
}

/** Canton's record-time tolerance: an offer may still be answered this long after its executeBefore. */
const ANSWER_GRACE_MS = 60_000;
/** The span of a plan's validity, for the outcome query's `since`. */
const PLAN_VALIDITY_MS = 90_000;

const defaultStorage = memoryStorage();
const running = new Map<string, Promise<ExecutionResult>>();

function safely(hooks: ExecutionHooks | undefined, call: (hooks: ExecutionHooks) => void): void {
  if (!hooks) return;
  try {
    call(hooks);
  } catch {
    // A hook is the host's code: its failure must never break the swap it watches.
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
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
  const account = (await options.provider.request({ method: 'getPrimaryAccount' })) as WalletAccount;
  return account.partyId;
}

function targetOf(plan: Plan, party: string): DepositTarget {
  const deposit = plan.steps[0]!;
  const notBefore = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS - ANSWER_GRACE_MS).toISOString();
  return { party, pool: deposit.target, instrument: deposit.instrument, amount: deposit.amount, memo: deposit.memo ?? '', want: plan.quoteRef.pair.want, executeBefore: deposit.expiresAt, notBefore };
}

/** Holdings for each step, disjoint (a transfer spends its inputs whole); null for a step it cannot cover. */
function chooseInputs(steps: readonly PlanStep[], holdings: readonly OwnHolding[]): Array<OwnHolding[] | null> {
  const free = holdings.filter((h) => !h.locked).sort((a, b) => (a.units === b.units ? 0 : a.units > b.units ? -1 : 1));
  return steps.map((step) => {
    const needed = toUnits(step.amount);
    const chosen: OwnHolding[] = [];
    let total = 0n;
    for (const holding of free) {
      if (total >= needed) break;
      if (holding.instrument !== step.instrument) continue;
      chosen.push(holding);
      total += holding.units;
    }
    if (total < needed) return null;
    for (const holding of chosen) free.splice(free.indexOf(holding), 1);
    return chosen;
  });
}

const spendable = (holdings: readonly OwnHolding[], instrument: string) => fromUnits(holdings.filter((h) => h.instrument === instrument && !h.locked).reduce((s, h) => s + h.units, 0n));

interface Factory {
  readonly factoryId: string;
  readonly choiceContext: { readonly choiceContextData?: unknown; readonly disclosedContracts?: readonly DisclosedContract[] };
}

async function transferFactory(options: ExecuteOptions, body: unknown): Promise<Factory> {
  const resource = '/registry/transfer-instruction/v1/transfer-factory';
  if (!options.registryUrl) return ledgerApi<Factory>(options.provider, 'post', resource, body);
  const fetcher = options.fetch ?? globalThis.fetch;
  const response = await fetcher(`${options.registryUrl.replace(/\/+$/, '')}${resource}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new BestexError(`the registry refused the transfer factory lookup (HTTP ${response.status})`, { status: response.status, code: 'submit_failed' });
  return (await response.json()) as Factory;
}

/** One TransferFactory_Transfer per step, with the factory's disclosed contracts. */
async function transferCommands(options: ExecuteOptions, plan: Plan, party: string, steps: ReadonlyArray<{ step: PlanStep; inputs: readonly OwnHolding[] }>) {
  const commands: LedgerCommand[] = [];
  const disclosed: DisclosedContract[] = [];
  const requestedAt = new Date().toISOString();
  for (const { step, inputs } of steps) {
    const admin = inputs[0]!.admin;
    const transfer = {
      sender: party,
      receiver: step.target,
      amount: step.amount,
      instrumentId: { admin, id: step.instrument },
      requestedAt,
      executeBefore: step.expiresAt,
      inputHoldingCids: inputs.map((h) => h.contractId),
      meta: { values: { [REASON_KEY]: step.memo ?? `${plan.planId} ${step.kind}` } },
    };
    const factory = await transferFactory(options, { choiceArguments: { expectedAdmin: admin, transfer, extraArgs: { context: { values: {} }, meta: { values: {} } } }, excludeDebugFields: true });
    disclosed.push(...(factory.choiceContext.disclosedContracts ?? []));
    commands.push({
      ExerciseCommand: {
        templateId: TRANSFER_FACTORY.id,
        contractId: factory.factoryId,
        choice: CHOICES.transfer,
        choiceArgument: { expectedAdmin: admin, transfer, extraArgs: { context: factory.choiceContext.choiceContextData ?? { values: {} }, meta: { values: {} } } },
      },
    });
  }
  return { commands, disclosed };
}

type Submitted = { readonly updateId: string | null; readonly duplicate?: true } | { readonly refused: ExecutionStatus; readonly error: BestexError };

const looksDuplicate = (err: unknown) => /DUPLICATE_COMMAND/.test(`${(err as { message?: unknown })?.message ?? ''} ${JSON.stringify((err as { data?: unknown })?.data ?? '')}`);

/**
 * Asks the wallet to sign and submit: prepareExecuteAndWait, or prepareExecute where the wallet
 * has no AndWait (the result is then found on the ledger, so a dropped txChanged changes nothing).
 */
async function submit(provider: CantonProvider, params: { commands: LedgerCommand[]; disclosed: DisclosedContract[]; commandId: string; party: string }): Promise<Submitted> {
  const request = { commands: params.commands, commandId: params.commandId, actAs: [params.party], readAs: [params.party], disclosedContracts: params.disclosed };
  const refusal = (err: unknown): Submitted => {
    const code = providerErrorCode(err);
    const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? err);
    if (code === PROVIDER_ERRORS.userRejected) return { refused: 'USER_REJECTED', error: new BestexError('the user declined to sign the plan in the wallet', { status: null, code: 'user_rejected', cause: err }) };
    return { refused: 'SUBMIT_FAILED', error: new BestexError(`the wallet did not submit the plan: ${message}`, { status: null, code: 'submit_failed', cause: err }) };
  };
  let failed = false;
  const onTx = (event: TxChangedEvent) => {
    if (event.commandId === params.commandId && event.status === 'failed') failed = true;
  };
  provider.on('txChanged', onTx as (payload: never) => void);
  try {
    const answer = (await provider.request({ method: 'prepareExecuteAndWait', params: request })) as { tx?: { payload?: { updateId?: string } } } | null;
    return { updateId: answer?.tx?.payload?.updateId ?? null };
  } catch (err) {
    if (looksDuplicate(err)) return { updateId: null, duplicate: true };
    if (providerErrorCode(err) !== PROVIDER_ERRORS.methodNotFound) return refusal(err);
    try {
      await provider.request({ method: 'prepareExecute', params: request });
    } catch (again) {
      return looksDuplicate(again) ? { updateId: null, duplicate: true } : refusal(again);
    }
    if (failed) return refusal(new Error('the wallet reported the transaction failed'));
    return { updateId: null };
  } finally {
    provider.removeListener('txChanged', onTx as (payload: never) => void);
  }
}

function realised(plan: Plan, received: bigint): Realised {
  const net = toUnits(plan.quoteRef.net);
  return {
    price: fromUnits(divide(received, toUnits(plan.quoteRef.amount))),
    slippageBps: Number(((net - received) * 10_000n) / net),
    aboveFloor: fromUnits(received - toUnits(plan.quoteRef.minReceive)),
  };
}

/** The service's reading of the swap, polled while it is pending (briefly), compared with the SDK's. */
async function crossCheck(client: BestexClient, plan: Plan, party: string, depositUpdateId: string | null, signal?: AbortSignal): Promise<ExecutionResult['outcome']> {
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
  private readonly storage: ExecutionStorage;

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
      fees: { included: this.record.included.length > 1, released: state.feesReleased, note: this.record.feeNote },
      outcome,
      error,
    };
    await this.save({ status, result: isTerminal(status) ? result : null });
    // A wait stopped mid-way changes no state: there is nothing new to report.
    if (isTerminal(status)) {
      this.status(status, {
        ...(state.depositUpdateId ? { updateId: state.depositUpdateId } : {}),
        ...(error ? { error, note: error.message } : this.record.feeNote ? { note: this.record.feeNote } : {}),
      });
    }
    return result;
  }

  /** Checks, chooses the holdings, submits once, then tracks. */
  async run(): Promise<ExecutionResult> {
    const { provider } = this.options;
    let checked;
    try {
      checked = checkPlan(this.plan, new Date());
    } catch (err) {
      return this.refuse(err);
    }
    const holdings = await holdingsOf(provider, this.record.party);
    const [depositInputs, ...legInputs] = chooseInputs(this.plan.steps, holdings);
    if (!depositInputs) {
      const { deposit } = checked;
      return this.refuse(
        new BestexError(
          `the party cannot cover the venue-deposit step: it needs ${deposit.amount} ${deposit.instrument} from holdings no other step of the batch spends; it holds ${spendable(holdings, deposit.instrument)} ${deposit.instrument} spendable`,
          { status: null, code: 'insufficient_funds' },
        ),
      );
    }
    let included = [0];
    let feeNote: string | null = null;
    if (checked.feeLegs.length > 0) {
      const uncovered = checked.feeLegs.findIndex((_, i) => legInputs[i] === null);
      if (uncovered >= 0) {
        const leg = checked.feeLegs[uncovered]!;
        feeNote = `the ${leg.kind} leg needs ${leg.amount} ${leg.instrument} and the party holds ${spendable(holdings, leg.instrument)} spendable: the deposit goes alone, fee-less`;
      } else included = this.plan.steps.map((_, i) => i);
    }
    const startOffset = await ledgerEnd(provider);
    await this.save({ status: 'SUBMITTING', startOffset, included, feeNote });
    this.state = { ...START, offset: startOffset };
    this.status('SUBMITTING', feeNote ? { note: feeNote } : {});
    this.plan.steps.forEach((_, i) => this.step(i, included.includes(i) ? 'pending' : 'skipped'));
    const inputsOf = (i: number) => (i === 0 ? depositInputs : legInputs[i - 1]!);
    const commandId = this.plan.planId;
    let submitted: Submitted;
    try {
      let built = await transferCommands(this.options, this.plan, this.record.party, included.map((i) => ({ step: this.plan.steps[i]!, inputs: inputsOf(i) })));
      submitted = await submit(provider, { ...built, commandId, party: this.record.party });
      if ('refused' in submitted && submitted.refused === 'SUBMIT_FAILED' && included.length > 1) {
        // A wallet that cannot batch refuses the batch whole: nothing was submitted, so the deposit
        // may go alone under the same commandId, fee-less, rather than no swap or a broken one.
        feeNote = `the wallet did not take the deposit and its fee legs as one batch (${submitted.error.message}): the deposit went alone, fee-less`;
        included = [0];
        await this.save({ included, feeNote });
        this.plan.steps.forEach((_, i) => i > 0 && this.step(i, 'skipped'));
        built = await transferCommands(this.options, this.plan, this.record.party, [{ step: this.plan.steps[0]!, inputs: depositInputs }]);
        submitted = await submit(provider, { ...built, commandId, party: this.record.party });
      }
    } catch (err) {
      // The registry or the ledger could not be read to build the commands: nothing reached the wallet.
      const error = err instanceof BestexError ? err : new BestexError(`the plan's transfers could not be built: ${err instanceof Error ? err.message : String(err)}`, { status: null, code: 'submit_failed', cause: err });
      return this.finish('SUBMIT_FAILED', error);
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
    let feesReported: boolean | null = null;
    for (;;) {
      this.state = track(this.state, await transactionsOf(provider, this.record.party, this.state.offset), target, this.record.submittedUpdateId);
      if (this.state.offerCid !== null && !announced) {
        announced = true;
        if (this.record.status !== 'INITIATED') await this.save({ status: 'INITIATED' });
        this.record.included.forEach((i) => this.step(i, 'submitted', this.state.offerUpdateId!));
        this.status('INITIATED', {
          updateId: this.state.offerUpdateId!,
          ...(this.duplicate ? { duplicate: true, note: 'this plan was submitted before, under the same commandId: that submission is tracked, nothing new was sent' } : this.record.feeNote ? { note: this.record.feeNote } : {}),
        });
      }
      if (this.state.feesReleased !== null && feesReported === null) {
        feesReported = this.state.feesReleased;
        this.record.included.slice(1).forEach((i) => this.step(i, this.state.feesReleased ? 'accepted' : 'returned'));
      }
      const outcome = this.state.outcome;
      if (outcome) {
        this.step(0, outcome === 'COMPLETED' ? 'accepted' : 'returned', this.state.depositUpdateId ?? undefined);
        // The escrow is answered in the payout's transaction; a fee leg answered later is still reported once read.
        return this.finish(outcome);
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

  /** Takes back the deposit offer no pool answered: one withdraw, under its own commandId. */
  async withdraw(): Promise<ExecutionResult> {
    const { provider } = this.options;
    const target = targetOf(this.plan, this.record.party);
    const open = (await openOffersOf(provider, this.record.party)).find(({ contractId, transfer }) =>
      this.state.offerCid !== null ? contractId === this.state.offerCid : transfer.receiver === target.pool && toUnits(transfer.amount) === toUnits(target.amount) && transfer.meta?.values?.[REASON_KEY] === target.memo,
    );
    if (!open) throw new BestexError(`no open deposit of ${this.plan.planId} to withdraw: the venue answered it, or it was withdrawn`, { status: null, code: 'nothing_to_withdraw' });
    const command: LedgerCommand = {
      ExerciseCommand: { templateId: TRANSFER_INSTRUCTION.id, contractId: open.contractId, choice: CHOICES.withdraw, choiceArgument: { extraArgs: { context: { values: {} }, meta: { values: {} } } } },
    };
    const submitted = await submit(provider, { commands: [command], disclosed: [], commandId: `${this.plan.planId}-withdraw`, party: this.record.party });
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
 * end state (check `status`); rejects only when the wallet or the ledger cannot be read at all.
 */
export function execute(plan: Plan, options: ExecuteOptions): Promise<ExecutionResult> {
  const planId = typeof (plan as { planId?: unknown })?.planId === 'string' ? plan.planId : '';
  return once(planId, async () => {
    const party = await takerOf(options);
    const stored = await (options.storage ?? defaultStorage).get(planId);
    // Only an execution that may have reached the ledger is continued; one that submitted nothing runs again.
    if (stored && stored.party === party && !NOTHING_SUBMITTED.includes(stored.status)) return continueFrom(stored, options);
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
