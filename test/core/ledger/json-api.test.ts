// The JSON Ledger API v2 adapter (core/ledger/json-api-ledger.ts): against recorded responses
// written from the public API's schema, and over HTTP against the sandbox ledger.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Decimal } from '../../../core/decimal.js';
import { JsonApiLedger } from '../../../core/ledger/json-api-ledger.js';
import { LedgerFailure, type LedgerTransaction } from '../../../core/ledger/ledger.js';
import { OutcomeTracker, poolTokens } from '../../../core/outcomes/outcomes.js';
import { SANDBOX_POOL_PARTIES } from '../../../sandbox/venues/market.js';
import { FetchFailed, type HttpFetch } from '../../../core/http-client.js';
import { sandboxLedger } from '../../helpers/ledger.js';

const fixture = (name: string) => readFileSync(new URL(`../../../../test/fixtures/json-ledger-api/${name}`, import.meta.url), 'utf8');
const POOL = SANDBOX_POOL_PARTIES['CC/USDCx']!;
const ALICE = `alice::1220${'b'.repeat(64)}`;

interface Sent {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: unknown;
}

/** A participant answering from fixtures: `answer` picks the status and file for each request. */
function participant(answer: (sent: Sent, index: number) => [number, string]): { fetch: HttpFetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: HttpFetch = async (url, init) => {
    const request = { url, method: init.method, headers: init.headers, body: init.body === undefined ? undefined : JSON.parse(init.body) };
    sent.push(request);
    const [status, text] = answer(request, sent.length - 1);
    return { status, text: async () => text };
  };
  return { fetch, sent };
}

const adapter = (fetch: HttpFetch, pageSize = 2) => new JsonApiLedger({ baseUrl: 'https://participant.example', token: 'jwt-token', readAs: [POOL], timeoutMs: 1000, pageSize, fetch });

async function all(ledger: JsonApiLedger, begin: number, end: number): Promise<LedgerTransaction[]> {
  const out: LedgerTransaction[] = [];
  for await (const tx of ledger.transactions({ beginExclusive: begin, endInclusive: end }, new AbortController().signal)) out.push(tx);
  return out;
}

t.test('fixtures: ledger end, and a range read in pages of `limit`, each after the offset the last reached (an OffsetCheckpoint included)', async (t) => {
  const pages = [fixture('updates-page-1.json'), fixture('updates-page-2.json')];
  const { fetch, sent } = participant((request, i) => (request.url.endsWith('/v2/state/ledger-end') ? [200, fixture('ledger-end.json')] : [200, pages[i - 1]!]));
  const ledger = adapter(fetch);
  const end = await ledger.ledgerEnd(new AbortController().signal);
  t.equal(end, 12);
  const transactions = await all(ledger, 0, end);
  t.equal(sent.length, 3, 'ledger end, then two pages: the second reached the end');
  t.equal(sent[1]!.url, 'https://participant.example/v2/updates?limit=2&stream_idle_timeout_ms=1000', 'a page of limit; the list ends only after LEDGER_TIMEOUT_MS without an item');
  t.equal(sent[1]!.headers.authorization, 'Bearer jwt-token', 'the token rides every request');
  t.match(sent[1]!.body, { beginExclusive: 0, endInclusive: 12 });
  t.match(sent[2]!.body, { beginExclusive: 10, endInclusive: 12 }, 'the next page starts after the checkpoint\'s offset');
  t.strictSame(Object.keys((sent[1]!.body as { updateFormat: { includeTransactions: { eventFormat: { filtersByParty: object } } } }).updateFormat.includeTransactions.eventFormat.filtersByParty), [POOL], 'read as the pool party');
  t.match(sent[1]!.body, { updateFormat: { includeTransactions: { transactionShape: 'TRANSACTION_SHAPE_LEDGER_EFFECTS' } } });
  t.strictSame(transactions.map((tx) => [tx.offset, tx.updateId.slice(0, 8)]), [[9, '1220d7c3'], [12, '1220a9f8']], 'the checkpoint is no transaction');
  const [created] = transactions[0]!.events;
  t.equal(created!.kind, 'created');
  const exercised = transactions[1]!.events[0]!;
  t.match(exercised, { kind: 'exercised', choice: 'TransferInstruction_Accept', actingParties: [POOL], consuming: true });
  // The same transactions derive a completed swap, settled by the accepting update.
  const tracker = new OutcomeTracker(
    { party: ALICE, since: new Date('2026-11-20T10:00:00Z'), deadline: new Date('2026-11-20T10:01:30Z'), escrow: null, amount: new Decimal('100'), minReceive: null, want: null },
    poolTokens(SANDBOX_POOL_PARTIES),
  );
  transactions.forEach((tx) => tracker.observe(tx));
  t.strictSame(tracker.outcome(Date.parse('2026-11-20T10:00:10Z')), { status: 'completed', depositUpdateId: transactions[1]!.updateId });
});

t.test('fixtures: a page that stops short of the range\'s end is followed by another ("http-list-wait-time" may cut a list); an empty page ends the range', async (t) => {
  const pages = [fixture('updates-page-1.json'), '[]'];
  const { fetch, sent } = participant((_request, i) => [200, pages[i]!]);
  t.equal((await all(adapter(fetch, 5), 0, 12)).length, 1);
  t.equal(sent.length, 2, 'the first page reached offset 10 of 12: one more request, which came back empty');
  t.match(sent[1]!.body, { beginExclusive: 10 });
  const reachesEnd = participant(() => [200, fixture('updates-page-2.json')]);
  t.equal((await all(adapter(reachesEnd.fetch, 5), 10, 12)).length, 1);
  t.equal(reachesEnd.sent.length, 1, 'a page that reaches the end is the last');
  t.equal((await all(adapter(reachesEnd.fetch, 5), 12, 12)).length, 0);
  t.equal(reachesEnd.sent.length, 1, 'beginExclusive = endInclusive: nothing to read');
  const past = participant(() => [200, fixture('updates-page-2.json')]);
  t.match(await all(adapter(past.fetch, 5), 0, 11).catch((e: unknown) => e), { reason: 'unreadable', message: /past the range's end 11/ });
});

t.test('fixtures: "a page of updates over what is read at once is asked again, halved, until it fits"', async (t) => {
  const pages = [fixture('updates-page-1.json'), fixture('updates-page-2.json')];
  let served = 0;
  const sent: string[] = [];
  const fetch: HttpFetch = async (url) => {
    sent.push(url);
    // Over the client's 1 MiB at more than one update a page, as large updates are.
    if (!url.includes('limit=1&')) throw new FetchFailed(false, false, 'ERR_RESPONSE_TOO_LARGE');
    return { status: 200, text: async () => pages[served++]! };
  };
  const transactions = await all(adapter(fetch, 4), 0, 12);
  t.strictSame(transactions.map((tx) => tx.offset), [9, 12], 'every transaction read');
  t.strictSame(sent.slice(0, 3).map((u) => new URL(u).searchParams.get('limit')), ['4', '2', '1'], 'halved until it fits');
  const stuck: HttpFetch = async () => {
    throw new FetchFailed(false, false, 'ERR_RESPONSE_TOO_LARGE');
  };
  await t.rejects(all(adapter(stuck, 2), 0, 12), LedgerFailure, 'one update over it is a LedgerFailure');
});

t.test('fixtures: the pruned offset is read from /v2/state/latest-pruned-offsets, 0 when nothing was pruned', async (t) => {
  const pruned = participant(() => [200, fixture('latest-pruned-offsets.json')]);
  t.equal(await adapter(pruned.fetch).prunedUpTo(new AbortController().signal), 4);
  t.equal(pruned.sent[0]!.url, 'https://participant.example/v2/state/latest-pruned-offsets');
  const none = participant(() => [200, '{}']);
  t.equal(await adapter(none.fetch).prunedUpTo(new AbortController().signal), 0);
});

t.test('fixtures: "auth failure": 401 and 403 are LedgerFailure unauthorized, naming LEDGER_TOKEN and never the token', async (t) => {
  for (const status of [401, 403]) {
    const { fetch } = participant(() => [status, fixture('unauthenticated.json')]);
    const err = await adapter(fetch).ledgerEnd(new AbortController().signal).catch((e: unknown) => e);
    t.ok(err instanceof LedgerFailure);
    t.equal((err as LedgerFailure).reason, 'unauthorized');
    t.match((err as Error).message, /LEDGER_TOKEN/);
    t.notMatch((err as Error).message, /jwt-token/);
  }
});

t.test('fixtures: 413 over the participant\'s list limit says to lower LEDGER_PAGE_SIZE; other errors keep the code, never the cause', async (t) => {
  const tooLarge = participant(() => [413, fixture('list-too-large.json')]);
  const err = await all(adapter(tooLarge.fetch), 0, 12).catch((e: unknown) => e);
  t.match(err, { reason: 'rejected', message: /LEDGER_PAGE_SIZE/ });
  const failing = participant(() => [400, JSON.stringify({ code: 'INVALID_ARGUMENT', cause: `party ${ALICE} unknown` })]);
  const other = await all(adapter(failing.fetch), 0, 12).catch((e: unknown) => e);
  t.match(other, { reason: 'rejected', message: /HTTP 400 \(INVALID_ARGUMENT\)/ });
  t.notMatch((other as Error).message, /alice/, 'the cause may quote a party: it is dropped');
  const proxy = participant(() => [413, '<html><body>413 Request Entity Too Large</body></html>']);
  t.match(await all(adapter(proxy.fetch), 0, 12).catch((e: unknown) => e), { reason: 'rejected', message: /LEDGER_PAGE_SIZE/ }, 'a 413 in HTML from a proxy in front says the same');
  const undecodable = participant(() => [400, 'Invalid value for: body (missing required field beginExclusive)']);
  t.match(await all(adapter(undecodable.fetch), 0, 12).catch((e: unknown) => e), { reason: 'rejected', message: /HTTP 400$/ }, 'a request the participant could not decode: 400 in text/plain');
});

t.test('fixtures: answers that are not the documented shape are unreadable, not guessed at', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['not json', /not JSON/],
    ['{"updates": []}', /not a list/],
    ['[{"update": {"Transaction": {"value": {"offset": 11.5, "updateId": "1220ab", "recordTime": "2026-11-20T10:00:00Z", "events": []}}}}]', /offset/],
    ['[{"update": {"Transaction": {"value": {"offset": 3, "updateId": "1220ab", "recordTime": "2026-11-20T10:00:00Z", "events": []}}}}]', /went back/],
    ['[{"update": {"Transaction": {"value": {"offset": 11, "updateId": "1220ab", "recordTime": "yesterday", "events": []}}}}]', /recordTime/],
    ['[{"update": {"Transaction": {"value": {"offset": 11, "updateId": "Update-1", "recordTime": "2026-11-20T10:00:00Z", "events": []}}}}]', /updateId is not a hex update id/],
    ['[{"update": {"Transaction": {"value": {"offset": 11, "updateId": "1220ab", "recordTime": "2026-11-20T10:00:00Z", "events": [{"OddEvent": {"contractId": "c", "templateId": "t"}}]}}}}]', /unknown event kind/],
  ];
  for (const [text, message] of cases) {
    const { fetch } = participant(() => [200, text]);
    const err = await all(adapter(fetch), 10, 12).catch((e: unknown) => e);
    t.match(err, { reason: 'unreadable', message }, text.slice(0, 40));
  }
});

t.test('a participant that does not answer in LEDGER_TIMEOUT_MS, or is not there, is a LedgerFailure naming what to check', async (t) => {
  const silent = createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const slow = new JsonApiLedger({ baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, token: null, readAs: [POOL], timeoutMs: 100, pageSize: 10 });
  t.match(await slow.ledgerEnd(new AbortController().signal).catch((e: unknown) => e), { reason: 'timeout', message: /within 100 ms/ });
  const absent = new JsonApiLedger({ baseUrl: 'http://127.0.0.1:1', token: null, readAs: [POOL], timeoutMs: 1000, pageSize: 10 });
  t.match(await absent.ledgerEnd(new AbortController().signal).catch((e: unknown) => e), { reason: 'unreachable', message: /ECONNREFUSED.*LEDGER_URL/ });
});

t.test('sandbox ledger over HTTP: the adapter reads what was committed, page by page, as the pool party sees it', async (t) => {
  const sandbox = await sandboxLedger(t);
  sandbox.ledger.fund(ALICE, 'Amulet', new Decimal('500'));
  const deposit = await sandbox.deposit(ALICE, '100', '14.5');
  await sandbox.settled();
  const ledger = new JsonApiLedger({ baseUrl: sandbox.url, token: sandbox.token, readAs: [POOL], timeoutMs: 2000, pageSize: 1 });
  const end = await ledger.ledgerEnd(new AbortController().signal);
  t.equal(end, 4, 'the registry\'s factories, the fund, the deposit, the pool\'s answer');
  const seen = await all(ledger, 0, end);
  t.strictSame(seen.map((tx) => tx.offset), [1, 3, 4], 'the pool party sees its reserves issued, the deposit and its answer, not the taker\'s funding');
  t.equal(seen[1]!.updateId, deposit.updateId);
  t.match(seen[1]!.updateId, /^1220[0-9a-f]{64}$/);
  t.ok(seen[2]!.events.some((e) => e.kind === 'exercised' && e.choice === 'TransferInstruction_Accept'));
  const wrongToken = new JsonApiLedger({ baseUrl: sandbox.url, token: 'not-the-token', readAs: [POOL], timeoutMs: 2000, pageSize: 1 });
  t.match(await wrongToken.ledgerEnd(new AbortController().signal).catch((e: unknown) => e), { reason: 'unauthorized' }, 'the sandbox checks the bearer token');
});
