// What the project's command-line tools share: picking the command, and exit codes: 0 done, 1
// refused or failed (the message says why), 2 usage (the message and the usage).

/** The command line is not one the tool takes. */
export class UsageError extends Error {}

/** The command `argv` names and its arguments; null when help was asked for (it is printed). */
export function chosenCommand<C>(argv: readonly string[], usage: string, commands: Readonly<Record<string, C>>): { run: C; args: string[] } | null {
  const [command, ...args] = argv;
  if (command === 'help' || command === '--help' || command === '-h') {
    console.log(usage);
    return null;
  }
  if (command === undefined) throw new UsageError('no command');
  const run = commands[command];
  if (!run) throw new UsageError(`unknown command "${command}"`);
  return { run, args };
}

/** Runs `main` and sets the exit code; `expected` tells the failures whose message is all there is to say. */
export async function runCli(name: string, usage: string, main: () => Promise<void>, expected: (err: unknown) => err is Error): Promise<void> {
  try {
    await main();
    process.exitCode = 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${name}: ${err.message}\n${usage}`);
      process.exitCode = 2;
    } else if (expected(err)) {
      console.error(`${name}: ${err.message}`);
      process.exitCode = 1;
    } else {
      console.error(`${name}: unexpected error:`, err);
      process.exitCode = 1;
    }
  }
}
