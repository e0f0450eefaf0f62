// The trade ledger's store rules, held by both adapters (SQLite in the data folder, Redis): a
// plan's row replaced as it changes, a key record's rows read newest first within a range, a page
// at a time after a cursor (ties of one millisecond in id order), filtered by state, and none kept
// past the ledger's retention after its creation.
import t from 'tap';
import type { Trade } from '../../../core/contract/portal.js';
import { RedisPlanStore } from '../../../core/plan-status/redis-store.js';
import { SqlitePlanStore } from '../../../core/plan-status/sqlite-store.js';
import type { PlanStatusStore } from '../../../core/plan-status/store.js';
import type { TradeQuery } from '../../../core/plan-status/trade-store.js';
import { redisSkip, startRedis } from '../../helpers/redis.js';
import { tempDir } from '../../helpers/temp.js';

const redis = await startRedis(t);
t.teardown(() => redis?.stop());

let plans = 0;
const trade = (state: Trade['state'], createdAtMs: number): Trade => ({
  planId: `pl_${String(++plans).padStart(22, 'T')}`,
  createdAt: new Date(createdAtMs).toISOString(),
  updatedAt: new Date(createdAtMs).toISOString(),
  state,
  terminal: state !== 'planned',
  pair: { give: 'Amulet', want: 'USDCx' },
  amount: '100',
  net: '15',
  minReceive: '14.9',
  received: state === 'completed' ? '15' : null,
  slippageBps: state === 'completed' ? '0' : null,
  legs: [{ leg: 0, venueId: 'tradecraft', amount: '100', net: '15', minReceive: '14.9', state, basis: 'ledger', received: state === 'completed' ? '15' : null, depositUpdateId: null, settlementUpdateId: null }],
  fees: { token: 'USDCx', disclosed: { service: '0', integrator: '0' }, collected: { service: '0', integrator: '0' } },
  takerRef: `tr_${'r'.repeat(43)}`,
});

function rules(name: string, open: (now: () => number, tradeRetentionMs: number) => PlanStatusStore, skip: { skip?: string } = {}) {
  t.test(`${name}: "a key record's rows, newest first, a page at a time after a cursor, each once, filtered by state"`, skip, async (t) => {
    const partnerId = `key_${name.toLowerCase()}${++plans}`;
    const store = open(Date.now, 3_600_000);
    t.teardown(() => store.close());
    const base = Date.now() - 10_000;
    // Two plans in one millisecond: told apart by id.
    const rows = [trade('completed', base), trade('expired', base + 1), trade('completed', base + 1), trade('planned', base + 2)];
    for (const row of rows) await store.trades.put({ partnerId, createdAtMs: Date.parse(row.createdAt), trade: row });
    await store.trades.put({ partnerId: 'key_someoneelse', createdAtMs: base, trade: trade('completed', base) });
    const query: TradeQuery = { partnerId, fromMs: base - 1000, toMs: base + 1000, states: null };
    const newest = [...rows].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt) || (a.planId < b.planId ? 1 : -1));
    t.strictSame((await store.trades.page(query, null, 100)).map((r) => r.planId), newest.map((r) => r.planId), 'newest first, ties by id; never another key record\'s');
    const seen: string[] = [];
    let after = null;
    for (;;) {
      const page = await store.trades.page(query, after, 1);
      if (page.length === 0) break;
      seen.push(page[0]!.planId);
      after = { createdAtMs: Date.parse(page[0]!.createdAt), planId: page[0]!.planId };
    }
    t.strictSame(seen, newest.map((r) => r.planId), 'page by page: each once');
    t.strictSame((await store.trades.page({ ...query, states: new Set(['completed']) }, null, 100)).map((r) => r.planId), newest.filter((r) => r.state === 'completed').map((r) => r.planId), 'by state');
    t.strictSame(await store.trades.page({ ...query, fromMs: base + 2, toMs: base + 3 }, null, 100), [rows[3]], 'within the range only');
    const done = { ...rows[3]!, state: 'completed' as const, terminal: true };
    await store.trades.put({ partnerId, createdAtMs: base + 2, trade: done });
    t.strictSame(await store.trades.page({ ...query, fromMs: base + 2, toMs: base + 3 }, null, 100), [done], 'a row put again replaces the one before');
  });

  t.test(`${name}: "no row is kept past the ledger's retention after the plan's creation"`, skip, async (t) => {
    const partnerId = `key_retained${++plans}`;
    let nowMs = Date.now();
    const store = open(() => nowMs, 1_000);
    t.teardown(() => store.close());
    const row = trade('completed', nowMs);
    await store.trades.put({ partnerId, createdAtMs: nowMs, trade: row });
    nowMs += 2_000;
    // Redis keeps its own time.
    if (store.shared) await new Promise((resolve) => setTimeout(resolve, 1_200));
    t.strictSame(await store.trades.page({ partnerId, fromMs: 0, toMs: nowMs + 10_000, states: null }, null, 10), [], 'gone once its retention has passed');
  });
}

rules('SQLite', (now, retention) => new SqlitePlanStore(tempDir(t, 'bestex-trades-'), 60_000, now, retention));
rules('Redis', (_now, retention) => new RedisPlanStore(`${redis?.url}/6`, 60_000, retention), redisSkip(redis));
