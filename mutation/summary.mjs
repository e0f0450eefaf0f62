// The score of each module and its surviving mutants, read from the modules' incremental files
// (mutation/incremental/<module>.json, Stryker's mutation-testing report): what `make mutation`
// prints last, and what docs/mutation-testing.md quotes. A survivor listed in
// equivalent-mutants.md is marked so; every other one is a missing test.
import { existsSync, readFileSync } from 'node:fs';
import { incrementalFile, MODULES } from './modules.mjs';

/** Stryker's mutation score: detected over valid mutants (the statuses it counts). */
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** `file -> Set("line:column")` of the mutants equivalent-mutants.md lists, by its section headers. */
function equivalents() {
  const listed = new Map();
  let file = null;
  for (const line of readFileSync(new URL('equivalent-mutants.md', import.meta.url), 'utf8').split('\n')) {
    const header = /^## .*\(`([^`]+)`\)/.exec(line);
    if (header) file = header[1];
    if (!file) continue;
    for (const [, row, column] of line.matchAll(/\*\*(\d+):(\d+),/g)) listed.set(file, (listed.get(file) ?? new Set()).add(`${row}:${column}`));
  }
  return listed;
}

export function summary() {
  const listed = equivalents();
  const lines = ['', 'Mutation score per module (killed or timed out / all valid mutants):', ''];
  const survivors = [];
  for (const [name, module] of Object.entries(MODULES)) {
    const path = incrementalFile(name);
    if (!existsSync(path)) {
      lines.push(`  ${name.padEnd(15)} not run yet`);
      continue;
    }
    const report = JSON.parse(readFileSync(path, 'utf8'));
    let detected = 0;
    let undetected = 0;
    let equivalent = 0;
    for (const file of module.files) {
      for (const mutant of report.files[file]?.mutants ?? []) {
        if (DETECTED.has(mutant.status)) detected += 1;
        if (!UNDETECTED.has(mutant.status)) continue;
        undetected += 1;
        const { line, column } = mutant.location.start;
        const isEquivalent = listed.get(file)?.has(`${line}:${column}`) ?? false;
        if (isEquivalent) equivalent += 1;
        survivors.push(`  ${name}: ${file}:${line}:${column} ${mutant.status} ${mutant.mutatorName} -> ${JSON.stringify(mutant.replacement ?? '')}${isEquivalent ? '  (equivalent: see mutation/equivalent-mutants.md)' : ''}`);
      }
    }
    const total = detected + undetected;
    const score = total === 0 ? 'n/a' : `${((100 * detected) / total).toFixed(2)} %`;
    lines.push(`  ${name.padEnd(15)} ${score.padStart(8)}  ${detected} of ${total} detected; ${undetected - equivalent} surviving, ${equivalent} equivalent  (${module.files.join(', ')})`);
  }
  lines.push('', survivors.length > 0 ? 'Surviving mutants:' : 'No surviving mutants.', ...survivors, '');
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(summary());
