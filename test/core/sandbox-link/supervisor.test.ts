// The supervisor that keeps the service's own sandbox running (core/sandbox-link/supervisor.ts),
// with programs that stop when told: a stop unasked is known from the exit itself and said at
// once, the program is started again after a wait that doubles with each failed start up to a
// cap and starts over after a steady run, every restart is logged, and a close stops it for good.
import t from 'tap';
import { Supervisor, type Running } from '../../../core/sandbox-link/supervisor.js';

interface Fake extends Running {
  readonly id: number;
  /** Ends the program as a crash would. */
  crash(): void;
  stopped: boolean;
}

let made = 0;
function fake(): Fake {
  let end: (value: { code: number | null; signal: string | null }) => void = () => undefined;
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => (end = resolve));
  const program: Fake = {
    id: ++made,
    pid: 1000 + made,
    exited,
    stopped: false,
    crash: () => end({ code: null, signal: 'SIGKILL' }),
    stop: async () => {
      program.stopped = true;
      end({ code: 0, signal: null });
    },
  };
  return program;
}

function recorder() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, fields, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1));
  if (!check()) throw new Error('never happened');
};

t.test('a program that stops unasked reads restarting at once (from its exit, no probe), then is started again and reads up; both are logged', async (t) => {
  const { lines, log } = recorder();
  const first = fake();
  const supervisor = new Supervisor<Fake>(first, { what: 'the sandbox', log, restart: async () => fake(), firstWaitMs: 1 });
  t.teardown(() => supervisor.close());
  t.equal(supervisor.state, 'up');
  first.crash();
  await first.exited;
  await Promise.resolve();
  t.equal(supervisor.state, 'restarting', 'as soon as the exit is seen');
  t.match(lines[0], { level: 'error', msg: 'the sandbox stopped: restarting it', fields: { code: null, signal: 'SIGKILL', restartInMs: 1 } });
  await until(() => supervisor.state === 'up');
  t.not(supervisor.current, first, 'a new program');
  t.equal(supervisor.restarts, 1);
  t.match(lines[1], { level: 'info', msg: 'the sandbox restarted', fields: { pid: supervisor.current.pid, restarts: 1 } });
});

t.test('failed starts wait longer each time, doubling to the cap; each failure is logged with its next wait', async (t) => {
  const { lines, log } = recorder();
  const first = fake();
  let failures = 4;
  const supervisor = new Supervisor<Fake>(first, {
    what: 'the sandbox',
    log,
    restart: async () => {
      if (failures-- > 0) throw new Error('port taken');
      return fake();
    },
    firstWaitMs: 1,
    maxWaitMs: 4,
  });
  t.teardown(() => supervisor.close());
  first.crash();
  await until(() => supervisor.restarts === 1);
  t.strictSame(
    lines.map((l) => [l.msg, l.fields.restartInMs ?? null]),
    [
      ['the sandbox stopped: restarting it', 1],
      ['the sandbox could not be restarted: trying again', 2],
      ['the sandbox could not be restarted: trying again', 4],
      ['the sandbox could not be restarted: trying again', 4],
      ['the sandbox could not be restarted: trying again', 4],
      ['the sandbox restarted', null],
    ],
  );
  t.match(lines[1]!.fields, { reason: 'port taken' });
});

t.test('a run that lasted starts the waits over; a quick stop after a restart waits longer', async (t) => {
  const { lines, log } = recorder();
  let clock = 0;
  const first = fake();
  const supervisor = new Supervisor<Fake>(first, { what: 'the sandbox', log, restart: async () => fake(), firstWaitMs: 1, maxWaitMs: 8, steadyMs: 100, now: () => clock });
  t.teardown(() => supervisor.close());
  first.crash();
  await until(() => supervisor.restarts === 1);
  supervisor.current.crash();
  await until(() => supervisor.restarts === 2);
  clock += 100;
  supervisor.current.crash();
  await until(() => supervisor.restarts === 3);
  t.strictSame(
    lines.filter((l) => l.level === 'error').map((l) => l.fields.restartInMs),
    [1, 2, 1],
    'the second stop came at once after a restart: it waited twice as long; the third, after a steady run, the first wait again',
  );
});

t.test('close stops the program and keeps it stopped: a restart under way is stopped when it arrives, and nothing restarts after', async (t) => {
  const { lines, log } = recorder();
  const first = fake();
  let arrive: ((program: Fake) => void) | null = null;
  const late = fake();
  const supervisor = new Supervisor<Fake>(first, { what: 'the sandbox', log, restart: () => new Promise<Fake>((resolve) => (arrive = resolve)), firstWaitMs: 1 });
  first.crash();
  await until(() => arrive !== null);
  const closed = supervisor.close();
  arrive!(late);
  await closed;
  t.equal(supervisor.state, 'stopped');
  t.ok(late.stopped, 'the program that arrived during the close was stopped');
  t.equal(supervisor.restarts, 0);
  t.equal(lines.length, 1, 'no restart logged');
});

t.test('a program stopped by close is not restarted, and no stop is logged as an error', async (t) => {
  const { lines, log } = recorder();
  const first = fake();
  let asked = 0;
  const supervisor = new Supervisor<Fake>(first, {
    what: 'the sandbox',
    log,
    restart: async () => {
      asked++;
      return fake();
    },
    firstWaitMs: 1,
  });
  await supervisor.close();
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.ok(first.stopped);
  t.equal(asked, 0);
  t.strictSame(lines, []);
});
