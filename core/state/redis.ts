// The Redis adapter of the shared-state port (core/state/shared-state.ts): what makes N instances
// behind one load balancer count, cache and remember as one. Redis going away must degrade the
// service, never crash or stall it: every call settles within about `commandTimeoutMs`, and a
// failure is a SharedStateUnavailable.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { SCRIPTS, type BatchKind, type WithScripts } from './redis-scripts.js';
import { SharedStateUnavailable, type Exchange, type MarkerWatch, type Exchanged, type MapIncrement, type SharedState, type StoredValue, type WindowCount } from './shared-state.js';

export interface RedisSharedStateOptions {
  /** Prepended to every key, so several services can share one Redis (default 'bestex:'). */
  readonly keyPrefix?: string;
  /** How long a call may take before it fails (default 1000). */
  readonly commandTimeoutMs?: number;
  /** Called once when the connection comes up and once when it goes down, not per retry. */
  readonly onConnectionChange?: (up: boolean, err?: Error) => void;
}

// Every call issued in one turn of the event loop (the requests read from the sockets that turn)
// goes to Redis as one script: one network round trip and one command for all of them, where each
// was a command of its own, with its own write to the socket, reply and promise (measured on two
// instances, alternating with the command-per-call version: 10 % less CPU per cached quote, 23 %
// per plan). Each call still runs whole and in order, as it would alone: a script runs atomically,
// so no other client's command falls between them or inside one.

/** Calls sent in one script at most: a turn of the event loop with more sends several. */
const MAX_BATCH = 64;

/** A call waiting for its turn's script (BATCH in core/state/redis-scripts.ts). */
interface BatchCall {
  readonly kind: BatchKind;
  readonly keys: readonly string[];
  readonly args: ReadonlyArray<string | number>;
  readonly resolve: (answer: ReadonlyArray<number | string | null>) => void;
  readonly reject: (err: unknown) => void;
}

/** The state marker a script reads with its calls, and who judges it (SharedState.watchMarker). */
interface WatchedMarker {
  readonly key: string;
  readonly field: string;
  readonly watch: MarkerWatch;
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
  /** Calls issued in this turn of the event loop, sent together once it ends (`flush`). */
  private queued: BatchCall[] = [];
  /** The state marker read with every request's work (watchMarker); null until one is watched. */
  private marker: WatchedMarker | null = null;

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
      scripts: SCRIPTS,
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

  watchMarker(map: string, field: string, watch: MarkerWatch): void {
    this.marker = { key: this.key(map), field, watch };
  }

  /** Whether `marker`, read with a request's work as `value`, says the store lost its data: that work's answers are then refused. */
  private lost(marker: WatchedMarker | null, value: unknown): SharedStateUnavailable | null {
    if (marker === null || marker.watch(value === null || value === undefined ? null : String(value))) return null;
    return new SharedStateUnavailable(`Redis at ${this.where} lost its data: the state marker is gone or another instance's`, 'lost');
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, resetInMs] = await this.run(() => this.client.fixedWindowHit(this.key(key), windowMs));
    return { count, resetInMs };
  }

  async unhit(key: string): Promise<void> {
    await this.batched('u', [this.key(key)], []);
  }

  async peek(key: string): Promise<WindowCount | null> {
    const k = this.key(key);
    const replies = await this.run(() => this.client.multi().get(k).pttl(k).exec());
    const [[getError, value], [ttlError, ttl]] = replies as [[Error | null, string | null], [Error | null, number]];
    if (getError || ttlError) throw this.unavailable((getError ?? ttlError) as Error);
    // A window without expiry is one the next hit restarts (FIXED_WINDOW_HIT in core/state/redis-scripts.ts): none is running.
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

  async exchange({ hits = [], reads = [], hitsOnMiss = [], version, claimOnMiss }: Exchange): Promise<Exchanged> {
    const versions = version === undefined ? [] : [version];
    const claims = claimOnMiss === undefined ? [] : [claimOnMiss];
    const keys = [...hits, ...reads, ...versions, ...hitsOnMiss, ...claims].map((item) => this.key(typeof item === 'string' ? item : item.key));
    const windows = [...hits, ...hitsOnMiss].flatMap(({ windowMs, max, lease }) => [windowMs, max ?? -1, lease ?? 1]);
    const out = await this.batched('x', keys, [hits.length, reads.length, versions.length, claims.length, ...windows, ...claims.flatMap(({ value, ttlMs }) => [value, ttlMs])]);
    const count = (i: number): WindowCount => {
      const leased = Number(out[i + 2]);
      return leased > 0 ? { count: Number(out[i]), resetInMs: Number(out[i + 1]), leased } : { count: Number(out[i]), resetInMs: Number(out[i + 1]) };
    };
    const values = reads.map((_, i): StoredValue | null => {
      const at = 1 + 3 * hits.length + 2 * i;
      if (out[at] === null) return null;
      const ttl = Number(out[at + 1]);
      return { value: String(out[at]), ttlMs: ttl < 0 ? null : ttl };
    });
    const before = 1 + 3 * hits.length + 2 * reads.length + versions.length;
    const versionValue = versions.length === 0 ? null : out[before - 1];
    return {
      hits: hits.map((_, i) => count(1 + 3 * i)),
      reads: values,
      hitsOnMiss: out[0] === 0 ? null : Array.from({ length: (out.length - before) / 3 }, (_, i) => count(before + 3 * i)),
      version: versionValue === null || versionValue === undefined ? null : String(versionValue),
      claimed: out[0] === 2,
    };
  }

  async getValues(keys: readonly string[]): Promise<Array<string | null>> {
    return this.run(() => this.client.mget(keys.map((key) => this.key(key))));
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    return (await this.batched('s', [this.key(key)], [value, ttlMs]))[0] === 1;
  }

  async replaceIf(key: string, expected: string, value: string | null, ttlMs: number): Promise<boolean> {
    return (await this.batched('r', [this.key(key)], value === null ? [expected] : [expected, value, ttlMs]))[0] === 1;
  }

  /** The call's answer from the script its turn of the event loop sends (BATCH). */
  private batched(kind: BatchKind, keys: readonly string[], args: BatchCall['args']): Promise<ReadonlyArray<number | string | null>> {
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(this.flush);
      this.queued.push({ kind, keys, args, resolve, reject });
    });
  }

  private readonly flush = (): void => {
    const queued = this.queued;
    this.queued = [];
    for (let i = 0; i < queued.length; i += MAX_BATCH) void this.send(queued.slice(i, i + MAX_BATCH));
  };

  private async send(calls: readonly BatchCall[]): Promise<void> {
    // The marker as the script is built: one watched from a later turn on was not read by it.
    const marker = this.marker;
    // With no marker watched, the script's first key is only a place holder: it is not read.
    const keys: string[] = [marker?.key ?? this.prefix];
    const args: Array<string | number> = [calls.length, marker?.field ?? ''];
    for (const call of calls) {
      keys.push(...call.keys);
      args.push(call.kind, call.keys.length, call.args.length, ...call.args);
    }
    let answers: Array<Array<number | string | null>>;
    try {
      answers = await this.run(() => this.client.batch(keys.length, ...keys, ...args));
    } catch (err) {
      for (const call of calls) call.reject(err);
      return;
    }
    const lost = this.lost(marker, answers[calls.length]);
    if (lost) {
      for (const call of calls) call.reject(lost);
      return;
    }
    calls.forEach((call, i) => {
      const answer = answers[i]!;
      if (answer[0] === 'ERR') call.reject(new SharedStateUnavailable(`Redis at ${this.where} refused the command: ${String(answer[1])}`, 'refused'));
      else call.resolve(answer);
    });
  }

  async mapGet(map: string, field: string): Promise<string | null> {
    return this.run(() => this.client.hget(this.key(map), field));
  }

  async mapFields(map: string, fields: readonly string[], version: string): Promise<{ readonly values: ReadonlyArray<string | null>; readonly version: string | null }> {
    const marker = this.marker;
    const [values, read, markerValue] = await this.transaction((t) => {
      const reads = t.hmget(this.key(map), ...fields).get(this.key(version));
      return marker ? reads.hget(marker.key, marker.field) : reads;
    });
    const lost = this.lost(marker, markerValue);
    if (lost) throw lost;
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
    // Calls issued this turn go before the QUIT, which ioredis sends after them.
    if (!this.closing && this.queued.length > 0) this.flush();
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
