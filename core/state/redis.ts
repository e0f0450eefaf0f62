// The Redis adapter of the shared-state port (core/state/shared-state.ts): what makes N instances
// behind one load balancer count, cache and remember as one. Redis going away must degrade the
// service, never crash or stall it: every call settles within about `commandTimeoutMs`, and a
// failure is a SharedStateUnavailable.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { SharedStateUnavailable, type Exchange, type Exchanged, type MapIncrement, type SharedState, type StoredValue, type WindowCount } from './shared-state.js';

export interface RedisSharedStateOptions {
  /** Prepended to every key, so several services can share one Redis (default 'bestex:'). */
  readonly keyPrefix?: string;
  /** How long a call may take before it fails (default 1000). */
  readonly commandTimeoutMs?: number;
  /** Called once when the connection comes up and once when it goes down, not per retry. */
  readonly onConnectionChange?: (up: boolean, err?: Error) => void;
}

// One script, so that concurrent hits from every instance see one counter and exactly one of
// them starts the window. A key without expiry (left by a crash between INCR and PEXPIRE on an
// older version, or written by hand) would otherwise count forever.
const FIXED_WINDOW_HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

// An Exchange (core/state/shared-state.ts) in one script, so a request's windows and reads cost
// one round trip. KEYS: the hits', the reads', the version's (when asked), then the hits-on-miss'
// keys; ARGV: how many hits, reads and versions (0 or 1), then each hit's window and limit (-1:
// none), the hits', then the hits-on-miss'. Returns each hit's count and time left, each read's
// value (false: none) and time left, the version's value (false: none) and 0, then, when every
// read missed and no hit is over its limit, each hit-on-miss's count and time left up to the
// first over its limit. Windows behave as in FIXED_WINDOW_HIT.
const EXCHANGE = `
local hits, reads, versions = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
local over = false
local function hit(i, at)
  local count = redis.call('INCR', KEYS[i])
  local ttl = redis.call('PTTL', KEYS[i])
  if count == 1 or ttl < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[at])
    ttl = tonumber(ARGV[at])
  end
  local max = tonumber(ARGV[at + 1])
  if max >= 0 and count > max then over = true end
  out[#out + 1] = count
  out[#out + 1] = ttl
end
for i = 1, hits do hit(i, 2 + 2 * i) end
local missed = true
for i = hits + 1, hits + reads do
  local value = redis.call('GET', KEYS[i])
  if value then
    missed = false
    out[#out + 1] = value
    out[#out + 1] = redis.call('PTTL', KEYS[i])
  else
    out[#out + 1] = false
    out[#out + 1] = 0
  end
end
for i = hits + reads + 1, hits + reads + versions do
  out[#out + 1] = redis.call('GET', KEYS[i])
  out[#out + 1] = 0
end
if missed then
  for i = hits + reads + versions + 1, #KEYS do
    if over then break end
    hit(i, 2 + 2 * (i - reads - versions))
  end
end
return out
`;

interface WithScripts {
  fixedWindowHit(key: string, windowMs: number): Promise<[number, number]>;
  exchange(keyCount: number, ...keysAndArgs: Array<string | number>): Promise<Array<number | string | null>>;
}

/** Reconnect delays: quick at first, then every 2 s for as long as Redis stays away. */
const retryDelay = (attempt: number): number => Math.min(50 * 2 ** attempt, 2000);

export class RedisSharedState implements SharedState {
  readonly shared = true;
  private readonly client: Redis & WithScripts;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  /** host:port only: the URL may carry a password. */
  private readonly where: string;
  private link: 'connecting' | 'up' | 'down' = 'connecting';
  private readonly firstAttempt: Promise<void>;
  private lastError: Error | undefined;
  private closing: Promise<void> | undefined;

  constructor(url: string, options: RedisSharedStateOptions = {}) {
    this.prefix = options.keyPrefix ?? 'bestex:';
    this.timeoutMs = options.commandTimeoutMs ?? 1000;
    this.where = hostOf(url);
    // No offline queue: a command issued while Redis is away fails at once instead of waiting
    // for a reconnect that may never come, and never runs late (a hit counted after its caller
    // gave up). Only the very first connection is waited for (in `run`, at most a command
    // timeout), so calls made at startup work. For the same reason nothing is resent after a
    // reconnect, and commands in flight when the connection drops fail with it
    // (maxRetriesPerRequest 0).
    this.client = new Redis(url, {
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: this.timeoutMs,
      retryStrategy: retryDelay,
      // Sent as EVALSHA, and as EVAL when Redis answers NOSCRIPT (a restarted or flushed Redis).
      scripts: { fixedWindowHit: { lua: FIXED_WINDOW_HIT, numberOfKeys: 1 }, exchange: { lua: EXCHANGE } },
    }) as Redis & WithScripts;

    const report = options.onConnectionChange ?? (() => {});
    let attempted: () => void = () => {};
    this.firstAttempt = new Promise((resolve) => (attempted = resolve));
    // Without a listener ioredis prints every failed retry to stderr, and the few 'error' events
    // it emits directly would throw and end the process.
    this.client.on('error', (err: Error) => (this.lastError = err));
    this.client.on('ready', () => {
      attempted();
      this.lastError = undefined;
      if (this.link !== 'up') {
        this.link = 'up';
        report(true);
      }
    });
    this.client.on('close', () => {
      attempted();
      if (this.closing || this.link === 'down') return;
      this.link = 'down';
      report(false, this.lastError);
    });
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, resetInMs] = await this.run(() => this.client.fixedWindowHit(this.key(key), windowMs));
    return { count, resetInMs };
  }

  async peek(key: string): Promise<WindowCount | null> {
    const k = this.key(key);
    const replies = await this.run(() => this.client.multi().get(k).pttl(k).exec());
    const [[getError, value], [ttlError, ttl]] = replies as [[Error | null, string | null], [Error | null, number]];
    if (getError || ttlError) throw this.unavailable((getError ?? ttlError) as Error);
    // A window without expiry is one the next hit restarts (FIXED_WINDOW_HIT): none is running.
    if (value === null || ttl < 0) return null;
    return { count: Number(value), resetInMs: ttl };
  }

  async get(key: string): Promise<StoredValue | null> {
    const k = this.key(key);
    const replies = await this.run(() => this.client.multi().get(k).pttl(k).exec());
    const [[getError, value], [ttlError, ttl]] = replies as [[Error | null, string | null], [Error | null, number]];
    if (getError || ttlError) throw this.unavailable((getError ?? ttlError) as Error);
    if (value === null) return null;
    return { value, ttlMs: ttl < 0 ? null : ttl };
  }

  async exchange({ hits = [], reads = [], hitsOnMiss = [], version }: Exchange): Promise<Exchanged> {
    const versions = version === undefined ? [] : [version];
    const keys = [...hits, ...reads, ...versions, ...hitsOnMiss].map((item) => this.key(typeof item === 'string' ? item : item.key));
    const windows = [...hits, ...hitsOnMiss].flatMap(({ windowMs, max }) => [windowMs, max ?? -1]);
    const out = await this.run(() => this.client.exchange(keys.length, ...keys, hits.length, reads.length, versions.length, ...windows));
    const count = (i: number): WindowCount => ({ count: Number(out[i]), resetInMs: Number(out[i + 1]) });
    const values = reads.map((_, i): StoredValue | null => {
      const at = 2 * (hits.length + i);
      if (out[at] === null) return null;
      const ttl = Number(out[at + 1]);
      return { value: String(out[at]), ttlMs: ttl < 0 ? null : ttl };
    });
    const before = hits.length + reads.length + versions.length;
    const counted = (out.length - 2 * before) / 2;
    const versionValue = versions.length === 0 ? null : out[2 * (hits.length + reads.length)];
    return {
      hits: hits.map((_, i) => count(2 * i)),
      reads: values,
      hitsOnMiss: counted > 0 || (hitsOnMiss.length === 0 && values.every((value) => value === null)) ? Array.from({ length: counted }, (_, i) => count(2 * (before + i))) : null,
      version: versionValue === null || versionValue === undefined ? null : String(versionValue),
    };
  }

  async getValues(keys: readonly string[]): Promise<Array<string | null>> {
    return this.run(() => this.client.mget(keys.map((key) => this.key(key))));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.run(() => this.client.set(this.key(key), value, 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async mapGet(map: string, field: string): Promise<string | null> {
    return this.run(() => this.client.hget(this.key(map), field));
  }

  async mapFields(map: string, fields: readonly string[], version: string): Promise<{ readonly values: ReadonlyArray<string | null>; readonly version: string | null }> {
    const [values, read] = await this.transaction((t) => t.hmget(this.key(map), ...fields).get(this.key(version)));
    return { values: values as Array<string | null>, version: read as string | null };
  }

  async mapSet(map: string, field: string, value: string, version?: string): Promise<void> {
    if (version === undefined) await this.run(() => this.client.hset(this.key(map), field, value));
    else await this.transaction((t) => t.hset(this.key(map), field, value).set(this.key(version), randomUUID()));
  }

  async mapSetIfAbsent(map: string, field: string, value: string, version?: string): Promise<boolean> {
    if (version === undefined) return (await this.run(() => this.client.hsetnx(this.key(map), field, value))) === 1;
    const [set] = await this.transaction((t) => t.hsetnx(this.key(map), field, value).set(this.key(version), randomUUID()));
    return set === 1;
  }

  async mapDelete(map: string, field: string, version?: string): Promise<void> {
    if (version === undefined) await this.run(() => this.client.hdel(this.key(map), field));
    else await this.transaction((t) => t.hdel(this.key(map), field).set(this.key(version), randomUUID()));
  }

  /** The commands `build` adds, run as one transaction (one round trip): their replies, or SharedStateUnavailable when any failed. */
  private async transaction(build: (transaction: ReturnType<Redis['multi']>) => ReturnType<Redis['multi']>): Promise<unknown[]> {
    const replies = await this.run(() => build(this.client.multi()).exec());
    const failed = (replies ?? []).find(([err]) => err !== null);
    if (replies === null || failed) throw this.unavailable(failed?.[0] ?? new Error('the transaction was discarded'));
    return replies.map(([, reply]) => reply);
  }

  async mapEntries(map: string): Promise<ReadonlyMap<string, string>> {
    return new Map(Object.entries(await this.run(() => this.client.hgetall(this.key(map)))));
  }

  async incrementMaps(increments: readonly MapIncrement[]): Promise<void> {
    if (increments.length === 0) return;
    // One transaction: the call's increments land together or not at all (Redis discards a
    // transaction with a refused command), so a caller that retries a failed call never counts
    // part of it twice.
    const replies = await this.run(() => {
      const transaction = this.client.multi();
      for (const { map, fields, ttlMs } of increments) {
        const k = this.key(map);
        for (const [field, by] of fields) transaction.hincrby(k, field, by);
        transaction.pexpire(k, Math.max(1, Math.ceil(ttlMs)));
      }
      return transaction.exec();
    });
    const failed = (replies ?? []).find(([err]) => err !== null);
    if (replies === null || failed) throw this.unavailable(failed?.[0] ?? new Error('the transaction was discarded'));
  }

  close(): Promise<void> {
    this.closing ??= this.client.quit().then(
      () => {},
      () => this.client.disconnect(),
    );
    return this.closing;
  }

  private key(key: string): string {
    return this.prefix + key;
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.link === 'connecting') await within(this.firstAttempt, this.timeoutMs);
    if (this.closing) throw new SharedStateUnavailable(`Redis at ${this.where} is unreachable: the client is closed`);
    if (this.client.status !== 'ready') {
      const reason = this.lastError ? this.lastError.message : `not connected (${this.client.status})`;
      throw new SharedStateUnavailable(`Redis at ${this.where} is unreachable: ${reason}`);
    }
    try {
      return await command();
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  private unavailable(err: unknown): SharedStateUnavailable {
    // With maxRetriesPerRequest 0 this is how a command in flight learns its connection dropped;
    // ioredis's own message points at the option, which would mislead whoever reads the log.
    const reason =
      err instanceof Error ? (err.name === 'MaxRetriesPerRequestError' ? 'the connection was lost' : err.message) : String(err);
    // A reply error (WRONGTYPE, OOM, NOAUTH...) means Redis answered but cannot serve us; callers
    // degrade the same way, but the message should not send anyone looking for a network fault.
    if (err instanceof Error && err.name === 'ReplyError') {
      return new SharedStateUnavailable(`Redis at ${this.where} refused the command: ${reason}`, 'refused');
    }
    return new SharedStateUnavailable(`Redis at ${this.where} is unreachable: ${reason}`);
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host || 'REDIS_URL';
  } catch {
    return 'REDIS_URL';
  }
}

/** Waits for `promise`, but no longer than `ms`. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
