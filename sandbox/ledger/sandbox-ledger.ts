// The sandbox ledger: an in-process simulation of a Canton participant's view of the token
// standard, enough to run a swap end to end on one machine. Parties hold holdings per
// instrument; a transfer is a CIP-0056 two-step offer that locks the sender's funds until the
// receiver accepts or rejects it, the sender withdraws it, or its executeBefore passes; every
// commit is one transaction with a `1220...` update id, an offset and a record time, recorded as
// Daml records it: a tree of action nodes (sandbox/ledger/transaction-tree.ts) in which a spent
// holding is a consuming exercise and every contract's creation and archival is kept by offset,
// so the active contracts at any past offset can be read back.
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
// Fee legs ride with their deposit either as commands of one submission, or as actions of one
// CIP-0112 batch (Splice's BatchingUtility_ExecuteBatch, sandbox/ledger/batching-utility.ts):
// both are staged as one batch, so the operator finds them the same way.
//
// Simplifications, none of which the service's reading depends on: one synchronizer; a pool's
// reserves are its AMM state, not holdings it spends (a payout creates the taker's holding with no
// input of the pool's); an offer past its executeBefore stays until its sender withdraws it or its
// receiver rejects it (the pool's operator rejects it, returning the funds). Who may act as whom is
// the participant's business (sandbox/ledger/participant.ts), not this model's.
import { createHash, randomBytes } from 'node:crypto';
import { Decimal, toWire } from '../../core/decimal.js';
import { CHOICES, REASON_KEY, RESULTS } from '../../core/ledger/token-standard.js';
import { TOKENS, type Token } from '../../core/tokens.js';
import type { AmmPool, SandboxVenueSpec } from '../venues/sandbox-venue.js';
import { poolUserGets } from '../venues/tradecraft.js';
import {
  basicAccount, BATCHING_TYPES, BATCHING_UTILITY_PACKAGE, BATCHING_UTILITY_TEMPLATE, EXECUTE_BATCH, holdingMapFromTransferV1, mergeHoldingMaps, takeHoldings,
  transferResult, TRANSFER_V1, type BatchCommand, type HoldingMap, type TransferCall,
} from './batching-utility.js';
import { ARCHIVE } from './daml-types.js';
import { commitNodes, type ActionNode, type CommittedNode, type CreateNode, type ExerciseNode } from './transaction-tree.js';

export type Instrument = Token['instrument'];

/** The user the sandbox's tokens name: the participant's operator. */
export const SANDBOX_USER = 'sandbox-operator';

/**
 * A bearer token shaped as the JWT a participant's identity provider issues, naming the sandbox's
 * user: Canton's own clients decode a token before they send it and refuse one that is no JWT.
 * `signature` makes it one no one guesses; the sandbox compares the whole token.
 */
export const sandboxLedgerToken = (signature: string) =>
  `${Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: SANDBOX_USER, scope: 'daml_ledger_api' })).toString('base64url')}.${signature}`;

/** The bearer token the sandbox ledger accepts unless LEDGER_TOKEN names another. */
export const SANDBOX_LEDGER_TOKEN = sandboxLedgerToken('sandbox-ledger-token');

/**
 * The sandbox's Daml packages, by id, name and version: its token implementation, and the token standard's
 * interface packages, uploaded as on every Splice participant (the allocation and metadata ones
 * too, though no sandbox contract implements them, so a wallet's filter on them reads nothing).
 */
export const PACKAGES = {
  token: { id: '5a'.repeat(32), name: 'sandbox-token', version: '1.0.0' },
  holdingApi: { id: '71'.repeat(32), name: 'splice-api-token-holding-v1', version: '1.0.0' },
  transferApi: { id: '72'.repeat(32), name: 'splice-api-token-transfer-instruction-v1', version: '1.0.0' },
  allocationApi: { id: '73'.repeat(32), name: 'splice-api-token-allocation-v1', version: '1.0.0' },
  allocationInstructionApi: { id: '74'.repeat(32), name: 'splice-api-token-allocation-instruction-v1', version: '1.0.0' },
  allocationRequestApi: { id: '75'.repeat(32), name: 'splice-api-token-allocation-request-v1', version: '1.0.0' },
  metadataApi: { id: '76'.repeat(32), name: 'splice-api-token-metadata-v1', version: '1.0.0' },
  /** Splice's batching utility: on a participant that has it (the participant decides). */
  batchingUtility: BATCHING_UTILITY_PACKAGE,
} as const;

/** The token standard's interfaces no sandbox template implements, which filters may still name. */
export const UNIMPLEMENTED_INTERFACES = [
  `${PACKAGES.allocationApi.id}:Splice.Api.Token.AllocationV1:Allocation`,
  `${PACKAGES.allocationInstructionApi.id}:Splice.Api.Token.AllocationInstructionV1:AllocationFactory`,
  `${PACKAGES.allocationInstructionApi.id}:Splice.Api.Token.AllocationInstructionV1:AllocationInstruction`,
  `${PACKAGES.allocationRequestApi.id}:Splice.Api.Token.AllocationRequestV1:AllocationRequest`,
  `${PACKAGES.metadataApi.id}:Splice.Api.Token.MetadataV1:AnyContract`,
] as const;

const PACKAGE = {
  token: `${PACKAGES.token.id}:Sandbox.Token`,
  holdingApi: `${PACKAGES.holdingApi.id}:Splice.Api.Token.HoldingV1`,
  transferApi: `${PACKAGES.transferApi.id}:Splice.Api.Token.TransferInstructionV1`,
} as const;

/** The package name of the sandbox's token implementation, as events carry it. */
export const TOKEN_PACKAGE_NAME = PACKAGES.token.name;

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

/** The pool's reserve of `token`: its base (CC) or quote reserve. */
const reserveOf = (entry: SandboxPool, token: Token) => (token === entry.tokens[0] ? entry.pool.baseReserve : entry.pool.quoteReserve);

export class SandboxLedger {
  private readonly transactionsLog: SandboxTransaction[] = [];
  private readonly holdings = new Map<string, Holding>();
  private readonly instructions = new Map<string, Instruction>();
  /** Every contract ever created, active or archived. */
  private readonly contracts = new Map<string, ContractLife>();
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
    this.poolsByParty = new Map(options.pools.map((p) => [p.party, p]));
    // The registry's factories are contracts of their admins, created before anything else.
    const factories = new Map(Object.values(options.admins).map((admin) => [admin, this.newContractId()]));
    this.factories = factories;
    const factoryNodes = [...factories].map(([admin, cid]): CreateNode => ({
      kind: 'created', contractId: cid, templateId: TEMPLATES.factory, packageName: TOKEN_PACKAGE_NAME, interfaces: [INTERFACES.factory],
      signatories: [admin], observers: [], createArgument: { admin }, views: { [INTERFACES.factory]: { admin, meta: { values: {} } } },
    }));
    // Each pool holds its reserves as holdings, as a venue's party holds its liquidity: payouts spend them.
    const reserveNodes = options.pools.flatMap((entry) => entry.tokens.map((token) => this.mint(entry.party, token.instrument, reserveOf(entry, token))));
    this.commit('sandbox-genesis', [...factoryNodes, ...reserveNodes]);
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
    return [...this.holdings.entries()].filter(([, h]) => owner === undefined || h.owner === owner).map(([cid]) => ({ contractId: cid, event: this.contracts.get(cid)!.created }));
  }

  /** Every active contract, as its creation shows it. */
  activeContracts(): SandboxCreatedEvent[] {
    return this.activeAt(this.ledgerEnd).map((c) => c.created);
  }

  /** The admin whose factory `factoryId` is, if it is one. */
  factoryAdmin(factoryId: string): string | undefined {
    return [...this.factories.entries()].find(([, cid]) => cid === factoryId)?.[0];
  }

  /** The pool trading `a` against `b`, either way round. */
  poolFor(a: Token, b: Token): SandboxPool | undefined {
    return [...this.poolsByParty.values()].find((p) => p.tokens.includes(a) && p.tokens.includes(b) && a !== b);
  }

  /** The instrument admins (registry parties), by instrument. */
  get admins(): Readonly<Record<Instrument, string>> {
    return this.options.admins;
  }

  /** Mints `amount` of `instrument` to `party` (the sandbox's faucet). */
  fund(party: string, instrument: Instrument, amount: Decimal): { contractId: string; transaction: SandboxTransaction } {
    checkAmount(amount, 'amount');
    const contractId = this.newContractId();
    const holding: Holding = { owner: party, instrument, amount, lockedFor: null, lockExpiresAt: null };
    this.holdings.set(contractId, holding);
    const transaction = this.commit(`sandbox-fund-${contractId.slice(2, 14)}`, [this.holdingCreated(contractId, holding)]);
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
    const moved = first.instrument === entry.tokens[0].instrument ? entry.tokens[1] : entry.tokens[0];
    const was = reserveOf(entry, moved);
    if (moved === entry.tokens[1]) pool.quoteReserve = pool.quoteReserve.times(factor).toDecimalPlaces(10, Decimal.ROUND_FLOOR);
    else pool.baseReserve = pool.baseReserve.times(factor).toDecimalPlaces(10, Decimal.ROUND_FLOOR);
    // The pool's holdings follow its reserve: the registry mints the difference, or burns it.
    const delta = reserveOf(entry, moved).minus(was);
    if (delta.gt(0)) this.commit(`sandbox-move-${party.slice(0, 24)}`, [this.mint(party, moved.instrument, delta)]);
    else if (delta.lt(0)) this.commit(`sandbox-move-${party.slice(0, 24)}`, this.spendPool(party, moved.instrument, delta.negated()).nodes);
    return { before: before.toSignificantDigits(12).toFixed(), after: price().toSignificantDigits(12).toFixed() };
  }

  /** A new holding of `amount` for `owner`, applied at once (the registry's own issuance). */
  private mint(owner: string, instrument: Instrument, amount: Decimal): CreateNode {
    const cid = this.newContractId();
    const holding: Holding = { owner, instrument, amount, lockedFor: null, lockExpiresAt: null };
    this.holdings.set(cid, holding);
    return this.holdingCreated(cid, holding);
  }

  /** Spends the pool's unlocked holdings of `instrument` for `amount`: their archives and the change, applied at once. */
  private spendPool(party: string, instrument: Instrument, amount: Decimal): { inputs: string[]; nodes: ActionNode[]; changeCid: string | null } {
    const inputs = [...this.holdings.entries()].filter(([, h]) => h.owner === party && h.instrument === instrument && h.lockedFor === null);
    const total = inputs.reduce((sum, [, h]) => sum.plus(h.amount), new Decimal(0));
    if (total.lt(amount)) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `the pool holds ${toWire(total)} ${instrument}, less than ${toWire(amount)}`);
    const nodes: ActionNode[] = inputs.map(([cid, h]) => this.holdingArchived(cid, h));
    for (const [cid] of inputs) this.holdings.delete(cid);
    const change = total.minus(amount);
    let changeCid: string | null = null;
    if (change.gt(0)) {
      const node = this.mint(party, instrument, change);
      changeCid = node.contractId;
      nodes.push(node);
    }
    return { inputs: inputs.map(([cid]) => cid), nodes, changeCid };
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
    if (actAs.some((party) => this.poolsByParty.has(party))) {
      throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the sandbox\'s pool parties act only through its pool operator, which prices every deposit against the pool');
    }
    // Every command is checked against the state the earlier ones leave; nothing is applied until all pass.
    const plan = this.stage();
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
      const stale = prepared.inputs.find((cid) => !this.holdings.has(cid) && !this.instructions.has(cid) && !this.factoryAdmin(cid));
      if (stale) throw new LedgerRejection('CONTRACT_NOT_ACTIVE', `contract ${stale.slice(0, 16)}... was archived after the submission was prepared`);
    }
    prepared.apply();
    const transaction = this.commit(commandId, prepared.roots, actAs, userId);
    this.submitted.set(`${userId}\n${[...actAs].sort().join(',')}\n${commandId}`, transaction.updateId);
    this.scheduleOperator();
    return transaction;
  }

  /** A staging area over the current state: checks a batch's commands and builds its nodes, applied only on commit. */
  private stage() {
    const consumed = new Set<string>();
    const inputs: string[] = [];
    const roots: ActionNode[] = [];
    const effects: Array<() => void> = [];
    const now = this.options.now();
    /** Holdings created by the batch's earlier commands, spendable by its later ones. */
    const staged = new Map<string, Holding>();
    const holdingOf = (cid: string) => (consumed.has(cid) ? undefined : staged.get(cid) ?? this.holdings.get(cid));
    const batch = this.newContractId();
    const ledger = this;
    /** A TransferFactory_Transfer exercised by `actAs`: its node and result, its effects staged. */
    const transferNode = (actAs: readonly string[], factoryId: string, argument: unknown) => {
      const admin = ledger.factoryAdmin(factoryId);
      if (!admin) throw new LedgerRejection('CONTRACT_NOT_FOUND', 'no transfer factory has that contract id');
      inputs.push(factoryId);
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
      const spent = transfer.inputHoldingCids;
      if (!Array.isArray(spent) || spent.length === 0 || !spent.every((c) => typeof c === 'string')) {
        throw new LedgerRejection('INVALID_ARGUMENT', 'transfer.inputHoldingCids must list the sender\'s holdings to spend');
      }
      let total = new Decimal(0);
      const spentHoldings: Array<[string, Holding]> = [];
      for (const cid of spent as string[]) {
        const holding = holdingOf(cid);
        if (!holding || holding.owner !== sender || holding.instrument !== instrument || holding.lockedFor !== null) {
          throw new LedgerRejection('CONTRACT_NOT_ACTIVE', `input holding ${cid.slice(0, 16)}... is not an unlocked ${instrument} holding of the sender (spent, locked, or another's)`);
        }
        consumed.add(cid);
        if (!staged.has(cid)) inputs.push(cid);
        spentHoldings.push([cid, holding]);
        total = total.plus(holding.amount);
      }
      if (total.lt(amount)) throw new LedgerRejection('DAML_INTERPRETATION_ERROR', `the input holdings hold ${toWire(total)} ${instrument}; the transfer needs ${toWire(amount)}`);
      const lockedCid = ledger.newContractId();
      const change = total.minus(amount);
      const changeCid = change.gt(0) ? ledger.newContractId() : null;
      const instructionCid = ledger.newContractId();
      const instruction: Instruction = {
        sender, receiver, instrument, amount, meta, inputHoldingCids: spent as string[], lockedHoldingCid: lockedCid,
        requestedAt: requestedAt.toISOString(), executeBefore: executeBefore.toISOString(), batch,
      };
      const locked: Holding = { owner: sender, instrument, amount, lockedFor: instructionCid, lockExpiresAt: executeBefore.toISOString() };
      const changeHolding: Holding | null = changeCid ? { owner: sender, instrument, amount: change, lockedFor: null, lockExpiresAt: null } : null;
      if (changeCid && changeHolding) staged.set(changeCid, changeHolding);
      const result = { output: { tag: RESULTS.pending, value: { transferInstructionCid: instructionCid } }, senderChangeCids: changeCid ? [changeCid] : [], meta: { values: {} } };
      const node: ExerciseNode = {
        kind: 'exercised', contractId: factoryId, templateId: TEMPLATES.factory, packageName: TOKEN_PACKAGE_NAME, interfaceId: INTERFACES.factory, interfaces: [INTERFACES.factory],
        signatories: [admin], observers: [], choice: CHOICES.transfer, choiceArgument: argument, actingParties: [sender], consuming: false,
        exerciseResult: result,
        children: [
          ...spentHoldings.map(([cid, holding]) => ledger.holdingArchived(cid, holding)),
          ledger.holdingCreated(lockedCid, locked),
          ...(changeCid && changeHolding ? [ledger.holdingCreated(changeCid, changeHolding)] : []),
          ledger.instructionCreated(instructionCid, instruction),
        ],
      };
      effects.push(() => {
        for (const [cid] of spentHoldings) ledger.holdings.delete(cid);
        ledger.holdings.set(lockedCid, locked);
        if (changeCid && changeHolding) ledger.holdings.set(changeCid, changeHolding);
        ledger.instructions.set(instructionCid, instruction);
      });
      return { node, result };
    };
    return {
      transfer(actAs: readonly string[], factoryId: string, argument: unknown) {
        roots.push(transferNode(actAs, factoryId, argument).node);
      },
      /**
       * BatchingUtility_ExecuteBatch on a BatchingUtility {user} created in the same transaction,
       * as its Daml runs it: each action's transfer spends what the holding map holds for its
       * instrument in the user's basic account (whatever its inputHoldingCids said), and the
       * map takes the transfer's change and the receiver's holdings before the next action.
       */
      batch(actAs: readonly string[], command: BatchCommand) {
        const { user, argument } = command;
        if (!actAs.includes(user)) {
          throw new LedgerRejection('DAML_AUTHORIZATION_ERROR', 'the BatchingUtility\'s signatory and the choice\'s controller, its user, must be one of actAs');
        }
        const utilityCid = ledger.newContractId();
        roots.push({
          kind: 'created', contractId: utilityCid, templateId: BATCHING_UTILITY_TEMPLATE, packageName: BATCHING_UTILITY_PACKAGE.name, interfaces: [],
          signatories: [user], observers: [], createArgument: { user }, argumentType: BATCHING_TYPES.template, views: {},
        });
        let map: HoldingMap = argument.inputHoldingMap.byAdminAndAccount;
        const children: ActionNode[] = [];
        const actionResults: unknown[] = [];
        argument.actions.forEach((action, i) => {
          if (action.tag !== TRANSFER_V1) {
            throw new LedgerRejection('INVALID_ARGUMENT', `actions[${i}]: the sandbox participant runs ${TRANSFER_V1} actions only, not ${action.tag}`);
          }
          const { cid, arg } = action.value as TransferCall;
          const { inputs, rest } = takeHoldings(map, basicAccount(user), arg.transfer.instrumentId);
          const transfer = { ...arg.transfer, inputHoldingCids: inputs };
          let exercised: ReturnType<typeof transferNode>;
          try {
            // Exercised within the utility's choice: its only authorizer is the user.
            exercised = transferNode([user], cid, { ...arg, transfer });
          } catch (err) {
            throw err instanceof LedgerRejection ? new LedgerRejection(err.code, `actions[${i}] (${TRANSFER_V1}): ${err.message}`) : err;
          }
          children.push(exercised.node);
          actionResults.push(transferResult(exercised.result));
          map = mergeHoldingMaps(holdingMapFromTransferV1(transfer, exercised.result), rest);
        });
        if (argument.archiveAfterExecution) {
          children.push({
            kind: 'exercised', contractId: utilityCid, templateId: BATCHING_UTILITY_TEMPLATE, packageName: BATCHING_UTILITY_PACKAGE.name, interfaceId: null, interfaces: [],
            signatories: [user], observers: [], choice: ARCHIVE.choice, choiceArgument: {}, argumentType: ARCHIVE.argumentType,
            actingParties: [user], consuming: true, exerciseResult: {}, resultType: ARCHIVE.resultType, children: [],
          });
        }
        roots.push({
          kind: 'exercised', contractId: utilityCid, templateId: BATCHING_UTILITY_TEMPLATE, packageName: BATCHING_UTILITY_PACKAGE.name, interfaceId: null, interfaces: [],
          signatories: [user], observers: [], choice: EXECUTE_BATCH, choiceArgument: argument, argumentType: BATCHING_TYPES.executeBatch,
          actingParties: [user], consuming: false, exerciseResult: { actionResults, outputHoldingMap: { byAdminAndAccount: map } }, resultType: BATCHING_TYPES.executeBatchResult,
          children,
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
        inputs.push(instructionCid);
        const settled = choice === 'accept' ? ledger.accepted(instructionCid, instruction) : ledger.returned(instructionCid, instruction, choice);
        roots.push(settled.node);
        effects.push(settled.apply);
      },
      prepared(): PreparedCommit {
        return { roots, inputs, stateVersion: ledger.ledgerEnd, apply: () => effects.forEach((effect) => effect()) };
      },
    };
  }

  /** The receiver's acceptance: the locked holding spent, the receiver's created. */
  private accepted(instructionCid: string, instruction: Instruction): { node: ExerciseNode; apply: () => void } {
    const { receiver, instrument, amount } = instruction;
    const receivedCid = this.newContractId();
    const received: Holding = { owner: receiver, instrument, amount, lockedFor: null, lockExpiresAt: null };
    return {
      node: this.instructionExercised(instructionCid, instruction, CHOICES.accept, receiver, { output: { tag: RESULTS.completed, value: { receiverHoldingCids: [receivedCid] } }, senderChangeCids: [], meta: { values: {} } }, [
        this.holdingArchived(instruction.lockedHoldingCid, this.holdings.get(instruction.lockedHoldingCid)!),
        this.holdingCreated(receivedCid, received),
      ]),
      apply: () => {
        this.instructions.delete(instructionCid);
        this.holdings.delete(instruction.lockedHoldingCid);
        this.holdings.set(receivedCid, received);
      },
    };
  }

  /** A rejection or withdrawal: the locked holding spent, the sender's funds returned whole. */
  private returned(instructionCid: string, instruction: Instruction, choice: 'reject' | 'withdraw'): { node: ExerciseNode; apply: () => void } {
    const { receiver, sender, instrument, amount } = instruction;
    const refundCid = this.newContractId();
    const refund: Holding = { owner: sender, instrument, amount, lockedFor: null, lockExpiresAt: null };
    return {
      node: this.instructionExercised(
        instructionCid, instruction, choice === 'reject' ? CHOICES.reject : CHOICES.withdraw, choice === 'reject' ? receiver : sender,
        { output: { tag: RESULTS.failed, value: {} }, senderChangeCids: [refundCid], meta: { values: {} } },
        [this.holdingArchived(instruction.lockedHoldingCid, this.holdings.get(instruction.lockedHoldingCid)!), this.holdingCreated(refundCid, refund)],
      ),
      apply: () => {
        this.instructions.delete(instructionCid);
        this.holdings.delete(instruction.lockedHoldingCid);
        this.holdings.set(refundCid, refund);
      },
    };
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
    if (typeof priced === 'string') {
      // The fee parties release nothing for a swap that did not happen: the fee legs return too.
      const answers = [this.returned(cid, instruction, 'reject'), ...feeLegs.map(([legCid, leg]) => this.returned(legCid, leg, 'reject'))];
      answers.forEach((a) => a.apply());
      this.commit(`tradecraft-${cid.slice(2, 14)}`, answers.map((a) => a.node));
      return;
    }
    const { want, payout } = priced;
    const { pool } = entry;
    const accept = this.accepted(cid, instruction);
    // Paid in the accepting transaction, as a venue that settles atomically does: the taker is
    // never left holding neither the deposit nor the payout. A direct transfer (the taker is not
    // asked to accept it), as to a party with a transfer preapproval.
    const admin = this.options.admins[want.instrument];
    const spent = this.spendPool(entry.party, want.instrument, payout);
    const paid = this.mint(instruction.sender, want.instrument, payout);
    const payoutNode: ExerciseNode = {
      kind: 'exercised', contractId: this.factories.get(admin)!, templateId: TEMPLATES.factory, packageName: TOKEN_PACKAGE_NAME, interfaceId: INTERFACES.factory, interfaces: [INTERFACES.factory],
      signatories: [admin], observers: [], choice: CHOICES.transfer,
      choiceArgument: {
        expectedAdmin: admin,
        transfer: {
          sender: entry.party, receiver: instruction.sender, amount: toWire(payout), instrumentId: { admin, id: want.instrument },
          requestedAt: now.toISOString(), executeBefore: instruction.executeBefore, inputHoldingCids: spent.inputs, meta: { values: { [REASON_KEY]: `payout for ${cid}` } },
        },
        extraArgs: { context: { values: {} }, meta: { values: {} } },
      },
      // A choice observer, as the receiver of a direct transfer is: it sees the transfer that pays it.
      actingParties: [entry.party], choiceObservers: [instruction.sender], consuming: false,
      exerciseResult: { output: { tag: RESULTS.completed, value: { receiverHoldingCids: [paid.contractId] } }, senderChangeCids: spent.changeCid ? [spent.changeCid] : [], meta: { values: {} } },
      children: [...spent.nodes.filter((n) => n.kind === 'exercised'), paid, ...spent.nodes.filter((n) => n.kind === 'created')],
    };
    // With the payout on the ledger, the fee parties accept the fee legs: the escrow is released.
    const legs = feeLegs.map(([legCid, leg]) => this.accepted(legCid, leg));
    accept.apply();
    if (want === entry.tokens[0]) {
      pool.quoteReserve = pool.quoteReserve.plus(instruction.amount);
      pool.baseReserve = pool.baseReserve.minus(payout);
    } else {
      pool.baseReserve = pool.baseReserve.plus(instruction.amount);
      pool.quoteReserve = pool.quoteReserve.minus(payout);
    }
    legs.forEach((leg) => leg.apply());
    this.commit(`tradecraft-${cid.slice(2, 14)}`, [accept.node, payoutNode, ...legs.map((leg) => leg.node)]);
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

  private newContractId(): string {
    this.contractCounter += 1;
    return `00${createHash('sha256').update(`${this.seed}:contract:${this.contractCounter}`).digest('hex')}`;
  }

  /** A holding spent: its template's Archive, by its signatories. */
  private holdingArchived(cid: string, holding: Holding): ExerciseNode {
    const admin = this.options.admins[holding.instrument];
    return {
      kind: 'exercised', contractId: cid, templateId: TEMPLATES.holding, packageName: TOKEN_PACKAGE_NAME, interfaceId: null, interfaces: [INTERFACES.holding],
      signatories: [admin, holding.owner], observers: [], choice: ARCHIVE.choice, choiceArgument: {}, argumentType: ARCHIVE.argumentType,
      actingParties: [admin, holding.owner], consuming: true, exerciseResult: {}, resultType: ARCHIVE.resultType, children: [],
    };
  }

  private holdingCreated(cid: string, holding: Holding): CreateNode {
    const admin = this.options.admins[holding.instrument];
    const lock = holding.lockExpiresAt === null ? null : { holders: [admin], expiresAt: holding.lockExpiresAt, expiresAfter: null, context: 'transfer offer' };
    const view = { owner: holding.owner, instrumentId: { admin, id: holding.instrument }, amount: toWire(holding.amount), lock, meta: { values: {} } };
    return {
      kind: 'created', contractId: cid, templateId: TEMPLATES.holding, packageName: TOKEN_PACKAGE_NAME, interfaces: [INTERFACES.holding],
      views: { [INTERFACES.holding]: view }, createArgument: { ...view, admin }, signatories: [admin, holding.owner], observers: [],
    };
  }

  private transferOf(instruction: Instruction) {
    const admin = this.options.admins[instruction.instrument];
    return {
      sender: instruction.sender, receiver: instruction.receiver, amount: toWire(instruction.amount), instrumentId: { admin, id: instruction.instrument },
      requestedAt: instruction.requestedAt, executeBefore: instruction.executeBefore, inputHoldingCids: instruction.inputHoldingCids, meta: { values: instruction.meta },
    };
  }

  private instructionCreated(cid: string, instruction: Instruction): CreateNode {
    const admin = this.options.admins[instruction.instrument];
    const transfer = this.transferOf(instruction);
    const view = { originalInstructionCid: null, transfer, status: { tag: 'TransferPendingReceiverAcceptance', value: {} }, meta: { values: {} } };
    return {
      kind: 'created', contractId: cid, templateId: TEMPLATES.instruction, packageName: TOKEN_PACKAGE_NAME, interfaces: [INTERFACES.instruction],
      views: { [INTERFACES.instruction]: view }, createArgument: { transfer, lockedAmulet: instruction.lockedHoldingCid, admin },
      signatories: [admin, instruction.sender], observers: [instruction.receiver],
    };
  }

  private instructionExercised(cid: string, instruction: Instruction, choice: string, actor: string, exerciseResult: unknown, children: ActionNode[]): ExerciseNode {
    const admin = this.options.admins[instruction.instrument];
    return {
      kind: 'exercised', contractId: cid, templateId: TEMPLATES.instruction, packageName: TOKEN_PACKAGE_NAME, interfaceId: INTERFACES.instruction, interfaces: [INTERFACES.instruction],
      signatories: [admin, instruction.sender], observers: [instruction.receiver], choice,
      choiceArgument: { extraArgs: { context: { values: {} }, meta: { values: {} } } }, actingParties: [actor], consuming: true, exerciseResult, children,
    };
  }
}

/** A command the ledger runs: an exercise of one of its token's choices, or a batch of the batching utility. */
export type LedgerCommand = { readonly contractId: string; readonly choice: string; readonly argument: unknown; readonly kind?: undefined } | BatchCommand;

/** A batch checked against the state as it was at `stateVersion`: its nodes, the contracts it reads, and how to apply it. */
export interface PreparedCommit {
  readonly roots: readonly ActionNode[];
  /** The contracts it exercises or spends, each of which must still be active when it commits. */
  readonly inputs: readonly string[];
  readonly stateVersion: number;
  readonly apply: () => void;
}

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
