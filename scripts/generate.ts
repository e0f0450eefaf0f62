// Turns openapi/v1.yaml into generated/: TypeScript wire types (openapi-typescript) and ajv
// validators compiled ahead of time (ajv standalone), so the server never compiles a schema at
// start-up and no wire type is written by hand.
//
//   tsx scripts/generate.ts          rewrite generated/
//   tsx scripts/generate.ts --check  exit 1 when generated/ differs from what the spec produces
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { generate } from '../codegen/generate.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const specPath = path.join(root, 'openapi', 'v1.yaml');
const outDir = path.join(root, 'generated');

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const files = await generate(await readFile(specPath, 'utf8'));
  const changed: string[] = [];
  if (!check) await mkdir(outDir, { recursive: true });
  for (const [name, content] of files) {
    const target = path.join(outDir, name);
    const current = await readFile(target, 'utf8').catch(() => null);
    if (current === content) continue;
    changed.push(name);
    if (!check) await writeFile(target, content);
  }
  if (check && changed.length > 0) {
    console.error(`generated/ is stale for: ${changed.join(', ')}. Run 'make generate' and commit the result.`);
    process.exit(1);
  }
  console.log(
    changed.length === 0 ? 'generated/ is up to date with openapi/v1.yaml' : `generated/ rewritten from openapi/v1.yaml: ${changed.join(', ')}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
