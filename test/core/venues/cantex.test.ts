// The Cantex adapter (core/venues/cantex.ts) against fixtures of the documented shapes (the
// CaviarNine cantex_sdk's POST /v2/pools/quote and GET /v2/pools/info), served by a fake fetch.
// Fixture bodies are JSON text, so numbers keep every digit they are written with.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { CANTEX_BASE_URL, CantexVenue } from '../../../core/venues/cantex.js';
import { VenueHttpError, VenueUnreadable } from '../../../core/venues/venue-http.js';
import { deadlineIn, fakeFetch, neverAborted, noDeadline, plainQuote, type Reply, sentJson, type SentRequest } from '../../helpers/venue-fetch.js';

const ADMINS = {
  Amulet: 'DSO::1220aaaa',
  USDCx: 'usdcx-issuer::1220bbbb',
  CBTC: 'cbtc-issuer::1220cccc',
} as const;
const KEY = 'cantex-test-key';

/** A Cantex venue over the fake fetch, answering with `reply`. */
function cantex(reply: (call: SentRequest) => Reply) {
  const fake = fakeFetch(reply);
  const venue = new CantexVenue({
    baseUrl: CANTEX_BASE_URL,
    headers: { authorization: `Bearer ${KEY}` },
    // Longer than any test runs: a hang settles only by the deadline a test gives.
    timeoutMs: 600_000,
    fetch: fake.fetch,
    instrumentAdmins: ADMINS,
  });
  return { venue, calls: fake.calls };
}

const open = noDeadline();

/** A /v2/pools/quote answer of the documented shape; amounts are spliced in as JSON text. */
function quoteBody(o: {
  returned: string;
  networkFee: string;
  give?: Token;
  want?: Token;
  feeInstrument?: string;
  returnedInstrument?: string;
}): string {
  const give = o.give ?? CC;
  const want = o.want ?? USDCX;
  const feeInstrument = o.feeInstrument ?? give.instrument;
  const returnedInstrument = o.returnedInstrument ?? want.instrument;
  const adminOf = (id: string) => (ADMINS as Record<string, string>)[id] ?? 'someone::1220dddd';
  return `{
    "returned": {"amount": ${o.returned}, "instrument_id": "${returnedInstrument}", "instrument_admin": "${adminOf(returnedInstrument)}"},
    "prices": {"pool_before": "0.1495", "pool_after": "0.14949", "slippage": "0.0001", "trade": "0.14887", "trade_no_fees": "0.14895"},
    "fees": {
      "fee_percentage": "0.0005", "amount_admin": "0.0025", "amount_liquidity": "0.0475",
      "instrument_id": "${give.instrument}", "instrument_admin": "${ADMINS[give.instrument]}",
      "network_fee": {"amount": ${o.networkFee}, "instrument_id": "${feeInstrument}", "instrument_admin": "${adminOf(feeInstrument)}"}
    },
    "pools": [{"pool_id": "p1", "contract_id": "00abc", "sell": {}, "buy": {}, "size": {}, "fees": {}, "prices": {}}],
    "pool_size": {"amount": "4485000", "instrument_id": "USDCx", "instrument_admin": "${ADMINS.USDCx}"},
    "estimated_time_seconds": "6"
  }`;
}


t.test('"POST /v2/pools/quote with string fields; returned.amount is the output; the network fee is charged on top of the sell amount in the give token"', async (t) => {
  const { venue, calls } = cantex(() => ({ body: quoteBody({ returned: '"14.8871629596"', networkFee: '"0.79"' }) }));
  const q = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open);
  t.strictSame(plainQuote(q), { gross: '14.8871629596', fee: { amount: '0.79', asset: 'CC', appliedTo: 'on_top' } });
  t.equal(calls.length, 1);
  const [call] = calls;
  t.equal(call?.method, 'POST');
  t.equal(call?.url, 'https://api.cantex.io/v2/pools/quote');
  t.equal(call?.headers.authorization, `Bearer ${KEY}`, 'the API key as a bearer token');
  t.equal(call?.headers['content-type'], 'application/json');
  t.strictSame(sentJson(call), {
    sellAmount: '100',
    sellInstrumentId: 'Amulet',
    sellInstrumentAdmin: ADMINS.Amulet,
    buyInstrumentId: 'USDCx',
    buyInstrumentAdmin: ADMINS.USDCx,
  });
});

t.test('"a zero network fee is no fee" (at or above 500 CC)', async (t) => {
  const { venue } = cantex(() => ({ body: quoteBody({ returned: '"74.4"', networkFee: '"0"' }) }));
  t.strictSame(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('500') }, open)), { gross: '74.4', fee: null });
});

t.test('"a network fee in the want instrument is a want-side fee" (selling USDCx for CC)', async (t) => {
  const { venue, calls } = cantex(() => ({ body: quoteBody({ give: USDCX, want: CC, returned: '"668.1"', networkFee: '"0.79"', feeInstrument: 'Amulet' }) }));
  t.strictSame(plainQuote(await venue.quote({ give: USDCX, want: CC, amount: dec('100') }, open)), {
    gross: '668.1',
    fee: { amount: '0.79', asset: 'CC', appliedTo: 'on_top' },
  });
  t.match(sentJson(calls[0]), { sellInstrumentId: 'USDCx', sellInstrumentAdmin: ADMINS.USDCx, buyInstrumentId: 'Amulet', buyInstrumentAdmin: ADMINS.Amulet });
});

t.test('"never let a float reach an amount": amounts are read exactly as strings, and a JSON number where Cantex sends a string is refused, never rounded', async (t) => {
  const { venue } = cantex(() => ({ body: quoteBody({ returned: '"123456789.1234567891"', networkFee: '"0.790000000000000000001"' }) }));
  t.strictSame(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open)), {
    gross: '123456789.1234567891',
    // "fees round up" to 10 fractional digits; "outputs round down".
    fee: { amount: '0.7900000001', asset: 'CC', appliedTo: 'on_top' },
  });
  // As a JSON number a float would read 14.887162959697779: the answer is read with JSON.parse,
  // so the adapter refuses the number rather than take its rounded value.
  const { venue: numeric } = cantex(() => ({ body: quoteBody({ returned: '14.887162959697779123', networkFee: '"0"' }) }));
  await t.rejects(numeric.quote({ give: CC, want: USDCX, amount: dec('100') }, open), { name: 'VenueUnreadable', message: /returned\.amount/ });
});

t.test('"a zero output is below_minimum"', async (t) => {
  const { venue } = cantex(() => ({ body: quoteBody({ returned: '"0"', networkFee: '"0.79"' }) }));
  t.equal(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('0.0000000001') }, open)), 'below_minimum');
});

t.test('"a 400 or 404 saying a pool is not there is no_pool"', async (t) => {
  for (const [status, body] of [
    [404, '{"detail": "Pool not found"}'],
    [400, '{"error": "No pool for USDCx/CBTC"}'],
    [400, '{"message": "unknown pool"}'],
  ] as const) {
    const { venue } = cantex(() => ({ status, body }));
    t.equal(plainQuote(await venue.quote({ give: USDCX, want: CBTC, amount: dec('100') }, open)), 'no_pool', `${status} ${body}`);
  }
});

t.test('"anything else is thrown, so the engine logs it and reports venue_error": 401/403 (the key), 429, a 404 not about a pool, other 400s', async (t) => {
  for (const [status, body] of [
    [401, '{"detail": "Invalid API key"}'],
    [403, '{"detail": "Forbidden"}'],
    [429, '{"detail": "Too many requests"}'],
    [404, '{"detail": "Not Found"}'],
    [400, '{"detail": "sellAmount must be positive"}'],
  ] as const) {
    const { venue } = cantex(() => ({ status, body }));
    const err = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open).then(
      (q) => q,
      (e: unknown) => e,
    );
    t.ok(err instanceof VenueHttpError && err.status === status, `${status} ${body} is thrown as is`);
  }
});

t.test('"HTTP 500 is thrown" (venue_error)', async (t) => {
  const { venue } = cantex(() => ({ status: 500, body: 'Internal Server Error' }));
  const err = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open).catch((e: unknown) => e);
  t.type(err, VenueHttpError);
  t.equal((err as VenueHttpError).status, 500);
  t.equal((err as VenueHttpError).body, 'Internal Server Error');
});

t.test('"an answer that is not JSON, or not the documented shape, is unreadable" (venue_error)', async (t) => {
  const bodies = [
    '{"returned": {"amount": "14.8',
    '<html>maintenance</html>',
    '[]',
    '{"fees": {"network_fee": {"amount": "0", "instrument_id": "Amulet"}}}',
    quoteBody({ returned: '"-1"', networkFee: '"0"' }),
    quoteBody({ returned: '"abc"', networkFee: '"0"' }),
    quoteBody({ returned: '"14.8"', networkFee: '"0.79"' }).replace(/"network_fee": \{[^}]*\}/, '"network_fee": null'),
    // A returned leg in another instrument than asked for, and a fee in neither give nor want.
    quoteBody({ returned: '"14.8"', networkFee: '"0"', returnedInstrument: 'CBTC' }),
    quoteBody({ returned: '"14.8"', networkFee: '"0.5"', feeInstrument: 'CETH' }),
  ];
  for (const body of bodies) {
    const { venue } = cantex(() => ({ body }));
    await t.rejects(venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open), VenueUnreadable, body.slice(0, 60));
  }
});

t.test('"a hang past the deadline is timeout, promptly"', async (t) => {
  const { venue } = cantex(() => 'hang');
  // The venue's own timeout outlasts the test: only the deadline can settle it.
  const q = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, deadlineIn(50));
  t.equal(plainQuote(q), 'timeout');
});

t.test('probe: "live when GET /v2/pools/info answers 2xx JSON; pairs from the pool entries it can read"', async (t) => {
  const { venue, calls } = cantex(() => ({
    body: JSON.stringify({
      pools: [
        { contract_id: '00a', token_a_instrument_id: 'Amulet', token_a_instrument_admin: ADMINS.Amulet, token_b_instrument_id: 'USDCx', token_b_instrument_admin: ADMINS.USDCx },
        // Same pair again, a token the service does not quote, another admin's "CBTC", an unreadable entry.
        { contract_id: '00b', token_a_instrument_id: 'USDCx', token_a_instrument_admin: ADMINS.USDCx, token_b_instrument_id: 'Amulet', token_b_instrument_admin: ADMINS.Amulet },
        { contract_id: '00c', token_a_instrument_id: 'Amulet', token_a_instrument_admin: ADMINS.Amulet, token_b_instrument_id: 'CETH', token_b_instrument_admin: 'x::1220' },
        { contract_id: '00d', token_a_instrument_id: 'Amulet', token_a_instrument_admin: ADMINS.Amulet, token_b_instrument_id: 'CBTC', token_b_instrument_admin: 'impostor::1220' },
        'garbage',
        { contract_id: '00e', token_a_instrument_id: 'CBTC', token_a_instrument_admin: ADMINS.CBTC, token_b_instrument_id: 'USDCx', token_b_instrument_admin: ADMINS.USDCx },
      ],
    }),
  }));
  t.strictSame(await venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx', 'USDCx/CBTC'] });
  t.equal(calls[0]?.method, 'GET');
  t.equal(calls[0]?.url, 'https://api.cantex.io/v2/pools/info');
  t.equal(calls[0]?.headers.authorization, `Bearer ${KEY}`);
});

t.test('probe: "when no pool entry can be read, assume CC/USDCx and CC/CBTC"', async (t) => {
  for (const body of ['{}', '{"pools": []}', '{"pools": "n/a"}', '[1, 2]', '{"pools": [{"id": 1}]}']) {
    const { venue } = cantex(() => ({ body }));
    t.strictSame(await venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] }, body);
  }
});

t.test('probe: "not live on an HTTP error, a body that is not JSON, or a hang"', async (t) => {
  for (const reply of [{ status: 500, body: 'oops' }, { status: 401, body: '{"detail": "no"}' }, { body: 'not json' }] as const) {
    const { venue } = cantex(() => reply);
    t.strictSame(await venue.probe(neverAborted()), { live: false, pairs: [] }, JSON.stringify(reply));
  }
  const { venue } = cantex(() => 'hang');
  t.strictSame(await venue.probe(deadlineIn(50).signal), { live: false, pairs: [] });
});

t.test('probe: pools of our instruments only under other admins mean CANTEX_INSTRUMENT_ADMINS is wrong: the venue reads as dead, not as one without pools', async (t) => {
  const { venue } = cantex(() => ({
    body: JSON.stringify({
      pools: [{ contract_id: '00a', token_a_instrument_id: 'Amulet', token_a_instrument_admin: 'other-dso::1220', token_b_instrument_id: 'USDCx', token_b_instrument_admin: 'other-usdc::1220' }],
    }),
  }));
  t.strictSame(await venue.probe(neverAborted()), { live: false, pairs: [] });
});

t.test('cantex: priceImpact from the quote\'s own pool_size (the pool\'s holdings of the token bought): output / pool_size on the constant-product curve, rounded up', async (t) => {
  const impactOf = async (body: string) => {
    const { venue } = cantex(() => ({ body }));
    const q = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open);
    return q.available ? (q.priceImpact === null ? null : q.priceImpact?.toFixed()) : q.rejectionCode;
  };
  const body = quoteBody({ returned: '"14.9424752166"', networkFee: '"0.79"' });
  // 14.9424752166 / 4485000 = 0.00000333165…: the LP fee's a' = 99.95 of 30,000,000 CC, a' / (x + a').
  t.equal(await impactOf(body), '0.0000033317');
  t.equal(await impactOf(body.replace(/"pool_size": \{[^}]*\},/, '')), null, 'no pool_size: not known');
  t.equal(await impactOf(body.replace('"pool_size": {"amount": "4485000", "instrument_id": "USDCx"', '"pool_size": {"amount": "30000000", "instrument_id": "Amulet"')), null, "the sold token's holdings: not what the curve needs here");
  t.equal(await impactOf(body.replace('"amount": "4485000"', '"amount": "10"')), null, 'not above the output: unreadable as holdings');
  t.equal(await impactOf(body.replace('"amount": "4485000"', '"amount": "a lot"')), null, 'unreadable: the quote stands');
});
