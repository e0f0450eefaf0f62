// Where partner keys live: in shared state when REDIS_URL is set (every instance sees the same
// keys), else in the embedded file store, DATA_DIR/keys.json.
import path from 'node:path';
import type { Config } from '../config.js';
import { FileKeyStore } from './file-store.js';
import { SharedStateKeyStore } from './shared-store.js';
import type { KeyStore } from './partner-keys.js';
import type { SharedState } from '../state/shared-state.js';

export const keysFile = (config: Pick<Config, 'dataDir'>): string => path.join(config.dataDir, 'keys.json');

/** `shared` is the Redis-backed state when REDIS_URL is set; it is not used otherwise. */
export function openKeyStore(config: Config, shared: SharedState | null): KeyStore {
  if (config.redisUrl === null) return new FileKeyStore(keysFile(config));
  if (shared === null) throw new Error('REDIS_URL is set: the key store needs its shared state');
  return new SharedStateKeyStore(shared);
}
