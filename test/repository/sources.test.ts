// The service's own sources and its spec hold Latin-1 text only. V8 stores a string with any
// character above U+00FF as two bytes per character, and so every string sliced, parsed or
// internalized from such a source: a route path parsed from the spec, a header name that matches
// a key in it. One two-byte piece makes the whole response head and every access-log line
// two-byte, and each write then converts UTF-16 to UTF-8: measured at 12 % of a cached quote's
// instructions. Tests and scripts never run in the server, so they are free.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../handlers/app.js';

const root = repoRoot();

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** `file:line:column U+XXXX` for every character above U+00FF in `text`. */
function wideCharacters(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const [column, char] of [...line].entries()) {
      const code = char.codePointAt(0)!;
      if (code > 0xff) found.push(`${file}:${i + 1}:${column + 1} U+${code.toString(16).toUpperCase().padStart(4, '0')} ${char}`);
    }
  });
  return found;
}

t.test('runtime sources and the served specs (openapi/v1.yaml, v2\'s bundle) contain no character above U+00FF', async (t) => {
  const files = ['openapi/v1.yaml', 'openapi/v2.yaml', 'generated/v2/openapi.yaml', ...['core', 'handlers', 'generated'].flatMap(sourceFiles)];
  t.ok(files.length > 20, `scanned ${files.length} files`);
  const wide = files.flatMap((file) => wideCharacters(file, readFileSync(path.join(root, file), 'utf8')));
  t.strictSame(wide, [], 'write "-", "->", ">=", "~" instead');
});

t.test('the scan reports where a wide character is', async (t) => {
  t.strictSame(wideCharacters('x.ts', 'a\n// b \u2014 c µ'), ['x.ts:2:6 U+2014 \u2014']);
});
