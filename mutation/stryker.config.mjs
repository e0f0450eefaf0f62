// `make mutation`: StrykerJS over the modules where a wrong line costs users money or privacy.
// Not part of `make test` or CI: it takes minutes where the suite takes seconds, and its answer is
// a score to keep up, not a pass or a fail. Equivalent mutants (survivors no test can kill,
// because the mutated program behaves the same) are listed with their reasons in
// mutation/equivalent-mutants.md, beside this file.
//
// How it runs: Stryker copies the project, with the dist/ that `make build` has just compiled, to
// a sandbox and writes every mutant of the files below into them at once (switched on one at a
// time by an environment variable); build-mutants.mjs compiles those files again into the
// sandbox's dist/, and the tap runner runs each compiled test file as a process of its own. A first run with no mutant active
// records which test files reach which mutant; each mutant then runs only those, and stops at the
// first failure. Incremental mode keeps every result in mutation/stryker-incremental.json (kept
// in git, so a fresh clone starts from it): a later run tests again only the mutants whose code,
// or whose covering test files, changed.
//
// MUTATION_MODULES (comma-separated keys below) narrows a run to some modules and their tests;
// the others' results are kept in the incremental file as they were.

/** Each module the issue names: its files, and the test files (test/<name>.test.ts) that cover it. */
const MODULES = {
  'quote-math': { files: ['core/quotes/math.ts'], tests: ['quote-math', 'plan-core'] },
  ranking: { files: ['core/quotes/engine.ts'], tests: ['quote-engine', 'quote-math'] },
  'fee-disclosure': { files: ['core/quotes/client-fees.ts'], tests: ['fees', 'plan-core'] },
  'plan-assembly': { files: ['core/plans/assembly.ts'], tests: ['plan-core'] },
  guardrail: { files: ['core/plans/guardrail.ts'], tests: ['plan-core'] },
  idempotency: { files: ['core/plans/idempotency.ts'], tests: ['plan-core'] },
  outcomes: { files: ['core/outcomes/outcomes.ts'], tests: ['outcome-core'] },
  'key-checks': { files: ['core/keys/api-key.ts', 'core/keys/partner-keys.ts'], tests: ['keys'] },
};

const wanted = (process.env.MUTATION_MODULES ?? '').split(',').map((m) => m.trim()).filter(Boolean);
for (const name of wanted) {
  if (!(name in MODULES)) throw new Error(`MUTATION_MODULES: no module '${name}' (modules: ${Object.keys(MODULES).join(', ')})`);
}
const chosen = wanted.length > 0 ? wanted.map((name) => MODULES[name]) : Object.values(MODULES);
const mutate = chosen.flatMap((m) => m.files);
const testNames = [...new Set(chosen.flatMap((m) => m.tests))];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate,
  testRunner: 'tap',
  tap: {
    testFiles: testNames.map((name) => `dist/test/${name}.test.js`),
    nodeArgs: [],
    forceBail: true,
  },
  coverageAnalysis: 'perTest',
  buildCommand: `node mutation/build-mutants.mjs ${mutate.join(' ')}`,
  // dist/ is copied too: the tests run from it, and incremental mode reads the compiled test
  // files to tell whether a test changed.
  ignorePatterns: ['/docs', '/examples', '/reports', '/.tap'],
  incremental: true,
  incrementalFile: 'mutation/stryker-incremental.json',
  // The machine's two cores; an absolute allowance generous enough that a busy machine does not
  // pass a slow mutant off as a hung (and so detected) one.
  concurrency: 2,
  timeoutMS: 15_000,
  allowConsoleColors: false,
  reporters: ['clear-text', 'progress', 'html'],
  clearTextReporter: { allowColor: false, logTests: false, reportTests: false, reportMutants: true, reportScoreTable: true },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
