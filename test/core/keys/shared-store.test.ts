// The shared-state key store (core/keys/shared-store.ts): one map of the shared state, "field = key hash
// → JSON record", a version set anew at every change, and every fault of the state or of a stored record
// a KeyStoreUnavailable, never a silent 401; the KeyStore contract held on it.
import t from 'tap';
import { generateKey, hashKey } from '../../../core/keys/api-key.js';
import { KeyStoreUnavailable, PartnerKeys } from '../../../core/keys/partner-keys.js';
import { SharedStateKeyStore } from '../../../core/keys/shared-store.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState } from '../../../core/state/shared-state.js';
import { roundTrip, rotateAndBind } from '../../helpers/key-store-contract.js';
import { newPartnerKey } from '../../helpers/keys.js';

t.test('shared-state store: "rotation: a new hash for the same record id; the old hash no longer found" (the old field deleted), and setting origins', async (t) => {
  const state = new InProcessSharedState();
  await rotateAndBind(t, new SharedStateKeyStore(state));
  t.equal((await state.mapEntries('keys')).size, 3, 'two records and the issued marker: the old hash\'s field is gone');
});

t.test('shared-state store: add, find, revoke and list round trip on InProcessSharedState', async (t) => {
  await roundTrip(t, new SharedStateKeyStore(new InProcessSharedState()), 'unavailable');
});

t.test('shared-state store: one map, "field = key hash → JSON record"; never the key', async (t) => {
  const state = new InProcessSharedState();
  const { key, record } = newPartnerKey('Acme');
  await new SharedStateKeyStore(state).add(record);
  const entries = await state.mapEntries('keys');
  t.strictSame([...entries.keys()].sort(), [record.hash, 'keys-issued'].sort(), 'and the marker of a store that has issued keys');
  t.strictSame(JSON.parse(entries.get(record.hash)!), record);
  t.notOk([...entries.values()].join().includes(key));
});

t.test('shared-state store: every change sets the keys\' version anew; a record read is kept with the version read with it, where the state is shared', async (t) => {
  const inner = new InProcessSharedState();
  const state = Object.assign(Object.create(inner) as InProcessSharedState, { shared: true });
  const store = new SharedStateKeyStore(state);
  const version = async () => (await state.mapFields('keys', [], store.versionKey)).version;
  const { record } = newPartnerKey('Acme');
  const seen = new Set<string | null>([null]);
  const changed = async (what: string) => {
    const now = await version();
    t.notOk(seen.has(now), `${what}: a new version`);
    seen.add(now);
  };
  await store.add(record);
  await changed('add');
  t.equal(store.kept(record.hash), undefined, 'nothing kept before a read');
  t.strictSame(await store.findByHash(record.hash), record);
  t.strictSame(store.kept(record.hash), { record, version: await version() }, 'the record read, kept with the version read with it');
  const rotated = await store.rotate(record.id, hashKey(generateKey()));
  await changed('rotate');
  t.strictSame(store.kept(record.hash)?.version, [...seen][1], 'the kept record is not changed by a change: its version tells it is old');
  t.equal(await store.findByHash(record.hash), null, 'read again: the old key is unknown');
  t.equal(store.kept(record.hash), undefined, 'and no longer kept');
  await store.setOrigins(record.id, ['https://wallet.example']);
  await changed('setOrigins');
  await store.revoke({ hash: rotated!.hash }, new Date());
  await changed('revoke');
  t.equal((await store.findByHash(rotated!.hash))?.status, 'revoked');
  t.equal(store.kept(rotated!.hash)?.record.status, 'revoked', 'a revoked record is kept as revoked');

  const local = new SharedStateKeyStore(new InProcessSharedState());
  await local.add(record);
  await local.findByHash(record.hash);
  t.equal(local.kept(record.hash), undefined, 'in-process state, which no other instance changes: nothing kept');
});

t.test('shared-state store: a store that lost its data (a Redis restarted without persistence) is unavailable, a 503, never a 401 for every partner', async (t) => {
  const state = new InProcessSharedState();
  const store = new SharedStateKeyStore(state);
  const { key, record } = newPartnerKey('Acme');
  await store.add(record);
  t.equal(await new PartnerKeys(store).verify(generateKey()), null, 'an unknown key is simply unknown while the store holds its data');
  const wiped = new SharedStateKeyStore(new InProcessSharedState());
  await t.rejects(new PartnerKeys(wiped).verify(key), KeyStoreUnavailable, 'the same key against the emptied store');
});

t.test('shared-state store: "Any SharedStateUnavailable from the port becomes KeyStoreUnavailable"', async (t) => {
  const down = (): Promise<never> => Promise.reject(new SharedStateUnavailable('Redis at 127.0.0.1:6379 is unreachable'));
  const state: SharedState = { shared: true, hit: down, unhit: down, get: down, exchange: down, getValues: down, setIfAbsent: down, replaceIf: down, mapGet: down, mapFields: down, mapSet: down, mapSetIfAbsent: down, mapEntries: down, peek: down, mapDelete: down, incrementMaps: down, close: async () => {} };
  const store = new SharedStateKeyStore(state);
  const { record } = newPartnerKey('Acme');
  await t.rejects(store.findByHash(record.hash), KeyStoreUnavailable, 'findByHash');
  await t.rejects(store.add(record), KeyStoreUnavailable, 'add');
  await t.rejects(store.revoke({ id: record.id }, new Date()), KeyStoreUnavailable, 'revoke by id');
  await t.rejects(store.revoke({ hash: record.hash }, new Date()), KeyStoreUnavailable, 'revoke by hash');
  await t.rejects(store.list(), KeyStoreUnavailable, 'list');
  await t.resolves(new PartnerKeys(store).verify('malformed'), 'a malformed key still needs no store');
});

t.test('shared-state store: a malformed stored record makes the store unavailable rather than a silent 401', async (t) => {
  const { key, record } = newPartnerKey('Acme');
  for (const [what, value, field] of [
    ['not JSON', '{', record.hash],
    ['not a record', JSON.stringify({ ...record, createdAt: 'yesterday' }), record.hash],
    ['under another hash', JSON.stringify({ ...record, hash: hashKey(generateKey()) }), record.hash],
  ] as const) {
    const state = new InProcessSharedState();
    await state.mapSet('keys', field, value);
    const store = new SharedStateKeyStore(state);
    await t.rejects(new PartnerKeys(store).verify(key), KeyStoreUnavailable, `${what}: verify`);
    await t.rejects(store.list(), { name: 'KeyStoreUnavailable', message: /^(?!.*[0-9a-f]{64})/ }, `${what}: list, naming no hash`);
  }
});
