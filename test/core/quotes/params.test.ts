// The quote query rules of core/quotes/params.ts: parseQuoteParams (tokens, amount, the integrator
// fee's pair), parseAmount and parseIntegratorFee. loadConfig is test/core/config.test.ts.
import t from 'tap';
import { DomainError } from '../../../core/errors.js';
import { MAX_AMOUNT, parseAmount, parseIntegratorFee, parseQuoteParams } from '../../../core/quotes/params.js';
import { CBTC, CC, USDCX } from '../../../core/tokens.js';
import type { GetQuoteQuery } from '../../../core/contract/v1.js';

const query = (q: Partial<GetQuoteQuery>): GetQuoteQuery => ({ from: 'CC', to: 'USDCx', amount: '100', ...q }) as GetQuoteQuery;

/** The DomainError fn throws, or a test failure. */
function domainError(t: { fail: (msg: string) => unknown }, fn: () => unknown): DomainError {
  try {
    fn();
    t.fail('expected a DomainError');
  } catch (err) {
    if (err instanceof DomainError) return err;
    t.fail(`expected a DomainError, got ${String(err)}`);
  }
  return new DomainError('internal', '');
}

t.test('parseQuoteParams: a valid query becomes the domain request with defaults', async (t) => {
  const p = parseQuoteParams(query({}));
  t.equal(p.request.give, CC);
  t.equal(p.request.want, USDCX);
  t.equal(p.request.amount.toFixed(), '100');
  t.equal(p.slippageBps, 50, 'slippageBps defaults to 50');
  t.equal(p.ref, null);
  t.equal(p.integratorFee, null);
  const q = parseQuoteParams(query({ slippageBps: 0, ref: 'my-wallet' }));
  t.equal(q.slippageBps, 0, 'an explicit 0 is kept, not replaced by the default');
  t.equal(q.ref, 'my-wallet');
});

t.test('parseQuoteParams: "unknown token → unknown_token, listing the known symbols CC, USDCx, CBTC"', async (t) => {
  for (const [q, param] of [
    [{ from: 'DOGE' }, 'from'],
    [{ to: 'ETH' }, 'to'],
    [{ from: 'USDC' }, 'from'],
  ] as const) {
    const err = domainError(t, () => parseQuoteParams(query(q)));
    t.equal(err.code, 'unknown_token', JSON.stringify(q));
    t.match(err.message, 'CC, USDCx, CBTC', 'the message lists the known symbols');
    t.match(err.message, param, `the message names ${param}`);
  }
});

t.test('parseQuoteParams: "matches case-insensitively; `Amulet` is accepted for CC"', async (t) => {
  const cases: Array<[string, typeof CC]> = [
    ['cc', CC],
    ['Cc', CC],
    ['Amulet', CC],
    ['AMULET', CC],
    ['amulet', CC],
    ['usdcx', USDCX],
    ['USDCX', USDCX],
    ['cbtc', CBTC],
  ];
  for (const [symbol, token] of cases) {
    const other = token === USDCX ? 'CC' : 'USDCx';
    t.equal(parseQuoteParams(query({ from: symbol, to: other })).request.give, token, `from=${symbol}`);
    t.equal(parseQuoteParams(query({ from: other, to: symbol })).request.want, token, `to=${symbol}`);
  }
});

t.test('parseQuoteParams: "from and to must be different tokens" → bad_request, also through the Amulet alias and case', async (t) => {
  for (const [from, to] of [
    ['CC', 'CC'],
    ['CC', 'Amulet'],
    ['usdcx', 'USDCx'],
    ['CBTC', 'cbtc'],
  ]) {
    const err = domainError(t, () => parseQuoteParams(query({ from, to })));
    t.equal(err.code, 'bad_request', `${from} → ${to}`);
    t.match(err.message, /from'? and '?to'? must be different tokens/);
  }
});

t.test('parseAmount: "amount must be greater than 0" and "at most 1000000000"', async (t) => {
  for (const amount of ['0', '0.0', '0.0000000000']) {
    const err = domainError(t, () => parseAmount(amount, 'amount'));
    t.equal(err.code, 'bad_request', `amount ${amount}`);
    t.match(err.message, /\bamount'? must be greater than 0/);
  }
  for (const amount of ['-1', '-0', 'abc', '1e5', '', ' 1']) {
    const err = domainError(t, () => parseAmount(amount, 'amount'));
    t.equal(err.code, 'bad_request', `amount ${JSON.stringify(amount)}`);
    t.match(err.message, /'amount' must be a decimal number/);
  }
  for (const amount of ['1000000000.0000000001', '1000000001', '9999999999']) {
    const err = domainError(t, () => parseAmount(amount, 'amount'));
    t.equal(err.code, 'bad_request', `amount ${amount}`);
    t.match(err.message, /\bamount'? must be at most 1000000000/);
  }
  t.equal(parseAmount('1000000000', 'amount').toFixed(), '1000000000', 'exactly 1000000000 is accepted');
  t.equal(parseAmount('1000000000.0000000000', 'amount').toFixed(), '1000000000', 'with zero fraction too');
  t.ok(parseAmount('1000000000', 'amount').eq(MAX_AMOUNT));
  t.equal(parseAmount('0.0000000001', 'amount').toFixed(), '0.0000000001', 'the smallest Daml Decimal is accepted');
  t.equal(parseAmount('100.50', 'amount').toFixed(), '100.5');
  t.match(domainError(t, () => parseAmount('0', 'sellAmount')).message, 'sellAmount', 'the message names the parameter');
  // Through parseQuoteParams too.
  t.equal(domainError(t, () => parseQuoteParams(query({ amount: '0' }))).code, 'bad_request');
  t.equal(domainError(t, () => parseQuoteParams(query({ amount: '1000000000.0000000001' }))).code, 'bad_request');
  t.equal(parseQuoteParams(query({ amount: '1000000000' })).request.amount.toFixed(), '1000000000');
});

t.test('parseQuoteParams: "feeBps and feeRecipient must be sent together" → bad_fee_params', async (t) => {
  const recipient = 'wallet::1220' + 'a'.repeat(64);
  const noRecipient = domainError(t, () => parseQuoteParams(query({ feeBps: 5 })));
  t.equal(noRecipient.code, 'bad_fee_params', 'feeBps without feeRecipient');
  t.match(noRecipient.message, /feeBps'? and '?feeRecipient'? must be sent together/);
  t.equal(domainError(t, () => parseQuoteParams(query({ feeRecipient: recipient }))).code, 'bad_fee_params', 'feeRecipient without feeBps');
  t.equal(domainError(t, () => parseQuoteParams(query({ feeBps: 0 }))).code, 'bad_fee_params', 'feeBps 0 still needs a recipient');
  t.strictSame(parseQuoteParams(query({ feeBps: 5, feeRecipient: recipient })).integratorFee, { bps: 5, recipient });
  t.strictSame(parseIntegratorFee(0, recipient), { bps: 0, recipient }, 'feeBps 0 with a recipient is kept');
  t.equal(parseIntegratorFee(undefined, undefined), null);
});
