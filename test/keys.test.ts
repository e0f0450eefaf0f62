// Partner keys: the key format (core/keys/api-key.ts), the verifier (core/keys/partner-keys.ts), the file store
// (core/keys/file-store.ts), the shared-state store (core/keys/shared-store.ts), the factory
// (core/keys/open-store.ts) and the operator CLI (scripts/keys.ts), run as real processes.
import { spawnSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync, chmodSync, unlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { generateKey, hashKey, isWellFormedKey, KEY_ID_SHAPE, newKeyId } from '../core/keys/api-key.js';
import { loadConfig } from '../core/config.js';
import { FileKeyStore } from '../core/keys/file-store.js';
import { SharedStateKeyStore } from '../core/keys/shared-store.js';
import { keysFile, openKeyStore } from '../core/keys/open-store.js';
import { KeyStoreUnavailable, newKey, parseKeyRecord, parseOrigin, PartnerKeys, validKeyRecord, type KeyRecord, type KeyStore } from '../core/keys/partner-keys.js';
import type { ComponentHealth } from '../core/health/component-health.js';
import { InProcessSharedState } from '../core/state/in-process.js';
import { SharedStateUnavailable, type SharedState } from '../core/state/shared-state.js';
import { BASE62, independentChecksum, issueKey, runKeysCli } from './helpers/keys.js';
import { testApp } from './helpers/app.js';


/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

function tempDir(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bestex-keys-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A new key and the record the CLI would store for it. */
const issue = (name: string, createdAt = new Date()) => newKey(name, 'partner-default', createdAt);

/** The pid of a process that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

function lockContent(pid: number): string {
  return JSON.stringify({ pid, host: hostname(), at: new Date().toISOString(), token: 'f00dfeedf00dfeed' });
}

const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

// ---------------------------------------------------------------------------------------------
t.test('key format: generated keys are well formed: "`bx_`, 32 random base62 characters, and a 6-character base62 checksum"', async (t) => {
  const keys = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const key = generateKey();
    t.ok(isWellFormedKey(key), key) || t.bailout();
    keys.add(key);
  }
  t.equal(keys.size, 500, 'no two alike');
  for (const key of keys) t.match(key, /^bx_[0-9A-Za-z]{38}$/);
  t.match(hashKey(generateKey()), /^[0-9a-f]{64}$/, 'stored as its SHA-256, hex');
  t.match(newKeyId(), KEY_ID_SHAPE, 'ids are key_ and 12 hex digits');
});

t.test('key format: "the checksum lets a mistyped or made-up key be refused": any one-character change fails', async (t) => {
  const key = generateKey();
  let refused = 0;
  for (let i = 3; i < key.length; i++) {
    const other = BASE62[(BASE62.indexOf(key[i]!) + 1 + (i % 61)) % 62]!;
    if (!isWellFormedKey(key.slice(0, i) + other + key.slice(i + 1))) refused += 1;
  }
  t.equal(refused, key.length - 3, 'every position');
  const swapped = key.slice(0, 3) + key[4] + key[3] + key.slice(5);
  if (key[3] !== key[4]) t.notOk(isWellFormedKey(swapped), 'two characters swapped');
});

t.test('key format: a wrong prefix or length fails', async (t) => {
  const key = generateKey();
  for (const bad of ['bx-' + key.slice(3), 'BX_' + key.slice(3), 'sk_' + key.slice(3), key.slice(3), key + 'a', key.slice(0, -1), ` ${key}`, `${key}\n`, '', 'bx_']) {
    t.notOk(isWellFormedKey(bad), JSON.stringify(bad));
  }
});

// ---------------------------------------------------------------------------------------------
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
  const active = issue('Acme');
  const revoked = issue('Gone');
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

// ---------------------------------------------------------------------------------------------
// Rules that `make mutation` found no test for (mutation/equivalent-mutants.md lists the rest),
// here beside the key checks' other tests, before the slow store and CLI tests a mutant would wait on.

t.test('key format: "a 6-character base62 checksum of the rest": its SHA-256\'s first 32 bits in base62, recomputed here', async (t) => {
  for (const body of ['0'.repeat(32), 'z'.repeat(32), 'Az09'.repeat(8)]) {
    const key = `bx_${body}${independentChecksum(`bx_${body}`)}`;
    t.ok(isWellFormedKey(key), key);
  }
  for (let i = 0; i < 50; i++) {
    const key = generateKey();
    t.equal(key.slice(35), independentChecksum(key.slice(0, 35)), 'a generated key carries the same checksum');
  }
});

t.test('key format: "32 random base62 characters": every one of the 62 is drawn, and only those', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) for (const c of generateKey().slice(3, 35)) seen.add(c);
  t.equal([...seen].sort().join(''), [...BASE62].sort().join(''), '12,800 draws hit all 62 (a missing one is a 1-in-e^200 chance)');
});

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

t.test('PartnerKeys: "an unreadable store is logged and shown in the status" through its health, and only a store fault marks it down', async (t) => {
  const events: string[] = [];
  const health = { up: () => void events.push('up'), down: (err: unknown) => void events.push(`down: ${(err as Error).message}`) } as unknown as ComponentHealth;
  const active = issue('Acme');
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

// ---------------------------------------------------------------------------------------------
/** The KeyStore contract, on any store. */
/** `emptyLookup`: what a lookup in a store that never held a key gives (see the shared store's marker). */
async function roundTrip(t: Test, store: KeyStore, emptyLookup: 'null' | 'unavailable'): Promise<void> {
  const first = issue('First', new Date('2030-01-01T00:00:00.000Z'));
  const second = issue('Second', new Date('2030-01-02T00:00:00.000Z'));
  t.strictSame(await store.list(), [], 'empty at first');
  if (emptyLookup === 'null') t.equal(await store.findByHash(first.record.hash), null);
  else await t.rejects(store.findByHash(first.record.hash), KeyStoreUnavailable, 'a store that never held a key cannot tell a key is unknown');
  await store.add(first.record);
  await store.add(second.record);
  t.strictSame(await store.findByHash(first.record.hash), first.record, 'found by its hash');
  t.strictSame(await store.list(), [first.record, second.record], 'every record, oldest first');
  await t.rejects(store.add(first.record), 'the same record twice is refused');
  await t.rejects(store.add({ ...issue('Other').record, id: first.record.id }), 'an id already stored is refused');
  await t.rejects(store.add({ ...issue('Other').record, hash: first.record.hash }), 'a hash already stored is refused');

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
async function rotateAndBind(t: Test, store: KeyStore): Promise<void> {
  const issued = newKey('Portal', 'partner-default', new Date('2030-01-01T00:00:00.000Z'), ['https://wallet.example'], 'portal');
  const other = issue('Other');
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

t.test('file store: "rotation: a new hash for the same record id; the old hash no longer found", and setting origins, under its lock', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'keys.json');
  await rotateAndBind(t, new FileKeyStore(file));
  t.strictSame(readdirSync(dir), ['keys.json'], 'no lock or temporary file left behind');
  t.equal((await new FileKeyStore(file).list()).length, 2, 'another reader sees the same records');
});

t.test('shared-state store: "rotation: a new hash for the same record id; the old hash no longer found" (the old field deleted), and setting origins', async (t) => {
  const state = new InProcessSharedState();
  await rotateAndBind(t, new SharedStateKeyStore(state));
  t.equal((await state.mapEntries('keys')).size, 3, 'two records and the issued marker: the old hash\'s field is gone');
});

t.test('file store: add, find, revoke and list round trip', async (t) => {
  await roundTrip(t, new FileKeyStore(path.join(tempDir(t), 'keys.json')), 'null');
});

t.test('file store: "Create DATA_DIR if missing (mode 0700 dir, 0600 file)"', async (t) => {
  const dir = path.join(tempDir(t), 'data', 'nested');
  await new FileKeyStore(path.join(dir, 'keys.json')).add(issue('Acme').record);
  t.equal(statSync(dir).mode & 0o777, 0o700);
  t.equal(statSync(path.join(dir, 'keys.json')).mode & 0o777, 0o600);
  t.strictSame(readdirSync(dir), ['keys.json'], 'no lock or temporary file left behind');
});

t.test('file store: "keys are stored hashed, never in plain text": keys.json holds the hash, not the key', async (t) => {
  const file = path.join(tempDir(t), 'keys.json');
  const store = new FileKeyStore(file);
  const { key, record } = issue('Acme');
  await store.add(record);
  await store.revoke({ hash: record.hash }, new Date());
  const text = readFileSync(file, 'utf8');
  t.notOk(text.includes(key), 'not the key');
  t.notOk(text.includes(key.slice(3)), 'not its random part');
  t.ok(text.includes(record.hash), 'its hash');
  t.strictSame(Object.keys(JSON.parse(text).keys[0]).sort(), ['createdAt', 'hash', 'id', 'name', 'revokedAt', 'schemaId', 'status'], 'name, creation time, status, fee schema');
});

t.test('file store: "a missing keys.json means no keys", even with no DATA_DIR', async (t) => {
  const store = new FileKeyStore(path.join(tempDir(t), 'absent', 'keys.json'));
  t.equal(await store.findByHash(hashKey(generateKey())), null);
  t.strictSame(await store.list(), []);
});

t.test('file store: a keys.json that held keys and disappears (an unmounted volume) is unavailable, a 503, not an empty store', async (t) => {
  const file = path.join(tempDir(t), 'keys.json');
  let clock = 0;
  const service = new FileKeyStore(file, { now: () => clock });
  const { record } = issue('Acme');
  await new FileKeyStore(file).add(record);
  t.strictSame(await service.findByHash(record.hash), record);
  rmSync(file);
  clock = 1000;
  await t.rejects(service.findByHash(record.hash), { name: 'KeyStoreUnavailable', message: /which held keys, has disappeared/ });
  clock = 2000;
  await t.rejects(service.findByHash(record.hash), { message: /has disappeared/ }, 'and still at every later look, never an empty store');
  await new FileKeyStore(file).add(issue('Restored').record);
  clock = 3000;
  t.strictSame(await service.findByHash(record.hash), null, 'until a file is there again');
});

t.test('file store: "a key created or revoked while the service runs takes effect" after one refresh interval, without re-reading the file per request', async (t) => {
  const file = path.join(tempDir(t), 'keys.json');
  let clock = 0;
  const service = new FileKeyStore(file, { now: () => clock, refreshIntervalMs: 1000 });
  const cli = new FileKeyStore(file);
  const { record } = issue('Acme');
  t.equal(await service.findByHash(record.hash), null, 'no keys yet');
  await cli.add(record);
  clock = 999;
  t.equal(await service.findByHash(record.hash), null, 'within the interval the snapshot answers');
  clock = 1000;
  t.strictSame(await service.findByHash(record.hash), record, 'one interval later the new key is seen');
  await cli.revoke({ id: record.id }, new Date());
  clock = 2000;
  t.equal((await service.findByHash(record.hash))?.status, 'revoked', 'and its revocation');

  writeFileSync(file, '{ not json');
  clock = 2500;
  t.equal((await service.findByHash(record.hash))?.status, 'revoked', 'a keyed request does not read the file: the snapshot answers');
  clock = 3000;
  await t.rejects(service.findByHash(record.hash), KeyStoreUnavailable, '"do not keep serving an old snapshot when the file has become unreadable"');
  await t.rejects(service.list(), KeyStoreUnavailable);
});

t.test('file store: with the default refresh interval, a key added by another instance "takes effect within 5 seconds"', async (t) => {
  const file = path.join(tempDir(t), 'keys.json');
  let clock = 0;
  const service = new FileKeyStore(file, { now: () => clock });
  const { record } = issue('Acme');
  t.equal(await service.findByHash(record.hash), null);
  await new FileKeyStore(file).add(record);
  clock = 5000;
  t.strictSame(await service.findByHash(record.hash), record, 'seen 5 seconds on');
});

t.test('file store: "If the file cannot be read or parsed, findByHash must reject with KeyStoreUnavailable"', async (t) => {
  const { record } = issue('Acme');
  const cases: Record<string, (file: string) => void> = {
    'corrupt JSON': (file) => writeFileSync(file, '{"version":1,"keys":['),
    'an empty file': (file) => writeFileSync(file, ''),
    'not a key store': (file) => writeFileSync(file, '[]'),
    'an unknown version': (file) => writeFileSync(file, JSON.stringify({ version: 2, keys: [] })),
    'a malformed record': (file) => writeFileSync(file, JSON.stringify({ version: 1, keys: [{ ...record, status: 'paused' }] })),
    'a record without a hash': (file) => writeFileSync(file, JSON.stringify({ version: 1, keys: [{ ...record, hash: undefined }] })),
    'a repeated record': (file) => writeFileSync(file, JSON.stringify({ version: 1, keys: [record, record] })),
    'a directory in its place': (file) => mkdirSync(file),
    'DATA_DIR is a file': (file) => writeFileSync(path.dirname(file), ''),
  };
  for (const [what, damage] of Object.entries(cases)) {
    const dir = path.join(tempDir(t), 'data');
    mkdirSync(dir);
    const file = path.join(dir, 'keys.json');
    if (what === 'DATA_DIR is a file') rmSync(dir, { recursive: true });
    damage(file);
    const store = new FileKeyStore(file);
    await t.rejects(store.findByHash(record.hash), KeyStoreUnavailable, `${what}: findByHash`);
    await t.rejects(store.list(), KeyStoreUnavailable, `${what}: list`);
    await t.rejects(store.add(issue('New').record), KeyStoreUnavailable, `${what}: add refuses to write over it`);
    await t.rejects(store.revoke({ id: record.id }, new Date()), KeyStoreUnavailable, `${what}: revoke`);
  }
  const file = path.join(tempDir(t), 'keys.json');
  writeFileSync(file, '{ damaged');
  await t.rejects(new FileKeyStore(file).add(record));
  t.equal(readFileSync(file, 'utf8'), '{ damaged', 'a damaged file is left for the operator, not replaced');
});

t.test('file store: an unreadable keys.json (permissions) is KeyStoreUnavailable', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'keys.json');
  await new FileKeyStore(file).add(issue('Acme').record);
  chmodSync(file, 0o000);
  if (process.getuid?.() !== 0) {
    await t.rejects(new FileKeyStore(file).findByHash(hashKey(generateKey())), KeyStoreUnavailable);
    return;
  }
  // Root reads any file, and CI runs as root: the store then reads it as `nobody`, in a process
  // of its own with an empty environment (tap's process hooks, which write into root's files,
  // would follow it in NODE_OPTIONS), as a service not run as root meets the file. It runs a copy
  // of the built store in the test's own folder, open to all: the checkout may lie where `nobody`
  // cannot go (a clone in a private home).
  chmodSync(dir, 0o755);
  const store = pathToFileURL(copyModules(fileURLToPath(new URL('..', import.meta.url)), fileURLToPath(new URL('../core/keys/file-store.js', import.meta.url)), path.join(dir, 'modules'))).href;
  const script = `import { FileKeyStore } from ${JSON.stringify(store)};
try { await new FileKeyStore(${JSON.stringify(file)}).findByHash('x'); console.log('read'); } catch (err) { console.log(err.name); }`;
  const run = spawnSync('/usr/bin/env', ['-i', nodeFor(65534, dir), '--input-type=module', '-e', script], { uid: 65534, gid: 65534, encoding: 'utf8', cwd: dir });
  t.equal(run.stderr, '', 'nobody can load the copied store');
  t.equal(run.stdout.trim(), 'KeyStoreUnavailable', 'as nobody, the unreadable file is KeyStoreUnavailable');
});

/**
 * A Node binary `uid` may run: this process's own, or, where `uid` cannot reach it (a Node installed
 * under a private home, as nvm or a CI tools folder in /root puts it), a link to it (a copy across
 * file systems) in `dir`, which must be open to all.
 */
function nodeFor(uid: number, dir: string): string {
  if (spawnSync(process.execPath, ['--version'], { uid, gid: uid }).status === 0) return process.execPath;
  const node = path.join(dir, 'node');
  try {
    linkSync(process.execPath, node);
  } catch {
    copyFileSync(process.execPath, node);
  }
  chmodSync(node, 0o755);
  return node;
}

/**
 * `entry` and every module it imports by a relative path, copied under `into` as they lie under
 * `root`, readable by all, as ES modules: what a process that cannot read the checkout needs to
 * run it. Returns the copy of `entry`.
 */
function copyModules(root: string, entry: string, into: string): string {
  mkdirSync(into, { recursive: true, mode: 0o755 });
  writeFileSync(path.join(into, 'package.json'), '{"type":"module"}\n', { mode: 0o644 });
  const copied = new Set<string>();
  const copy = (file: string): void => {
    if (copied.has(file)) return;
    copied.add(file);
    const target = path.join(into, path.relative(root, file));
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    const source = readFileSync(file, 'utf8');
    writeFileSync(target, source, { mode: 0o644 });
    for (const [, specifier] of source.matchAll(/(?:\bfrom|\bimport)\s*['"](\.{1,2}\/[^'"]+)['"]/g)) copy(path.resolve(path.dirname(file), specifier!));
  };
  copy(entry);
  return path.join(into, path.relative(root, entry));
}

t.test('file store: "a leftover temp file and a stale lock from a crashed writer (dead pid) do not lose keys or block writes"', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'keys.json');
  const kept = issue('Kept');
  await new FileKeyStore(file).add(kept.record);
  writeFileSync(`${file}.lock`, lockContent(deadPid()));
  writeFileSync(`${file}.4242.0123456789ab.tmp`, '{"version":1,"keys":[{"half":');
  const added = issue('Added');
  // A lock that had to age out (30 s) would outlast the write's 2 s wait and fail it: the dead
  // writer's lock is broken at once.
  await new FileKeyStore(file, { lockTimeoutMs: 2000 }).add(added.record);
  t.strictSame((await new FileKeyStore(file).list()).map((r) => r.name), ['Kept', 'Added'], 'no key lost');
  t.strictSame(readdirSync(dir), ['keys.json'], 'the lock released, the temporary file removed');
});

t.test('file store: "a lock older than ~30 s is stale", even if its pid lives; a stale break guard from a dead breaker is broken too', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'keys.json');
  writeFileSync(`${file}.lock`, lockContent(process.pid));
  const old = new Date(Date.now() - 60_000);
  utimesSync(`${file}.lock`, old, old);
  writeFileSync(`${file}.lock.break`, lockContent(deadPid()));
  await new FileKeyStore(file, { lockTimeoutMs: 2000 }).add(issue('Acme').record);
  t.equal((await new FileKeyStore(file).list()).length, 1);
  t.strictSame(readdirSync(dir), ['keys.json']);

  writeFileSync(`${file}.lock`, '');
  utimesSync(`${file}.lock`, old, old);
  await new FileKeyStore(file, { lockTimeoutMs: 2000 }).add(issue('Other').record);
  t.equal((await new FileKeyStore(file).list()).length, 2, 'a lock whose content was never written is stale by its age');
});

t.test('file store: a lock held by a live writer makes a write wait, then "fail with a clear error"', async (t) => {
  const file = path.join(tempDir(t), 'keys.json');
  await new FileKeyStore(file).add(issue('Acme').record);
  const before = readFileSync(file, 'utf8');
  const live = lockContent(process.pid);
  writeFileSync(`${file}.lock`, live);

  // Waiting is shown by order, not by a clock: the write is still pending after several of its
  // retries, and stores its key once the live writer's lock is gone.
  let settled = false;
  const waiting = new FileKeyStore(file, { lockTimeoutMs: 600_000 }).add(issue('Patient').record).finally(() => (settled = true));
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(settled, false, 'the write waits while the lock is held');
  t.equal(readFileSync(file, 'utf8'), before, 'and has written nothing');
  unlinkSync(`${file}.lock`);
  await waiting;
  t.strictSame((await new FileKeyStore(file).list()).map((r) => r.name), ['Acme', 'Patient'], 'once the lock is gone, it writes');

  writeFileSync(`${file}.lock`, live);
  const written = readFileSync(file, 'utf8');
  await t.rejects(new FileKeyStore(file, { lockTimeoutMs: 300 }).add(issue('Late').record), { name: 'KeyStoreUnavailable', message: new RegExp(`pid ${process.pid}.*try again`) });
  t.equal(readFileSync(file, 'utf8'), written, 'a write that gave up wrote nothing');
  t.equal(readFileSync(`${file}.lock`, 'utf8'), live, 'the live lock is left alone');
});

t.test('file store: many writers "breaking the same stale lock cannot both win": every concurrent add survives', async (t) => {
  const file = path.join(tempDir(t), 'keys.json');
  writeFileSync(`${file}.lock`, lockContent(deadPid()));
  const issued = Array.from({ length: 20 }, (_, i) => issue(`n${i}`));
  await Promise.all(issued.map(({ record }) => new FileKeyStore(file).add(record)));
  const names = (await new FileKeyStore(file).list()).map((r) => r.name).sort();
  t.strictSame(names, issued.map((i) => i.record.name).sort());
});

t.test('file store: "concurrent writers": 8 CLI processes at once each store their key, and each printed key verifies', async (t) => {
  for (const withStaleLock of [false, true]) {
    const dir = tempDir(t);
    if (withStaleLock) writeFileSync(path.join(dir, 'keys.json.lock'), lockContent(deadPid()));
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => runKeysCli(['create', '--name', `n${i}`], { DATA_DIR: dir })));
    const label = withStaleLock ? 'racing to break a dead writer\'s lock' : 'from an empty DATA_DIR';
    t.strictSame(runs.map((r) => r.code), Array(8).fill(0), `${label}: every process succeeded`) || t.comment(runs.map((r) => r.stderr).join('\n'));
    const store = new FileKeyStore(path.join(dir, 'keys.json'));
    t.equal((await store.list()).length, 8, `${label}: all 8 keys present`);
    const keys = new PartnerKeys(store);
    const partners = await Promise.all(runs.map((r) => keys.verify(lastLine(r.stdout))));
    t.strictSame(partners.map((p) => p?.name).sort(), ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'], `${label}: each printed key verifies`);
    t.strictSame(readdirSync(dir), ['keys.json'], `${label}: no lock or temporary file left`);
  }
});

// ---------------------------------------------------------------------------------------------
t.test('shared-state store: add, find, revoke and list round trip on InProcessSharedState', async (t) => {
  await roundTrip(t, new SharedStateKeyStore(new InProcessSharedState()), 'unavailable');
});

t.test('shared-state store: one map, "field = key hash → JSON record"; never the key', async (t) => {
  const state = new InProcessSharedState();
  const { key, record } = issue('Acme');
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
  const { record } = issue('Acme');
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
  const { key, record } = issue('Acme');
  await store.add(record);
  t.equal(await new PartnerKeys(store).verify(generateKey()), null, 'an unknown key is simply unknown while the store holds its data');
  const wiped = new SharedStateKeyStore(new InProcessSharedState());
  await t.rejects(new PartnerKeys(wiped).verify(key), KeyStoreUnavailable, 'the same key against the emptied store');
});

t.test('shared-state store: "Any SharedStateUnavailable from the port becomes KeyStoreUnavailable"', async (t) => {
  const down = (): Promise<never> => Promise.reject(new SharedStateUnavailable('Redis at 127.0.0.1:6379 is unreachable'));
  const state: SharedState = { shared: true, hit: down, unhit: down, get: down, exchange: down, getValues: down, setIfAbsent: down, replaceIf: down, mapGet: down, mapFields: down, mapSet: down, mapSetIfAbsent: down, mapEntries: down, peek: down, mapDelete: down, incrementMaps: down, close: async () => {} };
  const store = new SharedStateKeyStore(state);
  const { record } = issue('Acme');
  await t.rejects(store.findByHash(record.hash), KeyStoreUnavailable, 'findByHash');
  await t.rejects(store.add(record), KeyStoreUnavailable, 'add');
  await t.rejects(store.revoke({ id: record.id }, new Date()), KeyStoreUnavailable, 'revoke by id');
  await t.rejects(store.revoke({ hash: record.hash }, new Date()), KeyStoreUnavailable, 'revoke by hash');
  await t.rejects(store.list(), KeyStoreUnavailable, 'list');
  await t.resolves(new PartnerKeys(store).verify('malformed'), 'a malformed key still needs no store');
});

t.test('shared-state store: a malformed stored record makes the store unavailable rather than a silent 401', async (t) => {
  const { key, record } = issue('Acme');
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

// ---------------------------------------------------------------------------------------------
t.test('openKeyStore: "Redis-backed when config.redisUrl is set (using the passed shared state), else FileKeyStore(DATA_DIR/keys.json)"', async (t) => {
  const dir = tempDir(t);
  const fileStore = openKeyStore(loadConfig({ DATA_DIR: dir }), new InProcessSharedState());
  t.type(fileStore, FileKeyStore);
  t.equal((fileStore as FileKeyStore).file, path.join(dir, 'keys.json'));
  t.equal(keysFile(loadConfig({})), path.join('data', 'keys.json'), 'DATA_DIR defaults to ./data');

  const state = new InProcessSharedState();
  const shared = openKeyStore(loadConfig({ DATA_DIR: dir, REDIS_URL: 'redis://127.0.0.1:6379' }, { serviceBuild: 'dev', makesPlans: false }), state);
  t.type(shared, SharedStateKeyStore);
  const { record } = issue('Acme');
  await shared.add(record);
  t.ok(await state.mapGet('keys', record.hash), 'its records go to the shared state given');
  t.strictSame(readdirSync(dir), [], 'and not to the file');
  t.throws(() => openKeyStore(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }, { serviceBuild: 'dev', makesPlans: false }), null), /REDIS_URL/);
});

// ---------------------------------------------------------------------------------------------
t.test('CLI: create "prints the new key alone on the last line of stdout", the rest to stderr', async (t) => {
  const dir = tempDir(t);
  const run = await runKeysCli(['create', '--name', 'Acme Corp'], { DATA_DIR: dir });
  t.equal(run.code, 0, run.stderr);
  const key = lastLine(run.stdout);
  t.ok(isWellFormedKey(key), 'a well-formed key');
  t.equal(run.stdout, `${key}\n`, 'stdout is the key alone');
  t.match(run.stderr, /created key_[0-9a-f]{12} for "Acme Corp", fee schema partner-default/);
  t.match(run.stderr, /it will not be shown again/);
  t.notOk(run.stderr.includes(key) || run.stderr.includes(hashKey(key)), 'stderr has neither the key nor its hash');
  const stored = await new FileKeyStore(path.join(dir, 'keys.json')).findByHash(hashKey(key));
  t.match(stored, { name: 'Acme Corp', status: 'active', revokedAt: null, schemaId: 'partner-default' }, 'stored hashed, under the default schema');
  t.match(run.stderr, stored!.id, 'the id it printed is the record\'s');
});

t.test('CLI: "--schema: the fee schema id to record", validated against the configured schemas', async (t) => {
  const dir = tempDir(t);
  const schemas = path.join(dir, 'schemas.json');
  writeFileSync(
    schemas,
    JSON.stringify({ defaultSchemaId: 'standard', schemas: [{ id: 'standard', serviceBps: 5, integratorCapBps: 10 }, { id: 'vip', serviceBps: 2, integratorCapBps: 10 }], overrides: [{ id: 'acme-deal', schemaId: 'vip', serviceBps: 1 }] }),
  );
  const env = { DATA_DIR: dir, FEE_SCHEMAS_FILE: schemas };
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  for (const [args, schemaId] of [
    [[], 'standard'],
    [['--schema', 'vip'], 'vip'],
    [['--schema=acme-deal'], 'acme-deal'],
  ] as const) {
    const run = await runKeysCli(['create', '--name', 'Acme', ...args], env);
    t.equal(run.code, 0, run.stderr);
    t.equal((await store.findByHash(hashKey(lastLine(run.stdout))))?.schemaId, schemaId, `${args.join(' ') || 'no --schema'}: ${schemaId}`);
  }
  const before = readFileSync(path.join(dir, 'keys.json'), 'utf8');
  for (const [schema, extra] of [['partner-default', {}], ['nope', { FEE_SCHEMAS_FILE: '' }]] as const) {
    const run = await runKeysCli(['create', '--name', 'Acme', '--schema', schema], { ...env, ...extra });
    t.equal(run.code, 2, `unknown schema ${schema} rejected`);
    t.equal(run.stdout, '', 'no key printed');
    t.match(run.stderr, `"${schema}" is not a configured fee schema`);
    t.match(run.stderr, /: use one of [a-z0-9-]+(, [a-z0-9-]+)*; no key was created/, 'the message lists the schemas to choose from and says nothing was created');
  }
  t.equal(readFileSync(path.join(dir, 'keys.json'), 'utf8'), before, 'nothing stored');
  const broken = await runKeysCli(['create', '--name', 'Acme'], { ...env, FEE_SCHEMAS_FILE: path.join(dir, 'absent.json') });
  t.equal(broken.code, 1, 'unreadable FEE_SCHEMAS_FILE: a ConfigError, exit 1');
  t.match(broken.stderr, /FEE_SCHEMAS_FILE/);
});

t.test('CLI: list "never prints a key or a hash"; it prints id, name, createdAt, status, revokedAt, schema', async (t) => {
  const dir = tempDir(t);
  const env = { DATA_DIR: dir };
  const empty = await runKeysCli(['list'], env);
  t.equal(empty.code, 0);
  t.match(empty.stderr, /no keys yet/);
  const keys: string[] = [];
  for (const name of ['Acme', 'Globex']) keys.push(lastLine((await runKeysCli(['create', '--name', name], env)).stdout));
  t.equal((await runKeysCli(['revoke', keys[0]!], env)).code, 0);

  const table = await runKeysCli(['list'], env);
  const json = await runKeysCli(['list', '--json'], env);
  for (const run of [table, json]) {
    t.equal(run.code, 0, run.stderr);
    for (const key of keys) t.notOk(`${run.stdout}${run.stderr}`.includes(key) || `${run.stdout}${run.stderr}`.includes(hashKey(key)), 'no key, no hash');
    t.notMatch(run.stdout, /bx_|[0-9a-f]{64}/);
  }
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^ID\s+NAME\s+CREATED\s+STATUS\s+REVOKED\s+SCHEMA\s+ORIGINS\s+VIA$/);
  t.match(lines[1], /^key_[0-9a-f]{12}\s+Acme\s+\S+Z\s+revoked\s+\S+Z\s+partner-default\s+any \(server-to-server\)\s+cli$/);
  t.match(lines[2], /^key_[0-9a-f]{12}\s+Globex\s+\S+Z\s+active\s+-\s+partner-default\s+any \(server-to-server\)\s+cli$/);
  const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
  t.strictSame(Object.keys(rows[0]!), ['id', 'name', 'createdAt', 'status', 'revokedAt', 'schemaId', 'origins', 'issuedBy']);
  t.strictSame(rows.map((r) => [r.name, r.status]), [['Acme', 'revoked'], ['Globex', 'active']]);
});

t.test('CLI: revoke "accepts either the full key, which is hashed to find the record, or the key_… id"', async (t) => {
  const dir = tempDir(t);
  const env = { DATA_DIR: dir };
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  const byKey = lastLine((await runKeysCli(['create', '--name', 'ByKey'], env)).stdout);
  const byId = lastLine((await runKeysCli(['create', '--name', 'ById'], env)).stdout);
  const idOf = async (key: string) => (await store.findByHash(hashKey(key)))!.id;

  const revokedByKey = await runKeysCli(['revoke', byKey], env);
  t.equal(revokedByKey.code, 0, revokedByKey.stderr);
  t.match(revokedByKey.stdout, new RegExp(`^${await idOf(byKey)} \\("ByKey"\\) revoked at \\S+Z\\n$`));
  t.notOk(`${revokedByKey.stdout}${revokedByKey.stderr}`.includes(byKey) || revokedByKey.stdout.includes(hashKey(byKey)), 'answers with the id, never the key or its hash');
  t.equal((await store.findByHash(hashKey(byKey)))?.status, 'revoked');

  const id = await idOf(byId);
  const revokedById = await runKeysCli(['revoke', id], env);
  t.equal(revokedById.code, 0, revokedById.stderr);
  t.equal((await store.findByHash(hashKey(byId)))?.status, 'revoked');
  const again = await runKeysCli(['revoke', id], env);
  t.equal(again.code, 0, 'revoking twice is not an error');
  t.match(again.stdout, /was already revoked at/);
  t.equal(await new PartnerKeys(store).verify(byId), null, 'a revoked key verifies to nothing');

  const unknownId = await runKeysCli(['revoke', 'key_000000000000'], env);
  t.equal(unknownId.code, 1, 'an unknown id: exit 1');
  t.match(unknownId.stderr, /no key with the id key_000000000000/);
  const unknownKey = generateKey();
  const unknown = await runKeysCli(['revoke', unknownKey], env);
  t.equal(unknown.code, 1, 'an unknown key: exit 1');
  t.notOk(unknown.stderr.includes(unknownKey), 'the key is not echoed');
  const typo = `${byId.slice(0, -1)}${byId.endsWith('a') ? 'b' : 'a'}`;
  const mistyped = await runKeysCli(['revoke', typo], env);
  t.equal(mistyped.code, 2, 'a mistyped key: usage, exit 2');
  t.notOk(mistyped.stderr.includes(typo), 'the mistyped key is not echoed');
});

t.test('CLI: "Unknown command/missing args → clear message on stderr, exit code 2"', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  for (const args of [
    [],
    ['frobnicate'],
    ['create'],
    ['create', '--name'],
    ['create', '--name', '   '],
    ['create', '--name', 'a\tb'],
    ['create', '--name', 'x'.repeat(101)],
    ['create', '--name', 'Acme', 'extra'],
    ['create', '--name', 'Acme', '--colour', 'red'],
    ['revoke'],
    ['revoke', 'key_000000000000', 'key_000000000001'],
    ['revoke', 'someone'],
    ['list', 'all'],
    ['list', '--json=yes'],
  ]) {
    const run = await runKeysCli(args, env);
    t.equal(run.code, 2, `${JSON.stringify(args)}: exit 2`);
    t.match(run.stderr, /^keys: .+\nusage: npm run -s keys -- <command>/, `${JSON.stringify(args)}: a message and the usage`);
    t.equal(run.stdout, '', `${JSON.stringify(args)}: nothing on stdout`);
  }
  t.strictSame(readdirSync(env.DATA_DIR), [], 'nothing written');
  const help = await runKeysCli(['help'], env);
  t.equal(help.code, 0);
  t.match(help.stdout, /^usage:/);
});

t.test('CLI: "Bad config (ConfigError) → message and exit 1"; so is an unreadable store', async (t) => {
  const dir = tempDir(t);
  const bad = await runKeysCli(['list'], { DATA_DIR: dir, PORT: 'eighty' });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /invalid configuration:\n {2}- PORT must be/);
  writeFileSync(path.join(dir, 'keys.json'), 'garbage');
  for (const args of [['list'], ['create', '--name', 'Acme'], ['revoke', 'key_000000000000']]) {
    const run = await runKeysCli(args, { DATA_DIR: dir });
    t.equal(run.code, 1, `${args[0]}: exit 1`);
    t.match(run.stderr, /keys: .*keys\.json is not valid JSON/);
    t.equal(run.stdout, '', `${args[0]}: no key printed`);
  }
});

t.test('"A key naming a fee schema that does not exist": at start one warning line per such key id (never the key), and its quotes answer 503 key_verification_unavailable with Retry-After, within the quote\'s contract, never a quote under other terms', async (t) => {
  // Keys issued under schemas a FEE_SCHEMAS_FILE defined, then the service started without them.
  const dir = tempDir(t);
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  const retired = await issueKey(store, { name: 'retired', schemaId: 'retired-2025' });
  const alsoRetired = await issueKey(store, { name: 'also-retired', schemaId: 'gone' });
  const fine = await issueKey(store, { name: 'fine' });
  const app = await testApp({ env: { DATA_DIR: dir } });
  t.teardown(app.close);
  const warnings = () => app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('key names a fee schema that is not configured'));
  for (let i = 0; i < 100 && warnings().length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  t.strictSame(warnings().map((l) => l.keyId).sort(), [retired.record.id, alsoRetired.record.id].sort(), 'one line per key id naming a missing schema');

  for (let i = 0; i < 3; i++) {
    const res = await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=100', headers: { 'x-api-key': retired.key } });
    t.equal(res.statusCode, 503, `quote ${i + 1}: 503, a status the quote documents`);
    t.match(res.json(), { code: 'key_verification_unavailable', action: 'retry after Retry-After', error: /fee terms are not configured/ });
    t.equal(res.headers['retry-after'], '60');
    t.notMatch(res.body, /retired-2025|appliedSchema|venues/, 'names no schema, and quotes nothing');
  }
  t.equal(warnings().length, 2, 'its requests add no line: it was named at start');
  t.equal((await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=100', headers: { 'x-api-key': fine.key } })).statusCode, 200, 'a key under a configured schema is served');
  const text = app.rawLogs();
  for (const { key } of [retired, alsoRetired, fine]) t.notOk(text.includes(key), 'no key is ever logged');
  t.notOk(app.logs().some((l) => l.msg === 'unexpected error'), 'not an unexpected error');
});
