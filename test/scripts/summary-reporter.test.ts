// The summary `make test` ends with (scripts/tap-summary-reporter.ts): "a skipped browser or Redis
// test prints as skipped, never as passed". Each case runs the tap runner with the reporter on
// test files of its own, as `make test` does, without Chromium (CHROMIUM_PATH naming no file, and
// REQUIRE_CHROMIUM unset) and without Redis, and reads the closing line.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t from 'tap';
import { plainChild } from '../helpers/plain-child.js';
import { tempDir } from '../helpers/temp.js';

const DIST = fileURLToPath(new URL('../..', import.meta.url));
const REPO = path.dirname(DIST);
const module = (file: string) => JSON.stringify(pathToFileURL(path.join(DIST, file)).href);

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/**
 * A project of its own holding the test files given (name -> content), with this one's tap and
 * its configuration: tap keeps each run's results under the project's .tap/.
 */
function project(t: Test, files: Record<string, string>): string {
  const dir = tempDir(t, 'bestex-summary-');
  const { tap } = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { tap: unknown };
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', tap }));
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

/**
 * The reporter's output for the project's test files, run by tap as `make test` runs it, without
 * Chromium; tap's own variables are not passed on, so the run is a top-level one.
 */
async function summary(dir: string, env: Record<string, string> = {}): Promise<{ code: number | null; out: string; closing: string }> {
  const inherited = Object.entries(process.env).filter(([name]) => !/^_?TAP/i.test(name) && name !== 'NODE_OPTIONS' && name !== 'REQUIRE_CHROMIUM');
  const child = spawn(...plainChild(path.join(dir, 'node_modules', '.bin', 'tap'), ['-R', path.join(DIST, 'scripts', 'tap-summary-reporter.js'), '*.test.mjs']), {
    cwd: dir,
    env: { ...Object.fromEntries(inherited), CHROMIUM_PATH: '/nonexistent/chromium', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.resume();
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, out, closing: out.trimEnd().split('\n').at(-1) ?? '' };
}

t.test('"a skipped browser test prints as skipped, never as passed": the portal browser tests without Chromium', async (t) => {
  const run = await summary(project(t, { 'portal-browser.test.mjs': `import ${module('test/portal/browser.test.js')};\n` }));
  t.equal(run.code, 0, run.out);
  t.match(run.closing, /^0 passed, 0 failed, [1-9][0-9]* skipped \(Node /, 'every one of them counted skipped, none passed');
  t.match(run.out, /\nskipped \([1-9][0-9]*\):\n {2}- [^\n]*portal-browser\.test\.mjs > a person creates a key/, 'each skipped test listed by name');
});

t.test('"a skipped browser or Redis test prints as skipped": top-level and nested skips are each counted; REQUIRE_CHROMIUM=1 makes a missing browser a failure', async (t) => {
  const dir = project(t, {
    'skips.test.mjs': `import t from 'tap';
import { chromiumSkip } from ${module('test/helpers/chromium.js')};
import { redisSkip } from ${module('test/helpers/redis.js')};
t.test('a browser test', chromiumSkip('a browser test'), async (t) => t.pass('ran'));
t.test('a Redis test', redisSkip(null), async (t) => t.pass('ran'));
t.test('a test with a browser test inside', async (t) => {
  t.pass('ran');
  t.test('its browser part', chromiumSkip('its browser part'), async (t) => t.pass('ran'));
});
`,
  });
  const run = await summary(dir);
  t.equal(run.code, 0, run.out);
  t.match(run.closing, /^1 passed, 0 failed, 3 skipped \(Node /, 'the browser test, the Redis test and the nested browser test skipped; the test that ran passed');
  for (const name of ['a browser test', 'a Redis test', 'a test with a browser test inside > its browser part']) t.match(run.out, `skips.test.mjs > ${name}\n`, `${name}: listed as skipped`);

  const required = await summary(dir, { REQUIRE_CHROMIUM: '1' });
  t.not(required.code, 0, 'with REQUIRE_CHROMIUM=1 the run fails');
  t.match(required.closing, /^0 passed, 1 failed, 0 skipped/, 'the file fails: nothing is skipped quietly');
});
