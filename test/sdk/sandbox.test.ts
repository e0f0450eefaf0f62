// '@bestex/sdk/sandbox''s wallet signs a message as the sandbox's OneSwap verifies one: Ed25519 over
// the message's UTF-8 bytes, the signature in base64, under a key it makes for its session with
// WebCrypto, shown as its account's publicKey (base64 of the raw 32 bytes). Verified here with
// Canton's own signing library. No ledger is needed: signing reaches none.
import { verifySignedTxHash } from '@canton-network/core-signing-lib';
import t from 'tap';
import { sandboxProvider } from '@bestex/sdk/sandbox';

const PARTY = `signer::1220${'4'.repeat(64)}`;
const wallet = () => sandboxProvider({ ledgerUrl: 'http://127.0.0.1:9', token: 'unused', party: PARTY });
const signedBy = (publicKey: string, message: string, signature: string) => verifySignedTxHash(Buffer.from(message, 'utf8').toString('base64'), publicKey, signature);
const MESSAGE = 'OneSwap wallet authentication\nParty: signer\nNonce: 0a1b\nIssued at: 2026-01-01T00:00:00.000Z — ünïcode';

t.test('"signature base64 of the Ed25519 signature of the message\'s UTF-8 bytes": signMessage verifies under the account\'s publicKey, a raw 32-byte key', async (t) => {
  const provider = wallet();
  const account = (await provider.request({ method: 'getPrimaryAccount' })) as { publicKey: string; partyId: string };
  t.equal(account.partyId, PARTY);
  t.equal(Buffer.from(account.publicKey, 'base64').length, 32, 'the raw key, base64');
  const { signature } = (await provider.request({ method: 'signMessage', params: { message: MESSAGE } })) as { signature: string };
  t.equal(Buffer.from(signature, 'base64').length, 64);
  t.ok(signedBy(account.publicKey, MESSAGE, signature), 'verifies, by Canton\'s signing library');
  t.notOk(signedBy(account.publicKey, MESSAGE.replace('0a1b', '0a1c'), signature), 'and for no other message');
  t.strictSame(await provider.request({ method: 'listAccounts' }), [account], 'listAccounts shows the same key');
});

t.test('"a key it holds for its session": every signature under one key; another provider, another key', async (t) => {
  const one = wallet();
  const [first, second] = await Promise.all(['a', 'b'].map((m) => one.request({ method: 'signMessage', params: { message: m } }) as Promise<{ signature: string }>));
  const { publicKey } = (await one.request({ method: 'getPrimaryAccount' })) as { publicKey: string };
  t.ok(signedBy(publicKey, 'a', first!.signature) && signedBy(publicKey, 'b', second!.signature), 'one key for the session, made once though asked twice at once');
  const other = (await wallet().request({ method: 'getPrimaryAccount' })) as { publicKey: string };
  t.not(other.publicKey, publicKey);
});

t.test('"SSR-safe": making the provider makes no key; the first request that needs one does', async (t) => {
  const subtle = globalThis.crypto.subtle;
  const generate = subtle.generateKey.bind(subtle);
  let made = 0;
  subtle.generateKey = ((...args: Parameters<typeof generate>) => (made++, generate(...args))) as typeof subtle.generateKey;
  t.teardown(() => void (subtle.generateKey = generate as typeof subtle.generateKey));
  const provider = wallet();
  t.equal(made, 0, 'nothing made on construction');
  await provider.request({ method: 'status' });
  t.equal(made, 0, 'nor for a request that needs no key');
  await provider.request({ method: 'signMessage', params: { message: 'x' } });
  t.equal(made, 1);
});

t.test('signMessage takes {message}: anything else is -32602', async (t) => {
  await t.rejects(wallet().request({ method: 'signMessage', params: {} as never }), { code: -32602, message: /signMessage takes \{message/ });
});

t.test('"a platform without WebCrypto\'s Ed25519": the account shows no key, so every plan but a signing one still executes; signMessage says why it cannot', async (t) => {
  const subtle = globalThis.crypto.subtle;
  const generate = subtle.generateKey.bind(subtle);
  subtle.generateKey = (() => Promise.reject(new DOMException('Unrecognized algorithm name', 'NotSupportedError'))) as typeof subtle.generateKey;
  t.teardown(() => void (subtle.generateKey = generate as typeof subtle.generateKey));
  const provider = wallet();
  t.match(await provider.request({ method: 'getPrimaryAccount' }), { publicKey: '' });
  t.match(await provider.request({ method: 'listAccounts' }), [{ publicKey: '' }]);
  await t.rejects(provider.request({ method: 'signMessage', params: { message: 'x' } }), { code: -32603, message: /could not make its Ed25519 key/ });
});
