// The documentation a newcomer follows, checked as they would use it: "make docs-check runs every
// command block of the README and docs that is marked runnable, against a started service, and
// fails on a dead link", or on a path from the repository's root that a document names and that
// is not there. Links to other sites are not fetched (the tests run without the internet).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../handlers/app.js';
import { anchors, links, repoPaths, runnableBlocks } from '../helpers/markdown.js';
import { plainChild } from '../helpers/plain-child.js';
import { service } from '../helpers/service-process.js';

const REPO = repoRoot();

/** The repository's own folders at its root: what a document names a path from. */
const FOLDERS = ['bench', 'codegen', 'core', 'docs', 'examples', 'generated', 'handlers', 'mutation', 'openapi', 'portal', 'sandbox', 'scripts', 'sdk', 'test'];

/** Every folder under `dir` at any depth, but what is installed, built or hidden. */
function folders(dir: string): string[] {
  return readdirSync(path.join(REPO, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules' && entry.name !== 'dist')
    .flatMap((entry) => {
      const child = path.join(dir, entry.name);
      return [child, ...folders(child)];
    });
}

/** The README, docs/, the SDK's package README and each folder's README, at any depth. */
function documents(): string[] {
  const folderReadmes = FOLDERS.flatMap((d) => [d, ...folders(d)])
    .map((d) => path.join(d, 'README.md'))
    .filter((f) => existsSync(path.join(REPO, f)));
  const docs = readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f));
  return ['README.md', ...docs, ...folderReadmes];
}

/** The links of `file` (relative to the repository) whose file or heading does not exist. */
export function deadLinks(file: string, read = (f: string) => readFileSync(path.join(REPO, f), 'utf8'), exists = (f: string) => existsSync(path.join(REPO, f))): string[] {
  const dead: string[] = [];
  for (const { line, target } of links(read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [pathPart, fragment] = target.split('#', 2) as [string, string | undefined];
    const resolved = pathPart ? path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart))) : file;
    if (resolved.startsWith('..') || !exists(resolved)) dead.push(`${file}:${line}: ${target} (no such file)`);
    else if (fragment !== undefined && resolved.endsWith('.md') && !anchors(read(resolved)).has(fragment)) dead.push(`${file}:${line}: ${target} (no such heading)`);
  }
  return dead;
}

t.test('the check reads Markdown as GitHub renders it', async (t) => {
  const doc = [
    '# A swap, end to end',
    '## The page: `/portal`',
    '## Fees',
    '## Fees',
    'See [fees](#fees-1), [x](other.md#nope), [y](missing.md), [z](https://example.com) and `[not](a-link.md)`.',
    '```sh runnable',
    'echo one',
    '```',
    '```sh',
    'echo two',
    '```',
    '```bash runnable',
    '[code](inside.md)',
    '```',
  ].join('\n');
  t.strictSame([...anchors(doc)], ['a-swap-end-to-end', 'the-page-portal', 'fees', 'fees-1']);
  t.strictSame(runnableBlocks(doc), [{ line: 6, script: 'echo one' }, { line: 12, script: '[code](inside.md)' }], 'only blocks marked runnable, with their line');
  const files: Record<string, string> = { 'docs/a.md': doc, 'docs/other.md': '# Other' };
  t.strictSame(
    deadLinks('docs/a.md', (f) => files[f]!, (f) => f in files),
    ['docs/a.md:5: other.md#nope (no such heading)', 'docs/a.md:5: missing.md (no such file)'],
    'a missing file and a missing heading are dead; another site and code are not read as links',
  );
  const named = ['`core/config.ts` and `handlers/http/`, not `core/x.ts:12`, `npm run keys`, `node_modules/x/`,', '`sdk/dist/bundle/` or `core` alone', '```sh', 'cat core/inside-a-block.ts', '```'].join('\n');
  t.strictSame(
    repoPaths(named, ['core', 'handlers', 'sdk']),
    [{ line: 1, path: 'core/config.ts' }, { line: 1, path: 'handlers/http/' }],
    'a path is inline code naming a file or folder from the root: not a line number, a command, another folder, a build\'s output, a folder alone or a block',
  );
});

t.test('"fails on a dead link": every relative link and #heading in the README and docs resolves', async (t) => {
  const files = documents();
  t.ok(files.includes('README.md') && files.some((f) => f.startsWith('docs/')) && files.includes('sdk/README.md'), files.join(', '));
  for (const file of files) t.strictSame(deadLinks(file), [], file);
});

t.test('"every path a document names is there": each path from the repository\'s root in inline code in the README, docs/ and the folders\' READMEs exists', async (t) => {
  t.strictSame(FOLDERS.filter((d) => !existsSync(path.join(REPO, d))), [], 'the root folders the paths are read from exist');
  const files = documents();
  t.ok(files.includes('core/README.md') && files.includes('sdk/src/execution/README.md'), 'every folder\'s README is read, at any depth');
  for (const file of files) {
    const missing = repoPaths(readFileSync(path.join(REPO, file), 'utf8'), FOLDERS)
      .filter((p) => !existsSync(path.join(REPO, p.path)))
      .map((p) => `${file}:${p.line}: ${p.path} (no such file or folder)`);
    t.strictSame(missing, [], file);
  }
});

const missingTools = ['curl', 'jq', 'bash'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
if (missingTools.length && process.env.REQUIRE_JQ === '1') throw new Error(`REQUIRE_JQ=1 but ${missingTools.join(', ')} is missing: the README's tour needs curl and jq`);

t.test(
  '"runs every command block of the README and docs that is marked runnable, against a started service"',
  { skip: missingTools.length ? `${missingTools.join(', ')} not found (apt-get install curl jq; CI sets REQUIRE_JQ=1 so this runs there)` : false },
  async (t) => {
    const withBlocks = documents().filter((f) => runnableBlocks(readFileSync(path.join(REPO, f), 'utf8')).length > 0);
    t.ok(withBlocks.includes('README.md'), 'the README\'s tour is runnable');
    for (const file of withBlocks) {
      t.test(file, async (t) => {
        const s = await service(t);
        const script = runnableBlocks(readFileSync(path.join(REPO, file), 'utf8'))
          .map((b) => `echo '== ${file}:${b.line}' >&2\n${b.script}`)
          .join('\n');
        const child = spawn(...plainChild('bash', ['-c', `set -euo pipefail\n${script}`]), {
          cwd: REPO,
          env: { ...process.env, PORT: new URL(s.address).port, DATA_DIR: s.dataDir, BESTEX_URL: '' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (out += d.toString()));
        const [code] = (await once(child, 'exit')) as [number | null];
        t.equal(code, 0, code === 0 ? `${file}'s runnable blocks ran to the end` : `${file}'s runnable blocks stopped (exit ${code}); the last output:\n${out.slice(-4000)}`);
      });
    }
  },
);
