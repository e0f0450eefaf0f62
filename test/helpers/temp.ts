// Temporary folders for tests: each made fresh under the system's temporary folder and removed, with
// all it holds, when the test that asked for it ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What a folder's removal hangs on: a tap test, or the file's root `t`. */
interface EndsWithTeardown {
  teardown(fn: () => void): void;
}

/**
 * A new empty folder, named `prefix` and a random tail, removed when `t` ends. It lies under the
 * system's temporary folder, never in the checkout, whose place and permissions differ from machine
 * to machine; `force` lets a test remove (or never create) what it was given.
 */
export function tempDir(t: EndsWithTeardown, prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
