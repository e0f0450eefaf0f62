// One execution of a plan, as a state machine over its record: checks the plan, chooses the
// holdings, submits once while watching the ledger, tracks the deposit to its end, withdraws it on
// request, and reports every change through the host's hooks, which can never break it.
import { batchingSupport, NO_BATCHING_NOTE, PACKAGE_NAMES_NOT_FOUND } from '../batching.js';
import { fromUnits, toUnits } from '../decimal.js';
import { BestexError } from '../errors.js';
import { holdingsOf, ledgerEnd, openOffersOf, transactionsOf, type OwnHolding } from '../ledger-view.js';
import { checkPlan } from '../plan.js';
import { ledgerApi, type TxChangedEvent } from '../provider.js';
import type { ExecutionStorage } from './storage.js';
import { feesReleased, START, track, type DepositTarget, type Tracked } from '../tracking.js';
import { batchedCommand, depositCommand, withdrawCommand } from './commands.js';
import { crossCheck } from './cross-check.js';
import { executable, type Executable } from './executable.js';
import { batchInputs, cover, freeHoldings, spendable } from './holdings.js';
import { defaultStorage, type ExecuteOptions } from './options.js';
import { realised } from './realised.js';
import { withdrawContext } from './registry.js';
import { submit, type Submitted } from './submission.js';
import { ANSWER_GRACE_MS, PLAN_VALIDITY_MS, sleep } from './timing.js';
import { isTerminal, type ExecutionHooks, type ExecutionRecord, type ExecutionResult, type ExecutionStatus, type StatusDetail, type StepState } from './types.js';

/** Ledger reads that may fail in a row while tracking before the execution gives up (and can be resumed). */
const READ_ATTEMPTS = 5;

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

function targetOf(plan: Executable, party: string): DepositTarget {
  const deposit = plan.steps[0]!;
  const notBefore = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS - ANSWER_GRACE_MS).toISOString();
  return { party, pool: deposit.target, instrument: deposit.instrument, amount: deposit.amount, memo: deposit.memo ?? '', want: plan.quoteRef.pair.want, executeBefore: deposit.expiresAt, notBefore };
}

export class Execution {
  private record: ExecutionRecord;
  private state: Tracked;
  /** The submission found the plan already on the ledger. */
  private duplicate = false;
  /** The wallet said (txChanged) that the latest submission failed. */
  private walletFailed = false;
  private readonly onTx = (event: TxChangedEvent) => {
    if (event.commandId === this.record.planId && event.status === 'failed') this.walletFailed = true;
  };
  private readonly storage: ExecutionStorage;
  /** Shows the user the wallet's approval page: the host's hook, or else a new browser window, as dapp-sdk opens it. */
  private readonly approve = (url: string): void => {
    const hooks = this.options.hooks;
    if (hooks?.onApproval) return safely(hooks, (h) => h.onApproval?.({ planId: this.record.planId, url }));
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

  private runnable: Executable | null = null;

  /** The plan as the executor runs it: read only once it passed the checks (a stored plan did). */
  private get plan(): Executable {
    return (this.runnable ??= executable(this.record.plan));
  }

  private async save(changes: Partial<ExecutionRecord>): Promise<void> {
    this.record = { ...this.record, ...changes };
    await this.storage.set(this.record);
  }

  private status(status: ExecutionStatus, detail: Omit<StatusDetail, 'planId'> = {}): void {
    safely(this.options.hooks, (h) => h.onStatus?.(status, { planId: this.record.planId, ...detail }));
  }

  private step(index: number, state: StepState, updateId?: string): void {
    // The step as the plan says it, in the plan's own version.
    const step = this.record.plan.steps[index];
    if (step) safely(this.options.hooks, (h) => h.onStep?.(updateId === undefined ? { index, step, state } : { index, step, state, updateId }));
  }

  /** Ends the execution in `status`: recorded, reported, and returned. */
  async finish(status: ExecutionStatus, error: BestexError | null = null): Promise<ExecutionResult> {
    this.options.provider.removeListener('txChanged', this.onTx as (payload: never) => void);
    const { state } = this;
    const received = state.received;
    const outcome = this.options.client && ['COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN'].includes(status) ? await crossCheck(this.options.client, this.record.plan, this.record.party, state.depositUpdateId, this.options.signal) : null;
    const result: ExecutionResult = {
      planId: this.record.planId,
      party: this.record.party,
      status,
      depositUpdateId: state.depositUpdateId,
      submittedUpdateId: state.offerUpdateId ?? this.record.submittedUpdateId,
      received: received === null ? null : fromUnits(received),
      realised: received === null ? null : realised(this.plan, received),
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
    try {
      checkPlan(this.record.plan, new Date());
    } catch (err) {
      return this.refuse(err);
    }
    const { steps } = this.plan;
    const deposit = steps[0]!;
    const owned = await holdingsOf(provider, this.record.party);
    // Where the plan names an instrument's admin, only that admin's holdings are the instrument.
    const holdings = owned.filter((h) => steps.every((s) => s.admin === null || s.instrument !== h.instrument || s.admin === h.admin));
    const depositInputs = cover(freeHoldings(holdings), deposit.instrument, toUnits(deposit.amount));
    if (!depositInputs) {
      const others = deposit.admin === null ? [] : [...new Set(owned.filter((h) => h.instrument === deposit.instrument && h.admin !== deposit.admin).map((h) => h.admin))];
      if (others.length > 0 && cover(freeHoldings(owned), deposit.instrument, toUnits(deposit.amount))) {
        return this.refuse(
          new BestexError(`the plan's ${deposit.instrument} is the admin ${deposit.admin}'s, and the party's ${deposit.instrument} holdings are another admin's (${others.join(', ')}): it is not executed`, {
            status: null,
            code: 'plan_unverifiable',
          }),
        );
      }
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
    if (steps.length > 1) {
      const chosen = batchInputs(steps, holdings);
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
    const context = await withdrawContext(this.options, this.plan.registries, offer.transfer.instrumentId.admin, offerCid);
    const command = withdrawCommand(offerCid, context);
    const submitted = await submit(provider, { commands: [command], disclosed: [...(context.disclosedContracts ?? [])], commandId: `${this.plan.planId}-withdraw`, party: this.record.party }, this.approve);
    if ('refused' in submitted) throw submitted.error;
    return this.follow();
  }
}
