// Plan ids: `pl_` and 128 random bits. The bits are drawn from the operating system's generator a
// few kilobytes at a time, as crypto.randomUUID draws its own, and each byte is used once: a
// randomBytes call per plan cost a plan ~4 % of its CPU (a system call for the fork check
// included).
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 16;
const POOL_BYTES = ID_BYTES * 256;

let pool = Buffer.alloc(0);
let used = 0;

export function newPlanId(): string {
  if (used + ID_BYTES > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    used = 0;
  }
  const id = `pl_${pool.toString('base64url', used, used + ID_BYTES)}`;
  used += ID_BYTES;
  return id;
}
