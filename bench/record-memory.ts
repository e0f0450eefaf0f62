// What a plan record costs the in-process shared state, measured: `node --expose-gc
// dist/bench/record-memory.js <plan body file> [records]` stores that many records of the plan
// (each its own text, with its own id and key, as answered plans are) through the service's own
// IdempotencyRecords into its own InProcessSharedState, and as many callers' rate-limit windows,
// and prints one JSON line: the heap each holds (measured by dropping them and collecting), and
// the resident memory the records added (RSS after them less RSS before, both after a full
// collection: RSS is not given back when they are dropped), also per 10,000 records. make bench
// runs it with the plan the service answered.
import { readFileSync } from 'node:fs';
import { IdempotencyRecords } from '../core/plans/idempotency.js';
import { StateCapacity } from '../core/state/capacity.js';
import { InProcessSharedState } from '../core/state/in-process.js';

const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with node --expose-gc');
const [file, count = '50000'] = process.argv.slice(2);
if (!file) throw new Error('usage: node --expose-gc dist/bench/record-memory.js <plan body file> [records]');
const planText = readFileSync(file, 'utf8');
const records = Number(count);
const idOf = /pl_[A-Za-z0-9_-]{22}/;

const heap = () => {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
};
const rss = () => {
  collect();
  collect();
  return process.memoryUsage().rss;
};

const rssBefore = rss();
let state: InProcessSharedState | null = new InProcessSharedState(Date.now, new StateCapacity({ maxPlanRecords: records, maxRateWindows: 1 }));
let store: IdempotencyRecords | null = new IdempotencyRecords(state, 'a-secret-of-thirty-two-characters!!');
for (let i = 0; i < records; i++) {
  const request = { caller: `app:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, idempotencyKey: `bench-${i}`, fingerprint: `request-${i}` };
  // A flat string of its own, as JSON.stringify makes each plan's (a replace would share planText's bytes).
  const plan = Buffer.from(planText.replace(idOf, store.planId(request))).toString('utf8');
  await store.claim(request, { ...store.digests(request), plan });
}
const held = heap();
const rssHeld = rss();
// Read after the measure: a variable the code reads no more may be collected before it is cleared.
if ((await state.getValues([`idem:none`])).length !== 1 || store.digests({ caller: '', idempotencyKey: '', fingerprint: '' }) === null) throw new Error('unreachable');
state = null;
store = null;
const dropped = heap();
const bytes = held - dropped;

// A rate-limit window per caller, keyed as the service keys a keyless caller's (rate:ip:<address>).
let windows: InProcessSharedState | null = new InProcessSharedState(Date.now, new StateCapacity({ maxPlanRecords: 1, maxRateWindows: records }));
for (let i = 0; i < records; i++) windows.hitNow(`rate:ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 60_000);
const counted = heap();
if (windows.peekNow('rate:ip:10.0.0.0') === null) throw new Error('unreachable');
windows = null;
const windowBytes = counted - heap();
console.log(
  JSON.stringify({
    records,
    planBytes: Buffer.byteLength(planText),
    heapBytesPerRecord: Math.round(bytes / records),
    heapMB: Math.round(bytes / 1e5) / 10,
    heapMBPer10k: Math.round((bytes / records) * 10_000 / 1e4) / 100,
    rssMBPer10k: Math.round(((rssHeld - rssBefore) / records) * 10_000 / 1e4) / 100,
    heapBytesPerWindow: Math.round(windowBytes / records),
  }),
);
