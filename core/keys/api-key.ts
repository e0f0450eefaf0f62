// The partner key's format: `bx_`, 32 random base62 characters, and a 6-character base62
// checksum of the rest. The prefix makes a key recognisable (in a leaked file, in a secret
// scanner); the checksum lets a mistyped or made-up key be refused without a store lookup. Keys
// are stored only as their SHA-256: a key is 190 random bits, so a fast hash is enough, and a
// stolen store yields no usable key.
import { createHash, randomBytes, randomInt } from 'node:crypto';

export const KEY_PREFIX = 'bx_';
const BODY_CHARS = 32;
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_CHARS + CHECKSUM_CHARS}}$`);

/** The checksum of a key's prefix and body: its SHA-256's first 32 bits in base62, 6 characters. */
function checksum(prefixAndBody: string): string {
  let n = createHash('sha256').update(prefixAndBody).digest().readUInt32BE(0);
  let text = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
    text = BASE62[n % 62]! + text;
    n = Math.floor(n / 62);
  }
  return text;
}

/** Whether `key` has the key's shape and a matching checksum: a key that could have been issued. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_SHAPE.test(key)) return false;
  const cut = KEY_PREFIX.length + BODY_CHARS;
  return checksum(key.slice(0, cut)) === key.slice(cut);
}

/** A new random key. */
export function generateKey(): string {
  let body = '';
  // randomInt draws without modulo bias.
  for (let i = 0; i < BODY_CHARS; i++) body += BASE62[randomInt(62)];
  return `${KEY_PREFIX}${body}${checksum(KEY_PREFIX + body)}`;
}

/** What the store keeps of a key: its SHA-256, hex. */
export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** A key record's public identifier, safe to print and log: `key_` and 12 random hex digits. */
export const newKeyId = (): string => `key_${randomBytes(6).toString('hex')}`;

export const KEY_ID_SHAPE = /^key_[0-9a-f]{12}$/;
