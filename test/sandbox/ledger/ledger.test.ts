// The sandbox ledger (sandbox/ledger/): CIP-0056 two-step transfers, atomic batches, the
// pools' operator, and its HTTP face.
import t from 'tap';
import { Decimal } from '../../../core/decimal.js';
import { REASON_KEY } from '../../../core/ledger/token-standard.js';
import { LedgerRejection } from '../../../sandbox/ledger/command-arguments.js';
import type { SandboxExercisedEvent } from '../../../sandbox/ledger/sandbox-ledger.js';
import { poolUserGets } from '../../../sandbox/venues/tradecraft.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { SANDBOX_INSTRUMENT_ADMINS } from '../../../sandbox/venues/wire.js';
import { POOL_USDCX, sandboxLedger, spendable } from '../../helpers/ledger.js';

const ALICE = `alice::1220${'b'.repeat(64)}`;
const BOB = `bob::1220${'a'.repeat(64)}`;
const ADMIN = SANDBOX_INSTRUMENT_ADMINS.Amulet;

type Sandbox = Awaited<ReturnType<typeof sandboxLedger>>;

/** A TransferFactory_Transfer command from `sender` spending `inputs`. */
function transfer(sandbox: Sandbox, sender: string, receiver: string, amount: string, inputs: string[], memo = '0.0000000001', executeBefore = new Date(Date.now() + 90_000)) {
  return {
    contractId: sandbox.ledger.factories.get(ADMIN)!,
    choice: 'TransferFactory_Transfer',
    argument: {
      expectedAdmin: ADMIN,
      transfer: {
        sender, receiver, amount, instrumentId: { admin: ADMIN, id: 'Amulet' }, requestedAt: new Date(Date.now() - 60_000).toISOString(),
        executeBefore: executeBefore.toISOString(), inputHoldingCids: inputs, meta: { values: { [REASON_KEY]: memo } },
      },
    },
  };
}

t.test('a batch is atomic: a holding spent twice, or a refused later command, leaves nothing changed', async (t) => {
  const sandbox = await sandboxLedger(t);
  const { contractId: coin } = sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  const end = sandbox.ledger.ledgerEnd;
  t.throws(() => sandbox.ledger.submit([ALICE], 'twice', [transfer(sandbox, ALICE, BOB, '10', [coin]), transfer(sandbox, ALICE, BOB, '10', [coin])]), { code: 'CONTRACT_NOT_ACTIVE' });
  t.throws(() => sandbox.ledger.submit([ALICE], 'bad-second', [transfer(sandbox, ALICE, BOB, '10', [coin]), { contractId: 'nope', choice: 'TransferInstruction_Withdraw', argument: {} }]), { code: 'CONTRACT_NOT_FOUND' });
  t.equal(sandbox.ledger.ledgerEnd, end, 'no transaction');
  t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), '100', 'the holding is untouched');
  t.equal(sandbox.ledger.openPoolOffers().length, 0);
});

t.test('two-step transfer: the amount is locked until the receiver accepts or the sender withdraws; change comes back at once', async (t) => {
  const sandbox = await sandboxLedger(t);
  const { contractId: coin } = sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  const offered = sandbox.ledger.submit([ALICE], 'offer-1', [transfer(sandbox, ALICE, BOB, '30', [coin])]);
  t.match(offered.updateId, /^1220[0-9a-f]{64}$/);
  t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), '70', 'the change');
  const instruction = offered.events.find((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction'))!.contractId;
  t.throws(() => sandbox.ledger.submit([ALICE], 'accept-own', [{ contractId: instruction, choice: 'TransferInstruction_Accept', argument: {} }]), { code: 'DAML_AUTHORIZATION_ERROR' }, 'only the receiver accepts');
  sandbox.ledger.submit([BOB], 'accept', [{ contractId: instruction, choice: 'TransferInstruction_Accept', argument: {} }]);
  t.equal(spendable(sandbox.ledger, BOB, 'Amulet').toFixed(), '30');
  const again = sandbox.ledger.submit([ALICE], 'offer-2', [transfer(sandbox, ALICE, BOB, '20', [sandbox.ledger.activeHoldings(ALICE)[0]!.contractId])]);
  const second = again.events.find((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction'))!.contractId;
  t.throws(() => sandbox.ledger.submit([BOB], 'withdraw-other', [{ contractId: second, choice: 'TransferInstruction_Withdraw', argument: {} }]), { code: 'DAML_AUTHORIZATION_ERROR' }, 'only the sender withdraws');
  sandbox.ledger.submit([ALICE], 'withdraw', [{ contractId: second, choice: 'TransferInstruction_Withdraw', argument: {} }]);
  t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), '70', 'withdrawn: back whole');
});

t.test('"offers not accepted before executeBefore expire": an offer cannot be made past it, nor accepted at it', async (t) => {
  let now = Date.now();
  const sandbox = await sandboxLedger(t, () => new Date(now));
  const { contractId: coin } = sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  t.throws(() => sandbox.ledger.submit([ALICE], 'late', [transfer(sandbox, ALICE, BOB, '10', [coin], '1', new Date(now))]), { message: /executeBefore .* has passed/ });
  const offered = sandbox.ledger.submit([ALICE], 'offer', [transfer(sandbox, ALICE, BOB, '10', [coin], '1', new Date(now + 90_000))]);
  const instruction = offered.events.find((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction'))!.contractId;
  now += 90_000;
  t.throws(() => sandbox.ledger.submit([BOB], 'accept', [{ contractId: instruction, choice: 'TransferInstruction_Accept', argument: {} }]), { message: /expired/ });
});

t.test('a submission is deduplicated by its user, parties and commandId; the pool parties act only through their operator', async (t) => {
  const sandbox = await sandboxLedger(t);
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  const [a, b] = sandbox.ledger.activeHoldings(ALICE).map((h) => h.contractId);
  const first = sandbox.ledger.submit([ALICE], 'plan-1', [transfer(sandbox, ALICE, BOB, '10', [a!])]);
  const duplicate = () => sandbox.ledger.submit([ALICE], 'plan-1', [transfer(sandbox, ALICE, BOB, '10', [b!])]);
  t.throws(duplicate, new LedgerRejection('DUPLICATE_COMMAND', `a submission with this commandId was already committed by this user for these parties (update ${first.updateId})`));
  t.doesNotThrow(() => sandbox.ledger.submit([ALICE], 'plan-1', [transfer(sandbox, ALICE, BOB, '10', [b!])], 'another-wallet'), 'the same commandId from another user is another command');
  const http = await sandbox.post('/v2/commands/submit-and-wait-for-transaction', { commands: { commands: [], commandId: 'plan-1', actAs: [ALICE] } });
  t.equal(http.status, 400, 'an empty submission is refused first');
  const offer = first.events.find((e) => e.kind === 'created' && e.templateId.endsWith(':TransferInstruction'))!.contractId;
  t.throws(() => sandbox.ledger.submit([POOL_USDCX], 'as-pool', [{ contractId: offer, choice: 'TransferInstruction_Reject', argument: {} }]), { code: 'DAML_AUTHORIZATION_ERROR', message: /pool operator/ });
});

t.test('the pool "accepts a deposit only if it can pay at least the memo\'s floor at acceptance time", pays the want token out, and moves its reserves', async (t) => {
  const sandbox = await sandboxLedger(t);
  const pool = sandbox.ledger.poolFor(CC, USDCX)!;
  const { tradecraft } = sandbox;
  const [base, quote] = [pool.pool.baseReserve, pool.pool.quoteReserve];
  const exact = poolUserGets(tradecraft, pool.pool, CC, USDCX, new Decimal('100'));
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  // A floor one unit above what the pool pays: rejected, the funds back.
  await sandbox.deposit(ALICE, '100', exact.plus('0.0000000001').toFixed());
  await sandbox.settled();
  t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), '100', 'rejected: refunded');
  t.ok(pool.pool.baseReserve.eq(base) && pool.pool.quoteReserve.eq(quote), 'the reserves did not move');
  // The floor exactly what it pays: accepted.
  await sandbox.deposit(ALICE, '100', exact.toFixed());
  await sandbox.settled();
  t.equal(spendable(sandbox.ledger, ALICE, 'USDCx').toFixed(), exact.toFixed(), 'paid exactly what a quote at these reserves says');
  t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), '0');
  t.equal(pool.pool.baseReserve.toFixed(), base.plus(100).toFixed(), 'the whole deposit, fee included, stays in the pool');
  t.equal(pool.pool.quoteReserve.toFixed(), quote.minus(exact).toFixed());
  t.ok(poolUserGets(tradecraft, pool.pool, CC, USDCX, new Decimal('100')).lt(exact), 'the next 100 CC buys less');
});

t.test('a paused operator leaves offers open; resumed, it returns expired ones; an operator failure is reported and the offer stays open', async (t) => {
  let now = Date.now();
  const failures: unknown[] = [];
  const sandbox = await sandboxLedger(t, () => new Date(now), (err) => failures.push(err));
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  sandbox.ledger.setOperatorPaused(true);
  await sandbox.deposit(ALICE, '100', '1');
  await sandbox.settled();
  t.equal(sandbox.ledger.openPoolOffers().length, 1);
  now += 90_000;
  sandbox.ledger.setOperatorPaused(false);
  await sandbox.settled();
  t.equal(sandbox.ledger.openPoolOffers().length, 0);
  t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), '100', 'expired: rejected, the funds back, nothing paid');
  t.equal(spendable(sandbox.ledger, ALICE, 'USDCx').toFixed(), '0');
  // A pool whose pricing throws: the operator reports it and carries on.
  const pool = sandbox.ledger.poolFor(CC, USDCX)!;
  const reserve = pool.pool.quoteReserve;
  pool.pool.quoteReserve = undefined as never;
  await sandbox.deposit(ALICE, '100', '1', new Date(now + 90_000));
  await sandbox.settled();
  t.equal(failures.length, 1, 'reported');
  t.equal(sandbox.ledger.openPoolOffers().length, 1, 'the offer is still open');
  sandbox.ledger.fund(BOB, 'Amulet', new Decimal('5'));
  await sandbox.deposit(BOB, '5', '1', new Date(now + 90_000));
  await sandbox.settled();
  t.equal(failures.length, 2, 'tried again at the next commit: the new offer reported, the first not again');
  t.equal(sandbox.ledger.openPoolOffers().length, 2);
  pool.pool.quoteReserve = reserve;
  sandbox.ledger.fund(BOB, 'Amulet', new Decimal('1'));
  await sandbox.deposit(BOB, '1', '0.0000000001', new Date(now + 90_000));
  await sandbox.settled();
  t.equal(sandbox.ledger.openPoolOffers().length, 0, 'at the next commit all are answered');
});

t.test('HTTP: the bearer token is required; /v2/updates shows a party only what it witnessed, through its interface filters', async (t) => {
  const sandbox = await sandboxLedger(t);
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
  await sandbox.deposit(ALICE, '100', '1');
  await sandbox.settled();
  const noToken = await fetch(`${sandbox.url}/v2/state/ledger-end`);
  t.equal(noToken.status, 401);
  t.match(await noToken.json(), { code: 'UNAUTHENTICATED' });
  const filter = (interfaceId: string) => ({ cumulative: [{ identifierFilter: { InterfaceFilter: { value: { interfaceId, includeInterfaceView: true } } } }] });
  const read = async (party: string, interfaceId: string) =>
    (await sandbox.post('/v2/updates', {
      beginExclusive: 0,
      updateFormat: { includeTransactions: { transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS', eventFormat: { filtersByParty: { [party]: filter(interfaceId) } } } },
    })).body as unknown as Array<{ update: { Transaction: { value: { offset: number; events: Array<Record<string, { witnessParties: string[] }>> } } } }>;
  const pool = await read(POOL_USDCX, '#splice-api-token-transfer-instruction-v1:Splice.Api.Token.TransferInstructionV1:TransferInstruction');
  t.strictSame(pool.map((i) => i.update.Transaction.value.offset), [3, 4], 'the offer and its acceptance, not the registry\'s factories (offset 1) or the funding');
  const alice = await read(ALICE, '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding');
  t.strictSame(alice.map((i) => i.update.Transaction.value.offset), [2, 3, 4], 'her holdings: funded, locked, paid out');
  const stranger = await read(BOB, '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding');
  t.strictSame(stranger, [], 'a party that witnessed nothing sees nothing');
  const wildcard = await sandbox.post('/v2/updates', { beginExclusive: 0, updateFormat: { includeTransactions: { transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS', eventFormat: { filtersByParty: { [ALICE]: { cumulative: [{ identifierFilter: { WildcardFilter: { value: {} } } }] } } } } } });
  t.strictSame((wildcard.body as unknown as Array<{ update: { Transaction: { value: { offset: number } } } }>).map((i) => i.update.Transaction.value.offset), [2, 3, 4], 'a Wildcard filter: every transaction she witnessed');
  t.strictSame(await read(ALICE, '#splice-api-token-allocation-v1:Splice.Api.Token.AllocationV1:Allocation'), [], 'a standard interface no sandbox contract implements: read, nothing matches');
  const unknown = await read(ALICE, '#splice-amulet:Splice.Amulet:Amulet');
  t.match(unknown, { code: 'PACKAGE_NAMES_NOT_FOUND' }, 'a package the participant does not have is refused as Canton refuses it');
});

t.test('HTTP: "the true snapshot at activeAtOffset": active contracts as they stood at the offset asked for, none past the ledger end', async (t) => {
  const sandbox = await sandboxLedger(t);
  const first = sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('7'));
  const filter = { cumulative: [{ identifierFilter: { InterfaceFilter: { value: { interfaceId: '#splice-api-token-holding-v1:Splice.Api.Token.HoldingV1:Holding', includeInterfaceView: true } } } }] };
  const ask = async (activeAtOffset: number) => {
    const answer = (await sandbox.post('/v2/state/active-contracts', { activeAtOffset, eventFormat: { filtersByParty: { [ALICE]: filter } } })) as unknown as { status: number; body: Array<{ contractEntry: { JsActiveContract: { createdEvent: { interfaceViews: Array<{ viewValue: { amount: string; instrumentId: { id: string } } }> } } } }> };
    return answer.status === 200 ? answer.body.map((e) => e.contractEntry.JsActiveContract.createdEvent.interfaceViews[0]!.viewValue).map((v) => `${v.amount} ${v.instrumentId.id}`).sort() : answer;
  };
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('3'));
  t.strictSame(await ask(first.transaction.offset), ['7 Amulet'], 'the holding funded later is not yet there');
  await sandbox.deposit(ALICE, '10', '0.0000000001');
  await sandbox.settled();
  t.strictSame(await ask(first.transaction.offset + 1), ['3 Amulet', '7 Amulet'], 'both, before the deposit spent them');
  const after = await ask(sandbox.ledger.ledgerEnd);
  t.ok(Array.isArray(after) && after.length === 1 && after[0]!.endsWith(' USDCx'), 'spent by the swap: she holds its payout, no CC');
  t.match(await ask(sandbox.ledger.ledgerEnd + 1), { status: 400, body: { code: 'OFFSET_AFTER_LEDGER_END' } });
});

t.test('"fee escrow is released" on COMPLETED, "not released" on SLIPPAGE_FAILED: the fee legs batched with a deposit are accepted with its payout, or returned with it', async (t) => {
  const FEES = `bestex-fees::1220${'e'.repeat(64)}`;
  const USDCX_ADMIN = SANDBOX_INSTRUMENT_ADMINS.USDCx;
  const feeLeg = (sandbox: Sandbox, inputs: string[]) => ({
    contractId: sandbox.ledger.factories.get(USDCX_ADMIN)!,
    choice: 'TransferFactory_Transfer',
    argument: {
      expectedAdmin: USDCX_ADMIN,
      transfer: {
        sender: ALICE, receiver: FEES, amount: '0.5', instrumentId: { admin: USDCX_ADMIN, id: 'USDCx' }, requestedAt: new Date(Date.now() - 60_000).toISOString(),
        executeBefore: new Date(Date.now() + 90_000).toISOString(), inputHoldingCids: inputs, meta: { values: {} },
      },
    },
  });
  for (const [name, floor, released] of [['completed', '0.0000000001', true], ['slippage-failed', '1000000', false]] as const) {
    const sandbox = await sandboxLedger(t);
    const { contractId: coin } = sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('100'));
    const { contractId: usd } = sandbox.ledger.fund(ALICE, 'USDCx', new Decimal('2'));
    sandbox.ledger.submit([ALICE], `swap-${name}`, [transfer(sandbox, ALICE, POOL_USDCX, '100', [coin], floor), feeLeg(sandbox, [usd])]);
    t.equal(spendable(sandbox.ledger, ALICE, 'USDCx').toFixed(), '1.5', `${name}: the fee is locked in the taker's wallet meanwhile`);
    await sandbox.settled();
    const answer = sandbox.ledger.transactions(sandbox.ledger.ledgerEnd - 1, sandbox.ledger.ledgerEnd)[0]!;
    const feeAnswer = answer.events.find((e): e is SandboxExercisedEvent => e.kind === 'exercised' && e.actingParties.includes(FEES));
    t.equal(feeAnswer?.choice, released ? 'TransferInstruction_Accept' : 'TransferInstruction_Reject', `${name}: answered in the pool's transaction`);
    t.equal(spendable(sandbox.ledger, FEES, 'USDCx').toFixed(), released ? '0.5' : '0', `${name}: the fee party holds the fee only after a payout`);
    t.equal(spendable(sandbox.ledger, ALICE, 'Amulet').toFixed(), released ? '0' : '100', `${name}: the deposit`);
    if (!released) t.equal(spendable(sandbox.ledger, ALICE, 'USDCx').toFixed(), '2', 'and the fee come back');
  }
});

t.test('"the sandbox ledger answers GET /v2/version as a participant does, so Canton\'s own @canton-network/core-ledger-client initialises against it"', async (t) => {
  const sandbox = await sandboxLedger(t);
  const { LedgerClient } = await import('@canton-network/core-ledger-client');
  const { pino } = await import('pino');
  const client = new LedgerClient({
    baseUrl: new URL(sandbox.url),
    logger: pino({ level: 'silent' }),
    accessTokenProvider: { getAccessToken: async () => sandbox.token, getAuthContext: async () => ({ userId: 'bestex-test', accessToken: sandbox.token }) },
  });
  await client.init();
  t.equal(client.getCurrentClientVersion(), '3.4', 'it reads the version the sandbox answers');
  const wrong = new LedgerClient({
    baseUrl: new URL(sandbox.url),
    logger: pino({ level: 'silent' }),
    accessTokenProvider: { getAccessToken: async () => 'guess', getAuthContext: async () => ({ userId: 'bestex-test', accessToken: 'guess' }) },
  });
  await t.rejects(wrong.init(), 'and refuses a client without the token');
});
