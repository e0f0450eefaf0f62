// The plan status store shared by several instances, in Redis: each plan (`bx:ps:plan:<id>`)
// and its events (`bx:ps:ev:<id>`, a list in seq order) kept for the retention after the last
// change, the live plans (`bx:ps:live`), each plan added or changed (`bx:ps:changes`, a stream
// kept CHANGES_KEPT_MS, from which the follower reads only what is new), the follower's lease
// (`bx:ps:lease`), and every new event published (`bx:ps:events`) to every instance's streams.
import { Redis } from 'ioredis';
import type { PlanStatusEvent } from '../contract/v2.js';
import { RedisTradeStore } from './redis-trades.js';
import { Listeners, type PlanChanges, type PlanStatusStore } from './store.js';
import { firstEvent, type TrackedPlan } from './status.js';

const PREFIX = 'bx:ps:';
const LIVE = `${PREFIX}live`;
const LEASE = `${PREFIX}lease`;
const CHANNEL = `${PREFIX}events`;
const CHANGES = `${PREFIX}changes`;
/** How long the stream of changes keeps an entry: a follower that has not read for longer reads every live plan again. */
export const CHANGES_KEPT_MS = 10 * 60_000;
/** The most changes one read takes; the rest come at the next. */
const CHANGES_PER_READ = 10_000;

/** Lua: notes plan `planId` as changed in stream `stream`, dropping the entries older than `keptMs` by the server's clock. */
const noteChange = (stream: string, planId: string, keptMs: string) => `
local now = redis.call('TIME')
redis.call('XADD', ${stream}, 'MINID', '~', (tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(${keptMs})) .. '-0', '*', 'p', ${planId})`;
const planKey = (planId: string) => `${PREFIX}plan:${planId}`;
const eventsKey = (planId: string) => `${PREFIX}ev:${planId}`;

/** Appends ARGV[2] as event number ARGV[1] when the list holds exactly the ones before it, and publishes it. */
const APPEND = `
if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[1]) - 1 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] == '1' then redis.call('SREM', KEYS[3], ARGV[5]) end
redis.call('PUBLISH', KEYS[4], ARGV[2])
return 1`;

/** Keeps a new plan and its first event unless a live plan of that id is kept (one over, made again under its id, starts afresh). */
const ADD = `
if redis.call('SISMEMBER', KEYS[3], ARGV[4]) == 1 and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('PUBLISH', KEYS[4], ARGV[2])
${noteChange('KEYS[5]', 'ARGV[4]', 'ARGV[5]')}
return 1`;

/** Replaces a plan's record, keeping its expiry, and notes it as changed. */
const UPDATE = `
redis.call('SET', KEYS[2], ARGV[3], 'KEEPTTL')
${noteChange('KEYS[1]', 'ARGV[1]', 'ARGV[2]')}`;

/** Takes the lease when free, or renews it for its holder. */
const LEASE_SCRIPT = `
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`;

export class RedisPlanStore implements PlanStatusStore {
  readonly shared = true;
  private readonly client: Redis;
  private subscriber: Redis | null = null;
  private subscribed: Promise<void> = Promise.resolve();
  private readonly feed = new Listeners();
  /** The trade ledger, in the same Redis. */
  readonly trades: RedisTradeStore;

  constructor(url: string, private readonly retentionMs: number, tradeRetentionMs: number = retentionMs) {
    this.client = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.client.on('error', () => undefined);
    this.trades = new RedisTradeStore(this.client, tradeRetentionMs);
  }

  subscribe(listener: (event: PlanStatusEvent) => void): () => void {
    if (this.subscriber === null) {
      // A subscribed connection takes no other command: the feed has its own, opened on first use.
      const subscriber = this.client.duplicate();
      subscriber.on('error', () => undefined);
      subscriber.on('message', (_channel: string, text: string) => this.feed.emit(JSON.parse(text) as PlanStatusEvent));
      this.subscribed = subscriber.subscribe(CHANNEL).then(() => undefined);
      this.subscriber = subscriber;
    }
    return this.feed.subscribe(listener);
  }

  listening(): Promise<void> {
    return this.subscribed;
  }

  async add(plan: TrackedPlan): Promise<boolean> {
    const added = await this.client.eval(ADD, 5, planKey(plan.planId), eventsKey(plan.planId), LIVE, CHANNEL, CHANGES, JSON.stringify(plan), JSON.stringify(firstEvent(plan)), this.retentionMs, plan.planId, CHANGES_KEPT_MS);
    return added === 1;
  }

  async update(plan: TrackedPlan): Promise<void> {
    await this.client.eval(UPDATE, 2, CHANGES, planKey(plan.planId), plan.planId, CHANGES_KEPT_MS, JSON.stringify(plan));
  }

  async plan(planId: string): Promise<TrackedPlan | null> {
    const text = await this.client.get(planKey(planId));
    return text === null ? null : (JSON.parse(text) as TrackedPlan);
  }

  async events(planId: string, afterSeq: number): Promise<PlanStatusEvent[]> {
    const texts = await this.client.lrange(eventsKey(planId), afterSeq, -1);
    return texts.map((t) => JSON.parse(t) as PlanStatusEvent);
  }

  async append(event: PlanStatusEvent, terminal: boolean): Promise<boolean> {
    const done = await this.client.eval(APPEND, 4, planKey(event.planId), eventsKey(event.planId), LIVE, CHANNEL, event.seq, JSON.stringify(event), this.retentionMs, terminal ? '1' : '0', event.planId);
    return done === 1;
  }

  async changes(after: string | null): Promise<PlanChanges> {
    if (after !== null) {
      const [[, first], [, entries]] = (await this.client
        .multi()
        .xrange(CHANGES, '-', '+', 'COUNT', 1)
        .xrange(CHANGES, `(${after}`, '+', 'COUNT', CHANGES_PER_READ)
        .exec()) as [[unknown, Array<[string, string[]]>], [unknown, Array<[string, string[]]>]];
      // Entries after the cursor may have been dropped: read every live plan instead.
      const lost = first.length > 0 && streamIdAfter(first[0]![0], after);
      if (!lost) {
        const ids = [...new Set(entries.map(([, fields]) => fields[1]!))];
        return { plans: await this.livePlans(ids), cursor: entries.at(-1)?.[0] ?? after, full: false };
      }
    }
    // The cursor is read before the live set: a plan added between is read again next time, not missed.
    const last = (await this.client.xrevrange(CHANGES, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
    const ids = await this.client.smembers(LIVE);
    return { plans: await this.livePlans(ids, true), cursor: last[0]?.[0] ?? '0-0', full: true };
  }

  /** The records of those of `ids` still live; with `pruned`, ids known live whose record is gone leave the live set. */
  private async livePlans(ids: readonly string[], pruned = false): Promise<TrackedPlan[]> {
    if (ids.length === 0) return [];
    const pipeline = this.client.pipeline().mget(ids.map(planKey));
    if (!pruned) pipeline.smismember(LIVE, ...ids);
    const [[, texts], member] = (await pipeline.exec()) as [[unknown, Array<string | null>], [unknown, number[]]?];
    if (pruned) {
      const gone = ids.filter((_, i) => texts[i] === null);
      // A plan past its retention without a terminal event leaves the live set with its record.
      if (gone.length > 0) await this.client.srem(LIVE, ...gone);
    }
    return texts.flatMap((t, i) => (t !== null && (pruned || member![1][i] === 1) ? [JSON.parse(t) as TrackedPlan] : []));
  }

  async lease(holder: string, ttlMs: number): Promise<boolean> {
    return (await this.client.eval(LEASE_SCRIPT, 1, LEASE, holder, ttlMs)) === 1;
  }

  async close(): Promise<void> {
    this.subscriber?.disconnect();
    await this.client.quit().catch(() => undefined);
  }
}

/** Whether stream id `a` (`<ms>-<n>`) comes after `b`. */
function streamIdAfter(a: string, b: string): boolean {
  const [am, an] = a.split('-').map(BigInt) as [bigint, bigint];
  const [bm, bn] = b.split('-').map(BigInt) as [bigint, bigint];
  return am > bm || (am === bm && an > bn);
}
