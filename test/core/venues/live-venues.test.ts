// VENUES=live: the service quotes through the real venues' adapters, each at its configured base
// URL. Here Tradecraft's documented API is served by a stub on loopback.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { dec, Decimal } from '../../../core/decimal.js';
import type { QuoteResponse } from '../../../core/contract/v1.js';
import { testApp } from '../../helpers/app.js';

const POOLS = '{"pools":[{"token1":"CC","token2":"USDCx","lp_token_name":"TC CC/USDCx LP","token1_holdings":20000000,"token2_holdings":3000000,"total_lp_tokens":1,"lp_fee_percent":0.25,"operator_fee_percent":0.05}]}';

async function tradecraftStub(): Promise<{ server: Server; url: string; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(request.url ?? '');
    const path = (request.url ?? '').split('?')[0];
    if (path === '/v1/pools') return void response.writeHead(200, { 'content-type': 'application/json' }).end(POOLS);
    if (path === '/v1/quoteForFixedInput/CC/USDCx') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"user_gets": 14.887162959697779}');
    response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"No AMM with id TC CC/NOPE LP"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, paths };
}

t.test('VENUES=live: "a partner pointing the service at the real Canton venues must get real quotes", from each enabled venue\'s adapter', async (t) => {
  const stub = await tradecraftStub();
  t.teardown(() => stub.server.close());
  const app = await testApp({
    // Quotes only: the participant outcomes would be read from is never asked.
    env: { VENUES: 'live', LEDGER_URL: 'http://127.0.0.1:1', TRADECRAFT_POOL_PARTIES: `CC/USDCx=tc-pool::1220${'e'.repeat(64)}`, TRADECRAFT_URL: stub.url, CANTEX_ENABLED: 'false', ONESWAP_ENABLED: 'false', NIGHTLY_ENABLED: 'false', TEMPLE_ENABLED: 'false' },
  });
  t.teardown(app.close);
  const body = (await app.server.inject('/api/quote?from=CC&to=USDCx&amount=100')).json<QuoteResponse>();
  t.strictSame(body.venues.map((v) => v.venueId), ['tradecraft'], 'one entry per enabled venue');
  t.match(body.venues[0], { available: true, fee: { amount: '0.3', asset: 'Amulet', appliedTo: 'deducted_from_give' }, rejectionCode: null });
  // gross = floor(user_gets × 100 / 99.7); net = floor(gross × 99.7 / 100), never above user_gets.
  const gross = dec('14.887162959697779').times(100).div('99.7').toDecimalPlaces(10, Decimal.ROUND_FLOOR);
  t.equal(body.venues[0]!.gross, gross.toFixed());
  t.equal(body.venues[0]!.net, gross.times('99.7').div(100).toDecimalPlaces(10, Decimal.ROUND_FLOOR).toFixed());
  t.ok(dec(body.venues[0]!.net!).lte('14.887162959697779'), 'the net never exceeds what the venue said');
  t.ok(stub.paths.includes('/v1/quoteForFixedInput/CC/USDCx?givingAmount=100'), 'asked at its configured base URL');
  const liveness = (await app.server.inject('/api/liveness?venue=tradecraft&from=CC&to=USDCx')).json<{ state: string }>();
  t.equal(liveness.state, 'live', 'its liveness comes from its own probe');
  const cbtc = (await app.server.inject('/api/quote?from=CC&to=CBTC&amount=5')).json<QuoteResponse>();
  t.match(cbtc.venues[0], { available: false, rejectionCode: 'no_pool' }, 'a pair the venue does not list');
});
