// The tradecraft pools' operator: each pool party is worked as a venue's bot works it. Right after
// a deposit offer to it commits, it accepts the offer if the pool can pay at least the floor in the
// offer's memo (its reserves as they stand then), paying the want token out in the same
// transaction, and otherwise rejects it so the funds return. The fee legs the taker offered in
// the same batch are accepted in the transaction that pays the deposit out, and rejected,
// returning the funds, in the one that rejects it: the escrow is released once the payout is on
// the ledger, and never without it. The pools are the sandbox market's own objects, so a swap
// moves the next quote, and a quote's `user_gets` is what a deposit at the same reserves is paid.
// Offers to the sandbox Nightly's swapAddress it hands to Nightly's desk (nightly-desk.ts), which
// settles them against the quotes their memos name, and offers to the sandbox OneSwap's
// depositAddress to OneSwap's desk (oneswap-desk.ts), which settles them against its intents;
// pausing the operator pauses them all.
import { Decimal, toWire } from '../../core/decimal.js';
import { CHOICES, REASON_KEY, RESULTS } from '../../core/ledger/token-standard.js';
import type { Token } from '../../core/tokens.js';
import { poolUserGets } from '../venues/tradecraft.js';
import type { AmmPool, SandboxVenueSpec } from '../venues/sandbox-venue.js';
import { DAML_DECIMAL, LedgerRejection } from './command-arguments.js';
import { INTERFACES, TEMPLATES, TOKEN_PACKAGE_NAME } from './packages.js';
import type { Instruction, TokenContracts } from './token-contracts.js';
import type { ActionNode, CreateNode, ExerciseNode } from './transaction-tree.js';

/** One sandbox pool: the market's AMM pool for a pair, worked by its pool party. */
export interface SandboxPool {
  readonly party: string;
  readonly pool: AmmPool;
  /** The tokens of the pool's pair, CC first. */
  readonly tokens: readonly [Token, Token];
}

export interface PoolOperatorOptions {
  /** The tradecraft venue's spec, whose pools and fee the pools are. */
  readonly tradecraft: SandboxVenueSpec;
  readonly pools: readonly SandboxPool[];
  readonly now: () => Date;
  /** Told when the operator fails on an offer; the offer stays open and is tried again at the next commit. */
  readonly onOperatorError?: (err: unknown) => void;
  /** Records the operator's answer as a transaction of its own. */
  readonly commit: (commandId: string, roots: readonly ActionNode[]) => void;
  /** The venues' desks (nightly-desk.ts, oneswap-desk.ts), whose offers the operator answers too (and pauses with the pools). */
  readonly desks?: readonly OfferDesk[];
}

/** A venue party that answers the offers made to it on its own terms: the sandbox Nightly's or OneSwap's desk. */
export interface OfferDesk {
  readonly party: string;
  /** Its reserves as its holdings, issued at genesis. */
  reserveHoldings(): CreateNode[];
  /** Accepts and pays, or returns, one open offer to its party, committing the answer; says which (or that it kept the deposit unpaid). */
  answer(cid: string, instruction: Instruction): DeskAnswer;
}

/** What a desk did with a deposit: paid it, returned it, or kept it with nothing paid (left to the venue's operators). */
export type DeskAnswer = 'paid' | 'returned' | 'kept';

/** The pool's reserve of `token`: its base (CC) or quote reserve. */
const reserveOf = (entry: SandboxPool, token: Token) => (token === entry.tokens[0] ? entry.pool.baseReserve : entry.pool.quoteReserve);

export class PoolOperator {
  private readonly poolsByParty: ReadonlyMap<string, SandboxPool>;
  /** Offers the operator failed on: reported once. */
  private readonly failedOffers = new Set<string>();
  private paused = false;
  private scheduled = false;

  constructor(
    private readonly contracts: TokenContracts,
    private readonly options: PoolOperatorOptions,
  ) {
    this.poolsByParty = new Map(options.pools.map((p) => [p.party, p]));
  }

  /** Each pool's reserves as holdings, as a venue's party holds its liquidity: payouts spend them. */
  reserveHoldings(): CreateNode[] {
    const pools = this.options.pools.flatMap((entry) => entry.tokens.map((token) => this.contracts.mint(entry.party, token.instrument, reserveOf(entry, token))));
    return [...pools, ...(this.options.desks ?? []).flatMap((desk) => desk.reserveHoldings())];
  }

  /** Whether `party` is a venue party the operator works: a tradecraft pool's, or a desk's. */
  isPoolParty(party: string): boolean {
    return this.poolsByParty.has(party) || this.deskOf(party) !== undefined;
  }

  private deskOf(party: string): OfferDesk | undefined {
    return this.options.desks?.find((desk) => desk.party === party);
  }

  /** The pool trading `a` against `b`, either way round. */
  poolFor(a: Token, b: Token): SandboxPool | undefined {
    return [...this.poolsByParty.values()].find((p) => p.tokens.includes(a) && p.tokens.includes(b) && a !== b);
  }

  /** Offers open to a pool party or to a desk, oldest first. */
  openPoolOffers(): string[] {
    return [...this.contracts.instructions.entries()].filter(([, i]) => this.isPoolParty(i.receiver)).map(([cid]) => cid);
  }

  /** Moves a tradecraft pool's price by `bps` (movePoolPrice says how). */
  movePool(party: string, first: Token, bps: number): { before: string; after: string } {
    const entry = this.poolsByParty.get(party);
    if (!entry) throw new LedgerRejection('NOT_FOUND', 'no sandbox pool has that party');
    return movePoolPrice(this.contracts, entry, first, bps, this.options.commit);
  }

  /** Stops (or restarts) the operator: offers to a pool wait, unanswered, while it is paused. */
  setPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.schedule();
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** The operator runs after the commit that woke it, as a venue's bot would, in a transaction of its own. */
  schedule(): void {
    if (this.scheduled || this.paused) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.paused) this.run();
    });
  }

  /**
   * Answers every open offer to a pool party, oldest first; one that fails does not hold up the
   * others, and is reported once, not at every commit that tries it again.
   */
  private run(): void {
    for (const cid of this.openPoolOffers()) {
      try {
        const instruction = this.contracts.instructions.get(cid)!;
        const desk = this.deskOf(instruction.receiver);
        if (desk) this.answerFeeLegs(cid, instruction, desk.answer(cid, instruction));
        else this.answerDeposit(cid, instruction);
      } catch (err) {
        if (!this.failedOffers.has(cid)) this.options.onOperatorError?.(err);
        this.failedOffers.add(cid);
      }
    }
  }

  /** What the pool would pay for the deposit now, or why it cannot pay. */
  private payoutFor(entry: SandboxPool, instruction: Instruction): { want: Token; payout: Decimal } | string {
    const give = entry.tokens.find((t) => t.instrument === instruction.instrument);
    if (!give) return `the pool does not trade ${instruction.instrument}`;
    const want = entry.tokens.find((t) => t !== give)!;
    const payout = poolUserGets(this.options.tradecraft, entry.pool, give, want, instruction.amount);
    const reserveOut = give === entry.tokens[0] ? entry.pool.quoteReserve : entry.pool.baseReserve;
    if (!payout.gt(0) || payout.gte(reserveOut)) return 'the pool cannot pay that amount out';
    const memo = instruction.meta[REASON_KEY];
    if (memo !== undefined) {
      if (!DAML_DECIMAL.test(memo)) return 'the memo is not a minimum to receive';
      if (payout.lt(new Decimal(memo))) return 'the pool cannot pay the memo\'s minimum';
    }
    return { want, payout };
  }

  /**
   * A deposit's fee legs: the open offers its sender submitted in the same batch after it, to
   * parties other than a venue's, up to the batch's next deposit (a split's batch carries each
   * leg's deposit followed by its own fee legs), so each deposit's fees follow its own fate.
   */
  private feeLegsOf(depositCid: string, deposit: Instruction): Array<[string, Instruction]> {
    const batch = this.contracts.batchOrder(deposit.batch);
    const legs: Array<[string, Instruction]> = [];
    for (const { cid, receiver } of batch.slice(batch.findIndex((entry) => entry.cid === depositCid) + 1)) {
      if (this.isPoolParty(receiver)) break;
      const leg = this.contracts.instructions.get(cid);
      if (leg?.sender === deposit.sender) legs.push([cid, leg]);
    }
    return legs;
  }

  /** With a desk's payout on the ledger the fee parties accept the deposit's fee legs; a returned deposit's come back. */
  private answerFeeLegs(cid: string, deposit: Instruction, answer: DeskAnswer): void {
    if (answer === 'kept') return;
    const legs = this.feeLegsOf(cid, deposit).map(([legCid, leg]) => (answer === 'paid' ? this.contracts.accepted(legCid, leg) : this.contracts.returned(legCid, leg, 'reject')));
    if (legs.length === 0) return;
    legs.forEach((leg) => leg.apply());
    this.options.commit(`fees-${cid.slice(2, 14)}`, legs.map((leg) => leg.node));
  }

  private answerDeposit(cid: string, instruction: Instruction): void {
    const { contracts } = this;
    const entry = this.poolsByParty.get(instruction.receiver)!;
    const now = this.options.now();
    const expired = now.getTime() >= Date.parse(instruction.executeBefore);
    const priced = expired ? 'expired' : this.payoutFor(entry, instruction);
    const feeLegs = this.feeLegsOf(cid, instruction);
    if (typeof priced === 'string') {
      // The fee parties release nothing for a swap that did not happen: the fee legs return too.
      const answers = [contracts.returned(cid, instruction, 'reject'), ...feeLegs.map(([legCid, leg]) => contracts.returned(legCid, leg, 'reject'))];
      answers.forEach((a) => a.apply());
      this.options.commit(`tradecraft-${cid.slice(2, 14)}`, answers.map((a) => a.node));
      return;
    }
    const { want, payout } = priced;
    const { pool } = entry;
    const accept = contracts.accepted(cid, instruction);
    // Paid in the accepting transaction, as a venue that settles atomically does: the taker is
    // never left holding neither the deposit nor the payout. A direct transfer (the taker is not
    // asked to accept it), as to a party with a transfer preapproval.
    const payoutNode = directTransfer(contracts, { sender: entry.party, receiver: instruction.sender, instrument: want.instrument, amount: payout, now, executeBefore: instruction.executeBefore, reason: `payout for ${cid}` });
    // With the payout on the ledger, the fee parties accept the fee legs: the escrow is released.
    const legs = feeLegs.map(([legCid, leg]) => contracts.accepted(legCid, leg));
    accept.apply();
    if (want === entry.tokens[0]) {
      pool.quoteReserve = pool.quoteReserve.plus(instruction.amount);
      pool.baseReserve = pool.baseReserve.minus(payout);
    } else {
      pool.baseReserve = pool.baseReserve.plus(instruction.amount);
      pool.quoteReserve = pool.quoteReserve.minus(payout);
    }
    legs.forEach((leg) => leg.apply());
    this.options.commit(`tradecraft-${cid.slice(2, 14)}`, [accept.node, payoutNode, ...legs.map((leg) => leg.node)]);
  }
}

/**
 * A venue party's payout to `receiver`, made in the transaction that accepts the deposit, as a
 * venue that settles atomically pays: the taker is never left holding neither the deposit nor the
 * payout. A direct transfer (the receiver is not asked to accept it), as to a party with a
 * transfer preapproval; the venue's holdings of the instrument are spent, applied at once.
 */
export function directTransfer(
  contracts: TokenContracts,
  transfer: { sender: string; receiver: string; instrument: Token['instrument']; amount: Decimal; now: Date; executeBefore: string; reason: string },
): ExerciseNode {
  const { sender, receiver, instrument, amount, now } = transfer;
  const admin = contracts.admins[instrument];
  const spent = contracts.spendPool(sender, instrument, amount);
  const paid = contracts.mint(receiver, instrument, amount);
  return {
    kind: 'exercised', contractId: contracts.factories.get(admin)!, templateId: TEMPLATES.factory, packageName: TOKEN_PACKAGE_NAME, interfaceId: INTERFACES.factory, interfaces: [INTERFACES.factory],
    signatories: [admin], observers: [], choice: CHOICES.transfer,
    choiceArgument: {
      expectedAdmin: admin,
      transfer: {
        sender, receiver, amount: toWire(amount), instrumentId: { admin, id: instrument },
        requestedAt: now.toISOString(), executeBefore: transfer.executeBefore, inputHoldingCids: spent.inputs, meta: { values: { [REASON_KEY]: transfer.reason } },
      },
      extraArgs: { context: { values: {} }, meta: { values: {} } },
    },
    // A choice observer, as the receiver of a direct transfer is: it sees the transfer that pays it.
    actingParties: [sender], choiceObservers: [receiver], consuming: false,
    exerciseResult: { output: { tag: RESULTS.completed, value: { receiverHoldingCids: [paid.contractId] } }, senderChangeCids: spent.changeCid ? [spent.changeCid] : [], meta: { values: {} } },
    children: [...spent.nodes.filter((n) => n.kind === 'exercised'), paid, ...spent.nodes.filter((n) => n.kind === 'created')],
  };
}

/**
 * Moves a pool's price: the price of `first` in the other token of the pair changes by `bps`
 * (-300: it falls by 3 %). The other token's reserve is scaled, so the pool's CC side and the
 * pair's book stay as they were; rounded down to 10 digits. The pool party's holdings follow the
 * reserve: the registry mints the difference, or burns it, in `commit`.
 */
export function movePoolPrice(contracts: TokenContracts, entry: SandboxPool, first: Token, bps: number, commit: (commandId: string, roots: readonly ActionNode[]) => void): { before: string; after: string } {
  const factor = new Decimal(10_000 + bps).div(10_000);
  const { pool, party } = entry;
  const price = () => (first.instrument === entry.tokens[0].instrument ? pool.quoteReserve.div(pool.baseReserve) : pool.baseReserve.div(pool.quoteReserve));
  const before = price();
  const moved = first.instrument === entry.tokens[0].instrument ? entry.tokens[1] : entry.tokens[0];
  const was = reserveOf(entry, moved);
  if (moved === entry.tokens[1]) pool.quoteReserve = pool.quoteReserve.times(factor).toDecimalPlaces(10, Decimal.ROUND_FLOOR);
  else pool.baseReserve = pool.baseReserve.times(factor).toDecimalPlaces(10, Decimal.ROUND_FLOOR);
  const delta = reserveOf(entry, moved).minus(was);
  if (delta.gt(0)) commit(`sandbox-move-${party.slice(0, 24)}`, [contracts.mint(party, moved.instrument, delta)]);
  else if (delta.lt(0)) commit(`sandbox-move-${party.slice(0, 24)}`, contracts.spendPool(party, moved.instrument, delta.negated()).nodes);
  return { before: before.toSignificantDigits(12).toFixed(), after: price().toSignificantDigits(12).toFixed() };
}
