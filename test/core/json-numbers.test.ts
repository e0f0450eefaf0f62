// core/json-numbers.ts: "never let a float reach an amount", read as cheaply as each venue allows.
import fc from 'fast-check';
import t from 'tap';
import { parseJsonKeepingFields, parseJsonKeepingNumbers } from '../../core/json-numbers.js';

const AMOUNTS = new Set(['user_gets', 'price', 'quantity']);

t.test('a named member\'s JSON number keeps its source text; every other value is JSON.parse\'s', async (t) => {
  const text = '{"user_gets": 14.887162959697779123, "n": [1e-7, 0], "price" :\n-0.5E+3, "note": "user_gets: 1.5", "deep": {"quantity":7}}';
  t.strictSame(parseJsonKeepingFields(text, AMOUNTS), { user_gets: '14.887162959697779123', n: [1e-7, 0], price: '-0.5E+3', note: 'user_gets: 1.5', deep: { quantity: '7' } });
  t.strictSame(parseJsonKeepingFields('{"price":"0.15","quantity":"40000"}', AMOUNTS), { price: '0.15', quantity: '40000' }, 'strings stay strings');
  t.strictSame(parseJsonKeepingFields('{"a":"\\"price\\":1","b":2}', AMOUNTS), { a: '"price":1', b: 2 }, 'a member name inside a string is text, not a member');
  t.strictSame(parseJsonKeepingFields('[1.5, {"price": [2.5]}]', AMOUNTS), [1.5, { price: [2.5] }], 'a number in a list is no member\'s value');
});

t.test('invalid JSON is refused as JSON.parse refuses it: quoting numbers makes nothing valid', async (t) => {
  for (const text of ['{"price": 1.5.5}', '{"price": 01}', '{"price": 1e}', '{"price": .5}', '{"price": 1', '{"price" 1}', '{"price": +1}', '']) {
    t.throws(() => parseJsonKeepingFields(text, AMOUNTS), SyntaxError, text);
  }
});

t.test('against the lossless parser: the named members agree with it exactly, the others with JSON.parse', async (t) => {
  const number = fc.oneof(
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
    fc.tuple(fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.boolean()).map(([i, f, neg]) => `${neg ? '-' : ''}${i}.${f}`),
    fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: -30, max: 30 })).map(([m, e]) => `${m}e${e}`),
  );
  const key = fc.constantFrom('user_gets', 'price', 'quantity', 'other', 'index', 'pr"ice');
  const value: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      number,
      fc.string().map((s) => JSON.stringify(s)),
      fc.constantFrom('true', 'false', 'null'),
      fc.array(tie('v'), { maxLength: 4 }).map((xs) => `[ ${xs.join(' ,')}]`),
      fc.uniqueArray(fc.tuple(key, tie('v')), { maxLength: 4, selector: ([k]) => k }).map((kv) => `{${kv.map(([k, v]) => `${JSON.stringify(k)} :\t${v}`).join(',\n')}}`),
    ),
  })).v;
  fc.assert(
    fc.property(value, (text) => {
      const exact = parseJsonKeepingNumbers(text);
      // What the lossless parser read as a number's text, JSON.parse reads as that number, except
      // where a named member keeps the text.
      const reference = JSON.parse(text) as unknown;
      const merge = (lossless: unknown, plain: unknown, member: string | null): unknown => {
        if (Array.isArray(lossless)) return lossless.map((x, i) => merge(x, (plain as unknown[])[i], null));
        if (lossless !== null && typeof lossless === 'object') {
          return Object.fromEntries(Object.entries(lossless).map(([k, v]) => [k, merge(v, (plain as Record<string, unknown>)[k], k)]));
        }
        return member !== null && AMOUNTS.has(member) && typeof plain === 'number' ? lossless : plain;
      };
      t.strictSame(parseJsonKeepingFields(text, AMOUNTS), merge(exact, reference, null));
    }),
    { numRuns: 300 },
  );
});

t.test('text that is not JSON is refused before any scan: an unterminated run of escaped quotes (quadratic to scan) is refused at once', async (t) => {
  const hostile = `{"price": 1, "note": "${'\\"'.repeat(400_000)}`;
  t.throws(() => parseJsonKeepingFields(hostile, AMOUNTS), SyntaxError);
  t.strictSame(parseJsonKeepingFields(`{"price": 1, "note": "${'\\"'.repeat(400_000)}"}`, AMOUNTS), { price: '1', note: '"'.repeat(400_000) }, 'and the same run terminated is read');
});
