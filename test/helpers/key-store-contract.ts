// The KeyStore contract (core/keys/partner-keys.ts), held on any store: each store's test file runs
// it on its own store, so both stores answer alike.
import type { Test } from 'tap';
import { generateKey, hashKey } from '../../core/keys/api-key.js';
import { KeyStoreUnavailable, newKey, PartnerKeys, type KeyStore } from '../../core/keys/partner-keys.js';
import { newPartnerKey } from './keys.js';

/**
 * Add, find, revoke and list, round trip. `emptyLookup`: what a lookup in a store that never held a
 * key gives (see the shared store's marker).
 */
export async function roundTrip(t: Test, store: KeyStore, emptyLookup: 'null' | 'unavailable'): Promise<void> {
  const first = newPartnerKey('First', new Date('2030-01-01T00:00:00.000Z'));
  const second = newPartnerKey('Second', new Date('2030-01-02T00:00:00.000Z'));
  t.strictSame(await store.list(), [], 'empty at first');
  if (emptyLookup === 'null') t.equal(await store.findByHash(first.record.hash), null);
  else await t.rejects(store.findByHash(first.record.hash), KeyStoreUnavailable, 'a store that never held a key cannot tell a key is unknown');
  await store.add(first.record);
  await store.add(second.record);
  t.strictSame(await store.findByHash(first.record.hash), first.record, 'found by its hash');
  t.strictSame(await store.list(), [first.record, second.record], 'every record, oldest first');
  await t.rejects(store.add(first.record), 'the same record twice is refused');
  await t.rejects(store.add({ ...newPartnerKey('Other').record, id: first.record.id }), 'an id already stored is refused');
  await t.rejects(store.add({ ...newPartnerKey('Other').record, hash: first.record.hash }), 'a hash already stored is refused');

  const at = new Date('2030-02-01T00:00:00.000Z');
  const revoked = { ...first.record, status: 'revoked', revokedAt: at.toISOString() };
  t.strictSame(await store.revoke({ id: first.record.id }, at), revoked, 'revoked by id');
  t.strictSame(await store.findByHash(first.record.hash), revoked);
  t.strictSame(await store.revoke({ hash: first.record.hash }, new Date('2031-01-01T00:00:00.000Z')), revoked, '"revoking twice keeps the first time"');
  const secondRevoked = await store.revoke({ hash: second.record.hash }, at);
  t.equal(secondRevoked?.status, 'revoked', 'revoked by hash');
  t.equal(await store.revoke({ id: 'key_000000000000' }, at), null, 'an unknown id: null');
  t.equal(await store.revoke({ hash: hashKey(generateKey()) }, at), null, 'an unknown hash: null');
  t.strictSame(
    (await store.list()).map((r) => [r.name, r.status]),
    [
      ['First', 'revoked'],
      ['Second', 'revoked'],
    ],
  );
  t.equal(await store.rotate(first.record.id, hashKey(generateKey())), null, 'a revoked record is not rotated');
  t.equal(await store.setOrigins(second.record.id, ['https://wallet.example']), null, 'nor given origins');
}

/** Rotation and origins: what the key portal does to a key, on a store. */
export async function rotateAndBind(t: Test, store: KeyStore): Promise<void> {
  const issued = newKey('Portal', 'partner-default', new Date('2030-01-01T00:00:00.000Z'), ['https://wallet.example'], 'portal');
  const other = newPartnerKey('Other');
  await store.add(issued.record);
  await store.add(other.record);
  const keys = new PartnerKeys(store);
  const fresh = generateKey();
  const rotated = await store.rotate(issued.record.id, hashKey(fresh));
  t.strictSame(rotated, { ...issued.record, hash: hashKey(fresh) }, '"a new hash for the same record id", everything else kept');
  t.equal(await store.findByHash(issued.record.hash), null, 'the old hash is no longer found');
  t.strictSame(await store.findByHash(hashKey(fresh)), rotated, 'the new one is');
  t.equal(await keys.verify(issued.key), null, 'the old key verifies to nothing');
  t.equal((await keys.verify(fresh))?.id, issued.record.id, 'the new key to the same partner');
  t.equal((await store.list()).length, 2, 'no record added');
  await t.rejects(store.rotate(issued.record.id, other.record.hash), 'a hash already stored is refused');
  t.strictSame(await store.findByHash(hashKey(fresh)), rotated, 'and changes nothing');
  t.equal(await store.rotate('key_000000000000', hashKey(generateKey())), null, 'an unknown id: null');

  const bound = await store.setOrigins(issued.record.id, ['https://a.example', 'http://localhost:5173']);
  t.strictSame(bound?.origins, ['https://a.example', 'http://localhost:5173'], 'origins replaced');
  t.strictSame((await store.findByHash(hashKey(fresh)))?.origins, ['https://a.example', 'http://localhost:5173'], 'as stored');
  const cleared = await store.setOrigins(issued.record.id, []);
  t.notOk(cleared && 'origins' in cleared, 'none: a server-to-server key, without the field');
  t.equal((await keys.verify(fresh))?.origins, null);
  await t.rejects(store.setOrigins(issued.record.id, ['not an origin']), TypeError, 'a malformed origin is never stored');
  t.equal(await store.setOrigins('key_000000000000', []), null, 'an unknown id: null');
  t.equal((await store.list()).find((r) => r.id === issued.record.id)?.issuedBy, 'portal', 'who made it is kept');
}
