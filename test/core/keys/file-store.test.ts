// The file key store (core/keys/file-store.ts, with its lock, core/keys/file-lock.ts): DATA_DIR/keys.json
// read through a snapshot refreshed on an interval, written whole under a lock that a crashed or stale
// writer cannot keep, and every fault of the file a KeyStoreUnavailable; the KeyStore contract held on it.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { generateKey, hashKey } from '../../../core/keys/api-key.js';
import { FileKeyStore } from '../../../core/keys/file-store.js';
import { KeyStoreUnavailable, PartnerKeys } from '../../../core/keys/partner-keys.js';
import { roundTrip, rotateAndBind } from '../../helpers/key-store-contract.js';
import { lastLine, newPartnerKey, runKeysCli } from '../../helpers/keys.js';
import { tempDir } from '../../helpers/temp.js';

/** The pid of a process that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '']).pid!;

function lockContent(pid: number): string {
  return JSON.stringify({ pid, host: hostname(), at: new Date().toISOString(), token: 'f00dfeedf00dfeed' });
}

t.test('file store: "rotation: a new hash for the same record id; the old hash no longer found", and setting origins, under its lock', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const file = path.join(dir, 'keys.json');
  await rotateAndBind(t, new FileKeyStore(file));
  t.strictSame(readdirSync(dir), ['keys.json'], 'no lock or temporary file left behind');
  t.equal((await new FileKeyStore(file).list()).length, 2, 'another reader sees the same records');
});

t.test('file store: add, find, revoke and list round trip', async (t) => {
  await roundTrip(t, new FileKeyStore(path.join(tempDir(t, 'bestex-keys-'), 'keys.json')), 'null');
});

t.test('file store: "Create DATA_DIR if missing (mode 0700 dir, 0600 file)"', async (t) => {
  const dir = path.join(tempDir(t, 'bestex-keys-'), 'data', 'nested');
  await new FileKeyStore(path.join(dir, 'keys.json')).add(newPartnerKey('Acme').record);
  t.equal(statSync(dir).mode & 0o777, 0o700);
  t.equal(statSync(path.join(dir, 'keys.json')).mode & 0o777, 0o600);
  t.strictSame(readdirSync(dir), ['keys.json'], 'no lock or temporary file left behind');
});

t.test('file store: "keys are stored hashed, never in plain text": keys.json holds the hash, not the key', async (t) => {
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  const store = new FileKeyStore(file);
  const { key, record } = newPartnerKey('Acme');
  await store.add(record);
  await store.revoke({ hash: record.hash }, new Date());
  const text = readFileSync(file, 'utf8');
  t.notOk(text.includes(key), 'not the key');
  t.notOk(text.includes(key.slice(3)), 'not its random part');
  t.ok(text.includes(record.hash), 'its hash');
  t.strictSame(Object.keys(JSON.parse(text).keys[0]).sort(), ['createdAt', 'hash', 'id', 'name', 'revokedAt', 'schemaId', 'status'], 'name, creation time, status, fee schema');
});

t.test('file store: "a missing keys.json means no keys", even with no DATA_DIR', async (t) => {
  const store = new FileKeyStore(path.join(tempDir(t, 'bestex-keys-'), 'absent', 'keys.json'));
  t.equal(await store.findByHash(hashKey(generateKey())), null);
  t.strictSame(await store.list(), []);
});

t.test('file store: a keys.json that held keys and disappears (an unmounted volume) is unavailable, a 503, not an empty store', async (t) => {
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  let clock = 0;
  const service = new FileKeyStore(file, { now: () => clock });
  const { record } = newPartnerKey('Acme');
  await new FileKeyStore(file).add(record);
  t.strictSame(await service.findByHash(record.hash), record);
  rmSync(file);
  clock = 1000;
  await t.rejects(service.findByHash(record.hash), { name: 'KeyStoreUnavailable', message: /which held keys, has disappeared/ });
  clock = 2000;
  await t.rejects(service.findByHash(record.hash), { message: /has disappeared/ }, 'and still at every later look, never an empty store');
  await new FileKeyStore(file).add(newPartnerKey('Restored').record);
  clock = 3000;
  t.strictSame(await service.findByHash(record.hash), null, 'until a file is there again');
});

t.test('file store: "a key created or revoked while the service runs takes effect" after one refresh interval, without re-reading the file per request', async (t) => {
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  let clock = 0;
  const service = new FileKeyStore(file, { now: () => clock, refreshIntervalMs: 1000 });
  const cli = new FileKeyStore(file);
  const { record } = newPartnerKey('Acme');
  t.equal(await service.findByHash(record.hash), null, 'no keys yet');
  await cli.add(record);
  clock = 999;
  t.equal(await service.findByHash(record.hash), null, 'within the interval the snapshot answers');
  clock = 1000;
  t.strictSame(await service.findByHash(record.hash), record, 'one interval later the new key is seen');
  await cli.revoke({ id: record.id }, new Date());
  clock = 2000;
  t.equal((await service.findByHash(record.hash))?.status, 'revoked', 'and its revocation');

  writeFileSync(file, '{ not json');
  clock = 2500;
  t.equal((await service.findByHash(record.hash))?.status, 'revoked', 'a keyed request does not read the file: the snapshot answers');
  clock = 3000;
  await t.rejects(service.findByHash(record.hash), KeyStoreUnavailable, '"do not keep serving an old snapshot when the file has become unreadable"');
  await t.rejects(service.list(), KeyStoreUnavailable);
});

t.test('file store: with the default refresh interval, a key added by another instance "takes effect within 5 seconds"', async (t) => {
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  let clock = 0;
  const service = new FileKeyStore(file, { now: () => clock });
  const { record } = newPartnerKey('Acme');
  t.equal(await service.findByHash(record.hash), null);
  await new FileKeyStore(file).add(record);
  clock = 5000;
  t.strictSame(await service.findByHash(record.hash), record, 'seen 5 seconds on');
});

t.test('file store: "If the file cannot be read or parsed, findByHash must reject with KeyStoreUnavailable"', async (t) => {
  const { record } = newPartnerKey('Acme');
  const cases: Record<string, (file: string) => void> = {
    'corrupt JSON': (file) => writeFileSync(file, '{"version":1,"keys":['),
    'an empty file': (file) => writeFileSync(file, ''),
    'not a key store': (file) => writeFileSync(file, '[]'),
    'an unknown version': (file) => writeFileSync(file, JSON.stringify({ version: 2, keys: [] })),
    'a malformed record': (file) => writeFileSync(file, JSON.stringify({ version: 1, keys: [{ ...record, status: 'paused' }] })),
    'a record without a hash': (file) => writeFileSync(file, JSON.stringify({ version: 1, keys: [{ ...record, hash: undefined }] })),
    'a repeated record': (file) => writeFileSync(file, JSON.stringify({ version: 1, keys: [record, record] })),
    'a directory in its place': (file) => mkdirSync(file),
    'DATA_DIR is a file': (file) => writeFileSync(path.dirname(file), ''),
  };
  for (const [what, damage] of Object.entries(cases)) {
    const dir = path.join(tempDir(t, 'bestex-keys-'), 'data');
    mkdirSync(dir);
    const file = path.join(dir, 'keys.json');
    if (what === 'DATA_DIR is a file') rmSync(dir, { recursive: true });
    damage(file);
    const store = new FileKeyStore(file);
    await t.rejects(store.findByHash(record.hash), KeyStoreUnavailable, `${what}: findByHash`);
    await t.rejects(store.list(), KeyStoreUnavailable, `${what}: list`);
    await t.rejects(store.add(newPartnerKey('New').record), KeyStoreUnavailable, `${what}: add refuses to write over it`);
    await t.rejects(store.revoke({ id: record.id }, new Date()), KeyStoreUnavailable, `${what}: revoke`);
  }
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  writeFileSync(file, '{ damaged');
  await t.rejects(new FileKeyStore(file).add(record));
  t.equal(readFileSync(file, 'utf8'), '{ damaged', 'a damaged file is left for the operator, not replaced');
});

t.test('file store: an unreadable keys.json (permissions) is KeyStoreUnavailable', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const file = path.join(dir, 'keys.json');
  await new FileKeyStore(file).add(newPartnerKey('Acme').record);
  chmodSync(file, 0o000);
  if (process.getuid?.() !== 0) {
    await t.rejects(new FileKeyStore(file).findByHash(hashKey(generateKey())), KeyStoreUnavailable);
    return;
  }
  // Root reads any file, and CI runs as root: the store then reads it as `nobody`, in a process
  // of its own with an empty environment (tap's process hooks, which write into root's files,
  // would follow it in NODE_OPTIONS), as a service not run as root meets the file. It runs a copy
  // of the built store in the test's own folder, open to all: the checkout may lie where `nobody`
  // cannot go (a clone in a private home).
  chmodSync(dir, 0o755);
  const store = pathToFileURL(copyModules(fileURLToPath(new URL('../../..', import.meta.url)), fileURLToPath(new URL('../../../core/keys/file-store.js', import.meta.url)), path.join(dir, 'modules'))).href;
  const script = `import { FileKeyStore } from ${JSON.stringify(store)};
try { await new FileKeyStore(${JSON.stringify(file)}).findByHash('x'); console.log('read'); } catch (err) { console.log(err.name); }`;
  const run = spawnSync('/usr/bin/env', ['-i', nodeFor(65534, dir), '--input-type=module', '-e', script], { uid: 65534, gid: 65534, encoding: 'utf8', cwd: dir });
  t.equal(run.stderr, '', 'nobody can load the copied store');
  t.equal(run.stdout.trim(), 'KeyStoreUnavailable', 'as nobody, the unreadable file is KeyStoreUnavailable');
});

/**
 * A Node binary `uid` may run: this process's own, or, where `uid` cannot reach it (a Node installed
 * under a private home, as nvm or a CI tools folder in /root puts it), a link to it (a copy across
 * file systems) in `dir`, which must be open to all.
 */
function nodeFor(uid: number, dir: string): string {
  if (spawnSync(process.execPath, ['--version'], { uid, gid: uid }).status === 0) return process.execPath;
  const node = path.join(dir, 'node');
  try {
    linkSync(process.execPath, node);
  } catch {
    copyFileSync(process.execPath, node);
  }
  chmodSync(node, 0o755);
  return node;
}

/**
 * `entry` and every module it imports by a relative path, copied under `into` as they lie under
 * `root`, readable by all, as ES modules: what a process that cannot read the checkout needs to
 * run it. Returns the copy of `entry`.
 */
function copyModules(root: string, entry: string, into: string): string {
  mkdirSync(into, { recursive: true, mode: 0o755 });
  writeFileSync(path.join(into, 'package.json'), '{"type":"module"}\n', { mode: 0o644 });
  const copied = new Set<string>();
  const copy = (file: string): void => {
    if (copied.has(file)) return;
    copied.add(file);
    const target = path.join(into, path.relative(root, file));
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    const source = readFileSync(file, 'utf8');
    writeFileSync(target, source, { mode: 0o644 });
    for (const [, specifier] of source.matchAll(/(?:\bfrom|\bimport)\s*['"](\.{1,2}\/[^'"]+)['"]/g)) copy(path.resolve(path.dirname(file), specifier!));
  };
  copy(entry);
  return path.join(into, path.relative(root, entry));
}

t.test('file store: "a leftover temp file and a stale lock from a crashed writer (dead pid) do not lose keys or block writes"', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const file = path.join(dir, 'keys.json');
  const kept = newPartnerKey('Kept');
  await new FileKeyStore(file).add(kept.record);
  writeFileSync(`${file}.lock`, lockContent(deadPid()));
  writeFileSync(`${file}.4242.0123456789ab.tmp`, '{"version":1,"keys":[{"half":');
  const added = newPartnerKey('Added');
  // A lock that had to age out (30 s) would outlast the write's 2 s wait and fail it: the dead
  // writer's lock is broken at once.
  await new FileKeyStore(file, { lockTimeoutMs: 2000 }).add(added.record);
  t.strictSame((await new FileKeyStore(file).list()).map((r) => r.name), ['Kept', 'Added'], 'no key lost');
  t.strictSame(readdirSync(dir), ['keys.json'], 'the lock released, the temporary file removed');
});

t.test('file store: "a lock older than ~30 s is stale", even if its pid lives; a stale break guard from a dead breaker is broken too', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const file = path.join(dir, 'keys.json');
  writeFileSync(`${file}.lock`, lockContent(process.pid));
  const old = new Date(Date.now() - 60_000);
  utimesSync(`${file}.lock`, old, old);
  writeFileSync(`${file}.lock.break`, lockContent(deadPid()));
  await new FileKeyStore(file, { lockTimeoutMs: 2000 }).add(newPartnerKey('Acme').record);
  t.equal((await new FileKeyStore(file).list()).length, 1);
  t.strictSame(readdirSync(dir), ['keys.json']);

  writeFileSync(`${file}.lock`, '');
  utimesSync(`${file}.lock`, old, old);
  await new FileKeyStore(file, { lockTimeoutMs: 2000 }).add(newPartnerKey('Other').record);
  t.equal((await new FileKeyStore(file).list()).length, 2, 'a lock whose content was never written is stale by its age');
});

t.test('file store: a lock held by a live writer makes a write wait, then "fail with a clear error"', async (t) => {
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  await new FileKeyStore(file).add(newPartnerKey('Acme').record);
  const before = readFileSync(file, 'utf8');
  const live = lockContent(process.pid);
  writeFileSync(`${file}.lock`, live);

  // Waiting is shown by order, not by a clock: the write is still pending after several of its
  // retries, and stores its key once the live writer's lock is gone.
  let settled = false;
  const waiting = new FileKeyStore(file, { lockTimeoutMs: 600_000 }).add(newPartnerKey('Patient').record).finally(() => (settled = true));
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.equal(settled, false, 'the write waits while the lock is held');
  t.equal(readFileSync(file, 'utf8'), before, 'and has written nothing');
  unlinkSync(`${file}.lock`);
  await waiting;
  t.strictSame((await new FileKeyStore(file).list()).map((r) => r.name), ['Acme', 'Patient'], 'once the lock is gone, it writes');

  writeFileSync(`${file}.lock`, live);
  const written = readFileSync(file, 'utf8');
  await t.rejects(new FileKeyStore(file, { lockTimeoutMs: 300 }).add(newPartnerKey('Late').record), { name: 'KeyStoreUnavailable', message: new RegExp(`pid ${process.pid}.*try again`) });
  t.equal(readFileSync(file, 'utf8'), written, 'a write that gave up wrote nothing');
  t.equal(readFileSync(`${file}.lock`, 'utf8'), live, 'the live lock is left alone');
});

t.test('file store: many writers "breaking the same stale lock cannot both win": every concurrent add survives', async (t) => {
  const file = path.join(tempDir(t, 'bestex-keys-'), 'keys.json');
  writeFileSync(`${file}.lock`, lockContent(deadPid()));
  const issued = Array.from({ length: 20 }, (_, i) => newPartnerKey(`n${i}`));
  await Promise.all(issued.map(({ record }) => new FileKeyStore(file).add(record)));
  const names = (await new FileKeyStore(file).list()).map((r) => r.name).sort();
  t.strictSame(names, issued.map((i) => i.record.name).sort());
});

t.test('file store: "concurrent writers": 8 CLI processes at once each store their key, and each printed key verifies', async (t) => {
  for (const withStaleLock of [false, true]) {
    const dir = tempDir(t, 'bestex-keys-');
    if (withStaleLock) writeFileSync(path.join(dir, 'keys.json.lock'), lockContent(deadPid()));
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => runKeysCli(['create', '--name', `n${i}`], { DATA_DIR: dir })));
    const label = withStaleLock ? 'racing to break a dead writer\'s lock' : 'from an empty DATA_DIR';
    t.strictSame(runs.map((r) => r.code), Array(8).fill(0), `${label}: every process succeeded`) || t.comment(runs.map((r) => r.stderr).join('\n'));
    const store = new FileKeyStore(path.join(dir, 'keys.json'));
    t.equal((await store.list()).length, 8, `${label}: all 8 keys present`);
    const keys = new PartnerKeys(store);
    const partners = await Promise.all(runs.map((r) => keys.verify(lastLine(r.stdout))));
    t.strictSame(partners.map((p) => p?.name).sort(), ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'], `${label}: each printed key verifies`);
    t.strictSame(readdirSync(dir), ['keys.json'], `${label}: no lock or temporary file left`);
  }
});
