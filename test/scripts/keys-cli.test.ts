// The operator's keys CLI (scripts/keys.ts), run as a process: create, list and revoke on
// DATA_DIR/keys.json, what each prints and never prints, and its exit codes.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { generateKey, hashKey, isWellFormedKey } from '../../core/keys/api-key.js';
import { FileKeyStore } from '../../core/keys/file-store.js';
import { PartnerKeys } from '../../core/keys/partner-keys.js';
import { lastLine, runKeysCli } from '../helpers/keys.js';
import { tempDir } from '../helpers/temp.js';

t.test('CLI: create "prints the new key alone on the last line of stdout", the rest to stderr', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const run = await runKeysCli(['create', '--name', 'Acme Corp'], { DATA_DIR: dir });
  t.equal(run.code, 0, run.stderr);
  const key = lastLine(run.stdout);
  t.ok(isWellFormedKey(key), 'a well-formed key');
  t.equal(run.stdout, `${key}\n`, 'stdout is the key alone');
  t.match(run.stderr, /created key_[0-9a-f]{12} for "Acme Corp", fee schema partner-default/);
  t.match(run.stderr, /it will not be shown again/);
  t.notOk(run.stderr.includes(key) || run.stderr.includes(hashKey(key)), 'stderr has neither the key nor its hash');
  const stored = await new FileKeyStore(path.join(dir, 'keys.json')).findByHash(hashKey(key));
  t.match(stored, { name: 'Acme Corp', status: 'active', revokedAt: null, schemaId: 'partner-default' }, 'stored hashed, under the default schema');
  t.match(run.stderr, stored!.id, 'the id it printed is the record\'s');
});

t.test('CLI: "--schema: the fee schema id to record", validated against the configured schemas', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const schemas = path.join(dir, 'schemas.json');
  writeFileSync(
    schemas,
    JSON.stringify({ defaultSchemaId: 'standard', schemas: [{ id: 'standard', serviceBps: 5, integratorCapBps: 10 }, { id: 'vip', serviceBps: 2, integratorCapBps: 10 }], overrides: [{ id: 'acme-deal', schemaId: 'vip', serviceBps: 1 }] }),
  );
  const env = { DATA_DIR: dir, FEE_SCHEMAS_FILE: schemas };
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  for (const [args, schemaId] of [
    [[], 'standard'],
    [['--schema', 'vip'], 'vip'],
    [['--schema=acme-deal'], 'acme-deal'],
  ] as const) {
    const run = await runKeysCli(['create', '--name', 'Acme', ...args], env);
    t.equal(run.code, 0, run.stderr);
    t.equal((await store.findByHash(hashKey(lastLine(run.stdout))))?.schemaId, schemaId, `${args.join(' ') || 'no --schema'}: ${schemaId}`);
  }
  const before = readFileSync(path.join(dir, 'keys.json'), 'utf8');
  for (const [schema, extra] of [['partner-default', {}], ['nope', { FEE_SCHEMAS_FILE: '' }]] as const) {
    const run = await runKeysCli(['create', '--name', 'Acme', '--schema', schema], { ...env, ...extra });
    t.equal(run.code, 2, `unknown schema ${schema} rejected`);
    t.equal(run.stdout, '', 'no key printed');
    t.match(run.stderr, `"${schema}" is not a configured fee schema`);
    t.match(run.stderr, /: use one of [a-z0-9-]+(, [a-z0-9-]+)*; no key was created/, 'the message lists the schemas to choose from and says nothing was created');
  }
  t.equal(readFileSync(path.join(dir, 'keys.json'), 'utf8'), before, 'nothing stored');
  const broken = await runKeysCli(['create', '--name', 'Acme'], { ...env, FEE_SCHEMAS_FILE: path.join(dir, 'absent.json') });
  t.equal(broken.code, 1, 'unreadable FEE_SCHEMAS_FILE: a ConfigError, exit 1');
  t.match(broken.stderr, /FEE_SCHEMAS_FILE/);
});

t.test('CLI: list "never prints a key or a hash"; it prints id, name, createdAt, status, revokedAt, schema', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const env = { DATA_DIR: dir };
  const empty = await runKeysCli(['list'], env);
  t.equal(empty.code, 0);
  t.match(empty.stderr, /no keys yet/);
  const keys: string[] = [];
  for (const name of ['Acme', 'Globex']) keys.push(lastLine((await runKeysCli(['create', '--name', name], env)).stdout));
  t.equal((await runKeysCli(['revoke', keys[0]!], env)).code, 0);

  const table = await runKeysCli(['list'], env);
  const json = await runKeysCli(['list', '--json'], env);
  for (const run of [table, json]) {
    t.equal(run.code, 0, run.stderr);
    for (const key of keys) t.notOk(`${run.stdout}${run.stderr}`.includes(key) || `${run.stdout}${run.stderr}`.includes(hashKey(key)), 'no key, no hash');
    t.notMatch(run.stdout, /bx_|[0-9a-f]{64}/);
  }
  const lines = table.stdout.trimEnd().split('\n');
  t.match(lines[0], /^ID\s+NAME\s+CREATED\s+STATUS\s+REVOKED\s+SCHEMA\s+ORIGINS\s+VIA$/);
  t.match(lines[1], /^key_[0-9a-f]{12}\s+Acme\s+\S+Z\s+revoked\s+\S+Z\s+partner-default\s+any \(server-to-server\)\s+cli$/);
  t.match(lines[2], /^key_[0-9a-f]{12}\s+Globex\s+\S+Z\s+active\s+-\s+partner-default\s+any \(server-to-server\)\s+cli$/);
  const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
  t.strictSame(Object.keys(rows[0]!), ['id', 'name', 'createdAt', 'status', 'revokedAt', 'schemaId', 'origins', 'issuedBy']);
  t.strictSame(rows.map((r) => [r.name, r.status]), [['Acme', 'revoked'], ['Globex', 'active']]);
});

t.test('CLI: revoke "accepts either the full key, which is hashed to find the record, or the key_… id"', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const env = { DATA_DIR: dir };
  const store = new FileKeyStore(path.join(dir, 'keys.json'), { refreshIntervalMs: 0 });
  const byKey = lastLine((await runKeysCli(['create', '--name', 'ByKey'], env)).stdout);
  const byId = lastLine((await runKeysCli(['create', '--name', 'ById'], env)).stdout);
  const idOf = async (key: string) => (await store.findByHash(hashKey(key)))!.id;

  const revokedByKey = await runKeysCli(['revoke', byKey], env);
  t.equal(revokedByKey.code, 0, revokedByKey.stderr);
  t.match(revokedByKey.stdout, new RegExp(`^${await idOf(byKey)} \\("ByKey"\\) revoked at \\S+Z\\n$`));
  t.notOk(`${revokedByKey.stdout}${revokedByKey.stderr}`.includes(byKey) || revokedByKey.stdout.includes(hashKey(byKey)), 'answers with the id, never the key or its hash');
  t.equal((await store.findByHash(hashKey(byKey)))?.status, 'revoked');

  const id = await idOf(byId);
  const revokedById = await runKeysCli(['revoke', id], env);
  t.equal(revokedById.code, 0, revokedById.stderr);
  t.equal((await store.findByHash(hashKey(byId)))?.status, 'revoked');
  const again = await runKeysCli(['revoke', id], env);
  t.equal(again.code, 0, 'revoking twice is not an error');
  t.match(again.stdout, /was already revoked at/);
  t.equal(await new PartnerKeys(store).verify(byId), null, 'a revoked key verifies to nothing');

  const unknownId = await runKeysCli(['revoke', 'key_000000000000'], env);
  t.equal(unknownId.code, 1, 'an unknown id: exit 1');
  t.match(unknownId.stderr, /no key with the id key_000000000000/);
  const unknownKey = generateKey();
  const unknown = await runKeysCli(['revoke', unknownKey], env);
  t.equal(unknown.code, 1, 'an unknown key: exit 1');
  t.notOk(unknown.stderr.includes(unknownKey), 'the key is not echoed');
  const typo = `${byId.slice(0, -1)}${byId.endsWith('a') ? 'b' : 'a'}`;
  const mistyped = await runKeysCli(['revoke', typo], env);
  t.equal(mistyped.code, 2, 'a mistyped key: usage, exit 2');
  t.notOk(mistyped.stderr.includes(typo), 'the mistyped key is not echoed');
});

t.test('CLI: "Unknown command/missing args → clear message on stderr, exit code 2"', async (t) => {
  const env = { DATA_DIR: tempDir(t, 'bestex-keys-') };
  for (const args of [
    [],
    ['frobnicate'],
    ['create'],
    ['create', '--name'],
    ['create', '--name', '   '],
    ['create', '--name', 'a\tb'],
    ['create', '--name', 'x'.repeat(101)],
    ['create', '--name', 'Acme', 'extra'],
    ['create', '--name', 'Acme', '--colour', 'red'],
    ['revoke'],
    ['revoke', 'key_000000000000', 'key_000000000001'],
    ['revoke', 'someone'],
    ['list', 'all'],
    ['list', '--json=yes'],
  ]) {
    const run = await runKeysCli(args, env);
    t.equal(run.code, 2, `${JSON.stringify(args)}: exit 2`);
    t.match(run.stderr, /^keys: .+\nusage: npm run -s keys -- <command>/, `${JSON.stringify(args)}: a message and the usage`);
    t.equal(run.stdout, '', `${JSON.stringify(args)}: nothing on stdout`);
  }
  t.strictSame(readdirSync(env.DATA_DIR), [], 'nothing written');
  const help = await runKeysCli(['help'], env);
  t.equal(help.code, 0);
  t.match(help.stdout, /^usage:/);
});

t.test('CLI: "Bad config (ConfigError) → message and exit 1"; so is an unreadable store', async (t) => {
  const dir = tempDir(t, 'bestex-keys-');
  const bad = await runKeysCli(['list'], { DATA_DIR: dir, PORT: 'eighty' });
  t.equal(bad.code, 1);
  t.match(bad.stderr, /invalid configuration:\n {2}- PORT must be/);
  writeFileSync(path.join(dir, 'keys.json'), 'garbage');
  for (const args of [['list'], ['create', '--name', 'Acme'], ['revoke', 'key_000000000000']]) {
    const run = await runKeysCli(args, { DATA_DIR: dir });
    t.equal(run.code, 1, `${args[0]}: exit 1`);
    t.match(run.stderr, /keys: .*keys\.json is not valid JSON/);
    t.equal(run.stdout, '', `${args[0]}: no key printed`);
  }
});
