// Runs the sandbox wallet CLI (sandbox/wallet.ts, as built) the way a person does.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { plainChild } from './plain-child.js';

const CLI = fileURLToPath(new URL('../../sandbox/wallet.js', import.meta.url));

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function sandboxCli(args: readonly string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(...plainChild(process.execPath, [CLI, ...args]), { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
