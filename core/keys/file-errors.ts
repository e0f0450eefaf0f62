// How the file key store and its lock (core/keys/file-store.ts, core/keys/file-lock.ts) read a
// failed file system call, and turn any failure into KeyStoreUnavailable: the service answers 503.
import { KeyStoreUnavailable } from './partner-keys.js';

export const errorCode = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | null)?.code;

export function asUnavailable(err: unknown, what: string): KeyStoreUnavailable {
  if (err instanceof KeyStoreUnavailable) return err;
  return new KeyStoreUnavailable(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
