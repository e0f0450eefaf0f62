// The key format (core/keys/api-key.ts): `bx_`, 32 random base62 characters and a 6-character base62
// checksum, as generated, hashed and refused. The checksum is recomputed here on its own
// (test/helpers/keys.ts), not with the code under test.
import t from 'tap';
import { generateKey, hashKey, isWellFormedKey, KEY_ID_SHAPE, newKeyId } from '../../../core/keys/api-key.js';
import { BASE62, independentChecksum } from '../../helpers/keys.js';

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

t.test('key format: "`bx_`, 32 random base62 characters" is the whole shape: a key outside it is refused even when its checksum matches', async (t) => {
  const withChecksum = (prefixAndBody: string) => prefixAndBody + independentChecksum(prefixAndBody);
  t.ok(isWellFormedKey(withChecksum(`bx_${'Az09'.repeat(8)}`)), 'the shape itself');
  t.notOk(isWellFormedKey(withChecksum(`xx_${'Az09'.repeat(8)}`)), 'another prefix');
  t.notOk(isWellFormedKey(withChecksum(`bx_${'-_+/'.repeat(8)}`)), 'characters outside base62');
  t.notOk(isWellFormedKey(withChecksum(`bx_${'é'.repeat(32)}`)), 'letters outside ASCII');
});
