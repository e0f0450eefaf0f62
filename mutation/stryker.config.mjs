// `make mutation`: StrykerJS over the modules where a wrong line costs users money or privacy.
// Not part of `make test` or CI: it takes minutes where the suite takes seconds, and its answer is
// a score to keep up, not a pass or a fail. Equivalent mutants (survivors no test can kill,
// because the mutated program behaves the same) are listed with their reasons in
// mutation/equivalent-mutants.md, beside this file.
//
// How it runs (mutation/run.mjs starts one Stryker run per module, MUTATION_MODULE naming it):
// Stryker copies the project, with the dist/ that `make build` has just compiled, to a sandbox and
// writes every mutant of the module's files into them at once (switched on one at a time by an
// environment variable); build-mutants.mjs compiles those files again into the sandbox's dist/,
// and the tap runner runs each of the module's compiled test files as a process of its own. A
// first run with no mutant active records which test files reach which mutant; each mutant then
// runs only those, and stops at the first failure. Incremental mode keeps the module's results in
// mutation/incremental/<module>.json: a later run tests again only the mutants whose code, or one
// of whose covering test files, changed (the tap runner knows a test file only as a whole).
import { incrementalFile, MODULES } from './modules.mjs';

const name = process.env.MUTATION_MODULE ?? '';
const module = MODULES[name];
if (!module) throw new Error(`MUTATION_MODULE: '${name}' is not a module (${Object.keys(MODULES).join(', ')}); run make mutation`);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: module.mutate ?? module.files,
  testRunner: 'tap',
  tap: {
    testFiles: module.tests.map((test) => `dist/test/${test}.test.js`),
    // The SDK's tests load it as a package: from the sandbox's sdk/dist/, where its mutants are.
    nodeArgs: module.files.some((file) => file.startsWith('sdk/')) ? ['--import', './mutation/sdk-in-sandbox.mjs'] : [],
    forceBail: true,
  },
  coverageAnalysis: 'perTest',
  buildCommand: `node mutation/build-mutants.mjs ${module.files.join(' ')}`,
  // dist/ is copied too: the tests run from it, and incremental mode reads the compiled test
  // files to tell whether a test changed.
  ignorePatterns: ['/docs', '/examples', '/reports', '/.tap', '/.stryker-tmp'],
  incremental: true,
  incrementalFile: incrementalFile(name),
  // The machine's two cores; an absolute allowance generous enough that a busy machine does not
  // pass a slow mutant off as a hung (and so detected) one: at 15 s a loaded machine timed out
  // mutants its tests kill in a quiet one.
  concurrency: 2,
  timeoutMS: 30_000,
  allowConsoleColors: false,
  reporters: ['clear-text', 'progress', 'html'],
  clearTextReporter: { allowColor: false, logTests: false, reportTests: false, reportMutants: true, reportScoreTable: true },
  htmlReporter: { fileName: `reports/mutation/${name}.html` },
  thresholds: { high: 90, low: 85, break: null },
  // One sandbox folder per module, so two modules' runs never clean up each other's.
  tempDirName: `.stryker-tmp/${name}`,
  cleanTempDir: true,
};
