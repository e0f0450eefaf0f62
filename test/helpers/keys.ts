// Partner keys for tests: issued straight into an app's key store, as the CLI does, or by running
// the CLI itself.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { newKey, type KeyRecord, type KeyStore } from '../../core/keys/partner-keys.js';
import { repoRoot } from '../../handlers/app.js';
import { plainChild } from './plain-child.js';

/** The 62 characters of a key's body, in the order its checksum's digits count them. */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A key's checksum written out independently of the code under test: its SHA-256's first 32 bits as BigInt base62 digits, most significant first. */
export function independentChecksum(prefixAndBody: string): string {
  let n = BigInt(createHash('sha256').update(prefixAndBody).digest().readUInt32BE(0));
  let text = '';
  for (let i = 0; i < 6; i++) {
    text = BASE62[Number(n % 62n)]! + text;
    n /= 62n;
  }
  return text;
}

export interface IssuedKey {
  readonly key: string;
  readonly record: KeyRecord;
}

/** A new key and the record the CLI would store for it, stored nowhere yet. */
export const newPartnerKey = (name: string, createdAt = new Date()): IssuedKey => newKey(name, 'partner-default', createdAt);

export async function issueKey(store: KeyStore, options: { name?: string; schemaId?: string } = {}): Promise<IssuedKey> {
  const issued = newKey(options.name ?? 'test-partner', options.schemaId ?? 'partner-default');
  await store.add(issued.record);
  return issued;
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The built keys CLI (scripts/keys.ts). */
export const KEYS_CLI = path.join(repoRoot(), 'dist', 'scripts', 'keys.js');

/** The CLI prints a new key alone on its last line of stdout. */
export const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

/** Runs the keys CLI as operators do, with only PATH and `env` in its environment. */
export function runKeysCli(args: readonly string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(...plainChild(process.execPath, [KEYS_CLI, ...args]), { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
