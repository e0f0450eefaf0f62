// The sandbox ledger: an in-process simulation of a Canton participant's view of the token
// standard, enough to run a swap end to end on one machine. Parties hold holdings per
// instrument; a transfer is a CIP-0056 two-step offer that locks the sender's funds until the
// receiver accepts or rejects it, the sender withdraws it, or its executeBefore passes; every
// commit is one transaction with a `1220...` update id, an offset and a record time, recorded as
// Daml records it: a tree of action nodes (sandbox/ledger/transaction-tree.ts) in which a spent
// holding is a consuming exercise and every contract's creation and archival is kept by offset,
// so the active contracts at any past offset can be read back.
//
// This file keeps the log and answers what was committed; the contracts as they stand are
// token-contracts.ts's, a submission's checks staging.ts's, and the tradecraft pools, worked as
// real parties, pool-operator.ts's; the sandbox Nightly's swapAddress, settling the memos its
// quotes gave, nightly-desk.ts's, and the sandbox OneSwap's depositAddress, settling its intents,
// oneswap-desk.ts's (both run by the same operator). Fee legs ride with their deposit either as commands of one
// submission, or as actions of one CIP-0112 batch (Splice's BatchingUtility_ExecuteBatch,
// sandbox/ledger/batching-utility.ts): both are staged as one batch, so the operator finds them
// the same way.
//
// Simplifications, none of which the service's reading depends on: one synchronizer; a pool's
// reserves are its AMM state, which its party's holdings follow (minted at genesis, spent by a
// payout, minted or burnt by a price move) rather than set; an offer past its executeBefore stays
// until its sender withdraws it or its receiver rejects it (the pool's operator rejects it,
// returning the funds). Who may act as whom is the participant's business
// (sandbox/ledger/participant.ts), not this model's.
import { createHash, randomBytes } from 'node:crypto';
import type { Decimal } from '../../core/decimal.js';
import { CHOICES } from '../../core/ledger/token-standard.js';
import type { Token } from '../../core/tokens.js';
import type { SandboxVenueSpec } from '../venues/sandbox-venue.js';
import { checkAmount, LedgerRejection } from './command-arguments.js';
import { NightlyDesk, type NightlyDeskOptions } from './nightly-desk.js';
import { OneSwapDesk, type OneSwapDeskOptions } from './oneswap-desk.js';
import type { ForceableOutcome } from '../venues/oneswap-intents.js';

/** The outcomes the control API can impose on the next OneSwap settlement, for the routes, which do not reach the venues. */
export { FORCEABLE_OUTCOMES as ONESWAP_FORCEABLE_OUTCOMES, type ForceableOutcome } from '../venues/oneswap-intents.js';
import { PoolOperator, type SandboxPool } from './pool-operator.js';
import { stage, type LedgerCommand, type PreparedCommit } from './staging.js';
import { TokenContracts, type Holding, type Instrument } from './token-contracts.js';
import { commitNodes, type ActionNode, type CommittedNode } from './transaction-tree.js';

/** A ledger event as the sandbox keeps it: a committed node of its transaction's tree. */
export type SandboxEvent = CommittedNode;
export type SandboxCreatedEvent = Extract<CommittedNode, { kind: 'created' }>;
export type SandboxExercisedEvent = Extract<CommittedNode, { kind: 'exercised' }>;

export interface SandboxTransaction {
  readonly updateId: string;
  readonly commandId: string;
  /** Who submitted it (the commandId is shown to them only); empty for the sandbox's own commits. */
  readonly actAs: readonly string[];
  readonly userId: string;
  readonly offset: number;
  readonly recordTime: string;
  /** Its nodes in pre-order. */
  readonly events: readonly SandboxEvent[];
}

/** A contract's life on the ledger: the event that created it, and the one that archived it, by offset. */
export interface ContractLife {
  readonly created: SandboxCreatedEvent;
  readonly createdIn: SandboxTransaction;
  archivedIn: { readonly transaction: SandboxTransaction; readonly event: SandboxExercisedEvent } | null;
}

export interface SandboxLedgerOptions {
  /** The instrument admins (registry parties), by instrument. */
  readonly admins: Readonly<Record<Instrument, string>>;
  /** The tradecraft venue's spec, whose pools and fee the pools below are. */
  readonly tradecraft: SandboxVenueSpec;
  readonly pools: readonly SandboxPool[];
  /** The Nightly market, its swapAddress and its quote book, when the sandbox has Nightly settle. */
  readonly nightly?: NightlyDeskOptions;
  /** The OneSwap market, its depositAddress and its intent book, when the sandbox has OneSwap settle. */
  readonly oneswap?: OneSwapDeskOptions;
  readonly now: () => Date;
  /** Told when the pools' operator fails on an offer; the offer stays open and is tried again at the next commit. */
  readonly onOperatorError?: (err: unknown) => void;
}

export class SandboxLedger {
  private readonly transactionsLog: SandboxTransaction[] = [];
  /** Every contract ever created, active or archived. */
  private readonly contracts = new Map<string, ContractLife>();
  private readonly seed = randomBytes(8).toString('hex');
  private readonly state: TokenContracts;
  private readonly operator: PoolOperator;
  private readonly nightly: NightlyDesk | undefined;
  private readonly oneswap: OneSwapDesk | undefined;
  /** Committed submissions by their user, parties and commandId, as a participant deduplicates them. */
  private readonly submitted = new Map<string, string>();

  constructor(private readonly options: SandboxLedgerOptions) {
    this.state = new TokenContracts(options.admins, this.seed);
    const commit = (commandId: string, roots: readonly ActionNode[]) => void this.commit(commandId, roots);
    this.nightly = options.nightly ? new NightlyDesk(this.state, options.nightly, options.now, commit) : undefined;
    this.oneswap = options.oneswap ? new OneSwapDesk(this.state, options.oneswap, options.now, commit) : undefined;
    const desks = [this.nightly, this.oneswap].filter((desk) => desk !== undefined);
    this.operator = new PoolOperator(this.state, { ...options, desks, commit });
    this.commit('sandbox-genesis', [...this.state.factoriesCreated(), ...this.operator.reserveHoldings()]);
  }

  /** The transfer factory contract of each instrument admin. */
  get factories(): ReadonlyMap<string, string> {
    return this.state.factories;
  }

  get ledgerEnd(): number {
    return this.transactionsLog.length;
  }

  /** Transactions with offsets in (after, upTo], oldest first. */
  transactions(after: number, upTo: number): readonly SandboxTransaction[] {
    return this.transactionsLog.slice(Math.max(0, after), Math.max(0, upTo));
  }

  /** The transaction of an update id, if there is one. */
  transactionById(updateId: string): SandboxTransaction | undefined {
    return this.transactionsLog.find((tx) => tx.updateId === updateId);
  }

  /** A contract's creation and archival, if the ledger ever had it. */
  contract(contractId: string): ContractLife | undefined {
    return this.contracts.get(contractId);
  }

  /** The contracts active at `offset`: created at or before it and not archived by then, in creation order. */
  activeAt(offset: number): ContractLife[] {
    return [...this.contracts.values()].filter((c) => c.createdIn.offset <= offset && (c.archivedIn === null || c.archivedIn.transaction.offset > offset));
  }

  /** The active holdings (all, or one owner's), with their contract ids. */
  activeHoldings(owner?: string): Array<{ contractId: string; event: SandboxCreatedEvent }> {
    return [...this.state.holdings.entries()].filter(([, h]) => owner === undefined || h.owner === owner).map(([cid]) => ({ contractId: cid, event: this.contracts.get(cid)!.created }));
  }

  /** Every active contract, as its creation shows it. */
  activeContracts(): SandboxCreatedEvent[] {
    return this.activeAt(this.ledgerEnd).map((c) => c.created);
  }

  /** The admin whose factory `factoryId` is, if it is one. */
  factoryAdmin(factoryId: string): string | undefined {
    return this.state.factoryAdmin(factoryId);
  }

  /** The pool trading `a` against `b`, either way round. */
  poolFor(a: Token, b: Token): SandboxPool | undefined {
    return this.operator.poolFor(a, b);
  }

  /** The instrument admins (registry parties), by instrument. */
  get admins(): Readonly<Record<Instrument, string>> {
    return this.options.admins;
  }

  /** Mints `amount` of `instrument` to `party` (the sandbox's faucet). */
  fund(party: string, instrument: Instrument, amount: Decimal): { contractId: string; transaction: SandboxTransaction } {
    checkAmount(amount, 'amount');
    const contractId = this.state.newContractId();
    const holding: Holding = { owner: party, instrument, amount, lockedFor: null, lockExpiresAt: null };
    this.state.holdings.set(contractId, holding);
    const transaction = this.commit(`sandbox-fund-${contractId.slice(2, 14)}`, [this.state.holdingCreated(contractId, holding)]);
    return { contractId, transaction };
  }

  /** Moves a pool's price by `bps` (pool-operator.ts says how), committing its holdings' change. */
  movePool(party: string, first: Token, bps: number): { before: string; after: string } {
    return this.operator.movePool(party, first, bps);
  }

  /** Moves the sandbox Nightly's pool for `first`/`second` by `bps`, as movePool does; null when it has none. */
  moveNightlyPool(first: Token, second: Token, bps: number): { before: string; after: string } | null {
    const entry = this.nightly?.poolFor(first, second);
    return entry ? this.nightly!.movePool(entry, first, bps) : null;
  }

  /** Moves the sandbox OneSwap's pool for `first`/`second` by `bps`, as movePool does; null when it has none. */
  moveOneSwapPool(first: Token, second: Token, bps: number): { before: string; after: string } | null {
    const entry = this.oneswap?.poolFor(first, second);
    return entry ? this.oneswap!.movePool(entry, first, bps) : null;
  }

  /** Makes the next deposit that meets a pending OneSwap intent end in `outcome` (null: priced as usual); false when the sandbox has no OneSwap desk. */
  forceOneSwapOutcome(outcome: ForceableOutcome | null): boolean {
    if (!this.oneswap) return false;
    this.options.oneswap!.intents.forceNext(outcome);
    return true;
  }

  /** Stops (or restarts) the pools' operator: offers to a pool wait, unanswered, while it is paused. */
  setOperatorPaused(paused: boolean): void {
    this.operator.setPaused(paused);
  }

  get operatorPaused(): boolean {
    return this.operator.isPaused;
  }

  /** Whether `cid` is a transfer instruction no one has answered yet. */
  isOpenInstruction(cid: string): boolean {
    return this.state.instructions.has(cid);
  }

  /** Offers open to a pool party, oldest first. */
  openPoolOffers(): string[] {
    return this.operator.openPoolOffers();
  }

  /** Whether a submission with this user, parties and commandId was committed already: its update id. */
  committedAs(actAs: readonly string[], commandId: string, userId: string): string | undefined {
    return this.submitted.get(`${userId}\n${[...actAs].sort().join(',')}\n${commandId}`);
  }

  /**
   * Runs `commands` atomically as one transaction for `actAs`: all of them, or none when one is
   * refused (LedgerRejection).
   */
  submit(actAs: readonly string[], commandId: string, commands: readonly LedgerCommand[], userId = ''): SandboxTransaction {
    return this.commitPrepared(this.prepare(actAs, commands), actAs, commandId, userId);
  }

  /** The tree `commands` would commit now, checked against the current state, without committing it. */
  prepare(actAs: readonly string[], commands: readonly LedgerCommand[]): PreparedCommit {
    if (commands.length === 0) throw new LedgerRejection('INVALID_ARGUMENT', 'the submission has no commands');
    if (actAs.some((party) => this.operator.isPoolParty(party))) {
      throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the sandbox\'s pool parties act only through its pool operator, which prices every deposit against the pool');
    }
    // Every command is checked against the state the earlier ones leave; nothing is applied until all pass.
    const plan = stage(this.state, this.options.now(), this.ledgerEnd);
    for (const command of commands) {
      if (command.kind === 'batch') plan.batch(actAs, command);
      else if (command.choice === CHOICES.transfer) plan.transfer(actAs, command.contractId, command.argument);
      else if (command.choice === CHOICES.withdraw) plan.settle(actAs, command.contractId, 'withdraw');
      else if (command.choice === CHOICES.accept) plan.settle(actAs, command.contractId, 'accept');
      else if (command.choice === CHOICES.reject) plan.settle(actAs, command.contractId, 'reject');
      else throw new LedgerRejection('INVALID_ARGUMENT', `the sandbox ledger does not serve the choice ${command.choice.slice(0, 80)}`);
    }
    return plan.prepared();
  }

  /** Commits what `prepare` made, if nothing it reads has changed since. */
  commitPrepared(prepared: PreparedCommit, actAs: readonly string[], commandId: string, userId: string): SandboxTransaction {
    const earlier = this.committedAs(actAs, commandId, userId);
    if (earlier) throw new LedgerRejection('DUPLICATE_COMMAND', `a submission with this commandId was already committed by this user for these parties (update ${earlier})`);
    if (prepared.stateVersion !== this.ledgerEnd) {
      const stale = prepared.inputs.find((cid) => !this.state.isActive(cid));
      if (stale) throw new LedgerRejection('CONTRACT_NOT_ACTIVE', `contract ${stale.slice(0, 16)}... was archived after the submission was prepared`);
    }
    prepared.apply();
    const transaction = this.commit(commandId, prepared.roots, actAs, userId);
    this.submitted.set(`${userId}\n${[...actAs].sort().join(',')}\n${commandId}`, transaction.updateId);
    this.operator.schedule();
    return transaction;
  }

  /**
   * Records `roots` as one transaction: numbers its nodes, and keeps each contract's creation and
   * archival. Everything that can refuse or fail is decided before (a batch's checks, the
   * operator's pricing), so a commit cannot leave half a transaction applied.
   */
  private commit(commandId: string, roots: readonly ActionNode[], actAs: readonly string[] = [], userId = ''): SandboxTransaction {
    const offset = this.transactionsLog.length + 1;
    const transaction: SandboxTransaction = {
      updateId: `1220${createHash('sha256').update(`${this.seed}:${offset}`).digest('hex')}`,
      commandId,
      actAs: [...actAs],
      userId,
      offset,
      recordTime: this.options.now().toISOString(),
      events: commitNodes(roots),
    };
    this.transactionsLog.push(transaction);
    for (const event of transaction.events) {
      if (event.kind === 'created') this.contracts.set(event.contractId, { created: event, createdIn: transaction, archivedIn: null });
      else if (event.consuming) {
        const life = this.contracts.get(event.contractId);
        if (life) life.archivedIn = { transaction, event };
      }
    }
    return transaction;
  }
}
