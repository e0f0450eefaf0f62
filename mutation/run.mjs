// `make mutation`: one Stryker run per module (every module, or those named as arguments), one
// after another, each with its own covering tests and incremental file; then the score of each
// module and its surviving mutants (summary.mjs).
import { spawnSync } from 'node:child_process';
import { MODULES } from './modules.mjs';
import { summary } from './summary.mjs';

const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : Object.keys(MODULES);
const unknown = names.filter((name) => !(name in MODULES));
if (unknown.length > 0) {
  console.error(`make mutation: no module ${unknown.join(', ')} (modules: ${Object.keys(MODULES).join(', ')})`);
  process.exit(2);
}
const failed = [];
for (const name of names) {
  console.log(`\n=== make mutation: ${name} (${MODULES[name].files.join(', ')})`);
  // Run directly, a tap test file times out after 30 s unless told otherwise: the suite's 120.
  const env = { ...process.env, MUTATION_MODULE: name, TAP_TIMEOUT: process.env.TAP_TIMEOUT ?? '120' };
  if (MODULES[name].grep) env.TAP_GREP = MODULES[name].grep;
  const run = spawnSync('npx', ['stryker', 'run', 'mutation/stryker.config.mjs'], { stdio: 'inherit', env });
  if (run.status !== 0) failed.push(name);
}
console.log(summary());
if (failed.length > 0) {
  console.error(`make mutation: the run of ${failed.join(', ')} failed (its output is above)`);
  process.exit(1);
}
