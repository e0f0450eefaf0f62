// The key store's choice (core/keys/open-store.ts): the shared-state store where Redis is configured,
// else the file store in DATA_DIR.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { loadConfig } from '../../../core/config.js';
import { FileKeyStore } from '../../../core/keys/file-store.js';
import { keysFile, openKeyStore } from '../../../core/keys/open-store.js';
import { SharedStateKeyStore } from '../../../core/keys/shared-store.js';
import { InProcessSharedState } from '../../../core/state/in-process.js';
import { newPartnerKey } from '../../helpers/keys.js';
import { tempDir } from '../../helpers/temp.js';

t.test('openKeyStore: "Redis-backed when config.redisUrl is set (using the passed shared state), else FileKeyStore(DATA_DIR/keys.json)"', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const fileStore = openKeyStore(loadConfig({ DATA_DIR: dir }), new InProcessSharedState());
  t.type(fileStore, FileKeyStore);
  t.equal((fileStore as FileKeyStore).file, path.join(dir, 'keys.json'));
  t.equal(keysFile(loadConfig({})), path.join('data', 'keys.json'), 'DATA_DIR defaults to ./data');

  const state = new InProcessSharedState();
  const shared = openKeyStore(loadConfig({ DATA_DIR: dir, REDIS_URL: 'redis://127.0.0.1:6379' }, { serviceBuild: 'dev', makesPlans: false }), state);
  t.type(shared, SharedStateKeyStore);
  const { record } = newPartnerKey('Acme');
  await shared.add(record);
  t.ok(await state.mapGet('keys', record.hash), 'its records go to the shared state given');
  t.strictSame(readdirSync(dir), [], 'and not to the file');
  t.throws(() => openKeyStore(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }, { serviceBuild: 'dev', makesPlans: false }), null), /REDIS_URL/);
});
