// "Bad input gets a clear 4xx in the spec's error shape": arbitrary query strings on every GET
// route never produce a 5xx, a body outside {error, code, action?}, or a missing version header.
import fc from 'fast-check';
import t from 'tap';
import { testApp } from './helpers/app.js';

const value = fc.oneof(
  fc.string(),
  fc.double().map(String),
  fc.constantFrom('CC', 'usdcx', 'CBTC', 'Amulet', '100', '0.5', '1e5', '-1', '', '1000000000', '99999999999', '0.00000000001', 'NaN', '__proto__', '%00'),
);
const name = fc.constantFrom('from', 'to', 'amount', 'slippageBps', 'ref', 'feeBps', 'feeRecipient', 'venue', '__proto__', 'constructor', 'x');

t.test('arbitrary query strings get a 2xx or a 4xx in the error shape, never a 5xx', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const failures: string[] = [];
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 6 }), fc.constantFrom('/api/quote', '/api/liveness', '/api/status'), async (pairs, path) => {
      const query = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
      const res = await app.server.inject(`${path}?${query}`);
      const body = res.json<Record<string, unknown>>();
      const ok =
        res.statusCode < 500 &&
        res.headers['x-service-api-version'] === '1' &&
        (res.statusCode < 400 || (typeof body.error === 'string' && typeof body.code === 'string'));
      if (!ok) failures.push(`${path}?${query} -> ${res.statusCode} ${res.body}`);
      return ok;
    }),
    { numRuns: 600 },
  ).catch(() => undefined);
  t.same(failures, [], 'no request failed the rule');
});
