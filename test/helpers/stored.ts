// What a shared state holds, read raw, and the idempotency records' privacy rule checked over it:
// "a record holds digests of the request and the caller and the plan's JSON: never the taker's
// party, key or IP" (docs/api.md, Plans). The rule is checked on what is stored, not on what the code
// means to store, in the in-process store and in Redis alike.
import { Redis } from 'ioredis';
import type { Test } from 'tap';
import type { InProcessSharedState } from '../../core/state/in-process.js';

export interface StoredEntry {
  /** The key as the store holds it (with Redis's prefix); a map's field is `map` + ' ' + field. */
  readonly key: string;
  readonly value: string;
  /** A rate-limit window: per client IP by rule, holding a count. */
  readonly window: boolean;
}

/** Everything an in-process shared state holds: its values, its maps' fields (counted ones too) and its windows. */
export function inProcessEntries(state: InProcessSharedState): StoredEntry[] {
  // Its private members, read by index: the test reads what is kept, not what the port returns.
  const entries: StoredEntry[] = [];
  for (const [key, entry] of state['values']) entries.push({ key, value: entry.value, window: false });
  for (const [map, fields] of state['maps']) for (const [field, value] of fields) entries.push({ key: `${map} ${field}`, value, window: false });
  for (const [map, counts] of state['counted']) for (const [field, count] of counts.value) entries.push({ key: `${map} ${field}`, value: String(count), window: false });
  for (const [key, entry] of state['windows']) entries.push({ key, value: String(entry.value), window: true });
  return entries;
}

/** Everything a Redis database holds (its URL names the database): strings, and hashes field by field. */
export async function redisEntries(url: string): Promise<StoredEntry[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  await client.connect();
  try {
    const entries: StoredEntry[] = [];
    for (const key of await client.keys('*')) {
      const type = await client.type(key);
      if (type === 'string') entries.push({ key, value: (await client.get(key)) ?? '', window: /^[^:]*:rate:/.test(key) });
      else if (type === 'hash') for (const [field, value] of Object.entries(await client.hgetall(key))) entries.push({ key: `${key} ${field}`, value, window: false });
      else throw new Error(`the shared state holds a ${type} under ${key}, which this reader does not know`);
    }
    return entries;
  } finally {
    client.disconnect();
  }
}


export interface PlanCallers {
  /** The plans made, as answered: each is kept in exactly one record. */
  readonly plans: readonly string[];
  readonly takerParty: string;
  readonly ip: string;
  readonly apiKey: string;
  readonly keyId: string;
}

/**
 * The records are the stored values that hold a plan's JSON. Neither their keys nor their values
 * hold the taker's party, the caller's IP, key or key id; nothing stored anywhere holds the taker's
 * party or a key, and nothing but a rate-limit window holds the IP.
 */
export function assertRecordsPrivate(t: Test, entries: readonly StoredEntry[], callers: PlanCallers): void {
  const { takerParty, ip, apiKey, keyId } = callers;
  // The party's id without its hint, so a party kept in another spelling is found too.
  const takerNamespace = takerParty.slice(takerParty.indexOf('::') + 2);
  for (const [i, plan] of callers.plans.entries()) {
    // As the plan's text, or as a string within a JSON text (as records were once kept).
    const records = entries.filter((e) => e.value.includes(plan) || e.value.includes(JSON.stringify(plan).slice(1, -1)));
    t.equal(records.length, 1, `plan ${i + 1} is kept in one record`);
    for (const record of records) {
      for (const [name, secret] of Object.entries({ takerParty, takerNamespace, ip, apiKey, keyId })) {
        t.notOk(record.key.includes(secret), `plan ${i + 1}: the record's key does not hold the ${name}`);
        t.notOk(record.value.includes(secret), `plan ${i + 1}: the record does not hold the ${name}`);
      }
    }
  }
  const holding = (secret: string) => entries.filter((e) => e.key.includes(secret) || e.value.includes(secret)).map((e) => e.key);
  t.equal(holding(takerNamespace).join(', '), '', "the taker's party is stored nowhere");
  t.equal(holding(apiKey).join(', '), '', 'the API key is stored nowhere');
  const ipHolders = entries.filter((e) => !e.window && (e.key.includes(ip) || e.value.includes(ip))).map((e) => e.key);
  t.equal(ipHolders.join(', '), '', 'the IP is stored nowhere but in its rate-limit windows');
}
