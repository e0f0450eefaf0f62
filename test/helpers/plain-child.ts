// The programs the tests start (the service, the sandbox, the CLIs, the examples, tsc) run as their
// users start them, without the test runner's loader. tap hands each child process its
// process-info loader through NODE_OPTIONS, for coverage, which this project's tap configuration
// turns off; loading it cost a node child 0.2 to 0.5 s of CPU, and a service with its sandbox
// about 1 s. `env -u NODE_OPTIONS` drops it and then execs the program, so the child keeps the pid
// (and process group) the test was given.

/** The command and arguments for a spawn of `command ...args` without the runner's NODE_OPTIONS. */
export function plainChild(command: string, args: readonly string[] = []): [string, string[]] {
  return ['env', ['-u', 'NODE_OPTIONS', command, ...args]];
}
