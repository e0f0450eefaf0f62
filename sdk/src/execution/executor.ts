// One execution of a plan, as a state machine over its record: checks the plan, has the wallet sign
// a venue's message and the service complete the plan when the plan asks for it, chooses the
// holdings, submits once while watching the ledger, tracks the deposit to its end, withdraws it on
// request, and reports every change through the host's hooks, which can never break it.
import { batchingSupport, NO_BATCHING_NOTE, PACKAGE_NAMES_NOT_FOUND } from '../batching.js';
import { fromUnits, toUnits } from '../decimal.js';
import { BestexError } from '../errors.js';
import { holdingsOf, ledgerEnd, openOffersOf, transactionsOf, type OwnHolding } from '../ledger-view.js';
import type { BestexClientV2 } from '../client.js';
import type * as V2 from '../contract/v2.js';
import { checkPlan, isSigningPlan, type Plan, type SignMessageStep } from '../plan.js';
import { ledgerApi, type TxChangedEvent } from '../provider.js';
import type { ExecutionStorage } from './storage.js';
import { feesReleased, START, track, type DepositTarget, type Tracked } from '../tracking.js';
import { batchedCommand, depositCommand, withdrawCommand } from './commands.js';
import { crossCheck, intentOutcome, isIntentPlan } from './cross-check.js';
import { executable, type Executable } from './executable.js';
import { batchInputs, cover, freeHoldings, spendable } from './holdings.js';
import { defaultStorage, type ExecuteOptions } from './options.js';
import { realised } from './realised.js';
import { withdrawContext } from './registry.js';
import { signingKey, signWithWallet } from './signature.js';
import { submit, type Submitted } from './submission.js';
import { ANSWER_GRACE_MS, PLAN_VALIDITY_MS, sleep } from './timing.js';
import { isTerminal, type ExecutionHooks, type ExecutionRecord, type ExecutionResult, type ExecutionStatus, type StatusDetail, type StepState } from './types.js';

/** Ledger reads that may fail in a row while tracking before the execution gives up (and can be resumed). */
const READ_ATTEMPTS = 5;

/**
 * How often the service is asked about an intent whose deposit the venue took without paying yet:
 * its reading changes once per INTENT_POLL_INTERVAL_MS (5 s by default) at most, and every ask
 * counts in a keyless caller's rate-limit window.
 */
const INTENT_READ_MS = 5_000;

/** The service's answers to signPlan that settle it: nothing was made, and asking again would answer the same. */
const SIGN_PLAN_REFUSALS = new Set([400, 401, 403, 404, 409]);

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Whether `client` is a version 2 client, which completes a plan made with a sign-message step. */
const signsPlans = (client: unknown): client is BestexClientV2 => typeof (client as Partial<BestexClientV2> | undefined)?.signPlan === 'function';

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
    const outcome = this.options.client && ['COMPLETED', 'SLIPPAGE_FAILED', 'EXPIRED', 'WITHDRAWN', 'VENUE_FAILED'].includes(status) ? await crossCheck(this.options.client, this.record.plan, this.record.party, status, state.depositUpdateId, this.options.signal) : null;
    const intent = (this.record.plan as { intent?: V2.PlanIntent }).intent;
    const result: ExecutionResult = {
      planId: this.record.planId,
      party: this.record.party,
      status,
      depositUpdateId: state.depositUpdateId,
      submittedUpdateId: state.offerUpdateId ?? this.record.submittedUpdateId,
      received: received === null ? null : fromUnits(received),
      realised: received === null || isSigningPlan(this.record.plan) ? null : realised(this.plan, received),
      fees: { included: this.record.included.length > 1, released: feesReleased(state), note: this.record.feeNote },
      outcome,
      ...(intent ? { intent } : {}),
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
    if (isSigningPlan(this.record.plan)) {
      const ended = await this.signed();
      if (ended) return ended;
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

  /**
   * A plan made with a sign-message step: the wallet signs the venue's message (once: its
   * signature is kept in the record), then the service completes the plan, which is checked and
   * kept as the plan executed. Answers the execution's end when it ends here, null to go on.
   */
  private async signed(): Promise<ExecutionResult | null> {
    const { provider, client } = this.options;
    const step = this.record.plan.steps[0] as SignMessageStep;
    // The service completes the plan: without a client that can ask it, nothing is signed.
    if (!signsPlans(client)) {
      return this.refuse(
        new BestexError(`a plan on ${step.venueId} is completed by the service once the wallet signs its message: execute it with a version 2 client (options.client, from createClientV2); nothing was signed`, {
          status: null,
          code: 'client_required',
        }),
      );
    }
    let signing = this.record.signing?.step.message === step.message ? this.record.signing : undefined;
    if (!signing?.signature || !signing.publicKey) {
      const key = await signingKey(provider, this.record.party);
      if ('error' in key) return this.finish('REFUSED', key.error);
      signing = { step, signature: null, publicKey: key.publicKey };
      await this.save({ status: 'SIGNING', signing });
      this.status('SIGNING', { note: step.purpose });
      this.signingStep(step, 'pending');
      safely(this.options.hooks, (h) => h.onSignature?.({ planId: this.record.planId, venueId: step.venueId, message: step.message, purpose: step.purpose }));
      const answer = await signWithWallet(provider, step.message, this.approve, Date.parse(step.expiresAt), this.options.signal);
      if ('refused' in answer) return this.finish(answer.refused, answer.error);
      signing = { ...signing, signature: answer.signature };
      await this.save({ signing });
      this.signingStep(step, 'signed');
    }
    let completed: Plan;
    try {
      completed = await client.signPlan({ planId: this.record.planId, signature: signing.signature!, publicKey: signing.publicKey! });
    } catch (err) {
      const error = err instanceof BestexError ? err : new BestexError(String(err), { status: null, code: 'network_error', cause: err });
      if (error.status !== null && (SIGN_PLAN_REFUSALS.has(error.status) || error.code === 'venue_floor_below_service')) return this.finish('REFUSED', error);
      // The service may have made the intent: asked again (resume, or execute), it answers the same plan, with the signature kept.
      return this.finish('SIGNING', error);
    }
    const made = this.record.plan;
    const unverifiable = (why: string) => this.refuse(new BestexError(`the plan the service completed cannot be checked, so it is not executed: ${why}`, { status: null, code: 'plan_unverifiable' }));
    if (completed?.planId !== made.planId || completed.expiry !== made.expiry || !sameJson(completed.quoteRef, made.quoteRef)) return unverifiable('it is not the plan that was signed for (its planId, quoteRef or expiry differ)');
    if (isSigningPlan(completed) || !isIntentPlan(completed)) return unverifiable('it is not a deposit to the venue\'s swap intent');
    try {
      checkPlan(completed, new Date());
    } catch (err) {
      return this.refuse(err);
    }
    await this.save({ plan: completed });
    this.runnable = null;
    return null;
  }

  private signingStep(step: SignMessageStep, state: StepState): void {
    safely(this.options.hooks, (h) => h.onStep?.({ index: 0, step, state }));
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
    let intentAskedAt = 0;
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
      // A venue that took the deposit and has not paid is asked about (through the service) while it
      // is waited for: one that failed says so, and the execution ends saying who must act.
      if (this.state.depositUpdateId !== null && this.options.client && isIntentPlan(this.record.plan) && Date.now() - intentAskedAt >= INTENT_READ_MS) {
        intentAskedAt = Date.now();
        const reading = await intentOutcome(this.options.client, this.record.plan, this.record.party);
        if (reading?.status === 'venue_failed') return this.finish('VENUE_FAILED', this.venueFailed(reading));
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

  /** Why an intent the venue took the deposit for ended with nothing paid: the venue itself must act. */
  private venueFailed(reading: V2.Outcome): BestexError {
    const intent = (this.record.plan as { intent?: V2.PlanIntent }).intent;
    const venue = reading.venueId ?? intent?.venueId ?? 'the venue';
    return new BestexError(
      `${venue} took the deposit and neither paid out nor refunded it (its intent ${reading.intentId ?? intent?.intentId ?? ''} is ${reading.venueStatus ?? 'failed'}): ${venue} itself must act; contact its support with the intent id and the deposit's update ${this.state.depositUpdateId}`,
      { status: null, code: 'venue_failed', action: `contact ${venue}'s support with the intent id` },
    );
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
