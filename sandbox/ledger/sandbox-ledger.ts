// The sandbox ledger: an in-process simulation of a Canton participant's view of the token
// standard, enough to run a swap end to end on one machine. Parties hold holdings per
// instrument; a transfer is a CIP-0056 two-step offer that locks the sender's funds until the
// receiver accepts or rejects it, the sender withdraws it, or its executeBefore passes; every
// commit is one transaction with a `1220...` update id, an offset and a record time.
//
// The sandbox venues take part as real parties: each tradecraft pool party is worked by an
// operator that, right after a deposit offer to it commits, accepts it if the pool can pay at
// least the floor in the offer's memo (its reserves as they stand then), paying the want token
// out in the same transaction, and otherwise rejects it so the funds return. The pools are the
// sandbox market's own objects, so a swap moves the next quote, and a quote's `user_gets` is what
// a deposit at the same reserves is paid.
//
// The fee parties take part too: the fee legs a taker offers in the same submission as a deposit
// (the plan's fee-escrow-lock, b2c-fee-transfer and fee-transfer steps) are accepted in the
// transaction that pays the deposit out, and rejected, returning the funds, in the one that
// rejects it: the escrow is released once the payout is on the ledger, and never without it.
//
// Simplifications, none of which the service's reading depends on: one synchronizer; any caller
// with the sandbox's token may act as any party; a pool's reserves are its AMM state, not holdings
// it spends; an offer past its executeBefore stays until its sender withdraws it or its receiver
// rejects it (the pool's operator rejects it, returning the funds).
import { createHash, randomBytes } from 'node:crypto';
import { Decimal, toWire } from '../../core/decimal.js';
import { CHOICES, REASON_KEY, RESULTS } from '../../core/ledger/token-standard.js';
import { TOKENS, type Token } from '../../core/tokens.js';
import type { AmmPool, SandboxVenueSpec } from '../sandbox-venue.js';
import { poolUserGets } from '../wire/tradecraft.js';

export type Instrument = Token['instrument'];

/** The bearer token the sandbox ledger accepts unless LEDGER_TOKEN names another. */
export const SANDBOX_LEDGER_TOKEN = 'sandbox-ledger-token';

/** The sandbox's Daml packages: its token implementation and the token standard's interfaces. */
const PACKAGE = {
  token: `${'5a'.repeat(32)}:Sandbox.Token`,
  holdingApi: `${'71'.repeat(32)}:Splice.Api.Token.HoldingV1`,
  transferApi: `${'72'.repeat(32)}:Splice.Api.Token.TransferInstructionV1`,
} as const;

export const TEMPLATES = {
  holding: `${PACKAGE.token}:Holding`,
  instruction: `${PACKAGE.token}:TransferInstruction`,
  factory: `${PACKAGE.token}:TransferFactory`,
} as const;

export const INTERFACES = {
  holding: `${PACKAGE.holdingApi}:Holding`,
  instruction: `${PACKAGE.transferApi}:TransferInstruction`,
  factory: `${PACKAGE.transferApi}:TransferFactory`,
} as const;

/** A ledger event as the sandbox keeps it: its wire fields, who witnessed it, and which interfaces its template implements. */
export interface SandboxEvent {
  readonly kind: 'created' | 'exercised' | 'archived';
  readonly contractId: string;
  readonly templateId: string;
  readonly witnesses: readonly string[];
  /** The interfaces the event's template implements (a filter on any of them shows the event). */
  readonly interfaces: readonly string[];
  /** For created events: the interface views by interface id. */
  readonly views?: Readonly<Record<string, unknown>>;
  readonly createArgument?: unknown;
  readonly signatories?: readonly string[];
  readonly observers?: readonly string[];
  readonly interfaceId?: string;
  readonly choice?: string;
  readonly choiceArgument?: unknown;
  readonly actingParties?: readonly string[];
  readonly consuming?: boolean;
  readonly exerciseResult?: unknown;
}

export interface SandboxTransaction {
  readonly updateId: string;
  readonly commandId: string;
  readonly offset: number;
  readonly recordTime: string;
  readonly events: readonly SandboxEvent[];
}

interface Holding {
  readonly owner: string;
  readonly instrument: Instrument;
  readonly amount: Decimal;
  /** The offer whose funds this holding locks. */
  readonly lockedFor: string | null;
  readonly lockExpiresAt: string | null;
}

interface Instruction {
  readonly sender: string;
  readonly receiver: string;
  readonly instrument: Instrument;
  readonly amount: Decimal;
  readonly requestedAt: string;
  readonly executeBefore: string;
  readonly meta: Readonly<Record<string, string>>;
  readonly inputHoldingCids: readonly string[];
  readonly lockedHoldingCid: string;
  /** The submission that created it: a deposit's fee legs share their deposit's. */
  readonly batch: string;
}

/** A command the sandbox refuses: the message says why in words the caller can act on. */
export class LedgerRejection extends Error {
  override readonly name = 'LedgerRejection';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One sandbox pool: the market's AMM pool for a pair, worked by its pool party. */
export interface SandboxPool {
  readonly party: string;
  readonly pool: AmmPool;
  /** The tokens of the pool's pair, CC first. */
  readonly tokens: readonly [Token, Token];
}

export interface SandboxLedgerOptions {
  /** The instrument admins (registry parties), by instrument. */
  readonly admins: Readonly<Record<Instrument, string>>;
  /** The tradecraft venue's spec, whose pools and fee the pools below are. */
  readonly tradecraft: SandboxVenueSpec;
  readonly pools: readonly SandboxPool[];
  readonly now: () => Date;
  /** Told when the pools' operator fails on an offer; the offer stays open and is tried again at the next commit. */
  readonly onOperatorError?: (err: unknown) => void;
}

/** A Daml Decimal: at most 10 fractional digits. */
const DAML_DECIMAL = /^[0-9]{1,28}(\.[0-9]{1,10})?$/;

const byInstrument = (id: string): Token | undefined => TOKENS.find((t) => t.instrument === id);

export class SandboxLedger {
  private readonly transactionsLog: SandboxTransaction[] = [];
  private readonly holdings = new Map<string, Holding>();
  private readonly instructions = new Map<string, Instruction>();
  /** The transfer factory contract of each instrument admin. */
  readonly factories: ReadonlyMap<string, string>;
  private readonly poolsByParty: ReadonlyMap<string, SandboxPool>;
  private readonly seed = randomBytes(8).toString('hex');
  private contractCounter = 0;
  /** Committed submissions by their user, parties and commandId, as a participant deduplicates them. */
  private readonly submitted = new Map<string, string>();
  /** Offers the operator failed on: reported once. */
  private readonly failedOffers = new Set<string>();
  private paused = false;
  private scheduled = false;

  constructor(private readonly options: SandboxLedgerOptions) {
    this.factories = new Map(Object.values(options.admins).map((admin) => [admin, this.newContractId()]));
    this.poolsByParty = new Map(options.pools.map((p) => [p.party, p]));
  }

  get ledgerEnd(): number {
    return this.transactionsLog.length;
  }

  /** Transactions with offsets in (after, upTo], oldest first. */
  transactions(after: number, upTo: number): readonly SandboxTransaction[] {
    return this.transactionsLog.slice(Math.max(0, after), Math.max(0, upTo));
  }

  /** The active holdings (all, or one owner's), with their contract ids. */
  activeHoldings(owner?: string): Array<{ contractId: string; event: SandboxEvent }> {
    return [...this.holdings.entries()].filter(([, h]) => owner === undefined || h.owner === owner).map(([cid, h]) => ({ contractId: cid, event: this.holdingCreated(cid, h) }));
  }

  /** Every active contract: holdings and open transfer instructions, as their creates show them. */
  activeContracts(): SandboxEvent[] {
    return [
      ...this.activeHoldings().map((h) => h.event),
      ...[...this.instructions.entries()].map(([cid, instruction]) => this.instructionCreated(cid, instruction)),
    ];
  }

  /** The admin whose factory `factoryId` is, if it is one. */
  factoryAdmin(factoryId: string): string | undefined {
    return [...this.factories.entries()].find(([, cid]) => cid === factoryId)?.[0];
  }

  /** The pool trading `a` against `b`, either way round. */
  poolFor(a: Token, b: Token): SandboxPool | undefined {
    return [...this.poolsByParty.values()].find((p) => p.tokens.includes(a) && p.tokens.includes(b) && a !== b);
  }

  /** Mints `amount` of `instrument` to `party` (the sandbox's faucet). */
  fund(party: string, instrument: Instrument, amount: Decimal): { contractId: string; transaction: SandboxTransaction } {
    checkAmount(amount, 'amount');
    const contractId = this.newContractId();
    const holding: Holding = { owner: party, instrument, amount, lockedFor: null, lockExpiresAt: null };
    const transaction = this.commit(`sandbox-fund-${contractId.slice(2, 14)}`, (events) => {
      this.holdings.set(contractId, holding);
      events.push(this.holdingCreated(contractId, holding));
    });
    return { contractId, transaction };
  }

  /**
   * Moves a pool's price: the price of `first` in the other token of the pair changes by `bps`
   * (-300: it falls by 3 %). The other token's reserve is scaled, so the pool's CC side and the
   * pair's book stay as they were; rounded down to 10 digits.
   */
  movePool(party: string, first: Token, bps: number): { before: string; after: string } {
    const entry = this.poolsByParty.get(party);
    if (!entry) throw new LedgerRejection('NOT_FOUND', 'no sandbox pool has that party');
    const factor = new Decimal(10_000 + bps).div(10_000);
    const { pool } = entry;
    const price = () => (first.instrument === entry.tokens[0].instrument ? pool.quoteReserve.div(pool.baseReserve) : pool.baseReserve.div(pool.quoteReserve));
    const before = price();
    if (first.instrument === entry.tokens[0].instrument) pool.quoteReserve = pool.quoteReserve.times(factor).toDecimalPlaces(10, Decimal.ROUND_FLOOR);
    else pool.baseReserve = pool.baseReserve.times(factor).toDecimalPlaces(10, Decimal.ROUND_FLOOR);
    return { before: before.toSignificantDigits(12).toFixed(), after: price().toSignificantDigits(12).toFixed() };
  }

  /** Stops (or restarts) the pools' operator: offers to a pool wait, unanswered, while it is paused. */
  setOperatorPaused(paused: boolean): void {
    this.paused = paused;
    if (!paused) this.scheduleOperator();
  }

  get operatorPaused(): boolean {
    return this.paused;
  }

  /** Whether `cid` is a transfer instruction no one has answered yet. */
  isOpenInstruction(cid: string): boolean {
    return this.instructions.has(cid);
  }

  /** Offers open to a pool party, oldest first. */
  openPoolOffers(): string[] {
    return [...this.instructions.entries()].filter(([, i]) => this.poolsByParty.has(i.receiver)).map(([cid]) => cid);
  }

  /**
   * Runs `commands` atomically as one transaction for `actAs`: all of them, or none when one is
   * refused (LedgerRejection).
   */
  submit(actAs: readonly string[], commandId: string, commands: ReadonlyArray<{ contractId: string; choice: string; argument: unknown }>, userId = ''): SandboxTransaction {
    if (commands.length === 0) throw new LedgerRejection('INVALID_ARGUMENT', 'the submission has no commands');
    if (actAs.some((party) => this.poolsByParty.has(party))) {
      throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the sandbox\'s pool parties act only through its pool operator, which prices every deposit against the pool');
    }
    const key = `${userId}\n${[...actAs].sort().join(',')}\n${commandId}`;
    const earlier = this.submitted.get(key);
    if (earlier) throw new LedgerRejection('DUPLICATE_COMMAND', `a submission with this commandId was already committed by this user for these parties (update ${earlier})`);
    // Every command is checked against the state the earlier ones leave; nothing is applied until all pass.
    const plan = this.stage();
    for (const command of commands) {
      if (command.choice === CHOICES.transfer) plan.transfer(actAs, command.contractId, command.argument);
      else if (command.choice === CHOICES.withdraw) plan.settle(actAs, command.contractId, 'withdraw');
      else if (command.choice === CHOICES.accept) plan.settle(actAs, command.contractId, 'accept');
      else if (command.choice === CHOICES.reject) plan.settle(actAs, command.contractId, 'reject');
      else throw new LedgerRejection('INVALID_ARGUMENT', `the sandbox ledger does not serve the choice ${command.choice.slice(0, 80)}`);
    }
    const transaction = plan.commit(commandId);
    this.submitted.set(key, transaction.updateId);
    this.scheduleOperator();
    return transaction;
  }

  /** A staging area over the current state: checks and collects a batch's effects, then commits them as one transaction. */
  private stage() {
    const consumed = new Set<string>();
    const effects: Array<(events: SandboxEvent[]) => void> = [];
    const now = this.options.now();
    const holdingOf = (cid: string) => (consumed.has(cid) ? undefined : this.holdings.get(cid));
    const batch = this.newContractId();
    const ledger = this;
    return {
      transfer(actAs: readonly string[], factoryId: string, argument: unknown) {
        const admin = ledger.factoryAdmin(factoryId);
        if (!admin) throw new LedgerRejection('CONTRACT_NOT_FOUND', 'no transfer factory has that contract id');
        const args = asRecord(argument, 'the choice argument');
        const transfer = asRecord(args.transfer, 'transfer');
        const sender = asText(transfer.sender, 'transfer.sender');
        const receiver = asText(transfer.receiver, 'transfer.receiver');
        if (!actAs.includes(sender)) throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the sender of a transfer must be one of actAs');
        if (receiver === sender) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'a transfer needs a receiver other than its sender');
        if (args.expectedAdmin !== admin) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'expectedAdmin is not the admin of this transfer factory');
        const instrumentId = asRecord(transfer.instrumentId, 'transfer.instrumentId');
        const instrument = byInstrument(asText(instrumentId.id, 'transfer.instrumentId.id'))?.instrument;
        if (!instrument || instrumentId.admin !== admin || ledger.options.admins[instrument] !== admin) {
          throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'transfer.instrumentId is not an instrument of this factory\'s admin');
        }
        const amountText = asText(transfer.amount, 'transfer.amount');
        if (!DAML_DECIMAL.test(amountText)) throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.amount must be a Daml Decimal');
        const amount = new Decimal(amountText);
        checkAmount(amount, 'transfer.amount');
        const requestedAt = asTime(transfer.requestedAt, 'transfer.requestedAt');
        const executeBefore = asTime(transfer.executeBefore, 'transfer.executeBefore');
        if (executeBefore.getTime() <= now.getTime()) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `executeBefore (${executeBefore.toISOString()}) has passed`);
        if (requestedAt.getTime() > now.getTime()) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'requestedAt is in the future');
        const meta = asMeta(transfer.meta);
        const inputs = transfer.inputHoldingCids;
        if (!Array.isArray(inputs) || inputs.length === 0 || !inputs.every((c) => typeof c === 'string')) {
          throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.inputHoldingCids must list the sender\'s holdings to spend');
        }
        let total = new Decimal(0);
        for (const cid of inputs as string[]) {
          const holding = holdingOf(cid);
          if (!holding || holding.owner !== sender || holding.instrument !== instrument || holding.lockedFor !== null) {
            throw new LedgerRejection('CONTRACT_NOT_ACTIVE', `input holding ${cid.slice(0, 16)}... is not an unlocked ${instrument} holding of the sender (spent, locked, or another's)`);
          }
          consumed.add(cid);
          total = total.plus(holding.amount);
        }
        if (total.lt(amount)) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `the input holdings hold ${toWire(total)} ${instrument}; the transfer needs ${toWire(amount)}`);
        effects.push((events) => {
          const consumedEvents = (inputs as string[]).map((cid) => ledger.archiveHolding(cid, [sender]));
          const lockedCid = ledger.newContractId();
          const change = total.minus(amount);
          const changeCid = change.gt(0) ? ledger.newContractId() : null;
          const instructionCid = ledger.newContractId();
          const instruction: Instruction = {
            sender, receiver, instrument, amount, meta, inputHoldingCids: inputs as string[], lockedHoldingCid: lockedCid,
            requestedAt: requestedAt.toISOString(), executeBefore: executeBefore.toISOString(), batch,
          };
          events.push({
            kind: 'exercised', contractId: factoryId, templateId: TEMPLATES.factory, interfaceId: INTERFACES.factory, interfaces: [INTERFACES.factory], choice: CHOICES.transfer,
            choiceArgument: argument, actingParties: [sender], consuming: false, witnesses: [sender, admin],
            exerciseResult: { output: { tag: RESULTS.pending, value: { transferInstructionCid: instructionCid } }, senderChangeCids: changeCid ? [changeCid] : [], meta: { values: {} } },
          });
          events.push(...consumedEvents);
          ledger.holdings.set(lockedCid, { owner: sender, instrument, amount, lockedFor: instructionCid, lockExpiresAt: executeBefore.toISOString() });
          events.push(ledger.holdingCreated(lockedCid, ledger.holdings.get(lockedCid)!));
          if (changeCid) {
            const changeHolding: Holding = { owner: sender, instrument, amount: change, lockedFor: null, lockExpiresAt: null };
            ledger.holdings.set(changeCid, changeHolding);
            events.push(ledger.holdingCreated(changeCid, changeHolding));
          }
          ledger.instructions.set(instructionCid, instruction);
          events.push(ledger.instructionCreated(instructionCid, instruction));
        });
      },
      settle(actAs: readonly string[], instructionCid: string, choice: 'accept' | 'reject' | 'withdraw') {
        const instruction = consumed.has(instructionCid) ? undefined : ledger.instructions.get(instructionCid);
        if (!instruction) throw new LedgerRejection('CONTRACT_NOT_FOUND', 'no open transfer instruction has that contract id');
        const controller = choice === 'withdraw' ? instruction.sender : instruction.receiver;
        if (!actAs.includes(controller)) throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', `only the ${choice === 'withdraw' ? 'sender' : 'receiver'} may ${choice} a transfer instruction`);
        if (choice === 'accept' && now.getTime() >= Date.parse(instruction.executeBefore)) {
          throw new LedgerRejection('DAML_INTERPRETATION_ERROR', 'the transfer instruction expired: it can no longer be accepted');
        }
        consumed.add(instructionCid);
        effects.push((events) => {
          if (choice === 'accept') ledger.acceptEvents(instructionCid, instruction, events);
          else ledger.returnEvents(instructionCid, instruction, choice, events);
        });
      },
      commit(commandId: string): SandboxTransaction {
        return ledger.commit(commandId, (events) => effects.forEach((effect) => effect(events)));
      },
    };
  }

  private acceptEvents(instructionCid: string, instruction: Instruction, events: SandboxEvent[]): void {
    const { receiver, sender, instrument, amount } = instruction;
    const admin = this.options.admins[instrument];
    const receivedCid = this.newContractId();
    events.push({
      kind: 'exercised', contractId: instructionCid, templateId: TEMPLATES.instruction, interfaceId: INTERFACES.instruction, interfaces: [INTERFACES.instruction], choice: CHOICES.accept,
      choiceArgument: { extraArgs: { context: { values: {} }, meta: { values: {} } } }, actingParties: [receiver], consuming: true,
      witnesses: [sender, receiver, admin],
      exerciseResult: { output: { tag: RESULTS.completed, value: { receiverHoldingCids: [receivedCid] } }, senderChangeCids: [], meta: { values: {} } },
    });
    events.push(this.archiveInstruction(instructionCid, instruction));
    events.push(this.archiveHolding(instruction.lockedHoldingCid, [sender, receiver]));
    const received: Holding = { owner: receiver, instrument, amount, lockedFor: null, lockExpiresAt: null };
    this.holdings.set(receivedCid, received);
    events.push(this.holdingCreated(receivedCid, received, [sender]));
  }

  private returnEvents(instructionCid: string, instruction: Instruction, choice: 'reject' | 'withdraw', events: SandboxEvent[]): void {
    const { receiver, sender, instrument, amount } = instruction;
    const admin = this.options.admins[instrument];
    const refundCid = this.newContractId();
    events.push({
      kind: 'exercised', contractId: instructionCid, templateId: TEMPLATES.instruction, interfaceId: INTERFACES.instruction, interfaces: [INTERFACES.instruction],
      choice: choice === 'reject' ? CHOICES.reject : CHOICES.withdraw,
      choiceArgument: { extraArgs: { context: { values: {} }, meta: { values: {} } } }, actingParties: [choice === 'reject' ? receiver : sender], consuming: true,
      witnesses: [sender, receiver, admin],
      exerciseResult: { output: { tag: RESULTS.failed, value: {} }, senderChangeCids: [refundCid], meta: { values: {} } },
    });
    events.push(this.archiveInstruction(instructionCid, instruction));
    events.push(this.archiveHolding(instruction.lockedHoldingCid, [sender, receiver]));
    const refund: Holding = { owner: sender, instrument, amount, lockedFor: null, lockExpiresAt: null };
    this.holdings.set(refundCid, refund);
    events.push(this.holdingCreated(refundCid, refund, [receiver]));
  }

  /** The pools' operator runs after the commit that woke it, as a venue's bot would, in a transaction of its own. */
  private scheduleOperator(): void {
    if (this.scheduled || this.paused) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.paused) this.runOperator();
    });
  }

  /**
   * Answers every open offer to a pool party, oldest first; one that fails does not hold up the
   * others, and is reported once, not at every commit that tries it again.
   */
  private runOperator(): void {
    for (const cid of this.openPoolOffers()) {
      try {
        this.answerDeposit(cid, this.instructions.get(cid)!);
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

  /** The open offers submitted in the same batch as a deposit, by its sender, to parties other than a pool: its fee legs. */
  private feeLegsOf(depositCid: string, deposit: Instruction): Array<[string, Instruction]> {
    return [...this.instructions.entries()].filter(
      ([cid, i]) => cid !== depositCid && i.batch === deposit.batch && i.sender === deposit.sender && !this.poolsByParty.has(i.receiver),
    );
  }

  private answerDeposit(cid: string, instruction: Instruction): void {
    const entry = this.poolsByParty.get(instruction.receiver)!;
    const now = this.options.now();
    const expired = now.getTime() >= Date.parse(instruction.executeBefore);
    const priced = expired ? 'expired' : this.payoutFor(entry, instruction);
    const feeLegs = this.feeLegsOf(cid, instruction);
    this.commit(`tradecraft-${cid.slice(2, 14)}`, (events) => {
      if (typeof priced === 'string') {
        this.returnEvents(cid, instruction, 'reject', events);
        // The fee parties release nothing for a swap that did not happen: the fee legs return too.
        for (const [legCid, leg] of feeLegs) this.returnEvents(legCid, leg, 'reject', events);
        return;
      }
      this.acceptEvents(cid, instruction, events);
      const { want, payout } = priced;
      const { pool } = entry;
      if (want === entry.tokens[0]) {
        pool.quoteReserve = pool.quoteReserve.plus(instruction.amount);
        pool.baseReserve = pool.baseReserve.minus(payout);
      } else {
        pool.baseReserve = pool.baseReserve.plus(instruction.amount);
        pool.quoteReserve = pool.quoteReserve.minus(payout);
      }
      // Paid in the accepting transaction, as a venue that settles atomically does: the taker is
      // never left holding neither the deposit nor the payout. A direct transfer (the taker is
      // not asked to accept it), as to a party with a transfer preapproval.
      const admin = this.options.admins[want.instrument];
      const paidCid = this.newContractId();
      events.push({
        kind: 'exercised', contractId: this.factories.get(admin)!, templateId: TEMPLATES.factory, interfaceId: INTERFACES.factory, interfaces: [INTERFACES.factory], choice: CHOICES.transfer,
        choiceArgument: {
          expectedAdmin: admin,
          transfer: {
            sender: entry.party, receiver: instruction.sender, amount: toWire(payout), instrumentId: { admin, id: want.instrument },
            requestedAt: now.toISOString(), executeBefore: instruction.executeBefore, inputHoldingCids: [], meta: { values: { [REASON_KEY]: `payout for ${cid}` } },
          },
          extraArgs: { context: { values: {} }, meta: { values: {} } },
        },
        actingParties: [entry.party], consuming: false, witnesses: [entry.party, instruction.sender, admin],
        exerciseResult: { output: { tag: RESULTS.completed, value: { receiverHoldingCids: [paidCid] } }, senderChangeCids: [], meta: { values: {} } },
      });
      const paid: Holding = { owner: instruction.sender, instrument: want.instrument, amount: payout, lockedFor: null, lockExpiresAt: null };
      this.holdings.set(paidCid, paid);
      events.push(this.holdingCreated(paidCid, paid, [entry.party]));
      // With the payout on the ledger, the fee parties accept the fee legs: the escrow is released.
      for (const [legCid, leg] of feeLegs) this.acceptEvents(legCid, leg, events);
    });
  }

  /**
   * Applies `build`'s effects and records them as one transaction. Everything that can refuse or
   * fail is decided before (a batch's checks, the operator's pricing), so `build` only moves
   * contracts between the maps and cannot leave half a transaction applied.
   */
  private commit(commandId: string, build: (events: SandboxEvent[]) => void): SandboxTransaction {
    const events: SandboxEvent[] = [];
    build(events);
    const offset = this.transactionsLog.length + 1;
    const transaction: SandboxTransaction = {
      updateId: `1220${createHash('sha256').update(`${this.seed}:${offset}`).digest('hex')}`,
      commandId,
      offset,
      recordTime: this.options.now().toISOString(),
      events,
    };
    this.transactionsLog.push(transaction);
    return transaction;
  }

  private newContractId(): string {
    this.contractCounter += 1;
    return `00${createHash('sha256').update(`${this.seed}:contract:${this.contractCounter}`).digest('hex')}`;
  }

  private archiveInstruction(cid: string, instruction: Instruction): SandboxEvent {
    this.instructions.delete(cid);
    const admin = this.options.admins[instruction.instrument];
    return { kind: 'archived', contractId: cid, templateId: TEMPLATES.instruction, interfaces: [INTERFACES.instruction], witnesses: unique([instruction.sender, instruction.receiver, admin]) };
  }

  private archiveHolding(cid: string, witnesses: readonly string[]): SandboxEvent {
    const holding = this.holdings.get(cid)!;
    this.holdings.delete(cid);
    const admin = this.options.admins[holding.instrument];
    return { kind: 'archived', contractId: cid, templateId: TEMPLATES.holding, interfaces: [INTERFACES.holding], witnesses: unique([holding.owner, admin, ...witnesses]) };
  }

  private holdingCreated(cid: string, holding: Holding, alsoWitnessedBy: readonly string[] = []): SandboxEvent {
    const admin = this.options.admins[holding.instrument];
    const lock = holding.lockExpiresAt === null ? null : { holders: [admin], expiresAt: holding.lockExpiresAt, expiresAfter: null, context: 'transfer offer' };
    const view = { owner: holding.owner, instrumentId: { admin, id: holding.instrument }, amount: toWire(holding.amount), lock, meta: { values: {} } };
    return {
      kind: 'created', contractId: cid, templateId: TEMPLATES.holding, interfaces: [INTERFACES.holding], witnesses: unique([holding.owner, admin, ...alsoWitnessedBy]),
      views: { [INTERFACES.holding]: view }, createArgument: { ...view, admin }, signatories: [admin, holding.owner], observers: [],
    };
  }

  private instructionCreated(cid: string, instruction: Instruction): SandboxEvent {
    const admin = this.options.admins[instruction.instrument];
    const transfer = {
      sender: instruction.sender, receiver: instruction.receiver, amount: toWire(instruction.amount), instrumentId: { admin, id: instruction.instrument },
      requestedAt: instruction.requestedAt, executeBefore: instruction.executeBefore, inputHoldingCids: instruction.inputHoldingCids, meta: { values: instruction.meta },
    };
    const view = { originalInstructionCid: null, transfer, status: { tag: 'TransferPendingReceiverAcceptance', value: {} }, meta: { values: {} } };
    return {
      kind: 'created', contractId: cid, templateId: TEMPLATES.instruction, interfaces: [INTERFACES.instruction], witnesses: unique([instruction.sender, instruction.receiver, admin]),
      views: { [INTERFACES.instruction]: view }, createArgument: { transfer, lockedAmulet: instruction.lockedHoldingCid, admin },
      signatories: [admin, instruction.sender], observers: [instruction.receiver],
    };
  }
}

const unique = (parties: readonly string[]) => [...new Set(parties)];

function checkAmount(amount: Decimal, what: string): void {
  if (!amount.gt(0) || amount.decimalPlaces() > 10) throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be a positive Daml Decimal`);
}

function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be an object`);
  return value as Record<string, unknown>;
}

function asText(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be a non-empty string`);
  return value;
}

function asTime(value: unknown, what: string): Date {
  const time = new Date(asText(value, what));
  if (Number.isNaN(time.getTime())) throw new LedgerRejection('INVALID_ARGUMENT', `${what} must be an ISO 8601 time`);
  return time;
}

function asMeta(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  const values = asRecord(asRecord(value, 'transfer.meta').values ?? {}, 'transfer.meta.values');
  if (!Object.values(values).every((v) => typeof v === 'string')) throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.meta.values must map text to text');
  return values as Record<string, string>;
}
