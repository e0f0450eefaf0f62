// The modules `make mutation` tests: where a wrong line costs users money
// or privacy. Each lists its files and the test files that cover them, as their paths under test/
// without .test.ts (test/<path>.test.ts); a module's run compiles and runs only those, and each
// mutant only the ones that reach it. `grep` keeps only the top-level tests whose names match
// (tap's TAP_GREP): core/plans/plan's PlanService tests start the sandbox's venues as processes,
// whose own timeouts a loaded machine trips (failing Stryker's first pass), while the pure tests
// beside them reach every line of the plan modules.
const NOT_PLAN_SERVICE = '^(?!PlanService:)';
// The SDK's money paths are reached through test/sdk/execution/execute.test.ts, whose other tests
// run swaps that never reach them (a minute of sandbox time a mutant): each module keeps the tests
// that check its figures; the realised figures have a file of their own
// (sdk/src/execution/realised.ts).
const SDK_REALISED = '^(quote -> plan -> execute|realised figures)';
const SDK_CHECKS = '^("the SDK re-checks|"a client refuses an expired|a tampered service fee)';
const SDK_AMOUNTS = '^(the SDK\'s amounts|quote -> plan -> execute|realised figures|"the SDK re-checks)';

export const MODULES = {
  'quote-math': { files: ['core/quotes/math.ts'], tests: ['core/quotes/quote-math', 'core/plans/plan'], grep: NOT_PLAN_SERVICE },
  ranking: { files: ['core/quotes/engine.ts'], tests: ['core/quotes/quote-engine', 'core/quotes/quote-math'] },
  'fee-disclosure': { files: ['core/quotes/client-fees.ts'], tests: ['core/quotes/fees', 'core/plans/plan'], grep: NOT_PLAN_SERVICE },
  'plan-assembly': { files: ['core/plans/assembly.ts'], tests: ['core/plans/plan'], grep: NOT_PLAN_SERVICE },
  guardrail: { files: ['core/plans/guardrail.ts'], tests: ['core/plans/plan'], grep: NOT_PLAN_SERVICE },
  idempotency: { files: ['core/plans/idempotency.ts'], tests: ['core/plans/plan'], grep: NOT_PLAN_SERVICE },
  outcomes: { files: ['core/outcomes/outcomes.ts'], tests: ['core/outcomes/outcome'] },
  'sdk-realised': { files: ['sdk/src/execution/realised.ts'], tests: ['sdk/execution/execute'], grep: SDK_REALISED },
  'sdk-plan-checks': { files: ['sdk/src/plan.ts'], tests: ['sdk/execution/execute'], grep: SDK_CHECKS },
  'sdk-decimal': { files: ['sdk/src/decimal.ts'], tests: ['sdk/execution/execute'], grep: SDK_AMOUNTS },
  'key-checks': { files: ['core/keys/api-key.ts', 'core/keys/partner-keys.ts'], tests: ['core/keys/key-format', 'core/keys/partner-keys'] },
};

/** Where a module's incremental results are kept (in git: a fresh clone starts from them). */
export const incrementalFile = (name) => `mutation/incremental/${name}.json`;
