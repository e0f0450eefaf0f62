// "A consumer project outside the repo installs the packed SDK and compiles a use of every public
// name under tsc --strict": `npm pack` in sdk/, the tarball unpacked into a project of its own in a
// temporary directory (its dependencies linked from the repository's node_modules, so nothing is
// downloaded), compiled with the repository's TypeScript under each module resolution a partner's
// project may use, then imported by Node from there.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import t from 'tap';
import { TERMINAL_STATUSES } from '@bestex/sdk';
import { repoRoot } from '../../handlers/app.js';
import { plainChild } from '../helpers/plain-child.js';
import { tempDir } from '../helpers/temp.js';

// A dozen tsc runs over the SDK's declarations, some over wallet-sdk's too: longer than the default
// file timeout on a machine that builds other things meanwhile.
t.setTimeout(300_000);

const ROOT = repoRoot();
const SDK = path.join(ROOT, 'sdk');
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

interface Packed {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

// make build has built sdk/dist; packing as is keeps the tests from rebuilding it.
const pack = (...args: string[]): Packed =>
  (JSON.parse(execFileSync(...plainChild('npm', ['pack', '--json', '--ignore-scripts', ...args]), { cwd: SDK, encoding: 'utf8' })) as Packed[])[0]!;

// Uses of every public name that need no DOM, no @types/node, nothing but the ES library. Every
// optional field is given, as undefined where a caller passes its own optional value on: under
// exactOptionalPropertyTypes that compiles only where the SDK's types say `| undefined`.
const CORE = `
import { BestexError, createClient, execute, isTerminal, localStorageStorage, memoryStorage, readRefusal, resume, TERMINAL_STATUSES, withdraw } from '@bestex/sdk';
import type { AppPlan, CantonProvider, ExecuteOptions, ExecutionHooks, ExecutionPlan, ExecutionResult, ExecutionStatus, QuoteResponse, StepUpdate } from '@bestex/sdk';
import { sandboxProvider, sandboxRegistries } from '@bestex/sdk/sandbox';
import { fileStorage } from '@bestex/sdk/node';

export async function swap(baseUrl: string, apiKey: string | undefined, sandboxUrl: string, ledgerUrl: string, token: string, party: string, onApproval?: ExecutionHooks['onApproval']): Promise<ExecutionResult> {
  const client = createClient({ baseUrl, apiKey, fetch: undefined });
  const quote: QuoteResponse = await client.quote({ from: 'CC', to: 'USDCx', amount: '100' });
  const best: string | null = quote.best?.venueId ?? null;
  const plan: AppPlan | ExecutionPlan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: best ?? 'tradecraft', takerParty: party, idempotencyKey: 'consumer-1' });
  const provider: CantonProvider = sandboxProvider({ ledgerUrl, token, party, fetch: undefined });
  const seen: ExecutionStatus[] = [];
  const hooks: ExecutionHooks = { onStatus: (status, detail) => void seen.push(status, detail.note === undefined ? status : status), onStep: (update: StepUpdate) => void update.updateId, onApproval };
  const items = new Map<string, string>();
  const storage = localStorageStorage({ getItem: (key) => items.get(key) ?? null, setItem: (key, value) => void items.set(key, value) }, undefined);
  const options: ExecuteOptions = { provider, party: undefined, registries: await sandboxRegistries(sandboxUrl), registryUrl: undefined, hooks, storage, signal: undefined, client, fetch: undefined, pollIntervalMs: undefined };
  try {
    const result = await execute(plan, options);
    if (!isTerminal(result.status) || !TERMINAL_STATUSES.includes(result.status)) return resume(plan.planId, { ...options, storage: memoryStorage() });
    return result.status === 'EXPIRED' ? withdraw(plan.planId, { ...options, storage: fileStorage('./records') }) : result;
  } catch (err) {
    if (err instanceof BestexError && err.retryAfterSeconds !== null) throw new Error(err.code + ' ' + String(err.status) + ' ' + String(err.action));
    throw new BestexError(readRefusal(err, 'prepareExecute').kind, { status: null, code: 'submit_failed', action: undefined, retryAfterSeconds: undefined, cause: err });
  }
}
`;

// The wallet-sdk entry, apart: it brings @canton-network/wallet-sdk's own declarations, which do not
// compile under skipLibCheck: false in any setting (they import relative paths without extensions
// and modules they do not ship), so this file is compiled with skipLibCheck, as tsc --init sets it.
const WALLET = `
import type { CantonProvider } from '@bestex/sdk';
import { walletSdkProvider, type WalletSdk, type WalletSdkSigner } from '@bestex/sdk/wallet-sdk';

export function backend(sdk: WalletSdk, party: string, signer?: WalletSdkSigner, networkId?: string): CantonProvider {
  return walletSdkProvider({ sdk, party, signer, networkId });
}
`;

// A page's uses: the widget, the browser's storage, signal and fetch.
const PAGE = `
import { execute, localStorageStorage, type ExecutionPlan, type ExecutionResult } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { BestexSwapElement, defineBestexSwap } from '@bestex/sdk/widget';

export function embed(plan: ExecutionPlan, ledgerUrl: string, token: string, party: string): Promise<ExecutionResult> {
  defineBestexSwap('partner-swap');
  const widget: BestexSwapElement | undefined = document.querySelector<BestexSwapElement>('partner-swap') ?? undefined;
  widget?.addEventListener('bestex:plan', () => undefined);
  const provider = sandboxProvider({ ledgerUrl, token, party, fetch: window.fetch.bind(window) });
  return execute(plan, { provider, hooks: widget?.executionHooks(), storage: localStorageStorage(window.localStorage), signal: new AbortController().signal, fetch: window.fetch.bind(window) });
}
`;

// A Node backend's uses, with @types/node's globals.
const BACKEND = `
import { createClient, execute, type ExecutionPlan, type ExecutionResult } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { fileStorage } from '@bestex/sdk/node';

export function run(plan: ExecutionPlan, ledgerUrl: string, token: string, party: string): Promise<ExecutionResult> {
  const client = createClient({ baseUrl: 'http://127.0.0.1:8080', fetch: globalThis.fetch });
  return execute(plan, { provider: sandboxProvider({ ledgerUrl, token, party, fetch }), client, storage: fileStorage(process.cwd()), signal: AbortSignal.timeout(60_000), fetch });
}
`;

interface Consumer {
  readonly project: string;
  readonly packed: Packed;
  /** Each package the installed SDK needs, and whether the repository's node_modules has it to link. */
  readonly needs: ReadonlyArray<readonly [string, boolean]>;
}

/** A consumer project in a temporary directory with the packed SDK in its node_modules, as `npm install <tarball>` lays it out. */
function consumerProject(owner: { teardown(fn: () => void): void }): Consumer {
  const work = tempDir(owner, 'bestex-consumer-');
  const packed = pack('--pack-destination', work);
  const project = path.join(work, 'consumer');
  const modules = path.join(project, 'node_modules');
  mkdirSync(path.join(modules, '@bestex'), { recursive: true });
  execFileSync('tar', ['-xzf', path.join(work, packed.filename), '-C', work]);
  renameSync(path.join(work, 'package'), path.join(modules, '@bestex', 'sdk'));
  const manifest = JSON.parse(readFileSync(path.join(modules, '@bestex', 'sdk', 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
  // Its dependencies, its optional peer (for the wallet-sdk entry) and Node's types, from the repository.
  const needs: Array<readonly [string, boolean]> = [];
  for (const name of [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {}), '@types/node']) {
    const from = path.join(ROOT, 'node_modules', name);
    needs.push([name, existsSync(from)]);
    mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    symlinkSync(from, path.join(modules, name), 'dir');
  }
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { '@bestex/sdk': `file:../${packed.filename}` } }));
  writeFileSync(path.join(project, 'core.ts'), CORE);
  writeFileSync(path.join(project, 'page.ts'), PAGE);
  writeFileSync(path.join(project, 'backend.ts'), BACKEND);
  writeFileSync(path.join(project, 'wallet.ts'), WALLET);
  return { project, packed, needs };
}

// One consumer project for the file, made by the first test that needs it and removed when the
// file ends: the compiling tests only read it, each under tsconfigs of its own names.
let made: Consumer | undefined;
const consumer = () => (made ??= consumerProject(t));

/** npm pack --dry-run's listing, asked once for the tests that read what is packed. */
let listing: Packed | undefined;
const dryRun = () => (listing ??= pack('--dry-run'));

function compile(project: string, name: string, config: object): string {
  writeFileSync(path.join(project, `tsconfig.${name}.json`), JSON.stringify(config));
  const compiled = spawnSync(...plainChild(process.execPath, [TSC, '-p', `tsconfig.${name}.json`]), { cwd: project, encoding: 'utf8' });
  return compiled.status === 0 ? '' : `${compiled.stdout}${compiled.stderr}`.trim() || `tsc exited ${compiled.status}`;
}

t.test('"a consumer project outside the repo installs the packed SDK and compiles a use of every public name under tsc --strict", and Node loads every entry from there', async (t) => {
  const { project, packed, needs } = consumer();
  for (const [name, present] of needs) t.ok(present, `${name}, which the package needs, is in the repository's node_modules`);
  const files = packed.files.map((f) => f.path);
  t.ok(['dist/index.js', 'dist/index.d.ts', 'dist/sandbox.d.ts', 'dist/node.js', 'dist/widget.js', 'dist/widget.d.ts', 'dist/bundle/widget.js'].every((f) => files.includes(f)), 'the entries, their declarations and the browser bundles are packed');
  t.notOk(files.some((f) => f.startsWith('src/') || f.includes('test')), 'no sources or tests');
  const failed = compile(project, 'emit', {
    compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: ['node'], outDir: 'out', skipLibCheck: false },
    files: ['core.ts', 'page.ts', 'backend.ts'],
  });
  t.equal(failed, '', 'tsc --strict');
  const entries = ['@bestex/sdk', '@bestex/sdk/sandbox', '@bestex/sdk/node', '@bestex/sdk/wallet-sdk', '@bestex/sdk/widget', './out/core.js', './out/page.js', './out/backend.js'];
  const loaded = spawnSync(...plainChild(process.execPath, ['-e', `Promise.all(${JSON.stringify(entries)}.map((e) => import(e))).then((ms) => console.log(ms.map((m) => Object.keys(m).length > 0).join(' ')))`]), { cwd: project, encoding: 'utf8' });
  t.equal(loaded.stdout.trim(), entries.map(() => 'true').join(' '), `the installed package's entries load in Node: ${loaded.stderr}`);
});

t.test('"the main, ./node, ./sandbox and ./wallet-sdk entries compile without the DOM library; only ./widget needs it": node16, bundler, node10 and `tsc --init`\'s defaults, with strict and exactOptionalPropertyTypes', async (t) => {
  const { project } = consumer();
  const strictly = { strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: false, target: 'ES2022' };
  const resolutions: Record<string, object> = {
    node16: { ...strictly, module: 'node16', moduleResolution: 'node16' },
    bundler: { ...strictly, module: 'esnext', moduleResolution: 'bundler' },
    node10: { ...strictly, module: 'esnext', moduleResolution: 'node10' },
  };
  for (const [name, options] of Object.entries(resolutions)) {
    t.equal(compile(project, `${name}-bare`, { compilerOptions: { ...options, lib: ['ES2022'], types: [] }, files: ['core.ts'] }), '', `${name}: the ES library alone (no DOM, no @types/node)`);
    t.equal(compile(project, `${name}-wallet`, { compilerOptions: { ...options, lib: ['ES2022'], types: [], skipLibCheck: true }, files: ['wallet.ts'] }), '', `${name}: the wallet-sdk entry with the ES library alone`);
    t.equal(compile(project, `${name}-dom`, { compilerOptions: { ...options, lib: ['ES2022', 'DOM'], types: [] }, files: ['core.ts', 'page.ts'] }), '', `${name}: with the DOM library, and the widget`);
  }
  // What `tsc --init` of the repository's TypeScript writes, as a new project starts from it.
  const init = path.join(project, 'init');
  mkdirSync(init);
  execFileSync(...plainChild(process.execPath, [TSC, '--init']), { cwd: init, encoding: 'utf8' });
  const initOptions = readFileSync(path.join(init, 'tsconfig.json'), 'utf8');
  t.match(initOptions, /"exactOptionalPropertyTypes": true/, "tsc --init's defaults hold exactOptionalPropertyTypes");
  t.match(initOptions, /"strict": true/, "tsc --init's defaults hold strict");
  // Its own advice for Node, in a comment there: lib esnext, types node.
  t.equal(compile(project, 'init-node', { extends: './init/tsconfig.json', compilerOptions: { lib: ['esnext'], types: ['node'], noEmit: true }, files: ['core.ts', 'backend.ts', 'wallet.ts'] }), '', "tsc --init's defaults for Node (no DOM, @types/node)");
  t.equal(compile(project, 'init-dom', { extends: './init/tsconfig.json', compilerOptions: { noEmit: true }, files: ['core.ts', 'page.ts', 'wallet.ts'] }), '', "tsc --init's defaults (its target's library, DOM included), and the widget");
});

t.test('"the package names its types and main beside its exports", and typesVersions for its entries, for node10 resolution; its repository and homepage', async (t) => {
  const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as Record<string, unknown> & { exports: Record<string, { types: string; import: string }> };
  t.equal(manifest.types, manifest.exports['.']!.types, 'types is the main entry\'s declarations');
  t.equal(manifest.main, manifest.exports['.']!.import, 'main is the main entry');
  const versions = (manifest.typesVersions as Record<string, Record<string, string[]>> | undefined)?.['*'] ?? {};
  for (const [entry, target] of Object.entries(manifest.exports).filter(([entry]) => entry !== '.')) {
    t.strictSame(versions[entry.slice(2)], [target.types], `typesVersions maps ${entry} to its declarations`);
  }
  t.match(manifest.repository, { type: 'git', url: /^git\+https:\/\/github\.com\/.+\.git$/, directory: 'sdk' }, 'repository names the git repository and the package\'s directory in it');
  t.match(manifest.homepage, /^https:\/\/github\.com\/.+#readme$/, 'homepage is the repository\'s page');
});

t.test('"the tarball holds no build stamp and no source map whose sources are not packed"', async (t) => {
  const packed = dryRun();
  const files = new Set(packed.files.map((f) => f.path));
  t.strictSame([...files].filter((f) => path.basename(f).startsWith('.')), [], 'no dotfiles (make\'s dist/.built)');
  const maps = [...files].filter((f) => f.endsWith('.map'));
  const dangling: string[] = [];
  for (const map of maps) {
    const { sources, sourcesContent, sourceRoot } = JSON.parse(readFileSync(path.join(SDK, map), 'utf8')) as { sources: string[]; sourcesContent?: Array<string | null>; sourceRoot?: string };
    sources.forEach((source, i) => {
      const shipped = files.has(path.posix.normalize(path.posix.join(path.posix.dirname(map), sourceRoot ?? '', source)));
      if (!shipped && typeof sourcesContent?.[i] !== 'string') dangling.push(`${map} -> ${source}`);
    });
  }
  t.strictSame(dangling, [], 'every source a map names is packed, or carried in the map itself');
  for (const file of [...files].filter((f) => f.endsWith('.js'))) {
    const mapped = /\/\/# sourceMappingURL=(.+)\s*$/.exec(readFileSync(path.join(SDK, file), 'utf8'))?.[1];
    if (mapped && !mapped.startsWith('data:')) t.ok(files.has(path.posix.join(path.posix.dirname(file), mapped)), `${file}'s map is packed`);
  }
});

t.test('"the package README is self-contained": it links nothing outside the package, and documents every entry, state and hook', async (t) => {
  const packed = dryRun();
  const files = new Set(packed.files.map((f) => f.path));
  t.ok(files.has('README.md'), 'the README is packed');
  const readme = readFileSync(path.join(SDK, 'README.md'), 'utf8');
  const targets = [...readme.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|\bhref="([^"]+)"|\bsrc="([^"]+)"|^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4])!);
  const outside = targets.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#')).filter((target) => !files.has(path.posix.normalize(target.split('#')[0]!.replace(/^\.\//, ''))));
  t.strictSame(outside, [], 'every relative link names a packed file');
  const manifest = JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  for (const entry of Object.keys(manifest.exports)) t.ok(readme.includes(`'@bestex/sdk${entry.slice(1)}'`), `the README imports from ${entry}`);
  for (const status of ['SUBMITTING', 'INITIATED', ...TERMINAL_STATUSES]) t.match(readme, new RegExp(`\\| \`${status}\` \\|`), `the states table has ${status}`);
  for (const hook of ['onStatus', 'onStep', 'onApproval']) t.ok(readme.includes(`\`${hook}`), `the README documents ${hook}`);
  for (const kind of ['walletSdkProvider', 'sandboxProvider', 'DappSyncProvider', 'DappAsyncProvider']) t.ok(readme.includes(kind), `the README names ${kind} among the ways to get a provider`);
  t.match(readme, /sandbox\.json/, 'the README says where the sandbox\'s ledger URL and token come from');
  t.match(readme, /\/sandbox\/v1\/fund/, 'the README says how to fund a party');
});

t.test('"make sdk-pack producing the tarball a partner installs": it prints the tarball\'s path, and the tarball holds what npm pack lists', async (t) => {
  const made = spawnSync(...plainChild('make', ['-s', 'sdk-pack']), { cwd: ROOT, encoding: 'utf8' });
  t.equal(made.status, 0, made.stderr);
  const printed = made.stdout.trim().split('\n').at(-1)!;
  const version = (JSON.parse(readFileSync(path.join(SDK, 'package.json'), 'utf8')) as { version: string }).version;
  t.equal(printed, `dist/bestex-sdk-${version}.tgz`, 'the last line is the tarball, relative to the repository');
  const listed = execFileSync('tar', ['-tzf', path.join(ROOT, printed)], { encoding: 'utf8' }).trim().split('\n').map((f) => f.replace(/^package\//, '')).sort();
  t.strictSame(listed, pack('--dry-run').files.map((f) => f.path).sort(), 'the same files npm pack --dry-run lists');
  t.ok(listed.includes('README.md') && listed.includes('package.json') && listed.includes('dist/index.d.ts'), listed.join(', '));
});
