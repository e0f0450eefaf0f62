// The Lua the Redis adapter (core/state/redis.ts) sends, as ioredis's named scripts: sent as
// EVALSHA, and as EVAL when Redis answers NOSCRIPT (a restarted or flushed Redis). Each script runs
// atomically, so no other client's command falls inside it.
import { LEASE_SHARE } from './shared-state.js';

// One script, so that concurrent hits from every instance see one counter and exactly one of
// them starts the window. A key without expiry (left by a crash between INCR and PEXPIRE on an
// older version, or written by hand) would otherwise count forever.
// KEYS[1]: the window; ARGV[1]: its length in ms. Answers the count, this hit included, and the
// window's ms left (SharedState.hit).
const FIXED_WINDOW_HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

// Every call issued in one turn of the event loop, as one script (RedisSharedState.batched). Each
// call runs whole and in order, as it would alone.
//
// KEYS: the state marker's map (core/state/state-marker.ts), then each call's keys, call after
// call. ARGV[1]: how many calls; ARGV[2]: the marker's field ('': none is watched); then each
// call's kind, its number of keys, its number of arguments, and those arguments. A call that fails
// (a key of the wrong type, say) is answered {'ERR', why} and the calls after it run as they would
// alone. After the calls' answers, the marker's value (false: none) when one is watched: read in
// the same script, so a store that lost its data is noticed by the first request that reaches it,
// at no round trip of its own.
// Kinds:
// - 'x', an Exchange (core/state/shared-state.ts): keys are the hits', the reads', the version's
//   (when asked), the hits-on-miss', then the claim's (when asked); arguments: how many hits,
//   reads, versions and claims (0 or 1), each hit's and each hit-on-miss's window, limit (-1:
//   none) and lease (1: none), then the claim's value and time to live. Answers 0, 1 when the
//   hits-on-miss were counted (every read missed, no hit over its limit), or 2 when the claim was
//   also set (no hit-on-miss over its limit); then each hit's count, time left and hits leased
//   after it, each read's value (false: none) and time left, the version's value (false: none),
//   then each hit-on-miss's count, time left and leased hits, up to the first over its limit.
//   Windows behave as in FIXED_WINDOW_HIT; a lease counts its hits at once (leaseGrant in
//   core/state/shared-state.ts says how many).
// - 's', set if absent: one key; arguments: the value and its time to live. Answers 1 when stored.
// - 'r', replace if: one key; arguments: the value it must hold, then the new value and its time
//   to live (none: the key is deleted). Answers 1 when it held that value.
// - 'u', a hit taken back: one key, a window; no arguments. Its count falls by one while the window
//   runs and counts more than none; a window that ended is not started again. Answers 1.
const BATCH = `
local LEASE_SHARE = ${LEASE_SHARE}
local function exchange(k, a, keys)
  local hits, reads, versions, claims = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
  local onMiss = keys - hits - reads - versions - claims
  local out, over = {0}, false
  local function hit(i, w)
    local key = KEYS[k + i]
    local max, lease = tonumber(ARGV[a + 3 + 3 * w]), tonumber(ARGV[a + 4 + 3 * w])
    local granted = 1
    if lease > 1 and max >= 0 then
      granted = math.max(1, math.min(lease, math.floor((max - tonumber(redis.call('GET', key) or '0')) / LEASE_SHARE)))
    end
    local count = redis.call('INCRBY', key, granted)
    local ttl = redis.call('PTTL', key)
    if count == granted or ttl < 0 then
      redis.call('PEXPIRE', key, ARGV[a + 2 + 3 * w])
      ttl = tonumber(ARGV[a + 2 + 3 * w])
    end
    count = count - granted + 1
    if max >= 0 and count > max then over = true end
    out[#out + 1] = count
    out[#out + 1] = ttl
    out[#out + 1] = granted - 1
  end
  for i = 1, hits do hit(i, i) end
  local missed = true
  for i = hits + 1, hits + reads do
    local value = redis.call('GET', KEYS[k + i])
    if value then
      missed = false
      out[#out + 1] = value
      out[#out + 1] = redis.call('PTTL', KEYS[k + i])
    else
      out[#out + 1] = false
      out[#out + 1] = 0
    end
  end
  for i = hits + reads + 1, hits + reads + versions do out[#out + 1] = redis.call('GET', KEYS[k + i]) end
  if missed and not over then
    out[1] = 1
    for i = hits + reads + versions + 1, hits + reads + versions + onMiss do
      if over then break end
      hit(i, i - reads - versions)
    end
    local at = a + 4 + 3 * (hits + onMiss)
    if claims == 1 and not over and redis.call('SET', KEYS[k + keys], ARGV[at + 1], 'PX', ARGV[at + 2], 'NX') then out[1] = 2 end
  end
  return out
end
local function setIfAbsent(k, a)
  if redis.call('SET', KEYS[k + 1], ARGV[a + 1], 'PX', ARGV[a + 2], 'NX') then return {1} end
  return {0}
end
local function replaceIf(k, a, keys, args)
  if redis.call('GET', KEYS[k + 1]) ~= ARGV[a + 1] then return {0} end
  if args == 1 then
    redis.call('DEL', KEYS[k + 1])
  else
    redis.call('SET', KEYS[k + 1], ARGV[a + 2], 'PX', ARGV[a + 3])
  end
  return {1}
end
local function unhit(k)
  if redis.call('PTTL', KEYS[k + 1]) > 0 and tonumber(redis.call('GET', KEYS[k + 1]) or '0') > 0 then redis.call('DECR', KEYS[k + 1]) end
  return {1}
end
local kinds = {x = exchange, s = setIfAbsent, r = replaceIf, u = unhit}
local out = {}
local k, a = 1, 3
for call = 1, tonumber(ARGV[1]) do
  local keys, args = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local ok, answer = pcall(kinds[ARGV[a]], k, a + 2, keys, args)
  if ok then
    out[call] = answer
  else
    out[call] = {'ERR', type(answer) == 'table' and answer.err or tostring(answer)}
  end
  k, a = k + keys, a + 3 + args
end
if ARGV[2] ~= '' then out[#out + 1] = redis.call('HGET', KEYS[1], ARGV[2]) end
return out
`;

/** A call's kind in BATCH: an Exchange, set if absent, replace if, a hit taken back. */
export type BatchKind = 'x' | 's' | 'r' | 'u';

/** The scripts, as the client's `scripts` option names them. */
export const SCRIPTS = { fixedWindowHit: { lua: FIXED_WINDOW_HIT, numberOfKeys: 1 }, batch: { lua: BATCH } };

/** The commands SCRIPTS gives the client. */
export interface WithScripts {
  fixedWindowHit(key: string, windowMs: number): Promise<[number, number]>;
  batch(keyCount: number, ...keysAndArgs: Array<string | number>): Promise<Array<Array<number | string | null>>>;
}
