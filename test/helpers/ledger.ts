// A sandbox ledger of its own for a test: the sandbox market's tradecraft pools under the sandbox
// pool parties, served on an ephemeral loopback port, and a deposit sent the way a wallet sends it.
import { randomUUID } from 'node:crypto';
import { Decimal } from '../../core/decimal.js';
import { createSandboxVenues, SANDBOX_POOL_PARTIES } from '../../sandbox/venues/market.js';
import { SANDBOX_LEDGER_TOKEN } from '../../sandbox/ledger/ledger-token.js';
import { SandboxLedger } from '../../sandbox/ledger/sandbox-ledger.js';
import { startSandboxLedgerServer } from '../../sandbox/ledger/ledger-server.js';
import { SYNCHRONIZER_ID } from '../../sandbox/ledger/routes/context.js';
import { createdEventBlob } from '../../sandbox/ledger/event-format.js';
import { SANDBOX_INSTRUMENT_ADMINS } from '../../sandbox/venues/wire.js';
import { CBTC, CC, USDCX } from '../../core/tokens.js';
import { CHOICES, REASON_KEY, TRANSFER_FACTORY } from '../../core/ledger/token-standard.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

export const POOL_USDCX = SANDBOX_POOL_PARTIES['CC/USDCx']!;

/** `party`'s holdings of `instrument` that no offer locks, as their Holding views show them. */
export function unlockedHoldings(ledger: SandboxLedger, party: string, instrument: string): Array<{ contractId: string; amount: Decimal }> {
  return ledger.activeHoldings(party).flatMap(({ contractId, event }) => {
    const view = Object.values(event.views!)[0] as { instrumentId: { id: string }; amount: string; lock: unknown };
    return view.instrumentId.id === instrument && view.lock === null ? [{ contractId, amount: new Decimal(view.amount) }] : [];
  });
}

/** What `party` can spend of `instrument` now. */
export const spendable = (ledger: SandboxLedger, party: string, instrument: string): Decimal =>
  unlockedHoldings(ledger, party, instrument).reduce((sum, h) => sum.plus(h.amount), new Decimal(0));

export async function sandboxLedger(t: Teardown, now: () => Date = () => new Date(), onOperatorError?: (err: unknown) => void) {
  const tradecraft = createSandboxVenues().find((v) => v.id === 'tradecraft')!.spec;
  const { pricing } = tradecraft;
  if (pricing.kind !== 'amm') throw new Error('tradecraft is an AMM');
  const poolOf = (quote: typeof USDCX) => pricing.pools.find((p) => p.quote === quote)!;
  const ledger = new SandboxLedger({
    admins: SANDBOX_INSTRUMENT_ADMINS,
    tradecraft,
    pools: [
      { party: POOL_USDCX, pool: poolOf(USDCX), tokens: [CC, USDCX] },
      { party: SANDBOX_POOL_PARTIES['CC/CBTC']!, pool: poolOf(CBTC), tokens: [CC, CBTC] },
    ],
    now,
    onOperatorError,
  });
  const server = await startSandboxLedgerServer(ledger, { host: '127.0.0.1', port: 0, token: SANDBOX_LEDGER_TOKEN });
  t.teardown(() => server.close());
  const disclosedFactory = (admin: string) => {
    const factory = ledger.contract(ledger.factories.get(admin)!)!.created;
    return { templateId: factory.templateId, contractId: factory.contractId, createdEventBlob: createdEventBlob(factory), synchronizerId: SYNCHRONIZER_ID };
  };
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${SANDBOX_LEDGER_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    ledger,
    tradecraft,
    url: server.url,
    token: SANDBOX_LEDGER_TOKEN,
    participant: server.participant,
    /** The factory of `admin`'s registry, as its registry discloses it. */
    disclosedFactory,
    post,
    /** The pool's operator runs after the commit that woke it: this waits for it. */
    settled: () => new Promise((resolve) => setImmediate(resolve)),
    /** `party` offers `amount` CC to the CC/USDCx pool with `memo`, spending all its unlocked CC holdings. */
    async deposit(party: string, amount: string, memo: string, executeBefore = new Date(now().getTime() + 90_000)) {
      const inputs = unlockedHoldings(ledger, party, 'Amulet').map((h) => h.contractId);
      const admin = SANDBOX_INSTRUMENT_ADMINS.Amulet;
      const transfer = {
        sender: party, receiver: POOL_USDCX, amount, instrumentId: { admin, id: 'Amulet' }, requestedAt: now().toISOString(),
        executeBefore: executeBefore.toISOString(), inputHoldingCids: inputs, meta: { values: { [REASON_KEY]: memo } },
      };
      server.participant.host(party);
      const answer = await post('/v2/commands/submit-and-wait-for-transaction', {
        commands: {
          commands: [{ ExerciseCommand: { templateId: TRANSFER_FACTORY.filterId, contractId: ledger.factories.get(admin)!, choice: CHOICES.transfer, choiceArgument: { expectedAdmin: admin, transfer, extraArgs: {} } } }],
          commandId: `test-${randomUUID()}`,
          actAs: [party],
          disclosedContracts: [disclosedFactory(admin)],
        },
      });
      if (answer.status !== 200) throw new Error(`the deposit was refused: ${JSON.stringify(answer.body)}`);
      return (answer.body as { transaction: { updateId: string } }).transaction;
    },
  };
}
