// `npm run -s sandbox -- <command>`: a wallet for the sandbox, talking to the running sandbox's
// ledger (the one `make run` starts, or `make sandbox`; found through DATA_DIR/sandbox.json, or at
// LEDGER_URL), so a person can run a swap by hand: fund a party, execute a plan as the party's own
// wallet would, and move a pool's price. It signs nothing and holds no key: the sandbox ledger
// lets any holder of its token act as any party. Exit codes: 0 done, 1 refused or failed (the
// message says why), 2 usage.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { execute, memoryStorage } from '@bestex/sdk';
import { sandboxProvider, sandboxRegistries } from '@bestex/sdk/sandbox';
import { chosenCommand, runCli, UsageError } from '../core/cli.js';
import { Decimal } from '../core/decimal.js';
import { CHOICES, HOLDING, TRANSFER_INSTRUCTION, namesEntity } from '../core/ledger/token-standard.js';
import { PLAN_VALIDITY_MS } from '../core/plan-validity.js';
import { isPartyId } from '../core/party.js';
import { SANDBOX_LEDGER_TOKEN } from './ledger/ledger-token.js';
import { ANNOUNCEMENT_FILE, type SandboxAnnouncement } from './manifest.js';
import { resolveToken, TOKENS, type Token } from '../core/tokens.js';

const USAGE = `usage: npm run -s sandbox -- <command>
  fund --party P --token T --amount N   give party P a new holding of N of token T (CC, USDCx, CBTC)
  balance --party P                     P's holdings per instrument: spendable, and locked in offers
  execute --plan FILE --party P         perform a plan (the JSON a plan endpoint answered) as P's
                                        wallet: its deposit and fee legs as one CIP-0112 batch
                                        (the deposit alone, fee-less, on a participant without
                                        the batching package); refuses an expired plan
  move --pair A/B --bps N [--venue V]   move the tradecraft pool (or with --venue nightly or
                                        oneswap, that venue's pool) so A's price in B changes by
                                        N bps (-300: falls by 3 %)
  withdraw --party P                    withdraw every offer P made that is still open (unanswered,
                                        or expired): its funds come back
  pause | resume                        stop or restart the pools' answers to deposits, tradecraft's,
                                        Nightly's and OneSwap's (a paused pool lets offers expire)
environment: LEDGER_URL and LEDGER_TOKEN (default: the running sandbox's, from DATA_DIR/sandbox.json),
             SANDBOX_URL (with LEDGER_URL: its sandbox, whose manifest names the token registries
             execute asks), DATA_DIR (default ./data), BESTEX_URL (default http://127.0.0.1:8080; only printed,
             in the outcome command)`;

class Failure extends Error {}
/** The ledger refused a request; `code` is its JsCantonError code. */
class Refusal extends Failure {
  constructor(
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const serviceUrl = (process.env.BESTEX_URL || 'http://127.0.0.1:8080').replace(/\/+$/, '');

/**
 * The sandbox ledger: LEDGER_URL when set (with LEDGER_TOKEN, else the running sandbox's token when
 * it names that ledger, else the sandbox's default), else the running sandbox's, as it wrote them
 * to DATA_DIR/sandbox.json when it started; and that sandbox's token registries, when it is the one.
 */
function findLedger(): { url: string; token: string; registries: Readonly<Record<string, string>> | null } {
  const file = path.resolve(process.env.DATA_DIR || './data', ANNOUNCEMENT_FILE);
  let running: Partial<SandboxAnnouncement> | null = null;
  try {
    running = JSON.parse(readFileSync(file, 'utf8')) as Partial<SandboxAnnouncement>;
  } catch {
    running = null;
  }
  const url = process.env.LEDGER_URL?.replace(/\/+$/, '');
  if (url) {
    // The running sandbox's own token, when LEDGER_URL names its ledger and LEDGER_TOKEN is unset.
    const token = process.env.LEDGER_TOKEN || (running?.ledger === url && typeof running.ledgerToken === 'string' ? running.ledgerToken : SANDBOX_LEDGER_TOKEN);
    return { url, token, registries: running?.ledger === url ? (running.registries ?? null) : null };
  }
  if (!running) throw new Failure(`no running sandbox found (${file} is absent or unreadable): start the service (make run) or the sandbox (make sandbox), or set LEDGER_URL`);
  if (typeof running.ledger !== 'string' || typeof running.ledgerToken !== 'string') throw new Failure(`${file} does not say where the sandbox ledger is: restart the sandbox, or set LEDGER_URL`);
  if (typeof running.pid === 'number' && !alive(running.pid)) {
    throw new Failure(`the sandbox ${file} names (pid ${running.pid}) is not running: start the service (make run) or the sandbox (make sandbox), or set LEDGER_URL`);
  }
  return { url: running.ledger, token: process.env.LEDGER_TOKEN || running.ledgerToken, registries: running.registries ?? null };
}

/**
 * The token registries a plan's transfers are asked of: the running sandbox's, or those the
 * manifest of the sandbox at SANDBOX_URL names (for a ledger given by LEDGER_URL).
 */
async function registriesOf(ledger: ReturnType<typeof findLedger>): Promise<Readonly<Record<string, string>>> {
  if (ledger.registries) return ledger.registries;
  const sandboxUrl = process.env.SANDBOX_URL;
  if (!sandboxUrl) throw new Failure(`which token registries serve ${ledger.url}'s instruments is not known: set SANDBOX_URL to its sandbox (as \`make sandbox\` prints it), whose manifest names them`);
  try {
    return await sandboxRegistries(sandboxUrl);
  } catch (err) {
    throw new Failure(`the sandbox at SANDBOX_URL (${sandboxUrl}) did not name its registries: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Whether a process of that id runs (one of another user counts: it exists). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

let found: ReturnType<typeof findLedger> | null = null;

/** One request to the sandbox ledger; a refusal becomes a Failure with the ledger's own cause. */
async function ledger(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  found ??= findLedger();
  const { url: ledgerUrl, token: ledgerToken } = found;
  let response: Response;
  try {
    response = await fetch(`${ledgerUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ledgerToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new Failure(`cannot reach the sandbox ledger at ${ledgerUrl} (${detail}): is the sandbox running (make run, or make sandbox), and LEDGER_URL its ledger's?`);
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Failure(`the ledger at ${ledgerUrl} answered HTTP ${response.status} with something that is not JSON: is LEDGER_URL the sandbox ledger's?`);
  }
  if (!response.ok) {
    const { code, cause } = (parsed ?? {}) as { code?: string; cause?: string };
    if (response.status === 401) throw new Failure(`the sandbox ledger refused the token: set LEDGER_TOKEN to the sandbox's (its ledgerToken, as make sandbox prints it)`);
    throw new Refusal(code, `the ledger refused: ${cause ?? `HTTP ${response.status}`}${code ? ` (${code})` : ''}`);
  }
  return parsed;
}

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: T) {
  // `--bps -300` as the README writes it: node's parser would read -300 as an option of its own.
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i]!.startsWith('--') ? args[i]!.slice(2) : null;
    const next = args[i + 1];
    if (name !== null && options[name]?.type === 'string' && next !== undefined && /^-[0-9]/.test(next)) {
      joined.push(`--${name}=${next}`);
      i++;
    } else joined.push(args[i]!);
  }
  try {
    return parseArgs({ args: joined, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function partyArg(value: string | undefined): string {
  if (!value) throw new UsageError('--party P is required');
  if (!isPartyId(value)) throw new UsageError('--party must be a ledger party id <hint>::1220<64 hex digits>');
  return value;
}

function tokenArg(value: string | undefined, flag: string): Token {
  if (!value) throw new UsageError(`${flag} is required`);
  try {
    return resolveToken(value, flag);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

interface OwnHolding {
  readonly contractId: string;
  readonly instrument: string;
  readonly amount: Decimal;
  readonly locked: boolean;
}

/** The party's active contracts implementing `iface`, with that interface's view, as its wallet reads them. */
async function activeViews<V>(party: string, iface: { filterId: string; entity: string }): Promise<Array<{ contractId: string; view: V }>> {
  const { offset } = (await ledger('GET', '/v2/state/ledger-end')) as { offset: number };
  const filter = { cumulative: [{ identifierFilter: { InterfaceFilter: { value: { interfaceId: iface.filterId, includeInterfaceView: true, includeCreatedEventBlob: false } } } }] };
  const entries = (await ledger('POST', '/v2/state/active-contracts', { activeAtOffset: offset, eventFormat: { filtersByParty: { [party]: filter }, verbose: false } })) as Array<{
    contractEntry: { JsActiveContract?: { createdEvent: { contractId: string; interfaceViews: Array<{ interfaceId: string; viewValue: V }> } } };
  }>;
  return entries.flatMap((entry) => {
    const created = entry.contractEntry.JsActiveContract?.createdEvent;
    const view = created?.interfaceViews.find((v) => namesEntity(v.interfaceId, iface.entity))?.viewValue;
    return created && view ? [{ contractId: created.contractId, view }] : [];
  });
}

/** The party's holdings. */
async function holdingsOf(party: string): Promise<OwnHolding[]> {
  const views = await activeViews<{ owner: string; instrumentId: { id: string }; amount: string; lock: unknown }>(party, HOLDING);
  return views
    .filter(({ view }) => view.owner === party)
    .map(({ contractId, view }) => ({ contractId, instrument: view.instrumentId.id, amount: new Decimal(view.amount), locked: view.lock !== null }));
}

interface PlanStep {
  readonly kind: string;
  readonly target: string;
  /** v1 names the instrument by its id, v2 by its id and admin party. */
  readonly instrument: string | { readonly id: string; readonly admin: string | null };
  readonly amount: string;
  readonly memo?: string;
  readonly expiresAt: string;
}

interface Plan {
  /** How the venue settles: v2's plans only. */
  readonly settlement?: string;
  readonly planId: string;
  readonly expiry: string;
  readonly steps: readonly PlanStep[];
  readonly quoteRef: { readonly pair: { readonly give: string; readonly want: string }; readonly amount: string; readonly minReceive: string };
}

const instrumentOf = (step: PlanStep): string | undefined => (typeof step.instrument === 'string' ? step.instrument : step.instrument?.id);

/** The plan in `file`, checked for what executing it reads. */
function readPlan(file: string): Plan {
  let plan: Plan;
  try {
    // npm runs scripts in the package's folder: a relative path is the caller's, where npm was run.
    plan = JSON.parse(readFileSync(path.resolve(process.env.INIT_CWD ?? process.cwd(), file), 'utf8')) as Plan;
  } catch (err) {
    throw new Failure(`cannot read the plan ${file}: ${(err as Error).message}`);
  }
  const instruments = new Set<string>(TOKENS.map((t) => t.instrument));
  const valid =
    typeof plan?.planId === 'string' &&
    typeof plan.expiry === 'string' && !Number.isNaN(Date.parse(plan.expiry)) &&
    Array.isArray(plan.steps) && plan.steps.length > 0 &&
    plan.steps.every((s) => isPartyId(s?.target) && instruments.has(instrumentOf(s) ?? '') && typeof s.amount === 'string' && /^[0-9]+(\.[0-9]{1,10})?$/.test(s.amount) && !Number.isNaN(Date.parse(s.expiresAt))) &&
    plan.steps.filter((s) => s.kind === 'venue-deposit').length === 1 &&
    typeof plan.quoteRef?.minReceive === 'string';
  if (!valid) throw new Failure(`${file} is not an execution plan as POST /api/app/plan or /api/execute/plan (or their /api/v2/ counterparts) answers it`);
  return plan;
}

type Command = (args: readonly string[]) => Promise<void>;

const COMMANDS: Readonly<Record<string, Command>> = {
  async fund(args) {
    const values = parse(args, { party: { type: 'string' }, token: { type: 'string' }, amount: { type: 'string' } });
    const party = partyArg(values.party);
    const token = tokenArg(values.token, '--token');
    if (!values.amount) throw new UsageError('--amount N is required');
    const answer = (await ledger('POST', '/sandbox/v1/fund', { party, token: token.symbol, amount: values.amount })) as { updateId: string };
    console.log(`funded ${values.amount} ${token.instrument} (update ${answer.updateId})`);
  },

  async balance(args) {
    const party = partyArg(parse(args, { party: { type: 'string' } }).party);
    const holdings = await holdingsOf(party);
    for (const token of TOKENS) {
      const mine = holdings.filter((h) => h.instrument === token.instrument);
      const sum = (locked: boolean) => mine.filter((h) => h.locked === locked).reduce((s, h) => s.plus(h.amount), new Decimal(0)).toFixed();
      console.log(`${token.instrument.padEnd(7)} spendable ${sum(false)}, locked in offers ${sum(true)}`);
    }
  },

  async execute(args) {
    const values = parse(args, { plan: { type: 'string' }, party: { type: 'string' } });
    if (!values.plan) throw new UsageError('--plan FILE is required');
    const party = partyArg(values.party);
    const plan = readPlan(values.plan);
    found ??= findLedger();
    const provider = sandboxProvider({ ledgerUrl: found.url, token: found.token, party });
    // The wallet submits and reports; the swap's end is for the outcome query it prints (or the
    // SDK's own tracking, in an app): it stops waiting once the deposit is on the ledger.
    const stop = new AbortController();
    let duplicate = false;
    const result = await execute(plan as Parameters<typeof execute>[0], {
      provider,
      registries: await registriesOf(found),
      storage: memoryStorage(),
      signal: stop.signal,
      hooks: {
        onStatus: (status, detail) => {
          if (status !== 'INITIATED') return;
          duplicate = detail.duplicate === true;
          stop.abort();
        },
      },
    });
    if (duplicate) throw new Failure(`${plan.planId} was already executed for this party; to swap again, re-plan with a new idempotencyKey`);
    if (result.status === 'REFUSED' || result.status === 'SUBMIT_FAILED' || result.status === 'USER_REJECTED') {
      const deposit = plan.steps.find((s) => s.kind === 'venue-deposit')!;
      const fund = ` (fund it: npm run -s sandbox -- fund --party <party> --token ${instrumentOf(deposit) === 'Amulet' ? 'CC' : instrumentOf(deposit)} --amount <n>)`;
      throw new Failure(`${result.error?.message ?? result.status}${result.error?.code === 'insufficient_funds' ? fund : ''}`);
    }
    const deposit = plan.steps.find((s) => s.kind === 'venue-deposit')!;
    const legs = result.fees.included ? plan.steps.length - 1 : 0;
    // A memo is the floor for v1's plans and v2's memo-floor; for another v2 settlement it is the venue's own text.
    const memo = plan.settlement === undefined || plan.settlement === 'memo-floor' ? `with floor ${deposit.memo ?? '(none)'}` : `with the venue's memo ${deposit.memo ?? '(none)'}`;
    console.log(`executed ${plan.planId}: ${deposit.amount} ${instrumentOf(deposit)} offered to the venue ${memo}` +
      `${legs > 0 ? `, with ${legs} fee leg(s)` : ''} (update ${result.submittedUpdateId})`);
    if (result.fees.note) console.log(`note: ${result.fees.note}`);
    const since = new Date(Date.parse(plan.expiry) - PLAN_VALIDITY_MS).toISOString();
    const query = new URLSearchParams({ party, since, deadline: plan.expiry, escrow: deposit.target, amount: deposit.amount, minReceive: plan.quoteRef.minReceive, want: plan.quoteRef.pair.want });
    console.log(`outcome: curl '${serviceUrl}/api/${plan.settlement === undefined ? '' : 'v2/'}outcome?${query.toString()}'`);
  },

  async move(args) {
    const values = parse(args, { pair: { type: 'string' }, bps: { type: 'string' }, venue: { type: 'string' } });
    if (!values.pair) throw new UsageError('--pair A/B is required');
    if (!values.bps || !/^-?[0-9]{1,6}$/.test(values.bps)) throw new UsageError('--bps N must be a whole number, such as -300');
    const venue = values.venue ?? 'tradecraft';
    if (venue !== 'tradecraft' && venue !== 'nightly' && venue !== 'oneswap') throw new UsageError('--venue must be tradecraft (the default), nightly or oneswap');
    const answer = (await ledger('POST', '/sandbox/v1/move', { pair: values.pair, bps: Number(values.bps), venue })) as { pair: string; priceBefore: string; priceAfter: string };
    const [first, second] = answer.pair.split('/');
    console.log(`moved the ${venue} ${answer.pair} pool: 1 ${first} was ${answer.priceBefore} ${second}, is ${answer.priceAfter} ${second}`);
  },

  async withdraw(args) {
    const party = partyArg(parse(args, { party: { type: 'string' } }).party);
    type Offer = { transfer: { sender: string; receiver: string; amount: string; instrumentId: { id: string }; executeBefore: string } };
    const open = (await activeViews<Offer>(party, TRANSFER_INSTRUCTION)).filter(({ view }) => view.transfer.sender === party);
    if (open.length === 0) {
      console.log('no open offers to withdraw');
      return;
    }
    // One submission per offer: one answered in the meantime does not hold up the others.
    let failed = 0;
    for (const { contractId, view } of open) {
      const command = {
        ExerciseCommand: { templateId: TRANSFER_INSTRUCTION.filterId, contractId, choice: CHOICES.withdraw, choiceArgument: { extraArgs: { context: { values: {} }, meta: { values: {} } } } },
      };
      const what = `${view.transfer.amount} ${view.transfer.instrumentId.id} offered to ${view.transfer.receiver} (executeBefore ${view.transfer.executeBefore})`;
      try {
        const { transaction } = (await ledger('POST', '/v2/commands/submit-and-wait-for-transaction', {
          commands: { commands: [command], commandId: `withdraw-${randomUUID()}`, actAs: [party], userId: 'bestex-sandbox-wallet' },
        })) as { transaction: { updateId: string } };
        console.log(`withdrew ${what}: the funds are back (update ${transaction.updateId})`);
      } catch (err) {
        if (!(err instanceof Refusal)) throw err;
        failed += 1;
        console.error(`sandbox: could not withdraw ${what}: ${err.message}`);
      }
    }
    if (failed > 0) throw new Failure(`${failed} of ${open.length} offers could not be withdrawn (answered in the meantime?): see above`);
  },

  async pause(args) {
    parse(args, {});
    await ledger('POST', '/sandbox/v1/operator', { paused: true });
    console.log('the tradecraft pools no longer answer deposits: offers to them wait, and expire at their executeBefore');
  },

  async resume(args) {
    parse(args, {});
    await ledger('POST', '/sandbox/v1/operator', { paused: false });
    console.log('the tradecraft pools answer deposits again: open offers are answered now (expired ones are rejected, returning the funds)');
  },
};

async function main(argv: readonly string[]): Promise<void> {
  const chosen = chosenCommand(argv, USAGE, COMMANDS);
  if (chosen) await chosen.run(chosen.args);
}

await runCli('sandbox', USAGE, () => main(process.argv.slice(2)), (err): err is Error => err instanceof Failure);
