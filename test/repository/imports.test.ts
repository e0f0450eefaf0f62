// The house's shape, read from the sources' own imports (the TypeScript, and the plain JavaScript
// of examples/ and mutation/): "no import circle anywhere; nothing in core/ imports handlers/,
// scripts/ or the sandbox; nothing in handlers/ imports the sandbox; scripts/ holds entry points,
// not libraries that other code imports; no operation imports another", and every folder of
// sources opens with a README.md whose "Must not import" line holds. Every failure names the
// offending import.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../handlers/app.js';

const ROOT = repoRoot();
const SOURCE_DIRS = ['core', 'handlers', 'sandbox', 'scripts', 'codegen', 'bench', 'generated', 'sdk/src', 'portal/src', 'test'];
/** Folders of plain JavaScript, read too so that their README's "Must not import" line is held. */
const SCRIPT_DIRS = ['examples', 'mutation'];

/** Every .ts file under `dir` (or, with `script`, every .js and .mjs file), as a repo-relative path with forward slashes. */
function sources(dir: string, script = false): string[] {
  const absolute = path.join(ROOT, dir);
  return readdirSync(absolute).flatMap((name) => {
    const child = `${dir}/${name}`;
    if (statSync(path.join(ROOT, child)).isDirectory()) return sources(child, script);
    if (script) return /\.m?js$/.test(name) ? [child] : [];
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [child] : [];
  });
}

interface Import {
  readonly from: string;
  readonly to: string;
  /** As written in the source. */
  readonly specifier: string;
}

/** Static imports and re-exports (type-only ones too: they tie modules as much), and dynamic import()s. */
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?\sfrom\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string, text: string): Import[] {
  const found: Import[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const specifier = match[1] ?? match[2] ?? match[3]!;
    if (!specifier.startsWith('.')) continue;
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)).replace(/\.js$/, '.ts');
    found.push({ from: file, to, specifier });
  }
  return found;
}

const files = [...SOURCE_DIRS.flatMap((dir) => sources(dir)), ...SCRIPT_DIRS.flatMap((dir) => sources(dir, true))];
const imports = files.flatMap((file) => importsOf(file, readFileSync(path.join(ROOT, file), 'utf8')));
const show = (i: Import) => `${i.from} imports '${i.specifier}' (${i.to})`;

/** A circle in the graph, as the files around it, or null. */
function findCircle(edges: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const circle = visit(next);
        if (circle) return circle;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return null;
  };
  for (const node of edges.keys()) {
    if (!state.has(node)) {
      const circle = visit(node);
      if (circle) return circle;
    }
  }
  return null;
}

const graphOf = (list: readonly Import[]) => {
  const edges = new Map<string, string[]>();
  for (const i of list) edges.set(i.from, [...(edges.get(i.from) ?? []), i.to]);
  return edges;
};

/** The imports that break `rule`: from files under `from`, to anything under one of `to`. */
const crossing = (from: (file: string) => boolean, to: readonly string[]) => imports.filter((i) => from(i.from) && to.some((prefix) => i.to.startsWith(prefix)));

t.test('the reader sees every kind of import it must: static, type-only, re-export, side-effect and dynamic', async (t) => {
  const text = [
    "import { a } from './a.js';",
    "import type { B } from '../b.js';",
    "export { c } from './c.js';",
    "import './d.js';",
    "const e = await import('./e.js');",
    "import {\n  f,\n  g,\n} from './f.js';",
    "import x from 'node:fs';",
  ].join('\n');
  t.strictSame(
    importsOf('core/x/y.ts', text).map((i) => i.to),
    ['core/x/a.ts', 'core/b.ts', 'core/x/c.ts', 'core/x/d.ts', 'core/x/e.ts', 'core/x/f.ts'],
  );
  t.strictSame(findCircle(graphOf(importsOf('a.ts', "import './b.js';").concat(importsOf('b.ts', "import './c.js';"), importsOf('c.ts', "import './a.js';")))), ['a.ts', 'b.ts', 'c.ts', 'a.ts'], 'a circle is found and named');
});

t.test('"No import circle anywhere"', async (t) => {
  t.ok(imports.length > 300, `the sources' imports are read (${imports.length})`);
  const circle = findCircle(graphOf(imports));
  t.equal(circle, null, circle ? `a circle: ${circle.join(' -> ')}` : 'no circle');
});

t.test('"nothing in core/ imports handlers/, scripts/ or the sandbox"', async (t) => {
  const wrong = crossing((f) => f.startsWith('core/'), ['handlers/', 'scripts/', 'sandbox/']);
  t.strictSame(wrong.map(show), []);
});

t.test('"the sandbox prices with its own implementation of each venue\'s documented formula, never with the adapters\' code": nothing in sandbox/ imports core/venues/', async (t) => {
  t.strictSame(crossing((f) => f.startsWith('sandbox/'), ['core/venues/']).map(show), []);
  t.ok(imports.some((i) => i.from.startsWith('sandbox/') && i.to.startsWith('sandbox/pricing/')), 'the sandbox\'s venues price through sandbox/pricing/');
});

t.test('the service imports nothing of its own client: no @bestex/sdk in core/ or handlers/', async (t) => {
  const wrong = files.filter((f) => (f.startsWith('core/') || f.startsWith('handlers/')) && /['"]@bestex\/sdk/.test(readFileSync(path.join(ROOT, f), 'utf8')));
  t.strictSame(wrong, []);
});

t.test('"nothing in handlers/ imports the sandbox"', async (t) => {
  t.strictSame(crossing((f) => f.startsWith('handlers/'), ['sandbox/']).map(show), []);
});

t.test('"scripts/ holds entry points, not libraries that other code imports": nothing imports scripts/', async (t) => {
  t.strictSame(crossing(() => true, ['scripts/']).map(show), []);
});

t.test('"the SDK imports nothing of core/, handlers/ or sandbox/", and only its Node entry imports node:', async (t) => {
  t.strictSame(crossing((f) => f.startsWith('sdk/'), ['core/', 'handlers/', 'sandbox/', 'scripts/', 'generated/']).map(show), []);
  const nodeOnly = files
    .filter((f) => f.startsWith('sdk/src/') && f !== 'sdk/src/node.ts')
    .filter((f) => /from\s*['"]node:|import\(\s*['"]node:/.test(readFileSync(path.join(ROOT, f), 'utf8')));
  t.strictSame(nodeOnly, [], 'the entries a browser loads never import node: modules');
});

t.test('the portal page (a browser\'s) imports nothing of the server but its generated wire types', async (t) => {
  const wrong = imports.filter((i) => i.from.startsWith('portal/') && !i.to.startsWith('portal/') && !i.to.startsWith('generated/portal/'));
  t.strictSame(wrong.map(show), []);
  t.ok(imports.some((i) => i.from.startsWith('portal/') && i.to === 'generated/portal/types.ts'), 'its types are the generated ones');
});

t.test('"one composition root is the only file that knows every folder": core\'s root modules import no capability folder, but core/services.ts (and core/config.ts the live venues\' settings), which wires every folder but pure arithmetic', async (t) => {
  // core/contract/ is no capability: the contracts' types, which any module may name.
  const folders = readdirSync(path.join(ROOT, 'core')).filter((name) => name !== 'contract' && statSync(path.join(ROOT, 'core', name)).isDirectory());
  const rootModule = (f: string) => /^core\/[^/]+\.ts$/.test(f) && f !== 'core/services.ts';
  const wrong = crossing(rootModule, folders.map((name) => `core/${name}/`)).filter((i) => !(i.from === 'core/config.ts' && i.to === 'core/venues/live-venues.ts'));
  t.strictSame(wrong.map(show), []);
  const knows = new Set(imports.filter((i) => i.from === 'core/services.ts').map((i) => i.to.split('/')[1]));
  // core/routing/ is arithmetic alone (its README: no I/O, no port, no state): nothing to wire, its
  // callers import it. Named here, so that no other folder goes unwired unnoticed.
  const nothingToWire = ['routing'];
  t.strictSame(folders.filter((name) => !knows.has(name) && !nothingToWire.includes(name)), [], 'the composition root wires every folder with something to wire');
  t.strictSame(nothingToWire.filter((name) => knows.has(name) || !folders.includes(name)), [], 'a folder said to have nothing to wire exists, and is not wired');
});

/** The folders under `dir`, at any depth, that open with a README.md of their own. */
function foldersWithReadme(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir))
    .filter((name) => statSync(path.join(ROOT, dir, name)).isDirectory())
    .flatMap((name) => [...(existsSync(path.join(ROOT, dir, name, 'README.md')) ? [`${dir}/${name}`] : []), ...foldersWithReadme(`${dir}/${name}`)]);
}

t.test('each folder\'s README.md says what it owns and what it must not import, and that holds', async (t) => {
  const folders = [
    'core',
    ...readdirSync(path.join(ROOT, 'core')).filter((name) => statSync(path.join(ROOT, 'core', name)).isDirectory()).map((name) => `core/${name}`),
    'sandbox',
    ...foldersWithReadme('sandbox'),
    'portal',
    'portal/src',
    'portal/src/contract',
    'handlers',
    'handlers/http',
    'handlers/operations',
    'handlers/operations/v1',
    'handlers/operations/v2',
    'handlers/operations/portal',
    'handlers/pages',
    'bench',
    'codegen',
    'generated',
    'generated/v1',
    'generated/v2',
    'generated/portal',
    'scripts',
    'examples',
    'examples/dapp',
    'examples/dapp/extension',
    'mutation',
    'sdk/src',
    'sdk/src/browser',
    'sdk/src/contract',
    'sdk/src/execution',
    'sdk/src/generated',
    'sdk/src/widget',
  ];
  t.ok(folders.includes('sandbox/venues') && folders.includes('sandbox/ledger/routes'), 'the sandbox\'s folders with a README of their own are held too');
  // Every folder that holds sources opens with a README, and every README is held here.
  const sourceFolders = [...new Set(files.filter((f) => !f.startsWith('test/')).map((f) => path.posix.dirname(f)))].sort();
  const withoutReadme = sourceFolders.filter((folder) => !existsSync(path.join(ROOT, folder, 'README.md')));
  t.strictSame(withoutReadme, [], 'every folder of sources has its README.md');
  t.strictSame(sourceFolders.filter((folder) => existsSync(path.join(ROOT, folder, 'README.md')) && !folders.includes(folder)), [], 'every folder\'s README.md is held below');
  for (const folder of folders) {
    const readme = readFileSync(path.join(ROOT, folder, 'README.md'), 'utf8');
    t.match(readme, /^Imports: \S/m, `${folder}/README.md says what it imports`);
    const line = /^Must not import: (.+)$/m.exec(readme)?.[1];
    t.ok(line, `${folder}/README.md has a "Must not import:" line`);
    const forbidden = [...(line ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    t.ok(forbidden.length > 0, `${folder} names what it must not import`);
    for (const target of forbidden) t.ok(files.some((f) => f.startsWith(target) || f === target), `${folder}: \`${target}\` names a place that exists`);
    t.strictSame(crossing((f) => f.startsWith(`${folder}/`), forbidden).map(show), [], `${folder} imports none of ${forbidden.join(', ')}`);
  }
});

t.test('the widget\'s rules need no DOM: sdk/src/widget/rules.ts imports nothing of the widget\'s rendering, style or element', async (t) => {
  const wrong = imports.filter((i) => i.from === 'sdk/src/widget/rules.ts' && (i.to.startsWith('sdk/src/widget/') || i.to === 'sdk/src/widget.ts'));
  t.strictSame(wrong.map(show), []);
  t.ok(imports.some((i) => i.from === 'sdk/src/widget/element.ts' && i.to === 'sdk/src/widget/rules.ts'), 'the element applies them');
});

t.test('"no operation imports another, and no contract\'s folder imports another\'s": an operation map\'s handlers share only modules that are no operation', async (t) => {
  const contracts = readdirSync(path.join(ROOT, 'handlers', 'operations')).filter((name) => statSync(path.join(ROOT, 'handlers', 'operations', name)).isDirectory());
  t.ok(contracts.includes('v1') && contracts.includes('portal'), `each contract has its folder (${contracts.join(', ')})`);
  for (const contract of contracts) {
    const folder = `handlers/operations/${contract}/`;
    const others = contracts.filter((c) => c !== contract).map((c) => `handlers/operations/${c}/`);
    t.strictSame(crossing((f) => f.startsWith(folder), others).map(show), [], `${folder} imports no other contract's folder`);
    const map = `${folder}operation-map.ts`;
    t.ok(files.includes(map), `${map} maps the contract's operations`);
    const operations = imports.filter((i) => i.from === map && i.to.startsWith(folder)).map((i) => i.to);
    t.strictSame(crossing((f) => operations.includes(f), operations).map(show), [], `the operations of ${folder} import none of each other`);
    t.strictSame(crossing((f) => f.startsWith(folder), [map]).map(show), [], `nothing in ${folder} imports its operation map`);
  }
});

t.test('"one naming scheme for the contracts\' types": every contract/ module names each type by the spec, and a name means the same wherever it stands', async (t) => {
  const modules = files.filter((f) => /^(core|sdk\/src|portal\/src)\/contract\/[^/]+\.ts$/.test(f));
  t.ok(['core/contract/v1.ts', 'core/contract/portal.ts', 'sdk/src/contract/v1.ts', 'portal/src/contract/portal.ts'].every((m) => modules.includes(m)), `the contract modules are read (${modules.join(', ')})`);
  const capital = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
  /** Why `name = definition` breaks the scheme, or null. */
  const offScheme = (name: string, definition: string): string | null => {
    if (definition === `Schemas['${name}']`) return null;
    const query = /operations\['(\w+)'\]\['parameters'\]\['query'\]/.exec(definition);
    if (query) return name === `${capital(query[1]!)}Query` ? null : `an operation's query is <OperationId>Query: ${capital(query[1]!)}Query`;
    const field = /^(\w+)\['(\w+)'\]$/.exec(definition);
    if (field && field[1] !== 'Schemas') return name === `${field[1]}${capital(field[2]!)}` ? null : `a field's type is <Schema><Field>: ${field[1]}${capital(field[2]!)}`;
    return 'a schema keeps its spec name';
  };
  const seen = new Map<string, { definition: string; module: string }>();
  for (const module of modules) {
    const spec = path.posix.basename(module, '.ts');
    for (const [, name, definition] of readFileSync(path.join(ROOT, module), 'utf8').matchAll(/^export type (\w+) = (.+);$/gm)) {
      t.equal(offScheme(name!, definition!), null, `${module}: ${name}`);
      const key = `${spec}:${name}`;
      const before = seen.get(key);
      if (before) t.equal(definition, before.definition, `${name} means in ${module} what it means in ${before.module}`);
      else seen.set(key, { definition: definition!, module });
    }
  }
});
