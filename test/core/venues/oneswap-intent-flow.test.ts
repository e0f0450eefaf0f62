// The OneSwap adapter's wallet-auth and intent calls (core/venues/oneswap.ts) against the sandbox's
// OneSwap (sandbox/venues/oneswap-intents.ts), reached only over HTTP: the two were each built from
// OneSwap's docs, and this is where they must agree. The party signs the challenge with Canton's
// own signing library.
import t from 'tap';
import { createKeyPair, signMessage } from '@canton-network/core-signing-lib';
import { dec, floor10 } from '../../../core/decimal.js';
import { CC, USDCX } from '../../../core/tokens.js';
import { OneSwapVenue } from '../../../core/venues/oneswap.js';
import { WalletSignatureRefused, type WalletToken } from '../../../core/venues/venue.js';
import { SANDBOX_VENUE_KEY } from '../../../sandbox/venues/wire.js';
import { claims, hint } from '../../helpers/canton.js';
import { testSandbox } from '../../helpers/sandbox.js';
import { noDeadline } from '../../helpers/venue-fetch.js';

const sandbox = await testSandbox();
t.teardown(() => sandbox.close());
const { manifest, ledgerToken } = sandbox;
const venue = new OneSwapVenue({ baseUrl: manifest.venues.oneswap!, headers: { 'X-API-Key': SANDBOX_VENUE_KEY }, timeoutMs: 5000 });

async function ledger<T>(path: string, body: unknown): Promise<T> {
  const response = await fetch(new URL(path, manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function allocate(name: string): Promise<string> {
  const connected = (await (await fetch(new URL('/v2/state/connected-synchronizers', manifest.ledger), { headers: { authorization: `Bearer ${ledgerToken}` } })).json()) as { connectedSynchronizers: Array<{ synchronizerId: string }> };
  const synchronizerId = connected.connectedSynchronizers[0]!.synchronizerId;
  const { partyDetails } = await ledger<{ partyDetails: { party: string } }>('/v2/parties', { partyIdHint: hint(name), identityProviderId: '', synchronizerId, userId: claims(ledgerToken).sub });
  return partyDetails.party;
}

/** The wallet-auth flow through the adapter: its challenge, signed by the party's key, verified for a token. */
async function signIn(party: string): Promise<WalletToken> {
  const keys = createKeyPair();
  const challenge = await venue.requestChallenge(party, noDeadline());
  return venue.verifyChallenge({ party, nonce: challenge.nonce, signature: signMessage(challenge.message, keys.privateKey), publicKey: keys.publicKey }, noDeadline());
}

t.test('"sign in, create, read, cancel": the adapter\'s calls are the sandbox OneSwap\'s, and the intent\'s minimum is not below the floor asked', async (t) => {
  const party = await allocate('oneswap-flow');
  const walletToken = await signIn(party);
  t.equal(String(walletToken), '[wallet token]', 'the token never prints');
  const quoted = await venue.quote({ give: CC, want: USDCX, amount: dec('1000') }, noDeadline());
  if (!quoted.available) throw new Error(`oneswap did not quote: ${quoted.rejectionCode}`);
  // What the service plans from: the net, the gross less OneSwap's traffic fee taken from the input.
  const fee = quoted.fee?.appliedTo === 'deducted_from_give' ? quoted.fee.amount : dec('0');
  const net = floor10(quoted.gross.times(dec('1000').minus(fee)).div('1000'));
  const floor = floor10(net.times('0.99'));
  const made = await venue.createIntent({ give: CC, want: USDCX, amount: dec('1000'), walletToken, party, minOutput: floor, expectedOutput: net }, noDeadline());
  if (!made.available) throw new Error(`no intent: ${made.rejectionCode}`);
  const { intent } = made;
  t.ok(intent.minOutput.gte(floor), `its minimum ${intent.minOutput.toFixed()} is at least the floor ${floor.toFixed()}`);
  t.ok(intent.amount.eq(1000), 'for the amount asked');
  t.not(intent.depositAddress, party, 'the deposit goes to the venue');
  t.ok(intent.depositReference.length > 0, 'with a reference to carry');
  const ref = { intentId: intent.intentId, walletToken };
  t.equal((await venue.intentStatus(ref, noDeadline())).state, 'awaiting_deposit');
  t.equal(await venue.cancelIntent(ref, noDeadline()), true, 'cancelled');
  t.equal((await venue.intentStatus(ref, noDeadline())).state, 'cancelled');
  t.equal(await venue.cancelIntent(ref, noDeadline()), false, 'a cancelled intent is not cancelled twice');
});

t.test('"a bad signature is refused": signed with another message, WalletSignatureRefused', async (t) => {
  const party = await allocate('oneswap-bad');
  const keys = createKeyPair();
  const challenge = await venue.requestChallenge(party, noDeadline());
  const signed = { party, nonce: challenge.nonce, signature: signMessage(`${challenge.message} (tampered)`, keys.privateKey), publicKey: keys.publicKey };
  await t.rejects(venue.verifyChallenge(signed, noDeadline()), WalletSignatureRefused);
});
