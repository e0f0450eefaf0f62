// Key records and key verification (core/keys/partner-keys.ts): a record read whole or refused
// (whole-string shapes, values of the wrong JSON type), origins, who made a key, a new key's record,
// and PartnerKeys answering a presented key with its partner over any store, or refusing it.
import t from 'tap';
import { generateKey, hashKey, isWellFormedKey, KEY_ID_SHAPE } from '../../../core/keys/api-key.js';
import { issuerOf, KeyStoreUnavailable, newKey, parseKeyRecord, parseOrigin, PartnerKeys, validKeyRecord, withOrigins, type KeyRecord, type KeyStore } from '../../../core/keys/partner-keys.js';
import type { ComponentHealth } from '../../../core/health/component-health.js';
import { newPartnerKey } from '../../helpers/keys.js';

t.test('parseKeyRecord: "`value` as a key record with exactly the record\'s fields, or null when any is missing or malformed"', async (t) => {
  const { record } = newKey('Acme', 'partner-default', new Date('2030-01-01T00:00:00.000Z'));
  t.strictSame(parseKeyRecord({ ...record }), record, 'an active record');
  t.strictSame(parseKeyRecord({ ...record, key: 'bx_secret', extra: 1 }), record, 'fields that are not the record\'s are dropped');
  const revoked = { ...record, status: 'revoked', revokedAt: '2030-02-01T00:00:00Z' };
  t.strictSame(parseKeyRecord(revoked), revoked, 'a revoked record, with its time');
  const withOrigins = { ...record, origins: ['https://wallet.example', 'http://127.0.0.1:5173'] };
  t.strictSame(parseKeyRecord(withOrigins), withOrigins, 'a browser key keeps its origins');
  t.strictSame(parseKeyRecord({ ...revoked, origins: ['https://wallet.example'] }), { ...revoked, origins: ['https://wallet.example'] }, 'a revoked browser key too');
  const bad: Array<[string, unknown]> = [
    ['not an object', 'key_0123456789ab'],
    ['null', null],
    ['id missing', { ...record, id: undefined }],
    ['id not key_ and 12 hex', { ...record, id: 'key_0123456789AB' }],
    ['hash missing', { ...record, hash: undefined }],
    ['hash not 64 hex digits', { ...record, hash: record.hash.slice(1) }],
    ['hash in capitals', { ...record, hash: record.hash.toUpperCase() }],
    ['name missing', { ...record, name: undefined }],
    ['name empty', { ...record, name: '' }],
    ['createdAt missing', { ...record, createdAt: undefined }],
    ['createdAt a date only', { ...record, createdAt: '2030-01-01' }],
    ['createdAt not a time', { ...record, createdAt: '2030-13-45T99:00:00Z' }],
    ['createdAt a number', { ...record, createdAt: Date.parse(record.createdAt) }],
    ['schemaId missing', { ...record, schemaId: undefined }],
    ['schemaId empty', { ...record, schemaId: '' }],
    ['origins empty', { ...record, origins: [] }],
    ['origins not a list', { ...record, origins: 'https://wallet.example' }],
    ['an origin not a string', { ...record, origins: [7] }],
    ['an origin with a path', { ...record, origins: ['https://wallet.example', 'https://wallet.example/app'] }],
    ['status unknown', { ...record, status: 'paused' }],
    ['active with a revocation time', { ...record, revokedAt: '2030-02-01T00:00:00Z' }],
    ['revoked without its time', { ...record, status: 'revoked', revokedAt: null }],
    ['revoked at no time', { ...record, status: 'revoked', revokedAt: 'yesterday' }],
  ];
  for (const [name, value] of bad) t.equal(parseKeyRecord(value), null, name);
  t.throws(() => validKeyRecord({ ...record, name: '' }), new TypeError(`not a valid key record: ${record.id}`), 'a store refuses to keep one');
  t.strictSame(validKeyRecord(record), record);
});

t.test('parseKeyRecord: "who made it": issuedBy is kept when `portal`, absent for the CLI\'s keys, and anything else is malformed', async (t) => {
  const { record } = newKey('Portal', 'partner-default', new Date('2030-01-01T00:00:00.000Z'), [], 'portal');
  t.equal(record.issuedBy, 'portal');
  t.strictSame(parseKeyRecord({ ...record }), record);
  t.equal(newKey('Cli', 'partner-default').record.issuedBy, undefined, 'a CLI key has no field: records written before it read the same');
  t.equal(parseKeyRecord({ ...record, issuedBy: 'cli' }), null);
  t.equal(parseKeyRecord({ ...record, issuedBy: 1 }), null);
});

t.test('parseKeyRecord: ids, hashes and times are whole strings of their shape: nothing before or after', async (t) => {
  const { record } = newKey('Acme', 'partner-default', new Date('2030-01-01T00:00:00.000Z'));
  t.strictSame(parseKeyRecord({ ...record }), record, 'the record as issued');
  const bad: Array<[string, unknown]> = [
    ['an id with a character before key_', { ...record, id: `x${record.id}` }],
    ['an id with a 13th hex digit', { ...record, id: `${record.id}0` }],
    ['a hash with a character before it', { ...record, hash: `0${record.hash}` }],
    ['a hash with a 65th hex digit', { ...record, hash: `${record.hash}0` }],
    ['a createdAt with an expanded year (+00YYYY, which Date.parse reads)', { ...record, createdAt: '+002030-01-01T00:00:00Z' }],
    ['a createdAt with text after a NUL after the Z (V8\'s Date.parse stops reading at a NUL)', { ...record, createdAt: '2030-01-01T00:00:00.000Z\u0000+05:00' }],
  ];
  for (const [name, value] of bad) t.equal(parseKeyRecord(value), null, name);
});

t.test('parseKeyRecord: a field of the wrong JSON type is malformed, even one whose text would pass (a list of one string)', async (t) => {
  const { record } = newKey('Acme', 'partner-default', new Date('2030-01-01T00:00:00.000Z'));
  const bad: Array<[string, unknown]> = [
    ['id', { ...record, id: [record.id] }],
    ['hash', { ...record, hash: [record.hash] }],
    ['createdAt', { ...record, createdAt: [record.createdAt] }],
    ['revokedAt', { ...record, status: 'revoked', revokedAt: ['2030-02-01T00:00:00Z'] }],
    ['an origin', { ...record, origins: [['https://wallet.example']] }],
  ];
  for (const [name, value] of bad) t.equal(parseKeyRecord(value), null, `${name} as a list`);
  for (const value of [undefined, 'key_0123456789ab', 7, true, [record]]) t.equal(parseKeyRecord(value), null, `not a record: ${JSON.stringify(value)}`);
});

t.test('parseOrigin: "a browser origin as a request\'s Origin header names it: scheme, host and port, nothing after"', async (t) => {
  t.equal(parseOrigin('https://wallet.example'), 'https://wallet.example');
  t.equal(parseOrigin('https://wallet.example/'), 'https://wallet.example', 'a trailing slash is no path');
  t.equal(parseOrigin('http://127.0.0.1:5173'), 'http://127.0.0.1:5173', 'http, with a port');
  for (const bad of ['wallet.example', 'ftp://wallet.example', 'https://u@wallet.example', 'https://:p@wallet.example', 'https://wallet.example/app', 'https://wallet.example?x=1', 'https://wallet.example#x', 'https://WALLET.example', 'https://wallet.example:443', 'https://wallet.example//']) {
    t.equal(parseOrigin(bad), null, bad);
  }
});

t.test('newKey: "a new active key and the record the store keeps of it": its hash, never the key; origins only for a browser key', async (t) => {
  const at = new Date('2030-01-01T00:00:00.000Z');
  const { key, record } = newKey('Acme', 'wallet-co', at);
  t.ok(isWellFormedKey(key));
  t.strictSame(record, { id: record.id, hash: hashKey(key), name: 'Acme', createdAt: '2030-01-01T00:00:00.000Z', status: 'active', revokedAt: null, schemaId: 'wallet-co' });
  t.match(record.id, KEY_ID_SHAPE);
  t.notOk(JSON.stringify(record).includes(key), 'the key itself is not in the record');
  t.strictSame(newKey('Web', 'partner-default', at, ['https://wallet.example']).record.origins, ['https://wallet.example']);
  t.notOk('origins' in newKey('Server', 'partner-default', at, []).record, 'no origins: a server-to-server key');
  t.not(newKey('A', 'partner-default').record.id, newKey('A', 'partner-default').record.id, 'ids are drawn, not derived');
});

t.test('issuerOf: "who made a key: the key portal, or the operator\'s keys CLI": `portal` as recorded, `cli` for a record without issuedBy', async (t) => {
  const at = new Date('2030-01-01T00:00:00.000Z');
  t.equal(issuerOf(newKey('Portal', 'partner-default', at, [], 'portal').record), 'portal', 'a key the portal issued');
  const cli = newKey('Cli', 'partner-default', at).record;
  t.notOk('issuedBy' in cli, 'the CLI writes no issuedBy');
  t.equal(issuerOf(cli), 'cli', 'a key the CLI made, or one written before keys recorded their issuer');
});

t.test('withOrigins: "`record` with `origins` as its allowed origins: none makes it a server-to-server key"', async (t) => {
  const { record } = newKey('Acme', 'partner-default', new Date('2030-01-01T00:00:00.000Z'), ['https://old.example']);
  const origins = ['https://wallet.example', 'http://127.0.0.1:5173'];
  const browser = withOrigins(record, origins);
  t.strictSame(browser, { ...record, origins }, 'the new origins replace the old, every other field as it was');
  t.strictSame(parseKeyRecord(browser), browser, 'a valid record');
  const server = withOrigins(record, []);
  t.notOk('origins' in server, 'no origins field at all: an empty list is a malformed record');
  t.strictSame(server, { id: record.id, hash: record.hash, name: 'Acme', createdAt: record.createdAt, status: 'active', revokedAt: null, schemaId: 'partner-default' });
  t.strictSame(parseKeyRecord(server), server, 'a valid server-to-server record');
  t.strictSame(record.origins, ['https://old.example'], 'the record given is left as it was');
});

/** A store that records every lookup. */
function spyStore(records: readonly KeyRecord[], fail?: Error): KeyStore & { lookups: string[] } {
  const lookups: string[] = [];
  return {
    lookups,
    async findByHash(hash) {
      lookups.push(hash);
      if (fail) throw fail;
      return records.find((r) => r.hash === hash) ?? null;
    },
    add: async () => {},
    revoke: async () => null,
    list: async () => [...records],
    rotate: async () => null,
    setOrigins: async () => null,
  };
}

t.test('PartnerKeys: "a malformed key is refused before any lookup"', async (t) => {
  const store = spyStore([]);
  const keys = new PartnerKeys(store);
  const key = generateKey();
  for (const bad of ['', 'nonsense', key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a'), key + 'x']) t.equal(await keys.verify(bad), null, JSON.stringify(bad));
  t.strictSame(store.lookups, [], 'the store was never asked');
});

t.test('PartnerKeys: "the key\'s partner, or null when the key is malformed, unknown or revoked"', async (t) => {
  const active = newPartnerKey('Acme');
  const revoked = newPartnerKey('Gone');
  const store = spyStore([active.record, { ...revoked.record, status: 'revoked', revokedAt: new Date().toISOString() }]);
  const keys = new PartnerKeys(store);
  t.strictSame(await keys.verify(active.key), { id: active.record.id, name: 'Acme', schemaId: 'partner-default', origins: null }, 'active: a server-to-server key, taken from any origin');
  t.equal(await keys.verify(revoked.key), null, 'revoked');
  t.equal(await keys.verify(generateKey()), null, 'unknown');
  t.equal(store.lookups.length, 3, 'each well-formed key is one lookup, by its hash');
  t.equal(store.lookups[0], active.record.hash);
});

t.test('PartnerKeys: "a store that cannot be read throws KeyStoreUnavailable, never a silent invalid"', async (t) => {
  const keys = new PartnerKeys(spyStore([], new KeyStoreUnavailable('down')));
  await t.rejects(keys.verify(generateKey()), KeyStoreUnavailable);
});

t.test('PartnerKeys: "an unreadable store is logged and shown in the status" through its health, and only a store fault marks it down', async (t) => {
  const events: string[] = [];
  const health = { up: () => void events.push('up'), down: (err: unknown) => void events.push(`down: ${(err as Error).message}`) } as unknown as ComponentHealth;
  const active = newPartnerKey('Acme');
  await new PartnerKeys(spyStore([active.record]), health).verify(active.key);
  t.strictSame(events.splice(0), ['up'], 'a lookup that read the store: up');
  await new PartnerKeys(spyStore([]), health).verify('nonsense');
  t.strictSame(events.splice(0), [], 'a malformed key asks no store, and says nothing of it');
  await t.rejects(new PartnerKeys(spyStore([], new KeyStoreUnavailable('unreadable')), health).verify(generateKey()), KeyStoreUnavailable);
  t.strictSame(events.splice(0), ['down: unreadable'], 'a store fault: down');
  const elsewhere = new KeyStoreUnavailable('the shared state is down', { storeFault: false });
  t.equal(elsewhere.storeFault, false);
  t.equal(new KeyStoreUnavailable('x').storeFault, true, 'a store fault unless told otherwise');
  t.equal(new KeyStoreUnavailable('x').name, 'KeyStoreUnavailable');
  await t.rejects(new PartnerKeys(spyStore([], elsewhere), health).verify(generateKey()), elsewhere);
  await t.rejects(new PartnerKeys(spyStore([], new TypeError('bug')), health).verify(generateKey()), TypeError);
  t.strictSame(events, [], 'a cause reported elsewhere, or another failure, does not mark the store down');
  t.same(await new PartnerKeys(spyStore([active.record])).verify(active.key), { id: active.record.id, name: 'Acme', schemaId: 'partner-default', origins: null }, 'no health to tell: verifies the same');
  const browser = newKey('Web', 'partner-default', new Date(), ['https://wallet.example']);
  t.strictSame(await new PartnerKeys(spyStore([browser.record])).verify(browser.key), { id: browser.record.id, name: 'Web', schemaId: 'partner-default', origins: ['https://wallet.example'] }, 'a browser key\'s partner carries its origins');
});
