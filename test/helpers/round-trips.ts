// Round trips a request makes to Redis, counted from MONITOR, for the tests that hold how many
// each kind of request makes (test/core/state/redis-service.test.ts) and what they carry
// (test/core/state/state-marker.test.ts).
import { Redis } from 'ioredis';
import type t from 'tap';

/** A subtest's `t`. */
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/**
 * Round trips to Redis, read from its MONITOR: each command a client sends is one, except that a
 * script's own commands (MONITOR's source `lua`) are its EVALSHA's, and the commands of a
 * MULTI ... EXEC, which ioredis writes together, are one. The shared state's periodic work (the
 * state marker's own check of `bestex:state`, usage flushes of `bestex:usage:`) is no request's and
 * is left out. Every command a request makes is awaited before it is answered, so an ECHO the
 * test sends after the answer marks where the request's commands end, and one sent before it
 * where they begin. `scripted`: the commands the request's scripts ran.
 */
export async function roundTripCounter(
  t: Test,
  redisUrl: string,
): Promise<(request: () => Promise<{ statusCode: number; body: string }>, settled?: () => Promise<void>) => Promise<{ status: number; body: string; trips: number; commands: string; sent: string[][]; scripted: string[][] }>> {
  const client = new Redis(redisUrl);
  const monitor = await client.monitor();
  t.teardown(() => {
    monitor.disconnect();
    client.disconnect();
  });
  let lines: Array<{ readonly args: string[]; readonly source: string }> = [];
  let marker: { readonly text: string; readonly seen: () => void } | null = null;
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (marker && args[0]?.toLowerCase() === 'echo' && args[1] === marker.text) marker.seen();
    else lines.push({ args, source });
  });
  // The marker's own check reads or writes it alone; a request's script or key lookup reads it with its work.
  const periodic = (args: readonly string[]) => (/^(hget|hsetnx)$/i.test(args[0]!) && args[1] === 'bestex:state') || args.some((arg) => arg.startsWith('bestex:usage:'));
  let markers = 0;
  /** Resolves once MONITOR has shown every command sent before it: its stream lags the replies. */
  const drained = async () => {
    const text = `marker-${++markers}`;
    const seen = new Promise<void>((resolve) => (marker = { text, seen: resolve }));
    await client.echo(text);
    await seen;
  };
  return async (request, settled) => {
    // Commands of what came before (a key revoked just now) may still be on their way to MONITOR.
    await drained();
    lines = [];
    const { statusCode, body } = await request();
    await settled?.();
    await drained();
    let trips = 0;
    const commands: string[] = [];
    const sent: string[][] = [];
    const scripted: string[][] = [];
    let transaction: string[][] | null = null;
    for (const { args, source } of lines) {
      if (source === 'lua') {
        scripted.push(args);
        continue;
      }
      const name = args[0]!.toLowerCase();
      if (transaction) {
        if (name !== 'exec' && name !== 'discard') {
          transaction.push(args);
          continue;
        }
        if (!transaction.every(periodic)) {
          trips += 1;
          commands.push(`multi(${transaction.map((a) => a[0]!.toLowerCase()).join(' ')})`);
          sent.push(transaction.flat());
        }
        transaction = null;
        continue;
      }
      if (name === 'multi') transaction = [];
      else if (!periodic(args)) {
        trips += 1;
        commands.push(name);
        sent.push(args);
      }
    }
    return { status: statusCode, body, trips, commands: commands.join(' '), sent, scripted };
  };
}
