// One execution of a plan, as a state machine over its record: checks the plan, has the wallet sign
// a venue's message and the service complete the plan when the plan asks for it, chooses the
// holdings, submits once while watching the ledger, tracks each deposit to its end (a split plan's
// legs each on its own, the execution ending once every leg has), withdraws what is still open on
// request, and reports every change through the host's hooks, which can never break it.
import { batchingSupport, distinctDisclosures, NO_BATCHING_NOTE, PACKAGE_NAMES_NOT_FOUND, splitNeedsBatching } from '../batching.js';
import { fromUnits, toUnits } from '../decimal.js';
import { BestexError } from '../errors.js';
import { holdingsOf, ledgerEnd, openOffersOf, transactionsOf, type OwnHolding } from '../ledger-view.js';
import type { BestexClientV2 } from '../client.js';
import type * as V2 from '../contract/v2.js';
import { checkCompleted, checkPlan, isSigningPlan, isSplitPlan, type Plan, type SignMessageStep, type SigningPlanV2, type SigningSplitPlan } from '../plan.js';
import { ledgerApi, type DisclosedContract, type LedgerCommand, type TxChangedEvent } from '../provider.js';
import type { ExecutionStorage } from './storage.js';
import { feesReleased, start, track, type DepositTarget, type DepositTracked, type Tracked } from '../tracking.js';
import { batchedCommand, depositCommand, withdrawCommand } from './commands.js';
import { crossCheck, intentOutcome, isIntentLeg } from './cross-check.js';
import { executable, type Executable, type ExecutableLeg } from './executable.js';
import { fateWords, splitStatus } from './legs.js';
import { batchInputs, cover, freeHoldings, spendable } from './holdings.js';
import { defaultStorage, type ExecuteOptions } from './options.js';
import { realised } from './realised.js';
import { withdrawContext } from './registry.js';
import { signingKey, signWithWallet } from './signature.js';
import { submit, type Submitted } from './submission.js';
import { sleep } from '../platform.js';
import { ANSWER_GRACE_MS, PLAN_VALIDITY_MS } from './timing.js';
import {
  isTerminal,
  LEG_STATUSES,
  type ExecutionHooks,
  type ExecutionRecord,
  type ExecutionResult,
  type ExecutionStatus,
  type LegResult,
  type LegStatus,
  type StatusDetail,
  type StepState,
} from './types.js';

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

/** A leg's end as the service takes a taker's report of it (a venue's failure is not the wallet's to say). */
const REPORTED: Partial<Record<LegStatus, V2.PlanViewReport['legs'][number]['outcome']>> = {
  COMPLETED: 'completed',
  SLIPPAGE_FAILED: 'slippage_failed',
  EXPIRED: 'expired',
  WITHDRAWN: 'withdrawn',
};

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

/** Each leg's deposit as tracking looks for it, with the fee legs that go with it. */
function targetsOf(plan: Executable, party: string): DepositTarget[] {
  const notBefore = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS - ANSWER_GRACE_MS).toISOString();
  return plan.legs.map((leg) => {
    const deposit = plan.steps[leg.deposit]!;
    const feeLegs = leg.feeLegs.map((i) => ({ receiver: plan.steps[i]!.target, amount: plan.steps[i]!.amount }));
    return { party, pool: deposit.target, instrument: deposit.instrument, amount: deposit.amount, memo: deposit.memo ?? '', want: plan.quoteRef.pair.want, executeBefore: deposit.expiresAt, notBefore, feeLegs };
  });
}

/** When the wait for an answer ends: the last deposit's offer stops being acceptable, and the ledger's tolerance after it. */
const giveUpAtOf = (plan: Executable): number => Math.max(...plan.legs.map((leg) => Date.parse(plan.steps[leg.deposit]!.expiresAt))) + ANSWER_GRACE_MS;

export class Execution {
  private record: ExecutionRecord;
  private state: Tracked;
  /** The submission found the plan already on the ledger. */
  private duplicate = false;
  /** The wallet said (txChanged) that the latest submission failed. */
  private walletFailed = false;
  /** Each leg's end once it has one, by leg index (set while following), and why, when a venue kept it. */
  private fates: Array<LegStatus | null> = [];
  private legErrors: Array<BestexError | null> = [];
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
    this.state = start(record.startOffset);
  }

  private runnable: Executable | null = null;
  /** The plan passed the checks here (a stored one, tracked or withdrawn, did before): it can be read as the executor runs it. */
  private checked = false;

  /** The plan as the executor runs it: read only once it passed the checks (a stored plan did). */
  private get plan(): Executable {
    return (this.runnable ??= executable(this.record.plan));
  }

  /** Where `leg`'s deposit stands (unseen until the submission is). */
  private deposit(leg: ExecutableLeg): DepositTracked | undefined {
    return this.state.deposits[leg.index];
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

  /**
   * Each leg as it stands, read on its own: its end, payout and realised figures against its own
   * net and floor, its fee legs' answers, and (once the swap ended, with a client) the service's
   * reading of its deposit.
   */
  private async legResults(plan: Executable, ended: boolean): Promise<LegResult[]> {
    const { client, signal } = this.options;
    return Promise.all(
      plan.legs.map(async (leg): Promise<LegResult> => {
        const tracked = this.deposit(leg);
        const status = this.fates[leg.index] ?? null;
        const received = status === 'COMPLETED' ? (tracked?.received ?? null) : null;
        const depositUpdateId = tracked?.depositUpdateId ?? null;
        const outcome = client && ended && status !== null ? await crossCheck(client, plan, leg, this.record.party, status, depositUpdateId, signal) : null;
        return {
          index: leg.index,
          venueId: leg.venueId,
          amount: leg.amount,
          minReceive: leg.minReceive,
          status,
          depositUpdateId,
          received: received === null ? null : fromUnits(received),
          realised: received === null ? null : realised({ quoteRef: { amount: leg.amount, net: leg.net, minReceive: leg.minReceive } }, received),
          fees: { released: tracked ? feesReleased([tracked]) : null },
          outcome,
        };
      }),
    );
  }

  /**
   * Tells the service what the wallet saw of the legs it cannot observe itself (a Nightly deposit,
   * `swap-address-memo`), so the plan's status reads the taker's view. Best effort: the result is
   * the wallet's whatever the service answers.
   */
  private async reportUnobserved(legs: readonly LegResult[]): Promise<void> {
    const { client } = this.options;
    const plan = this.record.plan as (V2.ExecutionPlan | V2.SplitPlan) & { statusToken?: string };
    if (!signsPlans(client) || typeof client.reportPlanView !== 'function') return;
    const settlements = 'split' in plan ? plan.split.legs.map((l) => l.settlement) : [plan.settlement];
    const seen = legs.flatMap((leg) => {
      const outcome = leg.status === null ? null : REPORTED[leg.status];
      if (settlements[leg.index] !== 'swap-address-memo' || !outcome) return [];
      return [{ leg: leg.index, outcome, depositUpdateId: leg.depositUpdateId, received: outcome === 'completed' ? leg.received : null }];
    });
    if (seen.length === 0) return;
    try {
      await client.reportPlanView({ planId: plan.planId, ...(plan.statusToken ? { token: plan.statusToken } : {}), legs: seen });
    } catch {
      // The service's reading is for others to follow; the wallet's own result stands.
    }
  }

  /** Ends the execution in `status`: recorded, reported, and returned. */
  async finish(status: ExecutionStatus, error: BestexError | null = null): Promise<ExecutionResult> {
    this.options.provider.removeListener('txChanged', this.onTx as (payload: never) => void);
    // A plan refused by its checks, or still awaiting its signature, has no legs to read.
    const plan = this.runnable ?? (this.checked && !isSigningPlan(this.record.plan) ? this.plan : null);
    const ended = status === 'PARTIALLY_COMPLETED' || (LEG_STATUSES as readonly ExecutionStatus[]).includes(status);
    const legs = plan ? await this.legResults(plan, ended) : [];
    const split = plan?.split === true;
    const paid = legs.filter((leg) => leg.received !== null);
    const units = paid.reduce((total, leg) => total + toUnits(leg.received!), 0n);
    const received = paid.length === 0 ? null : fromUnits(units);
    // A split's figures on the whole mean something only when every leg was paid.
    const whole = plan && paid.length > 0 && paid.length === legs.length ? realised(plan, units) : null;
    const intent = (this.record.plan as { intent?: V2.PlanIntent }).intent;
    const single = split ? undefined : legs[0];
    const result: ExecutionResult = {
      planId: this.record.planId,
      party: this.record.party,
      status,
      depositUpdateId: single?.depositUpdateId ?? null,
      submittedUpdateId: this.state.offerUpdateId ?? this.record.submittedUpdateId,
      received,
      realised: whole,
      fees: { included: plan !== null && this.record.included.some((i) => plan.steps[i]?.kind !== 'venue-deposit'), released: feesReleased(this.state.deposits), note: this.record.feeNote },
      outcome: single?.outcome ?? null,
      ...(intent ? { intent } : {}),
      ...(split ? { legs } : {}),
      error,
    };
    await this.save({ status, result: isTerminal(status) ? result : null });
    if (isTerminal(status) && plan) await this.reportUnobserved(legs);
    // A wait stopped mid-way changes no state: there is nothing new to report.
    if (isTerminal(status)) {
      const disagreements = legs.flatMap(({ index, venueId, outcome }) =>
        outcome && !outcome.agrees ? [`${split ? `leg ${index} (${venueId}): ` : ''}the service reads ${outcome.status} with update ${outcome.depositUpdateId ?? '(none)'}, not the wallet's`] : [],
      );
      const fates = split && legs.some((leg) => leg.status !== null) ? legs.map((leg) => fateWords(leg, plan!.quoteRef.pair.want, plan!.legs[leg.index]!.feeLegs.length > 0)).join('; ') : null;
      const note = split ? [error?.message, fates, ...disagreements].filter(Boolean).join('; ') || null : (error?.message ?? disagreements[0] ?? this.record.feeNote);
      this.status(status, {
        ...(single?.depositUpdateId ? { updateId: single.depositUpdateId } : {}),
        ...((status === 'COMPLETED' || status === 'PARTIALLY_COMPLETED') && received !== null ? { received } : {}),
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
    this.checked = true;
    // A split's legs ride one batch or none: a participant that has no batching package is known
    // before the wallet is asked to sign anything, its venue's message included.
    if (isSplitPlan(this.record.plan) && (await batchingSupport(provider, this.record.party)) === 'absent') return this.refuse(splitNeedsBatching('asked'));
    if (isSigningPlan(this.record.plan)) {
      const ended = await this.signed();
      if (ended) return ended;
    }
    const { steps, legs, split } = this.plan;
    const deposit = steps[legs[0]!.deposit]!;
    const depositTotal = legs.reduce((total, leg) => total + toUnits(steps[leg.deposit]!.amount), 0n);
    const owned = await holdingsOf(provider, this.record.party);
    // Where the plan names an instrument's admin, only that admin's holdings are the instrument.
    const holdings = owned.filter((h) => steps.every((s) => s.admin === null || s.instrument !== h.instrument || s.admin === h.admin));
    const depositInputs = cover(freeHoldings(holdings), deposit.instrument, depositTotal);
    if (!depositInputs) {
      const others = deposit.admin === null ? [] : [...new Set(owned.filter((h) => h.instrument === deposit.instrument && h.admin !== deposit.admin).map((h) => h.admin))];
      if (others.length > 0 && cover(freeHoldings(owned), deposit.instrument, depositTotal)) {
        return this.refuse(
          new BestexError(`the plan's ${deposit.instrument} is the admin ${deposit.admin}'s, and the party's ${deposit.instrument} holdings are another admin's (${others.join(', ')}): it is not executed`, {
            status: null,
            code: 'plan_unverifiable',
          }),
        );
      }
      const needs = split ? `the split's venue-deposit steps: they need ${fromUnits(depositTotal)} ${deposit.instrument} together to deposit` : `the venue-deposit step: it needs ${deposit.amount} ${deposit.instrument} to deposit`;
      return this.refuse(
        new BestexError(`the party cannot cover ${needs}; it holds ${spendable(holdings, deposit.instrument)} ${deposit.instrument} spendable`, {
          status: null,
          code: 'insufficient_funds',
        }),
      );
    }
    let included = [0];
    let feeNote: string | null = null;
    let inputs: ReadonlyMap<string, readonly OwnHolding[]> | null = null;
    if (split) {
      // Every leg and every fee leg in one batch, or nothing: a leg's fees are never left out.
      const chosen = batchInputs(steps, holdings);
      if ('short' in chosen) return this.refuse(new BestexError(`the party cannot cover every step of the split in its one batch: ${chosen.short}`, { status: null, code: 'insufficient_funds' }));
      included = steps.map((_, i) => i);
      inputs = chosen.inputs;
    } else if (steps.length > 1) {
      const chosen = batchInputs(steps, holdings);
      if ('short' in chosen) feeNote = `${chosen.short}: the deposit goes alone, fee-less`;
      else if ((await batchingSupport(provider, this.record.party)) === 'absent') feeNote = NO_BATCHING_NOTE;
      else {
        included = steps.map((_, i) => i);
        inputs = chosen.inputs;
      }
    }
    const startOffset = await ledgerEnd(provider);
    await this.save({ status: 'SUBMITTING', startOffset, included, feeNote });
    this.state = start(startOffset);
    this.status('SUBMITTING', feeNote ? { note: feeNote } : {});
    steps.forEach((_, i) => this.step(i, included.includes(i) ? 'pending' : 'skipped'));
    const commandId = this.plan.planId;
    let submitted: Submitted;
    provider.on('txChanged', this.onTx as (payload: never) => void);
    try {
      const built = inputs ? await batchedCommand(this.options, this.plan, this.record.party, included, inputs) : await depositCommand(this.options, this.plan, this.record.party, depositInputs);
      this.walletFailed = false;
      submitted = await this.submitWatching({ ...built, commandId, party: this.record.party });
      if (inputs && 'refused' in submitted && submitted.ledgerCode === PACKAGE_NAMES_NOT_FOUND) {
        // The participant could not be asked beforehand, and lacks the package: the batch was
        // refused whole, nothing landed. A split ends there; a single deposit goes alone under the same commandId.
        if (split) return this.finish('REFUSED', splitNeedsBatching('refused'));
        feeNote = NO_BATCHING_NOTE;
        included = [0];
        await this.save({ included, feeNote });
        steps.forEach((_, i) => i > 0 && this.step(i, 'skipped'));
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
      this.state = start(this.record.startOffset);
    }
    await this.save({ status: 'INITIATED', submittedUpdateId: submitted.updateId });
    return this.follow();
  }

  /**
   * Submits, watching the ledger meanwhile: a wallet that never answers (its connection dropped
   * after it submitted) does not hold the execution up. The deposits found on the taker's view are
   * the answer; none by the plan's expiry (and the ledger's tolerance), and it is tracked as a
   * submission that may have been made, which ends it there.
   */
  private async submitWatching(params: Parameters<typeof submit>[1]): Promise<Submitted> {
    let answered = false;
    const asked = submit(this.options.provider, params, this.approve).finally(() => {
      answered = true;
    });
    const targets = targetsOf(this.plan, this.record.party);
    const giveUpAt = giveUpAtOf(this.plan);
    // The watch reads into a state of its own, taken over only if it wins: the wallet's answer,
    // when it comes first, leaves the tracking state as it was.
    let watching = this.state;
    const watched = (async (): Promise<Tracked | 'gave-up' | null> => {
      for (;;) {
        await sleep(this.options.pollIntervalMs ?? 250, this.options.signal);
        if (answered) return null;
        try {
          watching = track(watching, await transactionsOf(this.options.provider, this.record.party, watching.offset), targets, this.record.submittedUpdateId);
          if (watching.offerUpdateId !== null) return watching;
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
    try {
      checkCompleted(this.record.plan as SigningPlanV2 | SigningSplitPlan, completed, new Date());
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

  /** `leg` ended as `fate`: its deposit's step, and (a split's leg) the host's onLeg, told once. */
  private settle(leg: ExecutableLeg, fate: LegStatus, error: BestexError | null = null): void {
    this.fates[leg.index] = fate;
    this.legErrors[leg.index] = error;
    const tracked = this.deposit(leg);
    const updateId = tracked?.depositUpdateId ?? undefined;
    if (tracked?.outcome) this.step(leg.deposit, fate === 'COMPLETED' ? 'accepted' : 'returned', updateId);
    if (!this.plan.split) return;
    const received = fate === 'COMPLETED' && typeof tracked?.received === 'bigint' ? fromUnits(tracked.received) : undefined;
    safely(this.options.hooks, (h) =>
      h.onLeg?.({ planId: this.record.planId, index: leg.index, venueId: leg.venueId, status: fate, ...(received === undefined ? {} : { received }), ...(updateId === undefined ? {} : { updateId }) }),
    );
  }

  /** Ends the execution as its legs ended (every leg has). */
  private ended(): Promise<ExecutionResult> {
    return this.finish(splitStatus(this.fates as LegStatus[]), this.legErrors.find((e) => e !== null) ?? null);
  }

  /** Tracks every deposit on the taker's ledger view until each has ended, the wait is stopped, or the plan is long past its expiry. */
  async follow(): Promise<ExecutionResult> {
    const { provider, signal } = this.options;
    const plan = this.plan;
    const targets = targetsOf(plan, this.record.party);
    const giveUpAt = giveUpAtOf(plan);
    let announced = this.record.status === 'INITIATED' && this.state.offerUpdateId !== null;
    this.fates = plan.legs.map(() => null);
    this.legErrors = plan.legs.map(() => null);
    const answered = new Set<number>();
    let failedReads = 0;
    let intentAskedAt = 0;
    const open = () => plan.legs.filter((leg) => this.fates[leg.index] === null);
    for (;;) {
      try {
        this.state = track(this.state, await transactionsOf(provider, this.record.party, this.state.offset), targets, this.record.submittedUpdateId);
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
      if (this.state.offerUpdateId !== null && !announced) {
        announced = true;
        if (this.record.status !== 'INITIATED') await this.save({ status: 'INITIATED' });
        this.record.included.forEach((i) => this.step(i, 'submitted', this.state.offerUpdateId!));
        this.status('INITIATED', {
          updateId: this.state.offerUpdateId,
          ...(this.duplicate ? { duplicate: true, note: 'this plan was submitted before, under the same commandId: that submission is tracked, nothing new was sent' } : this.record.feeNote ? { note: this.record.feeNote } : {}),
        });
      }
      this.reportFeeLegs(answered);
      // A fee leg answered after the payout's transaction reads as not answered yet (fees.released null).
      for (const leg of open()) {
        const outcome = this.deposit(leg)?.outcome;
        if (outcome) this.settle(leg, outcome);
      }
      if (open().length === 0) return this.ended();
      // A venue that took a deposit to its swap intent and has not paid is asked about (through
      // the service) while it is waited for: one that failed says so, and that leg ends saying who must act.
      const intents = open().filter((leg) => isIntentLeg(leg) && typeof this.deposit(leg)?.depositUpdateId === 'string');
      if (intents.length > 0 && this.options.client && Date.now() - intentAskedAt >= INTENT_READ_MS) {
        intentAskedAt = Date.now();
        for (const leg of intents) {
          const reading = await intentOutcome(this.options.client, plan, leg, this.record.party);
          if (reading?.status === 'venue_failed') this.settle(leg, 'VENUE_FAILED', this.venueFailed(reading, leg));
        }
        if (open().length === 0) return this.ended();
      }
      if (this.state.offerUpdateId === null && this.walletFailed && !this.duplicate) {
        return this.finish('SUBMIT_FAILED', new BestexError('the wallet reported that the transaction failed', { status: null, code: 'submit_failed' }));
      }
      if (Date.now() >= giveUpAt) {
        if (this.state.offerUpdateId === null) {
          return this.finish('SUBMIT_FAILED', new BestexError('the deposit never reached the ledger before the plan expired', { status: null, code: 'submit_failed' }));
        }
        for (const leg of open()) this.settle(leg, 'EXPIRED');
        return this.ended();
      }
      if (signal?.aborted) return this.finish(this.state.offerUpdateId === null ? 'SUBMITTING' : 'INITIATED');
      await sleep(this.options.pollIntervalMs ?? 250, signal);
    }
  }

  /** Why a leg whose deposit the venue's intent took ended with nothing paid: the venue itself must act. */
  private venueFailed(reading: V2.Outcome, leg: ExecutableLeg): BestexError {
    const intent = (this.record.plan as { intent?: V2.PlanIntent }).intent;
    const venue = reading.venueId ?? intent?.venueId ?? leg.venueId;
    return new BestexError(
      `${venue} took the deposit and neither paid out nor refunded it (its intent ${reading.intentId ?? intent?.intentId ?? ''} is ${reading.venueStatus ?? 'failed'}): ${venue} itself must act; contact its support with the intent id and the deposit's update ${this.deposit(leg)?.depositUpdateId}`,
      { status: null, code: 'venue_failed', action: `contact ${venue}'s support with the intent id` },
    );
  }

  /** Each fee leg's answer, once, on the plan step it is: its leg's fee leg, as tracking matched it. */
  private reportFeeLegs(answered: Set<number>): void {
    for (const leg of this.plan.legs) {
      const tracked = this.deposit(leg);
      for (const offered of tracked?.feeLegs ?? []) {
        const answer = tracked!.feeAnswers[offered.cid];
        const index = leg.feeLegs[offered.index];
        if (!answer || index === undefined || answered.has(index) || !this.record.included.includes(index)) continue;
        answered.add(index);
        this.step(index, answer);
      }
    }
  }

  /** Whether the plan's deposit offers are on the ledger (read once, from the record's start). */
  async onLedger(): Promise<boolean> {
    this.state = track(this.state, await transactionsOf(this.options.provider, this.record.party, this.state.offset), targetsOf(this.plan, this.record.party), this.record.submittedUpdateId);
    return this.state.offerUpdateId !== null;
  }

  /**
   * Takes back every deposit offer of the plan no venue answered (a split plan's still-open legs'):
   * one submission, under its own commandId, each withdraw with its registry's choice context.
   */
  async withdraw(): Promise<ExecutionResult> {
    const { provider } = this.options;
    const nothing = () => new BestexError(`no open deposit of ${this.plan.planId} to withdraw: the venue answered it, or it was withdrawn`, { status: null, code: 'nothing_to_withdraw' });
    if (!(await this.onLedger())) throw nothing();
    const openOffers = await openOffersOf(provider, this.record.party);
    const offers = this.plan.legs.flatMap((leg) => {
      const tracked = this.deposit(leg);
      const offer = tracked?.outcome === null ? openOffers.find((o) => o.contractId === tracked.offerCid) : undefined;
      return offer ? [offer] : [];
    });
    if (offers.length === 0) throw nothing();
    const commands: LedgerCommand[] = [];
    const disclosed: DisclosedContract[] = [];
    for (const offer of offers) {
      const context = await withdrawContext(this.options, this.plan.registries, offer.transfer.instrumentId.admin, offer.contractId);
      commands.push(withdrawCommand(offer.contractId, context));
      disclosed.push(...(context.disclosedContracts ?? []));
    }
    const submitted = await submit(provider, { commands, disclosed: distinctDisclosures(disclosed), commandId: `${this.plan.planId}-withdraw`, party: this.record.party }, this.approve);
    if ('refused' in submitted) throw submitted.error;
    return this.follow();
  }
}
