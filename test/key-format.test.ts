// The key format's and the key record's checks at their edges (core/keys/api-key.ts,
// core/keys/partner-keys.ts): whole-string shapes, and values of the wrong JSON type that would
// read as right once turned into a string; and the record helpers the stores and the CLI call (who
// made a key, a record's origins replaced). Beside test/keys.test.ts, which covers the stores.
import t from 'tap';
import { isWellFormedKey } from '../core/keys/api-key.js';
import { issuerOf, newKey, parseKeyRecord, withOrigins } from '../core/keys/partner-keys.js';
import { independentChecksum } from './helpers/keys.js';

t.test('key format: "`bx_`, 32 random base62 characters" is the whole shape: a key outside it is refused even when its checksum matches', async (t) => {
  const withChecksum = (prefixAndBody: string) => prefixAndBody + independentChecksum(prefixAndBody);
  t.ok(isWellFormedKey(withChecksum(`bx_${'Az09'.repeat(8)}`)), 'the shape itself');
  t.notOk(isWellFormedKey(withChecksum(`xx_${'Az09'.repeat(8)}`)), 'another prefix');
  t.notOk(isWellFormedKey(withChecksum(`bx_${'-_+/'.repeat(8)}`)), 'characters outside base62');
  t.notOk(isWellFormedKey(withChecksum(`bx_${'é'.repeat(32)}`)), 'letters outside ASCII');
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
