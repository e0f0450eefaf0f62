// Partner keys for tests: issued straight into an app's key store, as the CLI does, or by running
// the CLI itself.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { newKey, type KeyRecord, type KeyStore } from '../../core/keys/partner-keys.js';
import { repoRoot } from '../../handlers/app.js';

export interface IssuedKey {
  readonly key: string;
  readonly record: KeyRecord;
}

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

/** Runs the keys CLI as operators do, with only PATH and `env` in its environment. */
export function runKeysCli(args: readonly string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KEYS_CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
