// Issues partner keys for tests straight into an app's key store, as the CLI does.
import { generateKey, hashKey, newKeyId } from '../../core/api-key.js';
import type { KeyRecord, KeyStore } from '../../core/keys.js';

export interface IssuedKey {
  readonly key: string;
  readonly record: KeyRecord;
}

export async function issueKey(store: KeyStore, options: { name?: string; schemaId?: string } = {}): Promise<IssuedKey> {
  const key = generateKey();
  const record: KeyRecord = {
    id: newKeyId(),
    hash: hashKey(key),
    name: options.name ?? 'test-partner',
    createdAt: new Date().toISOString(),
    status: 'active',
    revokedAt: null,
    schemaId: options.schemaId ?? 'partner-default',
  };
  await store.add(record);
  return { key, record };
}
