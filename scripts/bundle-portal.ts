// Builds the key portal's page (portal/) into dist/portal/: index.html and the stylesheet as they
// are, the TypeScript bundled by esbuild into one ES module with nothing loaded from elsewhere, as
// the service serves them (/portal, /portal/assets/portal.js, /portal/assets/portal.css).
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

// Run from its source (tsx), as make build runs it.
const root = fileURLToPath(new URL('..', import.meta.url));
const source = path.join(root, 'portal');
const out = path.join(root, 'dist', 'portal');

mkdirSync(path.join(out, 'assets'), { recursive: true });
copyFileSync(path.join(source, 'index.html'), path.join(out, 'index.html'));
copyFileSync(path.join(source, 'portal.css'), path.join(out, 'assets', 'portal.css'));
const script = path.join(out, 'assets', 'portal.js');
await build({ entryPoints: [path.join(source, 'src', 'main.ts')], bundle: true, format: 'esm', minify: true, target: 'es2022', platform: 'browser', outfile: script, logLevel: 'warning' });
console.log(`dist/portal/assets/portal.js: ${(gzipSync(readFileSync(script)).length / 1024).toFixed(1)} KB gzipped`);
