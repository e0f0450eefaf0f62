// The plan use case, one core for both routes: the chosen venue's quote comes from the same base
// quote a quote request gets (never from the client), the plan is assembled from it, checked by the
// party-isolation guardrail, and kept under the caller's idempotencyKey so a retry gets it again.
// A v2 plan on a venue that sets its own terms for the taker (swap-address-memo: Nightly) asks the
// venue for them once every check has passed and before the record is claimed: its deposit goes
// where they say, with their memo, bound to their minimum, which is never below the floor. A v2
// plan on a venue whose swap is an intent the wallet proves it owns (intent-deposit-reference:
// OneSwap) asks the venue for its challenge at that point instead: the plan's one step is the
// message to sign, and core/plans/intent-plans.ts completes it into the deposit once signed.
import { checkIntegratorCap } from '../quotes/client-fees.js';
import { dec, toWire, type Decimal } from '../decimal.js';
import { badRequest, DomainError } from '../errors.js';
import type { FeeSchemas, FeeTerms } from '../quotes/fee-schemas.js';
import { IdempotencyRecords, type IdempotencyRecord, type PlanRequestDigests, type PlanRequestKey } from './idempotency.js';
import type { KeyCheck, Partner } from '../keys/partner-keys.js';
import { assemblePlan, planFigures, type PlanFigures, type PlanInputs, type PlanParties, type VenueDepositTerms } from './assembly.js';
import { intentPlanViolations, planViolations, signMessagePlanViolations, v2PlanViolations } from './guardrail.js';
import type { PlanParams, PlanRoute } from './params.js';
import type { QuoteService } from '../quotes/service.js';
import type { CoreLog } from '../log.js';
import { NO_METRICS, type Metrics } from '../metrics.js';
import { SharedStateFull, type WindowCount } from '../state/shared-state.js';
import type { PendingCount } from '../state/rate-windows.js';
import type { PlanQuota } from './plan-quota.js';
import { CC, pairKey } from '../tokens.js';
import type { AppPlan, QuoteResponse, RejectionCode } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import { MIN_SLIPPAGE_BPS, requireExecutable, venueExecution } from '../execution/venues.js';
import { InstrumentRegistries } from '../execution/tokens.js';
import { WalletChallengeRefused, type Deadline, type ExecutableVenue, type IntentVenue, type SwapIntent, type VenueExecutionTerms, type WalletChallenge } from '../venues/venue.js';
import { v2Plan } from './v2-plan.js';
import { parsePlanRequest } from './params.js';
import type { IntentPlans, OpenIntentPlan, OpenSplit } from './intent-plans.js';
import { priceNamedSplit, type LimitsOf, type PricedSplit } from '../execution/split.js';
import { withExecution } from '../execution/quote.js';
import type { VenueImpacts } from '../quotes/engine.js';
import { signMessageSplitViolations, splitPlan, splitPlanViolations, venueName, type SplitBasis, type SplitTransferPlan } from './split-plan.js';
import type { V2TransferPlan } from './v2-plan.js';

/** The contract version a plan is asked for in: each keeps its own idempotency records (and so its own plan ids). */
export type PlanContract = 'v1' | 'v2';

/**
 * Who asks for a plan: a partner (keyed route), or a keyless caller known by its IP; `contract`
 * (default v1) the version it asks in. One caller's windows and share of new plans are the same
 * whichever version it speaks; its idempotency records are not: a v1 and a v2 plan under the same
 * idempotencyKey never replay each other.
 */
export type PlanCaller = ({ readonly route: 'partner'; readonly partner: Partner } | { readonly route: 'app'; readonly ip: string }) & { readonly contract?: PlanContract };

/**
 * Where v2 plans are followed to their outcome (core/plan-status/, wired by core/services.ts): the
 * capability a keyless plan carries to read its status, and each plan kept as it is made or
 * completed. The taker's party is handed over for its keyed hash alone.
 */
export interface PlanTracking {
  statusToken(planId: string): string;
  track(plan: V2.ExecutionPlan | V2.SplitPlan, partnerId: string | null, takerParty: string): Promise<void>;
}

export interface PlanServiceOptions {
  readonly quotes: QuoteService;
  readonly schemas: FeeSchemas;
  readonly collecting: boolean;
  /** The venue v1 plans (v2 plans every venue core/execution/venues.ts calls executable), and every venue a quote lists. */
  readonly supportedVenueId: string;
  readonly venueIds: readonly string[];
  /** The supported venue's pool party per pair (by pairKey). */
  readonly poolParties: Readonly<Record<string, string>>;
  readonly serviceFeeParty: string | null;
  readonly b2cFeeParty: string | null;
  readonly records: IdempotencyRecords;
  /** Each caller's share of new plans (PLAN_RECORDS_PER_IP, PLAN_RECORDS_PER_KEY); none: unlimited. */
  readonly quota?: PlanQuota;
  readonly log: CoreLog;
  readonly now: () => Date;
  /** Hears each plan made, replayed or refused as a conflict, and each guardrail trip. */
  readonly metrics?: Metrics;
  /** Each instrument's admin party and registry, which a v2 plan names; none configured when absent. */
  readonly registries?: InstrumentRegistries;
  /** The adapters of the venues a wallet executes on, by venue id: a venue that sets its own terms is asked for them. */
  readonly executableVenues?: Readonly<Record<string, ExecutableVenue>>;
  /** The adapters of the venues whose swaps are intents the taker's wallet proves it owns (OneSwap), by venue id. */
  readonly intentVenues?: Readonly<Record<string, IntentVenue>>;
  /** Where a plan on such a venue is kept until its message is signed (core/plans/intent-plans.ts). */
  readonly intentPlans?: IntentPlans;
  /** Where v2 plans are followed; none: v2 plans carry no status. */
  readonly tracking?: PlanTracking;
  /** How long a venue may take to give its terms (VENUE_TIMEOUT_MS); 5 s when absent. */
  readonly venueTimeoutMs?: number;
  /** Each venue's limits on the give token, which a split's legs keep to (as the quote's split does). */
  readonly limitsOf?: LimitsOf;
  /** Assembles the plan the guardrail then checks (core/plans/assembly.ts), from its inputs and their figures. */
  readonly assemble?: (inputs: PlanInputs, figures: PlanFigures) => AppPlan;
}

/** What a caller holds under a request's idempotencyKey, read once per request. */
export interface HeldPlan {
  /** The plan made before for this very request, to replay; null when there is none. */
  readonly replay: string | null;
  /** The record held under the key (for another request when `replay` is null), or null. */
  readonly record: IdempotencyRecord | null;
  /** The caller's count of new plans (PlanQuota), made with the lookup for a request that makes one; create() judges it. */
  readonly quotaCount?: WindowCount;
}

export interface MadePlan {
  /** The plan's JSON text: the same bytes on every replay. */
  readonly json: string;
  /** False when this request made the plan. */
  readonly replayed: boolean;
}

/** What create() settled of a new plan before it is made. */
interface NewPlan {
  readonly request: PlanRequestKey;
  readonly digests: PlanRequestDigests;
  readonly terms: FeeTerms;
  /** The venue's pool party; null where the venue's own terms name the deposit's target. */
  readonly pool: string | null;
  /** A split's: each leg's pool party, in leg order. */
  readonly pools: ReadonlyArray<string | null>;
}

/** The deposit of a venue that sets its own terms: where it goes, and the terms the guardrail checks. */
interface VenueDeposit extends VenueDepositTerms {
  readonly target: string;
}

const DEFAULT_VENUE_TIMEOUT_MS = 5000;

/**
 * The stand-in receiver an intent plan's deposit is checked on before its intent exists: never
 * answered (the plan's step then is the message to sign), never a party the ledger knows.
 */
const INTENT_DEPOSIT_PENDING = `intent-deposit-pending::1220${'0'.repeat(64)}`;


/**
 * The plan of an intent venue before its message is signed: the checked v2 plan, its steps the
 * one message to sign, to be signed by the plan's expiry (or the challenge's, if sooner).
 */
function signMessagePlan(shaped: V2.AppPlan, challenge: WalletChallenge, inputs: PlanInputs, figures: PlanFigures): V2.AppPlan {
  const { venueId, request } = inputs.params;
  const venue = venueName(venueId);
  const step = signStep(venueId, challenge, inputs.createdAt, figures.expiry);
  const { expiresAt } = step;
  return {
    ...shaped,
    steps: [step],
    trustWindow:
      `Signing ${venue}'s message moves none of your funds. Sign it by ${expiresAt} and the plan is completed with its deposit of ${toWire(request.amount)} ${request.give.instrument} ` +
      `to the swap intent ${venue} makes for you, bound to at least ${figures.minReceive} ${request.want.instrument}, which your wallet then signs.`,
  };
}

/** A plan's legs: a split's, or the one venue of a plan on one venue. */
function legsOf(params: PlanParams): PlanParams[] {
  if (params.legs === null) return [params];
  return params.legs.map((leg) => legParams(params, leg.venueId, leg.amount));
}

/** The request of one leg of a split: the plan on its venue alone, for its amount. */
function legParams(params: PlanParams, venueId: string, amount: Decimal): PlanParams {
  return { ...params, venueId, legs: null, request: { ...params.request, amount } };
}

/** The message to sign of a plan with a leg on an intent venue, signed by the plan's expiry (or the challenge's, if sooner). */
function signStep(venueId: string, challenge: WalletChallenge, createdAt: Date, expiry: string): V2.SignMessageStep {
  const venue = venueName(venueId);
  return {
    kind: 'sign-message',
    venueId,
    message: challenge.message,
    purpose: `Signing this message proves to ${venue} that this party is yours, so ${venue} can create the swap intent your deposit will fund. It moves no funds and approves no transfer.`,
    expiresAt: new Date(Math.min(Date.parse(expiry), createdAt.getTime() + challenge.expiresInSeconds * 1000)).toISOString(),
  };
}

/** The plan request as the caller meant it, its fields in canonical form (a split's legs by venue). */
function requestOf(params: PlanParams): V2.PlanRequest {
  return {
    from: params.request.give.symbol,
    to: params.request.want.symbol,
    amount: toWire(params.request.amount),
    ...(params.legs === null ? { venueId: params.venueId } : { legs: params.legs.map((leg) => ({ venueId: leg.venueId, amount: toWire(leg.amount) })) }),
    takerParty: params.takerParty,
    idempotencyKey: params.idempotencyKey,
    slippageBps: params.slippageBps,
    ...(params.integratorFee ? { feeBps: params.integratorFee.bps, feeRecipient: params.integratorFee.recipient } : {}),
  } as V2.PlanRequest;
}

/** A memo a v2 plan step can hold (openapi/v2.yaml PlanStep.memo). */
const MEMO = /^[\x21-\x7e]{1,256}$/;

/** Who a plan is made for, as its idempotency record (and an intent plan's record) is bound to it. */
export const callerId = (caller: PlanCaller): string =>
  (caller.contract === 'v2' ? 'v2:' : '') + (caller.route === 'partner' ? `partner:${caller.partner.id}` : `app:${caller.ip}`);
/**
 * The request's key, one object per parsed request and caller: lookup() and create() see the same
 * one, so the idempotency records key it once (four HMACs a plan, the plan id's included).
 */
const requestKeys = new WeakMap<PlanParams, PlanRequestKey>();
function requestKey(params: PlanParams, caller: PlanCaller): PlanRequestKey {
  const id = callerId(caller);
  const known = requestKeys.get(params);
  if (known?.caller === id) return known;
  const made: PlanRequestKey = { caller: id, idempotencyKey: params.idempotencyKey, fingerprint: params.fingerprint };
  requestKeys.set(params, made);
  return made;
}

export class PlanService {
  private trips = 0;
  /** The last base quote read for a plan, parsed: plans for one combination within its cache window parse its body once. */
  private lastQuote: { readonly json: string; readonly quote: QuoteResponse } | undefined;

  private readonly metrics: Metrics;

  private readonly registries: InstrumentRegistries;

  constructor(private readonly options: PlanServiceOptions) {
    this.metrics = options.metrics ?? NO_METRICS;
    this.registries = options.registries ?? new InstrumentRegistries({ instrumentAdmins: null, registries: {} });
  }

  /** How many plans the guardrail has stopped since start. */
  get guardrailTrips(): number {
    return this.trips;
  }

  /**
   * What this caller holds under the request's idempotencyKey: a plan to replay, or what create()
   * is given. `window`: where the state is shared, the request's count in its caller's window, made
   * in the same round trip when no record is held (a replay is not counted), with the caller's
   * count of new plans when the request would make one: a new plan then costs this round trip and
   * its record's write. `key`: a key verified from a record this instance kept, confirmed with the
   * key store's version read in that round trip, before anything is replayed or made.
   */
  async lookup(params: PlanParams, caller: PlanCaller, window?: PendingCount, key?: KeyCheck): Promise<HeldPlan> {
    const { records, quota } = this.options;
    const request = requestKey(params, caller);
    const { fingerprint, boundTo } = records.digests(request);
    let record: IdempotencyRecord | null;
    let quotaCount: WindowCount | undefined;
    if (window && records.shared) {
      const quotaWindow = quota && this.makesRecord(params, caller) ? [quota.window(caller)] : [];
      const found = await records.findCounting(request, [window.hit, ...quotaWindow], key);
      record = found.record;
      if (found.counts) {
        window.judge(found.counts[0]!);
        quotaCount = found.counts[1];
      }
      if (key) await key.confirm(found.version);
    } else {
      // No round trip reads the version: the kept record is verified afresh.
      if (key) await key.confirm(null);
      record = await records.find(request);
    }
    const same = record !== null && record.fingerprint === fingerprint;
    const replay = same ? this.checkedReplay(record!, boundTo, caller.route, params.venueId) : null;
    return quotaCount === undefined ? { replay, record } : { replay, record, quotaCount };
  }

  /** Whether create() would make a record for the request, none being held: it passes every check made before the caller's share is spent. */
  private makesRecord(params: PlanParams, caller: PlanCaller): boolean {
    const { options } = this;
    try {
      checkIntegratorCap(params.integratorFee, caller.route === 'partner' ? options.schemas.termsOfPartner(caller.partner) : options.schemas.b2c);
      for (const leg of legsOf(params)) {
        if (!options.venueIds.includes(leg.venueId)) return false;
        this.checkExecutable(leg, caller);
      }
      return true;
    } catch {
      return false;
    }
  }

  /** A plan for a request that is no replay; `held` is what lookup() found under its key, `quotaCount` the count it made. */
  async create(params: PlanParams, caller: PlanCaller, held: IdempotencyRecord | null, quotaCount?: WindowCount): Promise<MadePlan> {
    const { options } = this;
    const { route } = caller;
    const terms = caller.route === 'partner' ? options.schemas.termsOfPartner(caller.partner) : options.schemas.b2c;
    checkIntegratorCap(params.integratorFee, terms);
    for (const { venueId } of legsOf(params)) {
      if (!options.venueIds.includes(venueId)) throw badRequest(`unknown venue '${venueId}': integrated venues are ${[...options.venueIds].sort().join(', ')}`);
    }
    const request = requestKey(params, caller);
    const digests = options.records.digests(request);
    if (held !== null) return { json: this.sameRequest(held, params, digests, route), replayed: true };

    // A split's legs are each checked as a plan on its venue would be; its pool is each leg's own.
    const pools = legsOf(params).map((leg) => this.checkExecutable(leg, caller));
    const pool = pools[0]!;
    const { quota } = options;
    if (!quota) return this.make(params, caller, { request, digests, terms, pool, pools });
    // The caller's share is spent only by a request that would make a new record, and before any
    // venue is asked; a request then not made has its count taken back, so only plans made spend it.
    let made = false;
    try {
      await quota.admit(caller, quotaCount);
      const plan = await this.make(params, caller, { request, digests, terms, pool, pools });
      made = !plan.replayed;
      return plan;
    } finally {
      if (!made) await this.giveBack(quota, caller);
    }
  }

  /** Takes back a share's count (RateWindows.unhit: this process's count while the store is unreachable); a failure of its own is logged, never answered in place of the plan's. */
  private async giveBack(quota: PlanQuota, caller: PlanCaller): Promise<void> {
    try {
      await quota.giveBack(caller);
    } catch (err) {
      this.options.log.warn({ err }, "a plan not made could not give back its count of the caller's share");
    }
  }

  /** A new plan, its record kept; replayed when an identical request's record was kept first. */
  private async make(params: PlanParams, caller: PlanCaller, newPlan: NewPlan): Promise<MadePlan> {
    if (params.legs !== null) return this.makeSplit(params, caller, newPlan);
    const { request, digests, terms, pool } = newPlan;
    const { options } = this;
    const { route } = caller;
    const { net, asOf } = await this.venueQuote(params, route);
    const basis = { route, params, net, asOf, terms, collecting: options.collecting, planId: options.records.planId(request), createdAt: options.now() };
    const figures = planFigures(basis);
    // The venue's floor is asked of the same net v1's floor is taken from (what the venue pays
    // after its own fee, before the disclosed fee legs, which the taker pays from it), so the
    // venue's minimum and quoteRef.minReceive are one rule.
    const execution = venueExecution(params.venueId);
    const intent = caller.contract === 'v2' && execution.settlement === 'intent-deposit-reference';
    const deposit = pool === null && !intent ? await this.venueDeposit(params, route, net, figures.minReceive) : null;
    const inputs: PlanInputs = {
      ...basis,
      // An intent plan's deposit is not known until its message is signed: its figures, fee legs
      // and registries are checked now on a stand-in receiver, and its deposit at completion.
      parties: { pool: deposit?.target ?? pool ?? INTENT_DEPOSIT_PENDING, serviceFee: options.serviceFeeParty, b2cFee: options.b2cFeeParty } satisfies PlanParties,
      ...(deposit ? { venueTerms: { memo: deposit.memo, minOut: deposit.minOut } } : {}),
    };
    let body: object = caller.contract === 'v2' ? this.checkedLeg(inputs, figures) : this.checkedPlan(inputs, figures);
    const challenge = intent ? await this.venueChallenge(params, route) : null;
    if (challenge) {
      const checked = body as V2.AppPlan;
      body = signMessagePlan(checked, challenge, inputs, figures);
      this.guard(signMessagePlanViolations(body as V2.AppPlan, checked), route, params.venueId);
    }
    body = this.withStatusToken(body as V2.ExecutionPlan, caller);
    const json = JSON.stringify(body);
    // The venue's challenge may name the taker (OneSwap's does): an intent plan's text is kept sealed.
    const record: IdempotencyRecord = { ...digests, plan: challenge ? this.intentPlans().sealPlanText(json) : json };
    const kept = await this.claim(request, record);
    if (kept !== record) return { json: this.sameRequest(kept, params, digests, route), replayed: true };
    if (challenge) {
      try {
        await this.openIntentPlan(params, caller, digests.boundTo, inputs, figures, challenge);
      } catch (err) {
        // A plan that could never be completed is not replayed: its retry makes it anew.
        await options.records.release(request, record);
        throw err;
      }
    }
    await this.track(body as V2.ExecutionPlan, caller, params.takerParty);
    this.metrics.plan(route, 'created');
    return { json, replayed: false };
  }

  /**
   * A new split plan: the named legs priced on the same base quote a quote request gets (409
   * split_changed when they no longer hold), each leg assembled and guarded as a plan on its venue
   * alone would be (Nightly's terms asked for its leg), then the split plan of them, guarded as a
   * whole. With a leg on an intent venue, the plan is its venue's message to sign, completed by
   * completedIntentPlan with the split kept beside it.
   */
  private async makeSplit(params: PlanParams, caller: PlanCaller, { request, digests, terms, pools }: NewPlan): Promise<MadePlan> {
    const { options } = this;
    const { route } = caller;
    const { priced, asOf } = await this.splitQuote(params, route);
    const planId = options.records.planId(request);
    const createdAt = options.now();
    const basis: SplitBasis = { edgeBps: priced.edgeBps, bestExecutable: priced.bestExecutable, amount: toWire(params.request.amount) };
    const legs: OpenSplit['legs'][number][] = [];
    const shaped: V2TransferPlan[] = [];
    let intentLeg: { params: PlanParams; inputs: PlanInputs; figures: PlanFigures } | null = null;
    for (const [i, leg] of priced.legs.entries()) {
      const legRequest = legParams(params, leg.venueId, leg.amount);
      const legBasis = { route, params: legRequest, net: leg.net, asOf, terms, collecting: options.collecting, planId, createdAt };
      const figures = planFigures(legBasis);
      const intent = venueExecution(leg.venueId).settlement === 'intent-deposit-reference';
      const pool = pools[i]!;
      const deposit = pool === null && !intent ? await this.venueDeposit(legRequest, route, leg.net, figures.minReceive) : null;
      const inputs: PlanInputs = {
        ...legBasis,
        parties: { pool: deposit?.target ?? pool ?? INTENT_DEPOSIT_PENDING, serviceFee: options.serviceFeeParty, b2cFee: options.b2cFeeParty },
        ...(deposit ? { venueTerms: { memo: deposit.memo, minOut: deposit.minOut } } : {}),
      };
      if (intent) intentLeg = { params: legRequest, inputs, figures };
      shaped.push(this.checkedLeg(inputs, figures));
      legs.push({ venueId: leg.venueId, amount: toWire(leg.amount), net: toWire(leg.net), ...(deposit ? { deposit } : {}) });
    }
    const plan = splitPlan(shaped, basis);
    this.guard(splitPlanViolations(plan, shaped, basis), route, params.venueId);
    let body: V2.SplitPlan = plan;
    const challenge = intentLeg ? await this.venueChallenge(intentLeg.params, route) : null;
    if (challenge && intentLeg) {
      const step = signStep(intentLeg.params.venueId, challenge, createdAt, plan.expiry);
      const venue = venueName(intentLeg.params.venueId);
      const { give, want } = plan.split.pair;
      body = {
        ...plan,
        steps: [step],
        trustWindow:
          `Signing ${venue}'s message moves none of your funds. Sign it by ${step.expiresAt} and the plan is completed with its ${plan.split.legs.length} deposits of ${plan.split.amount} ${give} in all, ` +
          `one to the swap intent ${venue} makes for you, bound together to at least ${plan.split.minReceive} ${want}, which your wallet then signs in one batch.`,
      };
      this.guard(signMessageSplitViolations(body, plan), route, params.venueId);
    }
    body = this.withStatusToken(body, caller);
    const json = JSON.stringify(body);
    const record: IdempotencyRecord = { ...digests, plan: challenge ? this.intentPlans().sealPlanText(json) : json };
    const kept = await this.claim(request, record);
    if (kept !== record) return { json: this.sameRequest(kept, params, digests, route), replayed: true };
    if (challenge && intentLeg) {
      try {
        const split: OpenSplit = { request: requestOf(params), legs, edgeBps: basis.edgeBps, bestExecutable: basis.bestExecutable };
        await this.openIntentPlan(intentLeg.params, caller, digests.boundTo, intentLeg.inputs, intentLeg.figures, challenge, split);
      } catch (err) {
        await options.records.release(request, record);
        throw err;
      }
    }
    await this.track(body, caller, params.takerParty);
    this.metrics.plan(route, 'created');
    return { json, replayed: false };
  }

  /** A keyless v2 plan with the capability to read its status (its replays carry it too: it is in the record's text). */
  private withStatusToken<P extends V2.ExecutionPlan | V2.SplitPlan>(plan: P, caller: Pick<PlanCaller, 'route' | 'contract'>): P {
    const { tracking } = this.options;
    if (!tracking || caller.contract !== 'v2' || caller.route !== 'app') return plan;
    return { ...plan, statusToken: tracking.statusToken(plan.planId) };
  }

  /** Keeps a v2 plan for its status; a store that fails is logged, never answered in place of the plan the caller now holds. */
  private async track(plan: V2.ExecutionPlan | V2.SplitPlan, caller: Pick<PlanCaller, 'route' | 'contract'> & { readonly partner?: { readonly id: string } }, takerParty: string): Promise<void> {
    const { tracking, log } = this.options;
    if (!tracking || caller.contract !== 'v2') return;
    try {
      await tracking.track(plan, caller.route === 'partner' ? caller.partner!.id : null, takerParty);
    } catch (err) {
      log.warn({ planId: plan.planId, reason: err instanceof Error ? err.message : String(err) }, "a plan could not be kept for its status: GET /api/v2/plan/status answers 404 for it");
    }
  }

  /** The plan assembled from its inputs, and passed by the guardrail. */
  private checkedPlan(inputs: PlanInputs, figures: PlanFigures): AppPlan {
    const plan = (this.options.assemble ?? assemblePlan)(inputs, figures);
    this.guard(planViolations(plan, inputs, figures), inputs.route, inputs.params.venueId);
    return plan;
  }

  /** One leg's plan (or a v2 plan on one venue) assembled, guarded, and shaped as v2's, guarded again. */
  private checkedLeg(inputs: PlanInputs, figures: PlanFigures): V2TransferPlan {
    const { route, params } = inputs;
    const plan = this.checkedPlan(inputs, figures);
    // A v2 plan is the plan the guardrail passed, in v2's shape: its numbers and parties unchanged.
    const execution = venueExecution(params.venueId);
    const shaped = v2Plan(plan, execution, this.registries, inputs.venueTerms);
    this.guard(v2PlanViolations(shaped, plan, inputs, execution.settlement!, figures), route, params.venueId);
    return shaped;
  }

  /** The named split priced on the base quote a quote request for the whole amount gets, and that quote's time. */
  private async splitQuote(params: PlanParams, route: PlanRoute): Promise<{ priced: PricedSplit; asOf: string }> {
    let quote: QuoteResponse;
    let impacts: VenueImpacts;
    try {
      const base = await this.options.quotes.baseQuote(params);
      quote = JSON.parse(base.json) as QuoteResponse;
      impacts = JSON.parse(base.impacts) as VenueImpacts;
    } catch (err) {
      this.options.log.warn({ venueId: params.venueId, err }, 'the quote for a split plan could not be built');
      throw new DomainError(route === 'partner' ? 'quote_failed' : 'internal', 'the quote for this plan could not be built; nothing was created; retry');
    }
    // The quote's venues in v2's shape, as a v2 quote states them; its own split is not needed.
    const v2 = withExecution(quote, impacts, () => null);
    const { give } = params.request;
    const priced = priceNamedSplit(quote, v2.venues, v2.bestExecutable, give, this.options.limitsOf ?? (() => null), params.legs!);
    if ('refused' in priced) throw new DomainError('split_changed', `the split no longer holds: ${priced.refused}; nothing was created: re-quote`);
    return { priced, asOf: quote.asOf };
  }

  /**
   * Keeps what completing an intent plan needs, once its record is claimed (only the plan made
   * first for a planId is kept: a concurrent identical request replays it). Without it the plan
   * could not be completed, so a failure to keep it is answered as the record's would be.
   */
  private async openIntentPlan(params: PlanParams, caller: PlanCaller, boundTo: string, inputs: PlanInputs, figures: PlanFigures, challenge: WalletChallenge, split?: OpenSplit): Promise<void> {
    const intentPlans = this.intentPlans();
    const opened: OpenIntentPlan = {
      planId: inputs.planId,
      boundTo,
      route: caller.route,
      ...(caller.route === 'partner' ? { partnerId: caller.partner.id } : {}),
      request: requestOf(params) as OpenIntentPlan['request'],
      ...(split ? { split } : {}),
      net: toWire(inputs.net),
      asOf: inputs.asOf,
      terms: inputs.terms,
      collecting: inputs.collecting,
      createdAt: inputs.createdAt.toISOString(),
      expiry: figures.expiry,
      floor: figures.minReceive,
      nonce: challenge.nonce,
    };
    await intentPlans.open(opened);
  }

  private intentPlans(): IntentPlans {
    const { intentPlans } = this.options;
    if (!intentPlans) throw new Error('an intent plan was made with nowhere to keep it');
    return intentPlans;
  }

  /**
   * An opened intent plan completed with the venue's intent: the plan assembled again from the
   * same inputs, its deposit to the intent's deposit address with its reference as the memo,
   * bound to its minimum, checked by the guardrail in both shapes; the complete plan's JSON text.
   * Throws DomainError venue_unavailable for an intent a plan cannot carry (a reference no step
   * can hold as its memo, a deposit address that is one of the plan's own parties).
   */
  async completedIntentPlan(opened: OpenIntentPlan, intent: SwapIntent): Promise<string> {
    const { options } = this;
    const route = opened.route;
    const params = parsePlanRequest(opened.request, route);
    const terms = opened.terms;
    const basis = { route, params, net: dec(opened.net), asOf: opened.asOf, terms, collecting: opened.collecting, planId: opened.planId, createdAt: new Date(opened.createdAt) };
    const figures = planFigures(basis);
    const minOut = toWire(intent.minOutput);
    const { venueId } = params;
    if (!MEMO.test(intent.depositReference)) {
      options.log.warn({ venueId }, "the venue's intent carries a deposit reference no plan step can hold as its memo");
      throw new DomainError('venue_unavailable', `venue ${venueId} made a swap intent this service cannot plan (its deposit reference); nothing was left: make a new plan`);
    }
    const own = [params.takerParty, options.serviceFeeParty, options.b2cFeeParty, params.integratorFee?.recipient ?? null];
    if (own.includes(intent.depositAddress)) {
      options.log.warn({ venueId }, "the venue's intent names one of the plan's own parties as its deposit address");
      throw new DomainError('venue_unavailable', `venue ${venueId} made a swap intent this service cannot plan (its deposit address); nothing was left: make a new plan`);
    }
    const inputs: PlanInputs = {
      ...basis,
      parties: { pool: intent.depositAddress, serviceFee: options.serviceFeeParty, b2cFee: options.b2cFeeParty },
      venueTerms: { memo: intent.depositReference, minOut },
    };
    const shaped = this.checkedLeg(inputs, figures);
    const venue = venueName(venueId);
    const named = { venueId, intentId: intent.intentId, expiresAt: intent.expiresAt.toISOString() };
    const complete: V2.AppPlan = {
      ...shaped,
      trustWindow: `${shaped.trustWindow} ${venue} pays you at least ${minOut} ${params.request.want.instrument} for it, or returns it.`,
      intent: named,
    };
    this.guard(intentPlanViolations(complete, inputs, intent.intentId), route, venueId);
    const caller = { route, contract: 'v2' as const, ...(opened.partnerId === undefined ? {} : { partner: { id: opened.partnerId } }) };
    const plan = this.withStatusToken(opened.split ? this.completedSplit(opened, opened.split, shaped, named) : complete, caller);
    await this.track(plan, caller, params.takerParty);
    return JSON.stringify(plan);
  }

  /**
   * A split plan completed with its intent leg's plan (`intentLeg`, checked): every other leg
   * assembled again from what was kept of it (Nightly's terms included), the split plan of them
   * guarded as a whole, naming the intent.
   */
  private completedSplit(opened: OpenIntentPlan, split: OpenSplit, intentLeg: V2TransferPlan, intent: V2.PlanIntent): V2.SplitPlan {
    const { options } = this;
    const route = opened.route;
    const params = parsePlanRequest(split.request, route);
    const { give, want } = params.request;
    const createdAt = new Date(opened.createdAt);
    const shaped = split.legs.map((leg) => {
      if (leg.venueId === intent.venueId) return intentLeg;
      const legRequest = legParams(params, leg.venueId, dec(leg.amount));
      const basis = { route, params: legRequest, net: dec(leg.net), asOf: opened.asOf, terms: opened.terms, collecting: opened.collecting, planId: opened.planId, createdAt };
      const pool = leg.deposit?.target ?? options.poolParties[pairKey(give, want)];
      if (pool === undefined) throw new Error(`a kept split's leg on ${leg.venueId} has no pool configured`);
      const inputs: PlanInputs = {
        ...basis,
        parties: { pool, serviceFee: options.serviceFeeParty, b2cFee: options.b2cFeeParty },
        ...(leg.deposit ? { venueTerms: { memo: leg.deposit.memo, minOut: leg.deposit.minOut } } : {}),
      };
      return this.checkedLeg(inputs, planFigures(basis));
    });
    const basis: SplitBasis = { edgeBps: split.edgeBps, bestExecutable: split.bestExecutable, amount: toWire(params.request.amount) };
    const plan: SplitTransferPlan = splitPlan(shaped, basis);
    this.guard(splitPlanViolations(plan, shaped, basis), route, params.venueId);
    return { ...plan, intent };
  }

  /**
   * The venue's challenge for the taker, asked once every check has passed: refused as a quote
   * for the plan is (409 venue_unavailable; on the keyed route a venue that did not answer is 502
   * quote_failed). The taker's party never reaches the log.
   */
  private async venueChallenge(params: PlanParams, route: PlanRoute): Promise<WalletChallenge> {
    const { venueId, takerParty } = params;
    const venue = this.options.intentVenues?.[venueId];
    if (!venue) throw new Error(`venue ${venueId} settles by intent but no adapter makes its intents`);
    const timeoutMs = this.options.venueTimeoutMs ?? DEFAULT_VENUE_TIMEOUT_MS;
    try {
      return await venue.requestChallenge(takerParty, { signal: AbortSignal.timeout(timeoutMs), endsAt: Date.now() + timeoutMs });
    } catch (err) {
      if (err instanceof WalletChallengeRefused) {
        throw new DomainError('venue_unavailable', `venue ${venueId} does not sign in the taker's party (it refused its wallet challenge); nothing was created`);
      }
      const message = err instanceof Error ? err.message.replaceAll(takerParty, '<taker>') : 'not an error';
      this.options.log.warn({ venueId, reason: message }, "the venue's challenge for a plan could not be read");
      throw this.termsRefused(params, route, 'venue_error');
    }
  }

  /** The checks made of a request that would make a new plan; its pool party, or null where the venue's terms name the deposit's target. */
  private checkExecutable(params: PlanParams, caller: PlanCaller): string | null {
    const { options } = this;
    const { route } = caller;
    const { give, want } = params.request;
    if (give !== CC && want !== CC) {
      // v1's answers keep v1's words.
      throw new DomainError('unsupported_pair', `the pair ${give.symbol}/${want.symbol} is not executable: every ${caller.contract === 'v2' ? '' : 'v1 '}swap has a CC leg`);
    }
    // v1 plans its one venue; v2 every venue a wallet can execute through this build, and refuses any other with the venue's reason.
    const execution = caller.contract === 'v2' ? requireExecutable(params.venueId) : null;
    if (execution === null && params.venueId !== options.supportedVenueId) {
      throw new DomainError('venue_unavailable', `venue ${params.venueId} is not executable in v1: plans are built for ${options.supportedVenueId} only`);
    }
    // Nightly's deposit goes where its terms for this taker say (its swapAddress), read once the
    // plan is made: no pool of this service's configuration is needed, and the target is checked then.
    let pool: string | null = null;
    const minSlippage = execution === null ? undefined : MIN_SLIPPAGE_BPS[params.venueId];
    if (minSlippage && params.slippageBps < minSlippage.bps) {
      throw badRequest(`'slippageBps' must be at least ${minSlippage.bps} on venue ${params.venueId}: ${minSlippage.why}`);
    }
    // OneSwap's deposit goes to the address of the intent made once the plan's message is signed.
    if (execution?.settlement !== 'swap-address-memo' && execution?.settlement !== 'intent-deposit-reference') {
      const configured = options.poolParties[pairKey(give, want)];
      if (configured === undefined) throw new DomainError('no_pool', `venue ${params.venueId} has no pool configured for ${pairKey(give, want)}`);
      pool = configured;
    }
    this.checkParties(params, route, pool);
    if (route === 'app' && options.collecting && options.b2cFeeParty === null) {
      throw new DomainError('fee_unconfigured', 'fees are collected but no fee destination is configured for keyless plans; nothing was created');
    }
    return pool;
  }

  /**
   * Keeps the plan's record; at the in-process state's bound (STATE_MAX_PLAN_RECORDS) the plan is
   * refused 503 at_capacity with Retry-After, on either route. Held plans still replay: they need
   * no new record.
   */
  private async claim(request: PlanRequestKey, record: IdempotencyRecord): Promise<IdempotencyRecord> {
    try {
      return await this.options.records.claim(request, record);
    } catch (err) {
      if (!(err instanceof SharedStateFull)) throw err;
      this.metrics.planRefusedAtStateCap();
      const message = 'plans cannot be made right now: this instance holds as many plans as it may; nothing was created';
      const seconds = Math.ceil(err.retryInMs / 1000);
      throw new DomainError('at_capacity', `${message}; retry in ${seconds} seconds`, seconds);
    }
  }

  /**
   * A taker or recipient that is itself one of the plan's receivers would send funds back where
   * they came from: the request is refused as bad input, before the guardrail would have to stop
   * the plan (a trip is kept for plans this service got wrong, not for requests).
   */
  private checkParties(params: PlanParams, route: PlanRoute, pool: string | null): void {
    const { serviceFeeParty, b2cFeeParty } = this.options;
    const receivers = [pool, serviceFeeParty, b2cFeeParty];
    if (receivers.includes(params.takerParty) || params.integratorFee?.recipient === params.takerParty) {
      throw new DomainError(route === 'partner' ? 'bad_party' : 'bad_request', "'takerParty' is one of the plan's receivers (the venue's pool, a fee party or the fee recipient); send the taker's own party");
    }
    if (params.integratorFee && receivers.includes(params.integratorFee.recipient)) {
      throw new DomainError('bad_fee_params', "'feeRecipient' is the venue's pool or a fee party of this service; send the integrator's own party");
    }
  }

  /**
   * The deposit on a venue that sets its own terms, asked with the taker as recipient and the
   * plan's floor: refused as a quote for the plan is (409 venue_unavailable; on the keyed route a
   * venue that did not answer is 502 quote_failed), and 502 venue_floor_below_service when the
   * venue would guarantee less than the floor. A magicAddress the venue may also offer is not used:
   * the deposit goes to the swap address with the venue's memo, which every wallet the SDK drives
   * sets as the transfer's reason.
   */
  private async venueDeposit(params: PlanParams, route: PlanRoute, expectedOut: Decimal, floor: string): Promise<VenueDeposit> {
    const { venueId, takerParty } = params;
    const venue = this.options.executableVenues?.[venueId];
    if (!venue) throw new Error(`venue ${venueId} is executable but no adapter gives its terms`);
    const { give, want, amount } = params.request;
    const timeoutMs = this.options.venueTimeoutMs ?? DEFAULT_VENUE_TIMEOUT_MS;
    const deadline: Deadline = { signal: AbortSignal.timeout(timeoutMs), endsAt: Date.now() + timeoutMs };
    let answer: VenueExecutionTerms;
    try {
      answer = await venue.executionTerms({ give, want, amount, recipient: takerParty, floor: dec(floor), expectedOut }, deadline);
    } catch (err) {
      // venue_floor_below_service, as the venue said it.
      if (err instanceof DomainError) throw err;
      const message = err instanceof Error ? err.message.replaceAll(takerParty, '<taker>') : 'not an error';
      this.options.log.warn({ venueId, reason: message }, "the venue's terms for a plan could not be read");
      answer = { available: false, rejectionCode: 'venue_error' };
    }
    if (!answer.available) throw this.termsRefused(params, route, answer.rejectionCode);
    const { target, memo, minOut } = answer.terms;
    // A memo the contract cannot carry (PlanStep.memo: 1 to 256 printable ASCII characters) is an answer the plan cannot use.
    if (memo === null || !MEMO.test(memo)) {
      this.options.log.warn({ venueId }, "the venue's terms for a plan carry no memo a plan step can hold");
      throw this.termsRefused(params, route, 'venue_error');
    }
    // A taker or fee recipient that is the venue's own address would pay itself.
    this.checkParties(params, route, target);
    return { target, memo, minOut: toWire(minOut) };
  }

  /** A venue's refusal of its terms, answered as a refusal of the plan's quote is. */
  private termsRefused(params: PlanParams, route: PlanRoute, reason: RejectionCode): DomainError {
    const { venueId } = params;
    const { give, want, amount } = params.request;
    if (reason === 'no_pool') return new DomainError('no_pool', `venue ${venueId} has no pool for ${pairKey(give, want)}`);
    if (route === 'partner' && (reason === 'timeout' || reason === 'venue_error')) {
      return new DomainError('quote_failed', `venue ${venueId} did not give its terms for this plan (${reason}); nothing was created; retry`);
    }
    return new DomainError('venue_unavailable', `venue ${venueId} cannot execute ${toWire(amount)} ${give.symbol} for ${want.symbol} now (${reason}); nothing was created`);
  }

  /** The chosen venue's net in the base quote, the one a quote request for the same parameters gets. */
  private async venueQuote(params: PlanParams, route: PlanRoute): Promise<{ net: Decimal; asOf: string }> {
    let quote: QuoteResponse;
    try {
      const { json } = await this.options.quotes.baseQuote(params);
      if (this.lastQuote?.json !== json) this.lastQuote = { json, quote: JSON.parse(json) as QuoteResponse };
      quote = this.lastQuote.quote;
    } catch (err) {
      this.options.log.warn({ venueId: params.venueId, err }, 'the quote for a plan could not be built');
      // The keyed route documents 502 for this; the keyless one, 500.
      throw new DomainError(route === 'partner' ? 'quote_failed' : 'internal', 'the quote for this plan could not be built; nothing was created; retry');
    }
    const entry = quote.venues.find((v) => v.venueId === params.venueId);
    const { give, want } = params.request;
    if (entry?.available !== true || entry.net === null) {
      const reason = entry?.rejectionCode ?? 'no answer';
      if (reason === 'no_pool') throw new DomainError('no_pool', `venue ${params.venueId} has no pool for ${pairKey(give, want)}`);
      // The venue did not answer, or answered with an error: on the keyed route that is the
      // upstream quote failing (502, retry); the keyless route's contract knows it as a venue not
      // quoting now (409).
      if (route === 'partner' && (reason === 'timeout' || reason === 'venue_error')) {
        throw new DomainError('quote_failed', `venue ${params.venueId} did not quote this plan (${reason}); nothing was created; retry`);
      }
      throw new DomainError('venue_unavailable', `venue ${params.venueId} cannot quote ${quote.amount} ${give.symbol} for ${want.symbol} now (${reason})`);
    }
    return { net: dec(entry.net), asOf: quote.asOf };
  }

  /** The held plan when the request is the one it was made for; a different one is a conflict. */
  private sameRequest(held: IdempotencyRecord, params: PlanParams, digests: { readonly fingerprint: string; readonly boundTo: string }, route: PlanRoute): string {
    if (held.fingerprint !== digests.fingerprint) {
      this.metrics.plan(route, 'conflict');
      throw new DomainError(
        'idempotency_conflict',
        `idempotencyKey '${params.idempotencyKey}' was already used for a different plan request in the last 5 minutes; send a new idempotencyKey`,
      );
    }
    return this.checkedReplay(held, digests.boundTo, route, params.venueId);
  }

  /** A held plan goes only to the caller it was made for. */
  private checkedReplay(held: IdempotencyRecord, boundTo: string, route: PlanRoute, venueId: string): string {
    this.guard(held.boundTo === boundTo ? [] : ['a stored plan is bound to a caller other than the one asking'], route, venueId);
    this.metrics.plan(route, 'replayed');
    const text = this.options.intentPlans ? this.options.intentPlans.openPlanText(held.plan) : held.plan;
    // Records are found under keys of the same secret that seals them: one that does not open is a fault.
    if (text === null) throw new Error('a kept intent plan does not open under this service\'s secret');
    return text;
  }

  /** Stops a plan that breaks a guardrail rule: logged (never with a party), counted, never returned. */
  private guard(violations: readonly string[], route: PlanRoute, venueId: string): void {
    if (violations.length === 0) return;
    this.trips += 1;
    this.metrics.guardrailTrip(route);
    this.options.log.error({ route, venueId, violations, guardrailTrips: this.trips }, 'plan guardrail tripped: the plan was not returned or stored');
    throw new DomainError('guardrail', 'the plan failed a party-isolation check; nothing was created');
  }
}
