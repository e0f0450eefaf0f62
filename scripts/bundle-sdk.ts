// Bundles the SDK's browser scripts (sdk/src/browser/) into sdk/dist/bundle/ with esbuild, one ES
// module each, dependencies included, as the service serves them (/sdk/widget.js, /sdk/sdk.js),
// and prints their gzipped sizes. The widget's budget is 60 KB gzipped: over it, this fails.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

// Run from its source (tsx), as make build runs it.
const sdk = fileURLToPath(new URL('../sdk', import.meta.url));
const WIDGET_BUDGET_BYTES = 60 * 1024;

for (const name of ['widget', 'sdk']) {
  const outfile = path.join(sdk, 'dist', 'bundle', `${name}.js`);
  await build({ entryPoints: [path.join(sdk, 'src', 'browser', `${name}.ts`)], bundle: true, format: 'esm', minify: true, target: 'es2022', platform: 'browser', outfile, logLevel: 'warning' });
  const gzipped = gzipSync(readFileSync(outfile)).length;
  console.log(`sdk/dist/bundle/${name}.js: ${(gzipped / 1024).toFixed(1)} KB gzipped`);
  if (name === 'widget' && gzipped > WIDGET_BUDGET_BYTES) {
    console.error(`the widget is over its budget of ${WIDGET_BUDGET_BYTES / 1024} KB gzipped`);
    process.exit(1);
  }
}
