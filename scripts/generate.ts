// Turns each spec into its generated files (codegen/generate.ts): openapi/v1.yaml into generated/v1/
// for the service and sdk/src/generated/ for the SDK, openapi/v2.yaml (bundled with what it borrows
// from v1.yaml) into generated/v2/, openapi/portal.yaml into generated/portal/,
// the pinned dApp API document (sdk/openrpc/) into sdk/src/generated/dapp-api.ts, and
// core/ledger/token-standard.ts into the SDK's copy, sdk/src/generated/token-standard.ts.
//
//   tsx scripts/generate.ts          rewrite them
//   tsx scripts/generate.ts --check  exit 1 when any differs from what the spec produces
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { DAPP_API_TARGET, generate, generateDappApi, generateTokenStandard, TARGETS, TOKEN_STANDARD_TARGET } from '../codegen/generate.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const files = new Map<string, string>();
  for (const target of TARGETS) {
    const borrowed: Record<string, string> = {};
    for (const [name, spec] of Object.entries(target.borrows ?? {})) borrowed[name] = await readFile(path.join(root, spec), 'utf8');
    for (const [name, content] of await generate(await readFile(path.join(root, target.spec), 'utf8'), target, borrowed)) files.set(name, content);
  }
  for (const [name, content] of await generateDappApi(await readFile(path.join(root, DAPP_API_TARGET.spec), 'utf8'))) files.set(name, content);
  for (const [name, content] of generateTokenStandard(await readFile(path.join(root, TOKEN_STANDARD_TARGET.source), 'utf8'))) files.set(name, content);
  const changed: string[] = [];
  for (const [name, content] of files) {
    const target = path.join(root, name);
    const current = await readFile(target, 'utf8').catch(() => null);
    if (current === content) continue;
    changed.push(name);
    if (!check) {
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, content);
    }
  }
  const specs = [...TARGETS.map((t) => t.spec), DAPP_API_TARGET.spec, TOKEN_STANDARD_TARGET.source].join(', ');
  if (check && changed.length > 0) {
    console.error(`generated code is stale: ${changed.join(', ')}. Run 'make generate' and commit the result.`);
    process.exit(1);
  }
  console.log(
    changed.length === 0 ? `generated code is up to date with ${specs}` : `rewritten from ${specs}: ${changed.join(', ')}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
