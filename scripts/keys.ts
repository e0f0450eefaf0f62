// `npm run -s keys -- <command>`: the operator's tool for partner keys, on the store the service
// reads (core/keys/open-store.ts: Redis when REDIS_URL is set, else DATA_DIR/keys.json).
//
// A key is printed once, by `create`, alone on stdout, so `KEY=$(npm run -s keys -- create ...)`
// captures exactly the key; everything else `create` says goes to stderr. No command ever prints a
// key's hash, nor any other key: `revoke` takes a key but answers with its id. Exit codes: 0 done,
// 1 failure (bad configuration, unreachable or broken store, no such key), 2 usage.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { chosenCommand, runCli, UsageError } from '../core/cli.js';
import { hashKey, isWellFormedKey, KEY_ID_SHAPE, KEY_PREFIX } from '../core/keys/api-key.js';
import { ConfigError, loadConfig, type Config } from '../core/config.js';
import { loadFeeSchemas } from '../core/quotes/fee-schemas.js';
import { openKeyStore } from '../core/keys/open-store.js';
import { issuerOf, KeyStoreUnavailable, newKey, parseOrigin, type KeySelector, type KeyStore } from '../core/keys/partner-keys.js';
import type { SharedState } from '../core/state/shared-state.js';

const USAGE = `usage: npm run -s keys -- <command>
  create --name NAME [--schema SCHEMA_ID] [--origin ORIGIN ...]
                                           issue a key for a partner under a fee schema (default: the
                                           configured default schema); prints the key, once. With
                                           --origin (repeatable, such as https://wallet.example), a key
                                           for web pages: it is refused from any other origin
  revoke KEY_OR_ID                         revoke a key, named by the key itself or its key_ id
  list [--json]                            every key's id, name, creation time, status, revocation
                                           time, fee schema, origins and who made it (the key
                                           portal, or this CLI); never a key`;

const MAX_NAME_CHARS = 100;

class Failure extends Error {}

async function main(argv: readonly string[]): Promise<void> {
  const chosen = chosenCommand(argv, USAGE, COMMANDS);
  if (!chosen) return;
  const config = loadConfig(process.env, { serviceBuild: 'dev', makesPlans: false });
  // Loaded only when used, so the file store's operators never load the Redis client.
  const shared: SharedState | null = config.redisUrl === null ? null : new (await import('../core/state/redis.js')).RedisSharedState(config.redisUrl);
  try {
    await chosen.run(chosen.args, config, openKeyStore(config, shared));
  } finally {
    await shared?.close();
  }
}

type Command = (args: readonly string[], config: Config, store: KeyStore) => Promise<void>;

const COMMANDS: Readonly<Record<string, Command>> = {
  async create(args, config, store) {
    const { values } = parse(args, { name: { type: 'string' }, schema: { type: 'string' }, origin: { type: 'string', multiple: true } }, 0);
    const name = values.name?.trim();
    if (!name) throw new UsageError('create needs --name NAME');
    if (name.length > MAX_NAME_CHARS || /\p{Cc}/u.test(name)) {
      throw new UsageError(`--name must be at most ${MAX_NAME_CHARS} characters, without control characters`);
    }
    const schemas = loadFeeSchemas(config);
    const schemaId = values.schema ?? schemas.defaultSchemaId;
    if (!schemas.has(schemaId)) {
      // A key under a schema the service does not define could not be served (its quotes answer 503).
      throw new UsageError(`--schema ${JSON.stringify(schemaId)} is not a configured fee schema or override (${config.feeSchemasFile ?? 'the built-in default'}): use one of ${schemas.ids.join(', ')}; no key was created`);
    }
    const origins = (values.origin ?? []).map((raw) => {
      const origin = parseOrigin(raw.trim());
      if (!origin) throw new UsageError(`--origin ${JSON.stringify(raw)} is not an origin: http(s)://host[:port], with nothing after it`);
      return origin;
    });
    const { key, record } = newKey(name, schemaId, new Date(), [...new Set(origins)]);
    await store.add(record);
    console.error(`created ${record.id} for ${JSON.stringify(name)}, fee schema ${schemaId}${record.origins ? `, only from ${record.origins.join(', ')}` : ''}`);
    console.error('the key follows on stdout; store it now: it will not be shown again');
    console.log(key);
  },

  async revoke(args, _config, store) {
    const { positionals } = parse(args, {}, 1);
    const target = positionals[0]!;
    let selector: KeySelector;
    if (KEY_ID_SHAPE.test(target)) selector = { id: target };
    else if (isWellFormedKey(target)) selector = { hash: hashKey(target) };
    // The argument is not echoed: it may be a mistyped key.
    else if (target.startsWith(KEY_PREFIX)) throw new UsageError('that is not a well-formed key: its length or checksum is wrong (mistyped?)');
    else throw new UsageError('revoke takes a key (bx_...) or a key id (key_ and 12 hex digits)');
    const at = new Date().toISOString();
    const record = await store.revoke(selector, new Date(at));
    if (!record) throw new Failure('id' in selector ? `no key with the id ${selector.id}` : 'no such key in the store');
    console.log(`${record.id} (${JSON.stringify(record.name)}) ${record.revokedAt === at ? 'revoked at' : 'was already revoked at'} ${record.revokedAt}`);
  },

  async list(args, _config, store) {
    const { values } = parse(args, { json: { type: 'boolean' } }, 0);
    const rows = (await store.list()).map((record) => {
      const { id, name, createdAt, status, revokedAt, schemaId, origins } = record;
      return { id, name, createdAt, status, revokedAt, schemaId, origins: origins ?? null, issuedBy: issuerOf(record) };
    });
    if (values.json) {
      console.log(JSON.stringify(rows, null, 2));
      return;
    }
    const table = [
      ['ID', 'NAME', 'CREATED', 'STATUS', 'REVOKED', 'SCHEMA', 'ORIGINS', 'VIA'],
      ...rows.map((r) => [r.id, r.name, r.createdAt, r.status, r.revokedAt ?? '-', r.schemaId, r.origins?.join(',') ?? 'any (server-to-server)', r.issuedBy]),
    ];
    const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
    for (const row of table) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
    if (rows.length === 0) console.error('no keys yet: create one with `npm run -s keys -- create --name NAME`');
  },
};

/** Parses a command's arguments; exactly `positionals` positional arguments are allowed. */
function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: T, positionals: number) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (err) {
    // parseArgs' own messages name options only, never a positional argument (a key, perhaps).
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length !== positionals) {
    throw new UsageError(positionals === 0 ? 'this command takes no positional argument' : `this command takes exactly ${positionals} argument`);
  }
  return parsed;
}

await runCli('keys', USAGE, () => main(process.argv.slice(2)), (err): err is Error => err instanceof ConfigError || err instanceof KeyStoreUnavailable || err instanceof Failure);
