// The webhook store with REDIS_URL: endpoints in a hash per partner key, deliveries as BullMQ jobs
// (BullMQ: durable delayed jobs in Redis with a worker on every instance, each job locked to one
// worker while it runs and taken over when its instance dies, which is the queue this needs
// without a second store). One queue, `webhooks`; one job per delivery, its id
// `${endpointId}:${planId}:${seq}`, so a delivery queued twice (two instances, or the sink's
// retry) is one job. A job's data is the delivery with its attempts. Each attempt is made by the
// job's processor; a failed one moves the job to BullMQ's delayed set until its next attempt.
// Per endpoint and plan, a sorted set of the seqs still pending keeps the order: a job with an
// earlier seq pending waits (delayed, not attempted), and the job that ends moves the next one up.
import { DelayedError, Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import type { CoreLog } from '../log.js';
import { SendAborted } from './sender.js';
import { DELIVERY_RETENTION_MS, withAttempt, type Delivery, type DeliveryRunner, type StoredEndpoint, type WebhookStore } from './store.js';

const QUEUE = 'webhooks';
/** Deliveries listed per endpoint, at most. */
const RECENT_KEPT = 100;
/** Retries of a job whose processor failed unexpectedly (Redis gone mid-attempt): the delivery's own retries are its attempts. */
const JOB_RETRIES = 1_000;
/** How long closing waits for BullMQ's connections to close before dropping them (a stalled Redis never answers). */
const CLOSE_WAIT_MS = 2_000;
/** An unreachable Redis is logged at most this often: BullMQ reports every failed reconnection. */
const UNREACHABLE_LOG_MS = 60_000;

// Two scripts, so the bound on a key's endpoints holds when two instances add at once.
const ADD_ENDPOINT = `if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;
const REPLACE_ENDPOINT = `if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`;

export interface RedisStoreOptions {
  readonly url: string;
  /** The keys' prefix: BullMQ's queue is `${prefix}:webhooks:*`, the store's own keys `${prefix}:webhook-*`. */
  readonly prefix: string;
  readonly concurrency: number;
  /** WEBHOOK_FIRST_RETRY_MS: a job whose processor failed is tried again after this. */
  readonly firstRetryMs: number;
  /** The longest a delivery waits for an earlier one before it checks again, should the earlier one's end not move it up. */
  readonly orderCheckMs: number;
  readonly log: CoreLog;
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

const jobIdOf = (endpointId: string, planId: string, seq: number): string => `${endpointId}:${planId}:${seq}`;

export class RedisWebhookStore implements WebhookStore {
  private readonly queue: Queue<Delivery>;
  /** The store's own keys' client (ioredis, as core/state/redis.ts); BullMQ keeps its own connections. */
  private readonly redis: Redis;
  private worker: Worker<Delivery> | null = null;
  private runner: DeliveryRunner | null = null;
  private lastUnreachableLog = 0;
  /** The processors running now: closing waits for them to keep what their attempts did. */
  private readonly running = new Set<Promise<void>>();
  private closing = false;

  constructor(private readonly options: RedisStoreOptions) {
    // BullMQ's own client (its ioredis); commands fail after a few tries rather than wait for Redis forever.
    this.queue = new Queue<Delivery>(QUEUE, { connection: { url: options.url, maxRetriesPerRequest: 3 }, prefix: options.prefix });
    this.queue.on('error', (err) => this.failed(err));
    this.redis = new Redis(options.url, { maxRetriesPerRequest: 3 });
    this.redis.on('error', (err) => this.failed(err));
  }

  async endpoints(partnerId: string): Promise<StoredEndpoint[]> {
    const stored = await this.redis.hvals(this.endpointsKey(partnerId));
    return stored.map((text) => JSON.parse(text) as StoredEndpoint).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async addEndpoint(endpoint: StoredEndpoint, max: number): Promise<boolean> {
    return (await this.redis.eval(ADD_ENDPOINT, 1, this.endpointsKey(endpoint.partnerId), endpoint.id, JSON.stringify(endpoint), max)) === 1;
  }

  async replaceEndpoint(endpoint: StoredEndpoint): Promise<boolean> {
    return (await this.redis.eval(REPLACE_ENDPOINT, 1, this.endpointsKey(endpoint.partnerId), endpoint.id, JSON.stringify(endpoint))) === 1;
  }

  /** Its jobs stay until each is next taken, which finds the endpoint gone and ends it. */
  async removeEndpoint(partnerId: string, endpointId: string): Promise<boolean> {
    const [[, removed] = []] = (await this.redis.multi().hdel(this.endpointsKey(partnerId), endpointId).del(this.recentKey(endpointId)).exec()) ?? [];
    return removed === 1;
  }

  async enqueue(deliveries: readonly Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const multi = this.redis.multi();
    for (const d of deliveries) {
      const order = this.orderKey(d.endpointId, d.planId);
      multi.zadd(order, d.seq, String(d.seq)).pexpire(order, DELIVERY_RETENTION_MS);
      const recent = this.recentKey(d.endpointId);
      multi.zadd(recent, 'NX', d.createdAt, `${d.planId}:${d.seq}`).zremrangebyrank(recent, 0, -(RECENT_KEPT + 1)).pexpire(recent, DELIVERY_RETENTION_MS);
    }
    await multi.exec();
    const retention = { age: DELIVERY_RETENTION_MS / 1000 };
    await this.queue.addBulk(
      deliveries.map((d) => ({
        name: 'delivery',
        data: d,
        opts: { jobId: jobIdOf(d.endpointId, d.planId, d.seq), attempts: JOB_RETRIES, backoff: { type: 'fixed', delay: this.options.firstRetryMs }, removeOnComplete: retention, removeOnFail: retention },
      })),
    );
  }

  async deliveries(endpointIds: readonly string[], limit: number): Promise<Delivery[]> {
    const ids = (await Promise.all(endpointIds.map(async (endpointId) => (await this.redis.zrevrange(this.recentKey(endpointId), 0, limit - 1)).map((member) => `${endpointId}:${member}`)))).flat();
    const jobs = await Promise.all(ids.map((id) => this.queue.getJob(id)));
    return jobs
      .filter((job): job is Job<Delivery> => job !== undefined && job !== null)
      .map((job) => job.data)
      .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq)
      .slice(0, limit);
  }

  async replay(endpointId: string, planId: string, seq: number, now: number): Promise<Delivery | null> {
    const job = await this.queue.getJob(jobIdOf(endpointId, planId, seq));
    if (!job) return null;
    const replayed: Delivery = { ...job.data, state: 'pending', windowStartedAt: now, nextAttemptAt: now };
    await job.updateData(replayed);
    const order = this.orderKey(endpointId, planId);
    await this.redis.multi().zadd(order, seq, String(seq)).pexpire(order, DELIVERY_RETENTION_MS).exec();
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') await job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
    else if (state === 'delayed') await job.promote();
    return replayed;
  }

  start(runner: DeliveryRunner): void {
    this.runner = runner;
    this.worker = new Worker<Delivery>(QUEUE, (job, token) => this.tracked(this.process(job, token)), {
      connection: { url: this.options.url, maxRetriesPerRequest: null },
      prefix: this.options.prefix,
      concurrency: this.options.concurrency,
      // A job whose instance died is taken over; it is not failed for that however often it happens.
      maxStalledCount: JOB_RETRIES,
    });
    this.worker.on('error', (err) => this.failed(err));
  }

  /**
   * Stops taking jobs, waits for those running (the dispatcher cut their attempts short, so they
   * end at once and stay due), then closes the connections. The worker is closed without waiting
   * for its own bookkeeping, which never ends once Redis has restarted under it; a Redis that does
   * not answer gets the connections dropped.
   */
  async close(): Promise<void> {
    this.closing = true;
    const { worker, queue } = this;
    void worker?.pause(true).catch(() => undefined);
    await Promise.race([Promise.allSettled([...this.running]), delay(CLOSE_WAIT_MS)]);
    const closed = Promise.allSettled([worker?.close(true), queue.close()]).then(() => true);
    if (!(await Promise.race([closed, delay(CLOSE_WAIT_MS).then(() => false)]))) {
      await Promise.allSettled([worker?.disconnect(), queue.disconnect()]);
    }
    this.redis.disconnect();
  }

  private tracked(processing: Promise<void>): Promise<void> {
    this.running.add(processing);
    void processing.finally(() => this.running.delete(processing)).catch(() => undefined);
    return processing;
  }

  private async process(job: Job<Delivery>, token: string | undefined): Promise<void> {
    const delivery = job.data;
    if (delivery.state !== 'pending') return;
    if (this.closing) {
      // Taken while closing: left due for another instance, or this one after its restart.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (await this.waitsForEarlier(delivery)) {
      await job.moveToDelayed(Date.now() + this.options.orderCheckMs, token);
      // The earlier one may have ended between the check and the move, moving nothing up.
      if (!(await this.waitsForEarlier(delivery))) await job.promote().catch(() => undefined);
      throw new DelayedError();
    }
    let settled;
    try {
      settled = await this.runner!.run(delivery);
    } catch (err) {
      if (!(err instanceof SendAborted)) throw err;
      // Cut short by a shutdown: due again at once, for this or another instance.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (settled.kind === 'dropped') {
      await this.release(delivery);
      return;
    }
    const after = withAttempt(delivery, settled);
    await job.updateData(after);
    if (after.state === 'pending') {
      await job.moveToDelayed(after.nextAttemptAt!, token);
      throw new DelayedError();
    }
    await this.release(delivery);
  }

  /** Whether a delivery of the same plan to the same endpoint with an earlier seq is still pending; seqs of ended ones are cleared on the way. */
  private async waitsForEarlier(delivery: Delivery): Promise<boolean> {
    const order = this.orderKey(delivery.endpointId, delivery.planId);
    for (const seq of await this.redis.zrangebyscore(order, '-inf', `(${delivery.seq}`)) {
      const earlier = await this.queue.getJob(jobIdOf(delivery.endpointId, delivery.planId, Number(seq)));
      if (earlier?.data.state === 'pending') return true;
      await this.redis.zrem(order, seq);
    }
    return false;
  }

  /** Ends the delivery's place in its plan's order and moves the next one up, unless that one waits for its own next attempt. */
  private async release(delivery: Delivery): Promise<void> {
    const order = this.orderKey(delivery.endpointId, delivery.planId);
    await this.redis.zrem(order, String(delivery.seq));
    const [next] = await this.redis.zrange(order, '0', '0');
    if (next === undefined) return;
    const job = await this.queue.getJob(jobIdOf(delivery.endpointId, delivery.planId, Number(next)));
    if (job && (job.data.nextAttemptAt ?? 0) <= Date.now() && (await job.isDelayed())) await job.promote().catch(() => undefined);
  }

  private failed(err: Error): void {
    const now = Date.now();
    if (now - this.lastUnreachableLog < UNREACHABLE_LOG_MS) return;
    this.lastUnreachableLog = now;
    this.options.log.warn({ reason: err.message }, 'webhook queue: Redis failed; deliveries wait until it answers');
  }

  private endpointsKey(partnerId: string): string {
    return `${this.options.prefix}:webhook-endpoints:${partnerId}`;
  }

  private recentKey(endpointId: string): string {
    return `${this.options.prefix}:webhook-recent:${endpointId}`;
  }

  private orderKey(endpointId: string, planId: string): string {
    return `${this.options.prefix}:webhook-order:${endpointId}:${planId}`;
  }
}
