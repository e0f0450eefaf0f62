// The key portal page's own code (portal/src/), without a browser: its usage table
// (portal/src/usage.ts), the last 7 UTC days, today last, a day without traffic as zeros; its
// checks of what a person typed (portal/src/checks.ts), the contract's limits said in words before
// anything is sent; the webhooks' event types and attempts (portal/src/webhooks.ts); the trades'
// states, tokens, days and exact sums (portal/src/trades.ts, trade-views.ts, amounts.ts). The page
// as the service serves it is test/handlers/pages/portal-page.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { parseOrigin } from '../../core/keys/partner-keys.js';
import { repoRoot } from '../../handlers/app.js';
import { amountOf, largest, percent, share, sum, units } from '../../portal/src/amounts.js';
import { NAME_MAX_CHARACTERS, nameProblem, ORIGIN_MAX_LENGTH, originOf, ORIGINS_MAX, readOrigins, TRADE_RANGE_MAX_DAYS, tradeRangeProblem, waitInWords, WEBHOOK_URL_MAX_LENGTH, webhookUrlProblem } from '../../portal/src/checks.js';
import { daysFrom, feeLines, TOKENS, volumeColumns } from '../../portal/src/trade-views.js';
import { csvName, TRADE_STATES } from '../../portal/src/trades.js';
import { usageTable } from '../../portal/src/usage.js';
import { attemptText, EVENT_TYPES } from '../../portal/src/webhooks.js';

t.test('"requests per day and per operation for the last 7 days": 7 UTC days ending today, days without traffic as zeros', async (t) => {
  const table = usageTable(
    [
      { date: '2026-11-20', requests: { getQuote: 3 }, rateLimited: {} },
      { date: '2026-11-26', requests: { getQuote: 5, createExecutePlan: 2 }, rateLimited: { 'keyed-window': 1 } },
    ],
    new Date('2026-11-26T23:59:59Z'),
  );
  t.strictSame(table.operations, ['getQuote', 'createExecutePlan']);
  t.strictSame(table.limits, ['keyed-window']);
  t.strictSame(
    table.rows.map((r) => [r.date, ...r.requests, r.total, ...r.rateLimited]),
    [
      ['2026-11-20', 3, 0, 3, 0],
      ['2026-11-21', 0, 0, 0, 0],
      ['2026-11-22', 0, 0, 0, 0],
      ['2026-11-23', 0, 0, 0, 0],
      ['2026-11-24', 0, 0, 0, 0],
      ['2026-11-25', 0, 0, 0, 0],
      ['2026-11-26', 5, 2, 7, 1],
    ],
  );
});

t.test('a key without traffic still shows its 7 days and both operations at zero; across a month\'s end', async (t) => {
  const table = usageTable([], new Date('2026-12-02T00:00:00Z'));
  t.strictSame(table.rows.map((r) => r.date), ['2026-11-26', '2026-11-27', '2026-11-28', '2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
  t.ok(table.rows.every((r) => r.total === 0 && r.requests.every((n) => n === 0)));
  t.strictSame(table.operations, ['getQuote', 'createExecutePlan']);
  t.strictSame(table.limits, []);
});

t.test('a browser clock a day behind the service\'s: today is the service\'s last counted day, so its traffic shows', async (t) => {
  const table = usageTable([{ date: '2026-11-27', requests: { getQuote: 1, someNewOperation: 4 }, rateLimited: { 'keyed-window': 2, 'another-limit': 1 } }], new Date('2026-11-26T23:00:00Z'));
  t.equal(table.rows.at(-1)!.date, '2026-11-27');
  t.strictSame(table.operations, ['getQuote', 'createExecutePlan', 'someNewOperation'], 'an operation beyond the two known gets its column');
  t.strictSame(table.limits, ['another-limit', 'keyed-window']);
  t.strictSame(table.rows.at(-1)!.rateLimited, [1, 2]);
  t.equal(table.rows.at(-1)!.total, 5);
});

t.test('the limits the page says are the contract\'s: a name\'s maxLength, the origins\' maxItems and an origin\'s maxLength in openapi/portal.yaml', async (t) => {
  const spec = parse(readFileSync(path.join(repoRoot(), 'openapi', 'portal.yaml'), 'utf8')) as { components: { schemas: Record<string, { maxLength?: number; maxItems?: number }> } };
  const { KeyName, Origins, Origin } = spec.components.schemas;
  t.equal(NAME_MAX_CHARACTERS, KeyName!.maxLength);
  t.equal(ORIGINS_MAX, Origins!.maxItems);
  t.equal(ORIGIN_MAX_LENGTH, Origin!.maxLength);
  const html = readFileSync(path.join(repoRoot(), 'portal', 'index.html'), 'utf8');
  t.match(html, new RegExp(`id="create-name-hint"[^>]*>[^<]*at most ${NAME_MAX_CHARACTERS} characters`), 'the name field\'s hint says it');
  t.match(html, new RegExp(`id="create-origins-hint"[^>]*>One per line, at most ${ORIGINS_MAX},`), 'and the origins\' fields theirs');
  t.match(html, new RegExp(`id="origins-hint"[^>]*>At most ${ORIGINS_MAX}\\.`));
});

t.test('the page takes an origin exactly when the service does (core/keys parseOrigin), and stores the same origin', async (t) => {
  const samples = [
    'https://wallet.example', 'https://wallet.example/', 'http://localhost:5173', 'http://127.0.0.1:8080', 'http://[::1]:3000', 'https://xn--80ak6aa92e.example',
    'https://wallet.example/app', 'https://Wallet.example', 'https://wallet.example:443', 'https://wallet.example?x=1', 'https://wallet.example#top',
    'https://user@wallet.example', 'https://user:pw@wallet.example', 'htp://x', 'ftp://wallet.example', 'wallet.example', '//wallet.example', 'https://',
    'https://wallet.example:99999', 'https://wallet .example', 'javascript:alert(1)', 'data:text/plain,x', 'https://wallet.example.', 'HTTPS://wallet.example', '',
  ];
  for (const sample of samples) t.equal(originOf(sample), parseOrigin(sample), JSON.stringify(sample));
});

t.test('"Line 2, `htp://x`: not an origin (scheme://host[:port])": each origin refused names its line as the person sees it, blank lines counted and skipped', async (t) => {
  t.strictSame(readOrigins('https://wallet.example\nhtp://x\n'), {
    origins: ['https://wallet.example'],
    problems: [{ line: 2, value: 'htp://x', text: 'not an origin (scheme://host[:port], such as https://wallet.example)' }],
  });
  const near = readOrigins('\n  https://Wallet.example/app  \n\nhttps://user@wallet.example\nhttps://a.example\nhttps://a.example/\n' + `https://${'a'.repeat(260)}.example`);
  t.strictSame(near.problems, [
    { line: 2, value: 'https://Wallet.example/app', text: 'not an origin as a browser sends it; did you mean https://wallet.example?' },
    { line: 4, value: 'https://user@wallet.example', text: 'not an origin as a browser sends it; did you mean https://wallet.example?' },
    { line: 7, value: `https://${'a'.repeat(260)}.example`, text: 'longer than 255 characters' },
  ]);
  t.strictSame(near.origins, ['https://a.example'], 'an origin typed twice is sent once, as the service would store it');
  t.strictSame(readOrigins(' \n\n'), { origins: [], problems: [] }, 'nothing typed: a server-to-server key');
});

t.test('"at most 10 origins; you entered 11": the count over the limit is said, with the limit', async (t) => {
  const list = (n: number) => Array.from({ length: n }, (_, i) => `https://w${i}.example`).join('\n');
  t.strictSame(readOrigins(list(10)).problems, [], 'ten: taken');
  t.strictSame(readOrigins(`${list(10)}\nhttps://w0.example/`).problems, [], 'ten and one of them again: ten origins');
  t.strictSame(readOrigins(list(11)).problems, [{ line: null, value: null, text: 'at most 10 origins; you entered 11' }]);
});

t.test('a name is refused in words when it is blank or over "at most 64 characters", counted as the contract counts them (characters, not UTF-16 units)', async (t) => {
  t.equal(nameProblem('Example Wallet'), null);
  t.equal(nameProblem('   '), 'A name is required: name the key, such as your app.');
  t.equal(nameProblem('x'.repeat(64)), null);
  t.equal(nameProblem('x'.repeat(70)), 'The name is 70 characters: at most 64. Shorten it by 6.');
  t.equal(nameProblem('🦊'.repeat(64)), null, '64 characters outside the BMP (128 UTF-16 units) are 64 characters');
  t.equal(nameProblem('tab\there'), 'The name has a control character (a tab or a line break, say): take it out.');
});

t.test('Retry-After in words: "try again in about 1 hour", "in 2 minutes"', async (t) => {
  for (const [seconds, words] of [
    [1, 'in 1 second'],
    [45, 'in 45 seconds'],
    [60, 'in 1 minute'],
    [90, 'in about 2 minutes'],
    [120, 'in 2 minutes'],
    [3540, 'in 59 minutes'],
    [3570, 'in about 1 hour'],
    [3596, 'in about 1 hour'],
    [3600, 'in about 1 hour'],
    [5400, 'in about 2 hours'],
    [82_800, 'in about 23 hours'],
    [86_400, 'in about 24 hours'],
    [3 * 86_400, 'in about 3 days'],
  ] as const) {
    t.equal(waitInWords(seconds), words, `${seconds} s`);
  }
});

t.test('webhooks: the events offered are the contract\'s WebhookEventType, in its order; a URL\'s limit is WebhookUrl\'s', async (t) => {
  const spec = parse(readFileSync(path.join(repoRoot(), 'openapi', 'portal.yaml'), 'utf8')) as { components: { schemas: Record<string, { maxLength?: number; enum?: string[] }> } };
  t.strictSame([...EVENT_TYPES], spec.components.schemas.WebhookEventType!.enum);
  t.equal(WEBHOOK_URL_MAX_LENGTH, spec.components.schemas.WebhookUrl!.maxLength);
});

t.test('webhooks: a URL is refused before it is sent only for its form, in words; http and addresses are the service\'s to judge', async (t) => {
  t.equal(webhookUrlProblem(' https://hooks.wallet.example/bestex '), null);
  t.equal(webhookUrlProblem('http://127.0.0.1:9000/hook'), null, 'the service says whether it takes plain http');
  t.equal(webhookUrlProblem(''), 'An endpoint URL is required, such as https://hooks.wallet.example/bestex.');
  t.equal(webhookUrlProblem('hooks.wallet.example'), 'Not a web address: it starts with https://, such as https://hooks.wallet.example/bestex.');
  t.equal(webhookUrlProblem('ftp://hooks.wallet.example'), 'Not a web address: it starts with https://, such as https://hooks.wallet.example/bestex.');
  t.equal(webhookUrlProblem(`https://hooks.wallet.example/${'a'.repeat(2100)}`), 'The URL is 2129 characters: at most 2048.');
});

t.test('webhooks: each attempt in words: when, its status or why there was none, how long', async (t) => {
  t.equal(attemptText({ at: '2026-11-26T12:00:05.123Z', status: 200, error: null, durationMs: 41 }), '2026-11-26 12:00:05 UTC: HTTP 200 (delivered), 41 ms');
  t.equal(attemptText({ at: '2026-11-26T12:00:00.000Z', status: 503, error: null, durationMs: 8 }), '2026-11-26 12:00:00 UTC: HTTP 503, 8 ms');
  t.equal(attemptText({ at: '2026-11-26T12:00:10.000Z', status: null, error: 'refused_address', durationMs: 2 }), '2026-11-26 12:00:10 UTC: refused address, 2 ms');
});

t.test('trades: the states offered are the contract\'s TradeState, the tokens its Token, in their order; the days\' limit is the one its 400 names', async (t) => {
  const spec = parse(readFileSync(path.join(repoRoot(), 'openapi', 'portal.yaml'), 'utf8')) as { components: { schemas: Record<string, { enum?: string[] }>; responses: Record<string, { description: string }> } };
  t.strictSame([...TRADE_STATES], spec.components.schemas.TradeState!.enum);
  t.strictSame([...TOKENS], spec.components.schemas.Token!.enum);
  t.match(spec.components.responses.TradesBadQuery!.description, `more than ${TRADE_RANGE_MAX_DAYS} days before it`);
  t.equal(csvName({ from: '2026-11-01', to: '2026-11-30', status: [] }), 'bestex-trades-2026-11-01-2026-11-30.csv', 'the file is named as the service\'s Content-Disposition names it');
});

t.test('trades: amounts are summed exactly, as decimal strings, never as JS numbers', async (t) => {
  t.equal(sum(['0.1', '0.2']), '0.3');
  t.equal(sum(['14.9547243339', '0.0000000001', '100']), '114.954724334');
  t.equal(sum([]), '0');
  t.equal(sum(['99999999999999999999.9999999999', '0.0000000001']), '100000000000000000000', 'beyond a double\'s 15 digits');
  t.equal(amountOf(units('-12.50')), '-12.5');
  t.equal(largest(['3', '12.5', '0', '12.49']), '12.5');
  t.equal(largest([]), '0');
  t.equal(share('1', '4'), 0.25, 'a bar\'s length only');
  t.equal(share('1', '0'), 0);
});

t.test('trades: a venue\'s success rate as a percentage, exactly: "0.6667" is "66.67%"', async (t) => {
  for (const [rate, shown] of [['0.6667', '66.67%'], ['1', '100%'], ['0', '0%'], ['0.5', '50%'], ['0.0001', '0.01%'], ['0.3333', '33.33%']] as const) t.equal(percent(rate), shown, rate);
});

t.test('trades: the days asked for are refused before they are sent, in words: unset, backwards, or more than 366 days apart', async (t) => {
  t.equal(tradeRangeProblem('2026-11-01', '2026-11-30'), null);
  t.equal(tradeRangeProblem('2026-11-30', '2026-11-30'), null, 'one day');
  t.equal(tradeRangeProblem('2025-11-30', '2026-12-01'), null, '366 days apart');
  t.equal(tradeRangeProblem('', '2026-11-30'), 'Choose the first UTC day of the trades to show.');
  t.equal(tradeRangeProblem('2026-11-01', ''), 'Choose the last UTC day of the trades to show.');
  t.equal(tradeRangeProblem('2026-11-20', '2026-11-10'), 'The first day (2026-11-20) is after the last (2026-11-10): swap them.');
  t.equal(tradeRangeProblem('2025-01-01', '2026-11-26'), 'The days are 694 days apart: at most 366. Move the first day later by 328.');
});

t.test('trades: the chart has a group for every UTC day of the range, across a month\'s and a leap year\'s end', async (t) => {
  t.strictSame(daysFrom('2028-02-27', '2028-03-01'), ['2028-02-27', '2028-02-28', '2028-02-29', '2028-03-01']);
  t.strictSame(daysFrom('2026-11-26', '2026-11-26'), ['2026-11-26']);
  t.equal(daysFrom('2025-11-30', '2026-12-01').length, 367);
});

t.test('trades: the volume columns are the tokens the days have, given before received, in the contract\'s token order', async (t) => {
  const day = (given: string[], received: string[]) => ({
    date: '2026-11-26',
    plans: 1,
    completed: 1,
    given: given.map((token) => ({ token, amount: '1' })),
    received: received.map((token) => ({ token, amount: '1' })),
  }) as Parameters<typeof volumeColumns>[0][number];
  t.strictSame(volumeColumns([day(['USDCx'], ['Amulet']), day(['Amulet'], ['CBTC'])]), [
    { side: 'given', token: 'Amulet' },
    { side: 'given', token: 'USDCx' },
    { side: 'received', token: 'Amulet' },
    { side: 'received', token: 'CBTC' },
  ]);
  t.strictSame(volumeColumns([day([], [])]), [], 'no paid leg: no volume');
});

t.test('trades: a swap\'s fees in a line each, disclosed then collected, service + integrator, in its want token', async (t) => {
  t.strictSame(feeLines({ token: 'USDCx', disclosed: { service: '0.0074773621', integrator: '0.01' }, collected: { service: '0', integrator: '0' } }), [
    'Disclosed 0.0074773621 + 0.01 USDCx',
    'Collected 0 + 0 USDCx',
  ]);
});
