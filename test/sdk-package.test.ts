// "A consumer project outside the repo installs the packed SDK and compiles a use of every public
// name under tsc --strict": `npm pack` in sdk/, installed into a project of its own in a temporary
// directory, compiled with the repository's TypeScript, then imported by Node from there.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../handlers/app.js';

const ROOT = repoRoot();
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const CONSUMER = `
import { BestexError, createClient, execute, isTerminal, localStorageStorage, memoryStorage, resume, TERMINAL_STATUSES, withdraw } from '@bestex/sdk';
import type { AppPlan, CantonProvider, ExecuteOptions, ExecutionHooks, ExecutionPlan, ExecutionResult, ExecutionStatus, QuoteResponse, StepUpdate } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { fileStorage } from '@bestex/sdk/node';
import { BestexSwapElement, defineBestexSwap } from '@bestex/sdk/widget';

export function embed(): void {
  defineBestexSwap('partner-swap');
  const widget: BestexSwapElement | undefined = document.querySelector<BestexSwapElement>('partner-swap') ?? undefined;
  widget?.addEventListener('bestex:plan', () => undefined);
  void widget?.executionHooks();
}

export async function swap(baseUrl: string, ledgerUrl: string, token: string, party: string): Promise<ExecutionResult> {
  const client = createClient({ baseUrl, apiKey: undefined });
  const quote: QuoteResponse = await client.quote({ from: 'CC', to: 'USDCx', amount: '100' });
  const best: string | null = quote.best?.venueId ?? null;
  const plan: AppPlan | ExecutionPlan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: best ?? 'tradecraft', takerParty: party, idempotencyKey: 'consumer-1' });
  const provider: CantonProvider = sandboxProvider({ ledgerUrl, token, party });
  const seen: ExecutionStatus[] = [];
  const hooks: ExecutionHooks = { onStatus: (status) => void seen.push(status), onStep: (update: StepUpdate) => void update.state };
  const options: ExecuteOptions = { provider, hooks, client, storage: memoryStorage() };
  try {
    const result = await execute(plan, options);
    if (!isTerminal(result.status) || !TERMINAL_STATUSES.includes(result.status)) return resume(plan.planId, options);
    return result.status === 'EXPIRED' ? withdraw(plan.planId, { ...options, storage: fileStorage('./records') }) : result;
  } catch (err) {
    if (err instanceof BestexError && err.retryAfterSeconds !== null) throw new Error(err.code + ' ' + String(err.status) + ' ' + String(err.action));
    throw err;
  } finally {
    void localStorageStorage;
  }
}
`;

t.test('"a consumer project outside the repo installs the packed SDK and compiles a use of every public name under tsc --strict"', async (t) => {
  const work = mkdtempSync(path.join(tmpdir(), 'bestex-consumer-'));
  // make build has built sdk/dist; packing as is keeps the test from rebuilding it.
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: path.join(ROOT, 'sdk'), encoding: 'utf8' })) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const files = packed[0]!.files.map((f) => f.path);
  t.ok(['dist/index.js', 'dist/index.d.ts', 'dist/sandbox.d.ts', 'dist/node.js', 'dist/widget.js', 'dist/widget.d.ts', 'dist/bundle/widget.js'].every((f) => files.includes(f)), 'the entries, their declarations and the browser bundles are packed');
  t.notOk(files.some((f) => f.startsWith('src/') || f.includes('test')), 'no sources or tests');
  const project = path.join(work, 'consumer');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { '@bestex/sdk': `file:../${packed[0]!.filename}` } }));
  const install = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, encoding: 'utf8' });
  t.equal(install.status, 0, install.stderr);
  writeFileSync(path.join(project, 'consumer.ts'), CONSUMER);
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], noEmit: false, outDir: 'out', skipLibCheck: false }, files: ['consumer.ts'] }),
  );
  const compiled = spawnSync(process.execPath, [TSC, '-p', project], { cwd: project, encoding: 'utf8' });
  t.equal(compiled.status, 0, `tsc --strict: ${compiled.stdout}${compiled.stderr}`);
  const loaded = spawnSync(process.execPath, ['-e', "import('./out/consumer.js').then((m) => console.log(typeof m.swap))"], { cwd: project, encoding: 'utf8' });
  t.equal(loaded.stdout.trim(), 'function', `the installed package loads in Node: ${loaded.stderr}`);
});
