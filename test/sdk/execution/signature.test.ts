// The executor's signing step, for a plan made with a sign-message step (OneSwap's), as a partner
// meets it: before the wallet is asked, the SDK checks that it can sign (an account with a key of
// its own) and that a version 2 client can complete the plan; a wallet that cannot sign, or no
// such client, is REFUSED with nothing signed and nothing submitted; a wallet that declines is
// USER_REJECTED and the plan is never completed. The service and its sandbox are real.
import t from 'tap';
import { createClient, createClientV2, execute, isSigningPlan, PROVIDER_ERRORS, type BestexClientV2, type CantonProvider, type ExecutionStatus, type SigningPlanV2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { listen, testApp } from '../../helpers/app.js';

const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '1' } });
t.teardown(app.close);
const sandbox = app.sandbox!;
const baseUrl = await listen(app.server);
const client = createClientV2({ baseUrl });

let takers = 0;

interface Wallet extends CantonProvider {
  /** Every method the wallet was asked, in order. */
  readonly asked: string[];
}

/**
 * A new funded taker with a OneSwap plan, and its wallet: the sandbox's, with its account and its
 * answer to signMessage changed as given (a wallet whose participant signs for its party shows no
 * publicKey; one without the method answers -32601; a user who declines, 4001).
 */
async function taker(change: { publicKey?: string; signMessage?: () => Promise<unknown> } = {}): Promise<{ party: string; plan: SigningPlanV2; wallet: Wallet }> {
  const party = `sdk-signing-${++takers}::1220${'6'.repeat(64)}`;
  const inner = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party });
  await inner.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '1000' } } });
  const plan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'oneswap', takerParty: party, idempotencyKey: `${party}-plan` });
  if (!isSigningPlan(plan)) throw new Error('a OneSwap plan asks for a signed message');
  const asked: string[] = [];
  const wallet: Wallet = {
    asked,
    async request(args) {
      asked.push(args.method);
      if (args.method === 'signMessage' && change.signMessage) return change.signMessage();
      const answer = await inner.request(args);
      if (change.publicKey === undefined || (args.method !== 'getPrimaryAccount' && args.method !== 'listAccounts')) return answer;
      return Array.isArray(answer) ? answer.map((a) => ({ ...a, publicKey: change.publicKey })) : { ...(answer as object), publicKey: change.publicKey };
    },
    on: (event, listener) => inner.on(event, listener),
    removeListener: (event, listener) => inner.removeListener(event, listener),
  };
  return { party, plan, wallet };
}

/** The v2 client, counting the plans it is asked to complete. */
function counting(): BestexClientV2 & { completed: number } {
  const counted = { ...client, completed: 0 };
  counted.signPlan = (request) => (counted.completed++, client.signPlan(request));
  return counted;
}

const submittedBy = (party: string) => sandbox.ledger.transactions(0, sandbox.ledger.ledgerEnd).filter((tx) => tx.actAs.includes(party)).length;
const nothingSigned = (wallet: Wallet) => wallet.asked.filter((m) => m === 'signMessage' || m.startsWith('prepareExecute'));

t.test('"check that the wallet can sign before asking it": an account with no key of its own (its participant signs for its party) is REFUSED signing_unavailable, in words; no signMessage, no submission', async (t) => {
  const { party, plan, wallet } = await taker({ publicKey: '' });
  const statuses: ExecutionStatus[] = [];
  const signing = counting();
  const result = await execute(plan, { provider: wallet, client: signing, hooks: { onStatus: (s) => void statuses.push(s), onSignature: () => t.fail('the wallet was not to be asked') } });
  t.match(result, {
    status: 'REFUSED',
    error: {
      name: 'BestexError',
      code: 'signing_unavailable',
      message: /the wallet cannot sign the venue's message, so nothing was signed and the plan is not executed: the taker's account has no key of its own \(no publicKey; signingProviderId "bestex-sandbox"\): a party its participant hosts and signs for cannot sign a message/,
      action: /an external party/,
    },
  });
  t.strictSame(statuses, ['REFUSED'], 'never SIGNING');
  t.strictSame(nothingSigned(wallet), [], 'the wallet was asked to sign nothing');
  t.equal(signing.completed, 0, 'the service was not asked to complete the plan');
  t.equal(submittedBy(party), 0, 'nothing reached the ledger');
});

t.test('a wallet that does not offer signMessage (-32601) is REFUSED signing_unavailable, nothing submitted', async (t) => {
  const { party, plan, wallet } = await taker({ signMessage: async () => Promise.reject(Object.assign(new Error('Method signMessage not found'), { code: PROVIDER_ERRORS.methodNotFound })) });
  const result = await execute(plan, { provider: wallet, client });
  t.match(result, { status: 'REFUSED', error: { code: 'signing_unavailable', message: /it does not offer signMessage/ } });
  t.strictSame(nothingSigned(wallet), ['signMessage'], 'asked once, submitted nothing');
  t.equal(submittedBy(party), 0);
});

t.test('"a refused signature request -> USER_REJECTED": the user declines (4001) in the wallet; the plan is never completed, nothing submitted', async (t) => {
  const { party, plan, wallet } = await taker({ signMessage: async () => Promise.reject(Object.assign(new Error('User rejected the request.'), { code: PROVIDER_ERRORS.userRejected })) });
  const statuses: ExecutionStatus[] = [];
  const signing = counting();
  const result = await execute(plan, { provider: wallet, client: signing, hooks: { onStatus: (s) => void statuses.push(s) } });
  t.match(result, { status: 'USER_REJECTED', error: { code: 'user_rejected', message: /the wallet did not sign the venue's message: User rejected the request/ } });
  t.strictSame(statuses, ['SIGNING', 'USER_REJECTED']);
  t.equal(signing.completed, 0);
  t.strictSame(nothingSigned(wallet), ['signMessage']);
  t.equal(submittedBy(party), 0);
});

t.test('"a v2 client required": without one (none, or a version 1 client) the plan is REFUSED client_required before the wallet is asked anything', async (t) => {
  for (const [what, given] of [['no client', undefined], ['a version 1 client', createClient({ baseUrl })]] as const) {
    const { party, plan, wallet } = await taker();
    const result = await execute(plan, { provider: wallet, client: given });
    t.match(result, { status: 'REFUSED', error: { code: 'client_required', message: /execute it with a version 2 client \(options.client, from createClientV2\); nothing was signed/ } }, what);
    t.strictSame(nothingSigned(wallet), [], `${what}: nothing signed`);
    t.equal(submittedBy(party), 0);
  }
});

t.test('the service\'s refusal to complete the plan ends it REFUSED with the service\'s code: an expired plan (plan_expired) is not signed at all; a signature OneSwap refuses is bad_signature, nothing submitted', async (t) => {
  const expired = await taker();
  const stale = { ...expired.plan, expiry: new Date(Date.now() - 1_000).toISOString() };
  t.match(await execute(stale, { provider: expired.wallet, client }), { status: 'REFUSED', error: { code: 'plan_expired' } });
  t.strictSame(nothingSigned(expired.wallet), [], 'an expired plan is not signed');

  const forged = await taker({ signMessage: async () => ({ signature: Buffer.alloc(64, 7).toString('base64') }) });
  const result = await execute(forged.plan, { provider: forged.wallet, client });
  t.match(result, { status: 'REFUSED', error: { status: 400, code: 'bad_signature' } });
  t.equal(submittedBy(forged.party), 0);
});
