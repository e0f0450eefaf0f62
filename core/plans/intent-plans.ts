// Intent plans (OneSwap, settlement intent-deposit-reference) between their two calls: what the
// plan service opened when it made the plan (the taker, the venue's challenge nonce, the plan's
// inputs), and its completion once the wallet has signed the challenge (POST /api/v2/plan/signature):
// the caller it is bound to, its expiry, the venue's verification (a wallet token, held in memory
// only), the intent, and the complete plan the plan service assembles and checks. One intent per
// plan: the first call claims the record, concurrent calls wait for what it writes, and every
// later call answers the same bytes (or the same refusal) without asking the venue again.
//
// Kept in the shared state, so any instance completes a plan another made, for a plan record's
// retention, under a key derived from the plan id; sealed with AES-256-GCM under a key derived
// from IDEMPOTENCY_SECRET, so the party is never stored in clear. Each intent's status, which the
// instance that made it follows (core/plans/intent-follower.ts), is kept beside it for the
// outcome, with a keyed digest of the party, never the party itself.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { dec, toWire } from '../decimal.js';
import { DomainError } from '../errors.js';
import type { CoreLog } from '../log.js';
import { SharedStateUnavailable, type SharedState } from '../state/shared-state.js';
import { resolvePair } from '../tokens.js';
import type { FeeTerms } from '../quotes/fee-schemas.js';
import type { PlanRequest } from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import {
  VenueFloorBelowService, WalletSignatureRefused, type Deadline, type IntentRejection, type IntentState, type IntentStatus, type IntentVenue, type SwapIntent, type WalletToken,
} from '../venues/venue.js';
import { IDEMPOTENCY_RETENTION_MS, type IdempotencyRecords } from './idempotency.js';
import type { IntentFollower } from './intent-follower.js';
import type { PlanRoute } from './params.js';

/**
 * What completing a split plan with an intent leg needs beyond that leg's: the whole request, each
 * leg as priced at plan time (with the terms a venue that sets its own gave for its leg), and the
 * split's edge over the best single venue.
 */
export interface OpenSplit {
  readonly request: V2.PlanRequest;
  readonly legs: ReadonlyArray<{
    readonly venueId: string;
    readonly amount: string;
    readonly net: string;
    readonly deposit?: { readonly target: string; readonly memo: string; readonly minOut: string };
  }>;
  readonly edgeBps: number;
  readonly bestExecutable: { readonly venueId: string; readonly gross: string; readonly net: string };
}

/** What the plan service keeps of an intent plan when it makes it: everything its completion needs. */
export interface OpenIntentPlan {
  readonly planId: string;
  /** The caller the plan is bound to, keyed as its idempotency record's `boundTo`. */
  readonly boundTo: string;
  readonly route: PlanRoute;
  readonly partnerId?: string;
  /** The plan request as the caller meant it (its fields in canonical form), the taker's party included; a split's, its intent leg's. */
  readonly request: PlanRequest;
  /** A split plan's: what its other legs need; the fields above are its intent leg's. */
  readonly split?: OpenSplit;
  readonly net: string;
  readonly asOf: string;
  readonly terms: FeeTerms;
  readonly collecting: boolean;
  readonly createdAt: string;
  readonly expiry: string;
  /** The plan's floor, quoteRef.minReceive: the least the intent may guarantee. */
  readonly floor: string;
  /** The venue's challenge the wallet signs. */
  readonly nonce: string;
}

/** A plan's record, by where its completion stands. */
type Stored =
  | { readonly state: 'open'; readonly plan: OpenIntentPlan }
  | { readonly state: 'claimed'; readonly plan: OpenIntentPlan; readonly claimedAt: number }
  | { readonly state: 'completed'; readonly boundTo: string; readonly json: string }
  | { readonly state: 'refused'; readonly boundTo: string; readonly code: DomainError['code']; readonly message: string }
  /** An intent plan's first answer, as its idempotency record keeps it. */
  | { readonly state: 'text'; readonly json: string };

/** An intent's status as the outcome reads it (core/outcomes' IntentOutcomes port). */
export interface RecordedIntent {
  readonly venueId: string;
  readonly intentId: string;
  readonly venueStatus: string;
  readonly state: IntentState;
  /** What the venue paid, in wire form; null before, or when it paid nothing. */
  readonly received: string | null;
}

export interface SignedPlan {
  readonly planId: string;
  readonly signature: string;
  readonly publicKey: string;
}

export interface IntentPlansOptions {
  readonly state: SharedState;
  /** IDEMPOTENCY_SECRET (or this process's own): the seal's and the keys' secret. */
  readonly secret: string | Buffer;
  /** The plan records' keyed caller digests. */
  readonly records: IdempotencyRecords;
  readonly venues: Readonly<Record<string, IntentVenue>>;
  /** The complete plan's JSON text for an opened plan and its intent (PlanService.completedIntentPlan). */
  readonly assemble: (plan: OpenIntentPlan, intent: SwapIntent) => Promise<string>;
  readonly follower: IntentFollower;
  readonly now: () => Date;
  readonly log: CoreLog;
  /** How long one venue call may take (VENUE_TIMEOUT_MS). */
  readonly venueTimeoutMs: number;
  /** How long a plan's record and its intent's status are kept; a plan record's retention by default. */
  readonly retentionMs?: number;
}

/** How long OneSwap takes a wallet token (its docs: 15 minutes); the follower lets an intent go then. */
export const WALLET_TOKEN_LIFETIME_MS = 15 * 60_000;

/** When to try again while the follower is full: its rounds let terminal intents go every few seconds. */
const FOLLOWER_FULL_RETRY_SECONDS = 5;

/** How many times a completion's answer is written before the shared state is taken as not keeping it. */
const KEEP_TRIES = 3;

/** Completions kept in this instance's memory at most (each only while the store refused it). */
const MAX_COMPLETED_HERE = 1000;

/** How often a call waiting for a concurrent completion reads the record again. */
const WAIT_STEP_MS = 25;

const SEALED = 'intent-plan/1';
/** The authenticated data of a sealed plan text, kept under its idempotency record's key. */
const PLAN_TEXT = 'plan-text';

export class IntentPlans {
  private readonly sealKey: Buffer;
  /** Completions the shared state would not keep, by record key: this instance still answers their retries. */
  private readonly completedHere = new Map<string, { readonly boundTo: string; readonly json: string }>();
  private readonly keySecret: Buffer;
  private readonly retentionMs: number;

  constructor(private readonly options: IntentPlansOptions) {
    this.keySecret = Buffer.from(options.secret);
    this.sealKey = Buffer.from(hkdfSync('sha256', this.keySecret, Buffer.alloc(0), 'bestex intent plan records', 32));
    this.retentionMs = options.retentionMs ?? IDEMPOTENCY_RETENTION_MS;
  }

  /**
   * Keeps an intent plan just made. A record left under the same plan id (a plan re-made after
   * its idempotency record's retention, under the same id) is replaced: its plan has long expired.
   */
  async open(plan: OpenIntentPlan): Promise<void> {
    const key = this.planKey(plan.planId);
    const text = this.seal(key, { state: 'open', plan });
    await this.unlessUnavailable(async () => {
      // A status kept for an earlier plan under the same id (re-made after its record's retention) is not this plan's.
      const status = this.statusKey(plan.planId);
      const stale = await this.options.state.get(status);
      if (stale !== null) await this.options.state.replaceIf(status, stale.value, null, this.retentionMs);
      for (;;) {
        if (await this.options.state.setIfAbsent(key, text, this.retentionMs)) return;
        const held = await this.options.state.get(key);
        if (held !== null && (await this.options.state.replaceIf(key, held.value, text, this.retentionMs))) return;
      }
    });
  }

  /**
   * Completes the plan `signed.planId` for `caller` (callerId's form) with the wallet's signature
   * of its message: the complete plan's JSON text, the same on every call.
   */
  async complete(caller: string, signed: SignedPlan): Promise<string> {
    const boundTo = this.options.records.callerDigest(caller);
    const key = this.planKey(signed.planId);
    for (;;) {
      const held = await this.unlessUnavailable(() => this.options.state.get(key));
      const stored = held === null ? null : this.unseal(key, held.value);
      if (stored === null || boundOf(stored) !== boundTo) throw planNotFound();
      switch (stored.state) {
        case 'completed':
          return stored.json;
        case 'refused':
          throw new DomainError(stored.code, stored.message);
        case 'claimed': {
          // Another call is completing it: its answer is this one's; this instance's own, when the store would not keep it.
          const kept = this.completedHere.get(key);
          if (kept !== undefined && kept.boundTo === boundTo) return kept.json;
          // A claim older than a completion can take was left by a call that ended without its answer kept (its instance stopped).
          if (Date.now() >= stored.claimedAt + this.claimLifetimeMs()) {
            if (this.options.now().getTime() >= Date.parse(stored.plan.expiry)) throw planExpired();
            throw new DomainError('quote_failed', 'the call completing this plan ended without its answer being kept; its intent may exist and expires unfunded: make a new plan with a new idempotencyKey');
          }
          await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
          continue;
        }
        case 'open': {
          if (this.options.now().getTime() >= Date.parse(stored.plan.expiry)) throw planExpired();
          // An intent this instance could not follow could not be cancelled either, and would block the taker's next one for a day: none is made.
          if (!this.options.follower.hasRoom) {
            throw new DomainError('at_capacity', `plans cannot be completed right now: this instance follows as many swap intents as it may; nothing was created; retry in ${FOLLOWER_FULL_RETRY_SECONDS} seconds`, FOLLOWER_FULL_RETRY_SECONDS);
          }
          const claimed = this.seal(key, { state: 'claimed', plan: stored.plan, claimedAt: Date.now() });
          if (!(await this.unlessUnavailable(() => this.options.state.replaceIf(key, held!.value, claimed, this.retentionMs)))) continue;
          return this.completeClaimed(key, claimed, stored.plan, signed);
        }
      }
    }
  }

  /** The completion by the call that claimed the record: whatever it answers is kept for every later call. */
  private async completeClaimed(key: string, claimed: string, plan: OpenIntentPlan, signed: SignedPlan): Promise<string> {
    let outcome: Stored;
    let made: { json: string; intent: SwapIntent; walletToken: WalletToken; venue: IntentVenue } | null = null;
    try {
      made = await this.makeIntent(plan, signed);
      outcome = { state: 'completed', boundTo: plan.boundTo, json: made.json };
    } catch (err) {
      const refusal = err instanceof DomainError ? err : new DomainError('internal', 'internal error; nothing was created');
      if (!(err instanceof DomainError)) this.options.log.error({ venueId: plan.request.venueId, reason: err instanceof Error ? err.name : 'not an error' }, 'an intent plan could not be completed');
      outcome = { state: 'refused', boundTo: plan.boundTo, code: refusal.code, message: refusal.message };
    }
    if (!(await this.keep(key, claimed, this.seal(key, outcome)))) {
      // Other instances' retries wait out the claim (claimLifetimeMs); this one's get the answer from memory.
      if (outcome.state === 'completed') this.rememberHere(key, { boundTo: plan.boundTo, json: outcome.json });
      this.options.log.warn({ venueId: plan.request.venueId }, "an intent plan's completion could not be kept in the shared state: this instance answers its retries, others refuse them once the claim has lapsed");
    }
    if (outcome.state === 'refused') throw new DomainError(outcome.code, outcome.message);
    const { intent, walletToken, venue } = made!;
    // Followed first: whatever befalls the status record, the intent is cancelled if its plan expires unfunded.
    this.options.follower.follow({
      // The intent's id too: an earlier intent of a plan re-made under the same id stays followed (and cancelled) on its own.
      key: `${plan.planId}\0${this.partyDigest(plan.request.takerParty)}\0${venue.id}\0${intent.intentId}`,
      venue,
      ref: { intentId: intent.intentId, walletToken },
      planExpiry: Date.parse(plan.expiry),
      tokenExpiry: this.options.now().getTime() + WALLET_TOKEN_LIFETIME_MS,
    });
    try {
      await this.recordStatus(plan.planId, this.partyDigest(plan.request.takerParty), venue.id, {
        intentId: intent.intentId, state: 'awaiting_deposit', venueStatus: 'pending', actualOutput: null, minOutput: intent.minOutput, expiresAt: intent.expiresAt,
      });
    } catch (err) {
      // The follower records it on its first round; the plan is made either way.
      this.options.log.warn({ venueId: venue.id, reason: err instanceof Error ? err.name : 'not an error' }, "an intent's first status could not be recorded; the follower records it next round");
    }
    return outcome.json;
  }

  /** The claim replaced by the completion's answer, tried a few times: false when the store would not keep it. */
  private async keep(key: string, claimed: string, answer: string): Promise<boolean> {
    for (let tries = 0; tries < KEEP_TRIES; tries += 1) {
      try {
        return await this.options.state.replaceIf(key, claimed, answer, this.retentionMs);
      } catch {
        // Unreachable for a moment: tried again.
      }
    }
    return false;
  }

  /** How long a claim may be held before it is taken for abandoned: a completion's two venue calls and their margin. */
  private claimLifetimeMs(): number {
    return 2 * this.options.venueTimeoutMs + 1000;
  }

  private rememberHere(key: string, completed: { readonly boundTo: string; readonly json: string }): void {
    if (this.completedHere.size >= MAX_COMPLETED_HERE) this.completedHere.delete(this.completedHere.keys().next().value!);
    this.completedHere.set(key, completed);
  }

  /** The venue's verification of the signature, its intent for the plan, and the complete plan; the intent is cancelled when the plan cannot carry it. */
  private async makeIntent(plan: OpenIntentPlan, signed: SignedPlan) {
    const { venueId, takerParty: party } = plan.request;
    const venue = this.options.venues[venueId];
    if (!venue) throw new Error(`no adapter makes venue ${venueId}'s intents`);
    let walletToken: WalletToken;
    try {
      walletToken = await venue.verifyChallenge({ party, nonce: plan.nonce, signature: signed.signature, publicKey: signed.publicKey }, this.deadline());
    } catch (err) {
      if (err instanceof WalletSignatureRefused) {
        throw new DomainError('bad_signature', `venue ${venueId} refused the wallet's signature of the plan's message; the message is used up and nothing was created: make a new plan with a new idempotencyKey and sign its message`);
      }
      throw this.unanswered(venueId, party, err);
    }
    const { give, want } = resolvePair(plan.request.from, plan.request.to);
    const amount = dec(String(plan.request.amount));
    let answer;
    try {
      answer = await venue.createIntent({ give, want, amount, party, walletToken, minOutput: dec(plan.floor), expectedOutput: dec(plan.net) }, this.deadline());
    } catch (err) {
      // The adapter has cancelled an intent below the floor: nothing is left.
      if (err instanceof VenueFloorBelowService) throw err;
      throw this.unanswered(venueId, party, err);
    }
    if (!answer.available) throw intentRefused(venueId, answer.rejectionCode);
    const { intent } = answer;
    try {
      return { json: await this.options.assemble(plan, intent), intent, walletToken, venue };
    } catch (err) {
      await venue.cancelIntent({ intentId: intent.intentId, walletToken }, this.deadline()).catch(() => false);
      throw err;
    }
  }

  /** A venue call that failed without an answer the contract names: logged without the party, answered 502. */
  private unanswered(venueId: string, party: string, err: unknown): DomainError {
    if (err instanceof DomainError) return err;
    const reason = err instanceof Error ? err.message.replaceAll(party, '<taker>') : 'not an error';
    this.options.log.warn({ venueId, reason }, "the venue's intent for a plan could not be made");
    return new DomainError('quote_failed', `venue ${venueId} did not answer for the swap intent; nothing was created: make a new plan with a new idempotencyKey`);
  }

  /** Keeps an intent's status where the outcome reads it (the follower's `record`, by its key). */
  async recordFollowed(key: string, status: IntentStatus): Promise<void> {
    const [planId, partyDigest, venueId] = key.split('\0') as [string, string, string];
    await this.recordStatus(planId, partyDigest, venueId, status, true);
  }

  /** `ownOnly`: the follower's write, which never replaces the status of another intent (a plan re-made under the same id has its own). */
  private async recordStatus(planId: string, partyDigest: string, venueId: string, status: Pick<IntentStatus, 'intentId' | 'state' | 'venueStatus' | 'actualOutput'> & Partial<IntentStatus>, ownOnly = false): Promise<void> {
    const key = this.statusKey(planId);
    const recorded: RecordedIntent & { readonly party: string } = {
      party: partyDigest,
      venueId,
      intentId: status.intentId,
      venueStatus: status.venueStatus,
      state: status.state,
      received: status.actualOutput === null ? null : toWire(status.actualOutput),
    };
    const text = JSON.stringify(recorded);
    const { state } = this.options;
    for (let tries = 0; tries < 3; tries += 1) {
      if (await state.setIfAbsent(key, text, this.retentionMs)) return;
      const held = await state.get(key);
      if (held !== null && ownOnly && (JSON.parse(held.value) as RecordedIntent).intentId !== status.intentId) return;
      if (held !== null && (await state.replaceIf(key, held.value, text, this.retentionMs))) return;
    }
    this.options.log.warn({ venueId }, "an intent's status was changed by others three times while it was written; the follower writes it again on its next change");
  }

  /** An intent plan's first answer as its idempotency record keeps it: sealed, as the venue's challenge may name the taker. */
  sealPlanText(json: string): string {
    return this.seal(PLAN_TEXT, { state: 'text', json });
  }

  /** A kept plan's text: an intent plan's unsealed (null for one sealed under another secret, which then replays nothing); any other as it is. */
  openPlanText(text: string): string | null {
    if (!text.startsWith(`${SEALED}.`)) return text;
    const opened = this.unseal(PLAN_TEXT, text);
    return opened?.state === 'text' ? opened.json : null;
  }

  /** The recorded status of plan `planId`'s intent when `party` is its taker; null otherwise (no such plan, another's, or no longer kept). */
  async intentOutcome(planId: string, party: string): Promise<RecordedIntent | null> {
    const held = await this.options.state.get(this.statusKey(planId));
    if (held === null) return null;
    const { party: digest, ...recorded } = JSON.parse(held.value) as RecordedIntent & { readonly party: string };
    return digest === this.partyDigest(party) ? recorded : null;
  }

  /** The intent status recorded for plan `planId`, whoever its taker (the plan status reads it for a caller it has authorised itself). */
  async intentStatus(planId: string): Promise<RecordedIntent | null> {
    const held = await this.options.state.get(this.statusKey(planId));
    if (held === null) return null;
    const { party: _digest, ...recorded } = JSON.parse(held.value) as RecordedIntent & { readonly party: string };
    return recorded;
  }

  private keyed(label: string, text: string): string {
    return createHmac('sha256', this.keySecret).update(`${label}\0${text}`).digest('base64url');
  }

  private planKey(planId: string): string {
    return `intentplan:${this.keyed('plan', planId)}`;
  }

  private statusKey(planId: string): string {
    return `intentstatus:${this.keyed('plan', planId)}`;
  }

  private partyDigest(party: string): string {
    return this.keyed('party', party);
  }

  /** `value` sealed for `key` (its authenticated data, so a record cannot be moved to another plan's key). */
  private seal(key: string, value: Stored): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, iv);
    cipher.setAAD(Buffer.from(key));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return [SEALED, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
  }

  /** A sealed record; null for one that does not open under this secret (another deployment's, or altered). */
  private unseal(key: string, text: string): Stored | null {
    const [header, iv, body, tag] = text.split('.');
    if (header !== SEALED || iv === undefined || body === undefined || tag === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealKey, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(key));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return JSON.parse(Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')) as Stored;
    } catch {
      return null;
    }
  }

  private deadline(): Deadline {
    const timeoutMs = this.options.venueTimeoutMs;
    return { signal: AbortSignal.timeout(timeoutMs), endsAt: Date.now() + timeoutMs };
  }

  /** The shared state out of reach: no plan is completed (nor claimed twice) without it. */
  private async unlessUnavailable<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof SharedStateUnavailable)) throw err;
      throw new DomainError('at_capacity', 'plans cannot be completed right now: the shared state is unreachable; nothing was created; retry in 5 seconds', 5);
    }
  }
}

const boundOf = (stored: Stored): string | null => ('plan' in stored ? stored.plan.boundTo : 'boundTo' in stored ? stored.boundTo : null);

const planNotFound = (): DomainError => new DomainError('plan_not_found', 'no plan with this planId waits for a signature from this caller; nothing was created');
const planExpired = (): DomainError => new DomainError('plan_expired', 'the plan expired before it was signed; nothing was created: make a new plan with a new idempotencyKey');

function intentRefused(venueId: string, code: IntentRejection): DomainError {
  if (code === 'intent_exists') {
    return new DomainError('venue_unavailable', `venue ${venueId} refused the swap intent: the taker has another intent on this pool awaiting its deposit (intent_exists); nothing was created: retry once that plan has expired and its intent is cancelled (at most OneSwap's 24-hour deposit window when it could not be)`);
  }
  return new DomainError('venue_unavailable', `venue ${venueId} refused the swap intent (${code}); nothing was created`);
}
