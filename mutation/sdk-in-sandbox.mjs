// The SDK modules' runs (see stryker.config.mjs): the tests use the SDK as a partner does, through
// `@bestex/sdk`, which node_modules links to the project's own sdk/. Stryker's sandbox links the
// project's node_modules, so without this hook the tests would load the project's unmutated
// sdk/dist/ instead of the sandbox's. Registered with --import, it resolves `@bestex/sdk` and its
// subpaths to the sandbox's sdk/dist/, by the package's own exports.
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const sdk = path.join(process.cwd(), 'sdk');
const { exports } = JSON.parse(readFileSync(path.join(sdk, 'package.json'), 'utf8'));
const entries = Object.fromEntries(Object.entries(exports).map(([subpath, entry]) => [`@bestex/sdk${subpath.slice(1)}`, pathToFileURL(path.join(sdk, entry.import)).href]));

register(
  `data:text/javascript,${encodeURIComponent(`
    const entries = ${JSON.stringify(entries)};
    export async function resolve(specifier, context, next) {
      return specifier in entries ? { url: entries[specifier], shortCircuit: true } : next(specifier, context);
    }
  `)}`,
);
