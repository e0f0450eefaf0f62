// Disclosed fees (core/quotes/client-fees.ts), fee schemas (core/quotes/fee-schemas.ts) and the keyed quote body
// (core/quotes/partner-quotes.ts): every figure recomputes from the others.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { checkIntegratorCap, clientFees } from '../../../core/quotes/client-fees.js';
import { ConfigError } from '../../../core/config.js';
import { dec } from '../../../core/decimal.js';
import { DEFAULT_FEE_SCHEMAS, FeeSchemas, loadFeeSchemas, type FeeTerms } from '../../../core/quotes/fee-schemas.js';
import { withClientFees } from '../../../core/quotes/partner-quotes.js';
import type { QuoteResponse } from '../../../core/contract/v1.js';
import { tempDir } from '../../helpers/temp.js';

const RECIPIENT = 'wallet-co::1220aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const TERMS: FeeTerms = { schemaId: 'partner-default', overrideId: null, serviceBps: 5, integratorCapBps: 10 };

/** An independent computation in integers of 1e-10: floor(net × bps / 10000). */
const SCALE = 10n ** 10n;
const toUnits = (text: string): bigint => {
  const [whole, frac = ''] = text.split('.');
  return BigInt(whole!) * SCALE + BigInt(frac.padEnd(10, '0'));
};
const fromUnits = (units: bigint): string => {
  const whole = units / SCALE;
  const frac = (units % SCALE).toString().padStart(10, '0').replace(/0+$/, '');
  return frac === '' ? whole.toString() : `${whole}.${frac}`;
};

t.test('"userReceives = net − service − integrator", each fee floor(net × bps / 10000) in the user\'s favour (property, against integer arithmetic)', async () => {
  const amount = fc
    .tuple(fc.bigInt({ min: 0n, max: 10n ** 9n }), fc.bigInt({ min: 0n, max: SCALE - 1n }))
    .map(([whole, frac]) => fromUnits(whole * SCALE + frac));
  fc.assert(
    fc.property(amount, fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 10 }), (net, serviceBps, integratorBps) => {
      const fees = clientFees(dec(net), { ...TERMS, serviceBps }, { bps: integratorBps, recipient: RECIPIENT }, true);
      const n = toUnits(net);
      const service = (n * BigInt(serviceBps)) / 10000n;
      const integrator = (n * BigInt(integratorBps)) / 10000n;
      return (
        fees.service.amount === fromUnits(service) &&
        fees.service.bps === serviceBps &&
        fees.integrator?.amount === fromUnits(integrator) &&
        fees.integrator.bps === integratorBps &&
        fees.userReceives === fromUnits(n - service - integrator)
      );
    }),
    { numRuns: 2000 },
  );
});

t.test('clientFees: "while FEE_COLLECTION_ENABLED is false, disclosed fee lines read zero"; the integrator line still names its recipient', async (t) => {
  t.strictSame(clientFees(dec('14.9549252252'), TERMS, { bps: 7, recipient: RECIPIENT }, false), {
    integrator: { bps: 0, amount: '0', recipient: RECIPIENT },
    service: { bps: 0, amount: '0' },
    userReceives: '14.9549252252',
  });
});

t.test('clientFees: the integrator line only "when feeBps+feeRecipient are given"', async (t) => {
  const fees = clientFees(dec('100'), TERMS, null, true);
  t.equal(fees.integrator, null);
  t.strictSame(fees.service, { bps: 5, amount: '0.05' });
  t.equal(fees.userReceives, '99.95');
});

t.test('checkIntegratorCap: "feeBps over the partner\'s cap" is 400 bad_fee_params; at the cap is fine', async (t) => {
  const capped = { ...TERMS, integratorCapBps: 4 };
  t.doesNotThrow(() => checkIntegratorCap({ bps: 4, recipient: RECIPIENT }, capped));
  t.throws(() => checkIntegratorCap({ bps: 5, recipient: RECIPIENT }, capped), { code: 'bad_fee_params', message: /'feeBps' 5 is over this key's cap of 4 bps/ });
  t.doesNotThrow(() => checkIntegratorCap(null, capped));
});

t.test('withClientFees: fees on each available venue only, appliedSchema added, ranking and base figures untouched', async (t) => {
  const base: QuoteResponse = {
    pair: { give: 'Amulet', want: 'USDCx' },
    amount: '100',
    asOf: '2026-11-22T12:00:00.000Z',
    venues: [
      { venueId: 'a', settlementMode: 'managed-deposit', available: true, gross: '15', net: '14.9985', fee: null, feeBps: 0, rejectionCode: null },
      { venueId: 'b', settlementMode: 'managed-deposit', available: false, gross: null, net: null, fee: null, feeBps: null, rejectionCode: 'no_pool' },
    ],
    best: { venueId: 'a', gross: '15', net: '14.9985' },
    edgeBps: null,
  };
  const snapshot = structuredClone(base);
  const keyed = withClientFees(base, { ...TERMS, overrideId: 'wallet-co' }, { integratorFee: { bps: 10, recipient: RECIPIENT } }, true);
  t.strictSame(base, snapshot, 'the base body is not changed');
  t.strictSame(keyed.venues[0]!.clientFees, {
    integrator: { bps: 10, amount: '0.0149985', recipient: RECIPIENT },
    service: { bps: 5, amount: '0.00749925' },
    userReceives: '14.97600225',
  });
  t.notOk('clientFees' in keyed.venues[1]!, 'no fee block on an unavailable venue');
  t.strictSame(keyed.appliedSchema, { schemaId: 'partner-default', overrideId: 'wallet-co' });
  t.strictSame(keyed.venues.map((v) => v.venueId), ['a', 'b'], 'the key never changes the ranking');
});

t.test('fee schemas: "a default schema, and per-partner negotiated overrides (a different service bps, a lower integrator cap)"', async (t) => {
  const schemas = new FeeSchemas({
    defaultSchemaId: 'partner-default',
    schemas: [{ id: 'partner-default', serviceBps: 5, integratorCapBps: 10 }],
    overrides: [{ id: 'wallet-co-2026', schemaId: 'partner-default', serviceBps: 2, integratorCapBps: 6 }],
  });
  t.strictSame(schemas.termsOf('partner-default'), { schemaId: 'partner-default', overrideId: null, serviceBps: 5, integratorCapBps: 10 });
  t.strictSame(schemas.termsOf('wallet-co-2026'), { schemaId: 'partner-default', overrideId: 'wallet-co-2026', serviceBps: 2, integratorCapBps: 6 });
  t.equal(schemas.termsOf('nope'), undefined);
  t.ok(schemas.has('wallet-co-2026'));
  t.equal(new FeeSchemas(DEFAULT_FEE_SCHEMAS).defaultSchemaId, 'partner-default');
});

t.test('fee schemas: bad schema data stops start-up with every problem named', async (t) => {
  try {
    new FeeSchemas({
      defaultSchemaId: 'missing',
      schemas: [
        { id: 'a', serviceBps: 101, integratorCapBps: 11 },
        { id: 'a', serviceBps: 1, integratorCapBps: 1 },
      ],
      overrides: [
        { id: 'o', schemaId: 'a', integratorCapBps: 12 },
        { id: 'p', schemaId: 'nope' },
      ],
    });
    t.fail('expected a ConfigError');
  } catch (err) {
    t.type(err, ConfigError);
    const text = (err as ConfigError).problems.join('\n');
    t.match(text, /schemas\[0\]\.serviceBps must be an integer from 0 to 100/);
    t.match(text, /schemas\[0\]\.integratorCapBps must be an integer from 0 to 10/);
    t.match(text, /schemas\[1\] id "a" must be unique/);
    t.match(text, /overrides\[0\]\.integratorCapBps \(at most its schema's cap\) must be an integer from 0 to/);
    t.match(text, /overrides\[1\]\.schemaId "nope" must name a schema/);
    t.match(text, /defaultSchemaId "missing" must name a schema/);
  }
});

t.test('loadFeeSchemas: "schemas are config an operator can change without a code change" (FEE_SCHEMAS_FILE)', async (t) => {
  const dir = tempDir(t, 'bestex-fees-');
  const file = path.join(dir, 'fees.json');
  writeFileSync(file, JSON.stringify({ defaultSchemaId: 'std', schemas: [{ id: 'std', serviceBps: 3, integratorCapBps: 8 }] }));
  t.equal(loadFeeSchemas({ feeSchemasFile: file }).termsOf('std')?.serviceBps, 3);
  t.equal(loadFeeSchemas({ feeSchemasFile: null }).defaultSchemaId, 'partner-default', 'without a file, the built-in default');
  writeFileSync(file, '{not json');
  t.throws(() => loadFeeSchemas({ feeSchemasFile: file }), { name: 'ConfigError', message: /FEE_SCHEMAS_FILE .* cannot be read as JSON/ });
  t.throws(() => loadFeeSchemas({ feeSchemasFile: path.join(dir, 'absent.json') }), { name: 'ConfigError' });
});
