// Partner keys over HTTP and the keyed quote: the spec's Authentication and keyed-quote rules.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { generateKey, hashKey } from '../../../core/keys/api-key.js';
import { dec } from '../../../core/decimal.js';
import { FileKeyStore } from '../../../core/keys/file-store.js';
import { keysFile } from '../../../core/keys/open-store.js';
import { KeyStoreUnavailable, type KeyStore } from '../../../core/keys/partner-keys.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { SharedStateKeyStore } from '../../../core/keys/shared-store.js';
import type { QuoteResponse } from '../../../core/contract/v1.js';
import { COLLECTING, testApp, type TestApp } from '../../helpers/app.js';
import { issueKey, runKeysCli } from '../../helpers/keys.js';
import { tempDir } from '../../helpers/temp.js';

const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';
const RECIPIENT = 'wallet-co::1220aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const WITH_FEE = `${QUOTE}&feeBps=5&feeRecipient=${RECIPIENT}`;

const keyed = (app: TestApp, url: string, key: string) => app.server.inject({ url, headers: { 'x-api-key': key } });

/** A key store that counts lookups. */
function countingStore(): { store: KeyStore; lookups: () => number } {
  const inner = new SharedStateKeyStore(new InProcessSharedState());
  let lookups = 0;
  const store: KeyStore = {
    findByHash: (hash) => {
      lookups += 1;
      return inner.findByHash(hash);
    },
    add: (record) => inner.add(record),
    revoke: (selector, at) => inner.revoke(selector, at),
    list: () => inner.list(),
    rotate: (id, hash) => inner.rotate(id, hash),
    setOrigins: (id, origins) => inner.setOrigins(id, origins),
  };
  return { store, lookups: () => lookups };
}

/**
 * An app on the embedded file store, its refresh interval measured on a clock the test moves:
 * "takes effect within 5 seconds" (a key created, revoked, or a store become unreadable) is then
 * 5 seconds on that clock, whatever the machine's speed. `later()` moves it 5 seconds on.
 */
async function fileStoreApp(test: { teardown(fn: () => unknown): void }): Promise<{ app: TestApp; later: () => void }> {
  const dataDir = tempDir(test, 'bestex-partner-keys-');
  let clock = 0;
  const app = await testApp({ env: { DATA_DIR: dataDir }, overrides: { keyStore: new FileKeyStore(keysFile({ dataDir }), { now: () => clock }) } });
  test.teardown(app.close);
  return { app, later: () => void (clock += 5000) };
}

t.test('"Partner keys are sent as x-api-key or Authorization: Bearer <key>"', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  for (const headers of [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }, { authorization: `bearer  ${key} ` }]) {
    const res = await app.server.inject({ url: QUOTE, headers });
    t.equal(res.statusCode, 200, JSON.stringify(Object.keys(headers)));
    t.strictSame(res.json<QuoteResponse>().appliedSchema, { schemaId: 'partner-default', overrideId: null });
  }
});

t.test('x-api-key and Authorization: Bearer naming different keys are refused (400), the same key in both is one key', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  const { key: other } = await issueKey(app.core.keyStore);
  const both = await app.server.inject({ url: QUOTE, headers: { 'x-api-key': key, authorization: `Bearer ${other}` } });
  t.equal(both.statusCode, 400);
  t.match(both.json(), { code: 'bad_request', error: /x-api-key and Authorization: Bearer name different keys/ });
  t.notMatch(both.body, new RegExp(`${key}|${other}`), 'neither key is repeated back');
  const plan = await app.server.inject({ method: 'POST', url: '/api/execute/plan', headers: { 'x-api-key': key, authorization: `Bearer ${other}` }, payload: {} });
  t.match(plan.json(), { code: 'bad_request', error: /name different keys/ }, 'on the plan route too');
  const same = await app.server.inject({ url: QUOTE, headers: { 'x-api-key': key, authorization: `Bearer ${key}` } });
  t.equal(same.statusCode, 200);
  const portal = await app.server.inject({ url: '/portal/api/key', headers: { 'x-api-key': key, authorization: `Bearer ${other}` } });
  t.match({ status: portal.statusCode, body: portal.json() }, { status: 401, body: { code: 'invalid_key', error: /sign in with one key/ } }, 'the portal, whose refusals are 401s, signs in as no one');
});

t.test('"a malformed key is rejected (401 invalid_key) without a store lookup"', async (t) => {
  const { store, lookups } = countingStore();
  const app = await testApp({ overrides: { keyStore: store } });
  t.teardown(app.close);
  const good = generateKey();
  const flipped = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
  for (const key of ['bx_nope', 'sk_' + good.slice(3), flipped, `${good}x`, good.slice(0, -1), 'x'.repeat(41)]) {
    const res = await keyed(app, QUOTE, key);
    t.equal(res.statusCode, 401, key);
    t.match(res.json(), { code: 'invalid_key', error: 'the API key is not valid', action: 'check the key' });
  }
  t.equal(lookups(), 0, 'no key reached the store');
  await keyed(app, QUOTE, good);
  t.equal(lookups(), 1, 'a well-formed key is looked up');
});

t.test('a key header that holds no usable key (an empty x-api-key, an Authorization that is not Bearer <key>) is a malformed key: 401, never a keyless answer', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  for (const headers of [
    { 'x-api-key': '' },
    { 'x-api-key': '   ' },
    { authorization: `Bearer ${key} extra` },
    { authorization: `Token ${key}` },
    { authorization: 'Basic dXNlcjpwYXNz' },
    { authorization: 'Bearer' },
  ]) {
    const res = await app.server.inject({ url: QUOTE, headers });
    t.equal(res.statusCode, 401, JSON.stringify(headers));
    t.match(res.json(), { code: 'invalid_key' });
  }
});

t.test('"unknown, revoked or failing keys are 401 invalid_key"', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  t.equal((await keyed(app, QUOTE, generateKey())).statusCode, 401, 'a well-formed key that was never issued');
  const { key, record } = await issueKey(app.core.keyStore);
  t.equal((await keyed(app, QUOTE, key)).statusCode, 200);
  await app.core.keyStore.revoke({ id: record.id }, new Date());
  const res = await app.server.inject({ url: QUOTE, headers: { authorization: `Bearer ${key}` } });
  t.equal(res.statusCode, 401, 'a revoked key');
  t.match(res.json(), { code: 'invalid_key' });
});

t.test('"When the key store cannot be read, a keyed request gets 503 key_verification_unavailable with Retry-After — never 401, never a silent keyless answer. Keyless requests keep working."', async (t) => {
  const { app, later } = await fileStoreApp(t);
  const { key } = await issueKey(app.core.keyStore);
  writeFileSync(keysFile(app.config), 'not json at all');
  later();
  const res = await keyed(app, QUOTE, key);
  t.equal(res.statusCode, 503, 'the keyed request gets 503');
  t.match(res.json(), { code: 'key_verification_unavailable', action: 'retry after Retry-After' });
  t.match(res.headers['retry-after'], /^[1-9][0-9]*$/);
  t.equal(res.headers['cache-control'], 'no-store');
  t.notOk('venues' in res.json(), 'no quote body');
  const keyless = await app.server.inject(QUOTE);
  t.equal(keyless.statusCode, 200, 'keyless requests keep working');
  const status = (await app.server.inject('/api/status')).json<{ state: string; components: Array<{ component: string; state: string }> }>();
  t.equal(status.state, 'degraded', 'the status says so');
  t.match(status.components.find((c) => c.component === 'key-store'), { state: 'unreadable' });
  const warned = app.logs().filter((l) => l.msg === 'key store unreadable: keyed requests get 503 key_verification_unavailable');
  t.equal(warned.length, 1, 'logged once, at warn, with its cause');
  t.match(warned[0], { level: 40, component: 'key-store', reason: /keys\.json/ });

  const failing = await testApp({
    overrides: {
      keyStore: {
        findByHash: async () => {
          throw new KeyStoreUnavailable('redis down');
        },
        add: async () => {},
        revoke: async () => null,
        list: async () => [],
        rotate: async () => null,
        setOrigins: async () => null,
      },
    },
  });
  t.teardown(failing.close);
  t.equal((await keyed(failing, QUOTE, generateKey())).statusCode, 503, 'any store that throws KeyStoreUnavailable');
  t.equal((await keyed(failing, QUOTE, 'bx_short')).statusCode, 401, 'a malformed key is still 401: it needs no store');
});

t.test('"A key created or revoked while the service runs takes effect within 5 seconds" (the operator CLI on the embedded file store)', async (t) => {
  const { app, later } = await fileStoreApp(t);
  const env = { DATA_DIR: app.config.dataDir };
  t.equal((await keyed(app, QUOTE, generateKey())).statusCode, 401, 'the store read before the key is created');
  const created = await runKeysCli(['create', '--name', 'wallet-co'], env);
  const key = created.stdout.trim().split('\n').at(-1)!;
  t.match(key, /^bx_[0-9A-Za-z]{38}$/, 'create prints the key alone on the last line');
  later();
  t.equal((await keyed(app, QUOTE, key)).statusCode, 200, 'the new key is accepted 5 seconds on');
  t.equal((await runKeysCli(['revoke', key], env)).code, 0);
  later();
  t.equal((await keyed(app, QUOTE, key)).statusCode, 401, 'the revoked key is refused 5 seconds on');
});

t.test('"A key adds, on each available venue, the clientFees block … and appliedSchema. All fee amounts are exact Canton Decimals that add up"', async (t) => {
  const app = await testApp({ env: COLLECTING });
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  const res = await keyed(app, `/api/quote?from=CC&to=CBTC&amount=5000&feeBps=7&feeRecipient=${RECIPIENT}`, key);
  t.equal(res.statusCode, 200);
  const body = res.json<QuoteResponse>();
  t.strictSame(body.appliedSchema, { schemaId: 'partner-default', overrideId: null });
  const available = body.venues.filter((v) => v.available);
  t.ok(available.length >= 2 && available.length < body.venues.length, 'the CBTC pair has available and unavailable venues');
  for (const venue of body.venues) {
    if (!venue.available) {
      t.notOk('clientFees' in venue, `${venue.venueId}: no fee block on an unavailable venue`);
      continue;
    }
    const fees = venue.clientFees!;
    const net = dec(venue.net!);
    t.equal(fees.service.bps, 5, 'the default schema sets the service rate');
    t.equal(fees.service.amount, net.times(5).div(10000).toDecimalPlaces(10, 1).toFixed(), `${venue.venueId}: service = floor(net × 5 / 10000)`);
    t.strictSame({ bps: fees.integrator!.bps, recipient: fees.integrator!.recipient }, { bps: 7, recipient: RECIPIENT });
    t.equal(fees.integrator!.amount, net.times(7).div(10000).toDecimalPlaces(10, 1).toFixed(), `${venue.venueId}: integrator = floor(net × 7 / 10000)`);
    t.equal(fees.userReceives, net.minus(fees.service.amount).minus(fees.integrator!.amount).toFixed(), `${venue.venueId}: userReceives = net − service − integrator`);
  }
  const withoutIntegrator = (await keyed(app, QUOTE, key)).json<QuoteResponse>();
  t.equal(withoutIntegrator.venues[0]!.clientFees!.integrator, null, 'no integrator line without feeBps and feeRecipient');
});

t.test('"The key never changes the ranking": a keyed body is the keyless body plus the fee blocks and appliedSchema', async (t) => {
  const app = await testApp({ env: COLLECTING });
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  const keyless = (await app.server.inject(QUOTE)).json<QuoteResponse>();
  const partner = (await keyed(app, WITH_FEE, key)).json<QuoteResponse>();
  const stripped = { ...partner, venues: partner.venues.map(({ clientFees: _fees, ...venue }) => venue) };
  delete stripped.appliedSchema;
  t.strictSame(stripped, keyless);
});

t.test('"FEE_COLLECTION_ENABLED (default false): while false, disclosed fee lines read zero everywhere"', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  const available = (await keyed(app, WITH_FEE, key)).json<QuoteResponse>().venues.filter((v) => v.available);
  t.ok(available.length >= 2, `venues to check: ${available.length} available`);
  for (const venue of available) {
    t.strictSame(venue.clientFees, {
      integrator: { bps: 0, amount: '0', recipient: RECIPIENT },
      service: { bps: 0, amount: '0' },
      userReceives: venue.net,
    });
  }
});

t.test('"per-partner negotiated overrides (a different service bps, a lower integrator cap) recorded in appliedSchema.overrideId"', async (t) => {
  const dir = tempDir(t, 'bestex-schemas-');
  const file = path.join(dir, 'fees.json');
  writeFileSync(
    file,
    JSON.stringify({
      defaultSchemaId: 'partner-default',
      schemas: [{ id: 'partner-default', serviceBps: 5, integratorCapBps: 10 }],
      overrides: [{ id: 'wallet-co-2026', schemaId: 'partner-default', serviceBps: 2, integratorCapBps: 4 }],
    }),
  );
  const app = await testApp({ env: { ...COLLECTING, FEE_SCHEMAS_FILE: file } });
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore, { schemaId: 'wallet-co-2026' });
  const body = (await keyed(app, `${QUOTE}&feeBps=4&feeRecipient=${RECIPIENT}`, key)).json<QuoteResponse>();
  t.strictSame(body.appliedSchema, { schemaId: 'partner-default', overrideId: 'wallet-co-2026' });
  t.equal(body.venues[0]!.clientFees!.service.bps, 2, 'the negotiated service rate');
  const overCap = await keyed(app, `${QUOTE}&feeBps=5&feeRecipient=${RECIPIENT}`, key);
  t.equal(overCap.statusCode, 400, 'feeBps over the partner\'s own cap');
  t.match(overCap.json(), { code: 'bad_fee_params', error: "'feeBps' 5 is over this key's cap of 4 bps" });
  const other = await issueKey(app.core.keyStore);
  t.equal((await keyed(app, `${QUOTE}&feeBps=5&feeRecipient=${RECIPIENT}`, other.key)).statusCode, 200, 'another partner keeps the default cap');
});

t.test('a key whose fee schema is no longer configured is a 503 (the quote documents no 500) that names nothing, never a quote under other terms', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key, record } = await issueKey(app.core.keyStore, { schemaId: 'retired-schema' });
  for (let i = 0; i < 2; i++) {
    const res = await keyed(app, QUOTE, key);
    t.equal(res.statusCode, 503);
    t.match(res.json(), { code: 'key_verification_unavailable' });
    t.notMatch(res.body, /retired-schema/);
  }
  const told = app.logs().filter((l) => l.keyId === record.id && l.schemaId === 'retired-schema');
  t.equal(told.length, 1, 'the cause is logged for the operator, once per key (a key issued after start was not named then)');
});

t.test('at start, every active key whose fee schema is not configured is named in a warning', async (t) => {
  const first = await testApp();
  const { record } = await issueKey(first.core.keyStore, { schemaId: 'retired-schema' });
  await issueKey(first.core.keyStore);
  await first.close();
  const app = await testApp({ env: { DATA_DIR: first.config.dataDir } });
  t.teardown(app.close);
  let warned: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 50 && warned.length === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    warned = app.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('key names a fee schema that is not configured'));
  }
  t.equal(warned.length, 1, 'one warning, for the one key');
  t.match(warned[0], { level: 40, keyId: record.id, schemaId: 'retired-schema' });
});

t.test('"Every fee-parameter error of the spec": without a key missing_key; with one, bad_fee_params with a clear message', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key } = await issueKey(app.core.keyStore);
  const cases: Array<[string, string | null, string, RegExp]> = [
    [`feeBps=5&feeRecipient=${RECIPIENT}`, null, 'missing_key', /require a partner key/],
    ['feeBps=99&feeRecipient=bad', null, 'missing_key', /require a partner key/],
    ['feeBps=5', key, 'bad_fee_params', /'feeBps' and 'feeRecipient' must be sent together/],
    [`feeRecipient=${RECIPIENT}`, key, 'bad_fee_params', /must be sent together/],
    [`feeBps=11&feeRecipient=${RECIPIENT}`, key, 'bad_fee_params', /'feeBps' must be an integer from 0 to 10/],
    [`feeBps=-1&feeRecipient=${RECIPIENT}`, key, 'bad_fee_params', /'feeBps' must be an integer/],
    [`feeBps=2.5&feeRecipient=${RECIPIENT}`, key, 'bad_fee_params', /'feeBps' must be an integer/],
    [`feeBps=5&feeBps=6&feeRecipient=${RECIPIENT}`, key, 'bad_fee_params', /'feeBps' must be given once/],
    ['feeBps=5&feeRecipient=wallet-co', key, 'bad_fee_params', /'feeRecipient' must be a ledger party id/],
    [`feeBps=5&feeRecipient=${RECIPIENT.toUpperCase()}`, key, 'bad_fee_params', /'feeRecipient' must be a ledger party id/],
  ];
  for (const [params, withKey, code, message] of cases) {
    const url = `${QUOTE}&${params}`;
    const res = withKey ? await keyed(app, url, withKey) : await app.server.inject(url);
    t.equal(res.statusCode, 400, params);
    t.match(res.json(), { code, error: message }, params);
  }
  t.equal((await keyed(app, `${QUOTE}&feeBps=0&feeRecipient=${RECIPIENT}`, key)).statusCode, 200, 'feeBps 0 is a valid fee');
  t.equal((await keyed(app, `${QUOTE}&feeBps=10&feeRecipient=${RECIPIENT}`, key)).statusCode, 200, 'the cap itself is allowed');
});

t.test('"Keyed fee lines are computed per response and never enter the shared cache"; keyed responses are private, no-store', async (t) => {
  const app = await testApp({ env: COLLECTING });
  t.teardown(app.close);
  const first = await issueKey(app.core.keyStore);
  const res = await keyed(app, WITH_FEE, first.key);
  t.equal(res.headers['cache-control'], 'private, no-store', 'no shared cache may keep a keyed body');
  const keyless = await app.server.inject(QUOTE);
  t.equal(keyless.headers['cache-control'], 'public, s-maxage=10');
  t.equal(keyless.headers.vary, 'x-api-key, authorization', 'nor answer a keyed request with a keyless body it keeps');
  t.notMatch(keyless.body, /clientFees|appliedSchema|wallet-co/, 'the keyless body carries no partner\'s fee lines');
  t.equal(keyless.body, (await app.server.inject(QUOTE)).body, 'and stays byte-identical');
  const second = await issueKey(app.core.keyStore);
  const other = (await keyed(app, QUOTE, second.key)).json<QuoteResponse>();
  t.equal(other.venues[0]!.clientFees!.integrator, null, 'another partner does not get the first one\'s integrator line');
});

t.test('keyed traffic is attributed in the access log by key id, never by the key itself', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const { key, record } = await issueKey(app.core.keyStore);
  await keyed(app, QUOTE, key);
  await keyed(app, QUOTE, generateKey());
  const lines = app.logs().filter((l) => l.msg === 'request completed');
  t.match(lines[0], { status: 200, partnerId: record.id, billable: true });
  t.notOk('partnerId' in lines[1]! || 'billable' in lines[1]!, 'a refused key attributes nothing');
  t.notMatch(app.rawLogs(), key, 'the key is never logged');
  t.notMatch(app.rawLogs(), hashKey(key), 'nor its hash');
});

t.test('"A key naming a fee schema that does not exist": at start one warning line per such key id (never the key), and its quotes answer 503 key_verification_unavailable with Retry-After, within the quote\'s contract, never a quote under other terms', async (t) => {
  // Keys issued under schemas a FEE_SCHEMAS_FILE defined, then the service started without them.
  const dir = tempDir(t, 'bestex-keys-');
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
