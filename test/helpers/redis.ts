// A real, private Redis for a test file: redis-server on a free loopback port with a throwaway
// directory and no persistence. Without redis-server the Redis tests are skipped, loudly, except
// when REQUIRE_REDIS=1 (CI), where its absence fails the run instead of passing it quietly.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { tempDir } from './temp.js';

export interface RedisServer {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** Kills the server (as a crash would) and waits for it to exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port, stopping it first if it runs; its data is gone. */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open and nothing is answered, as in a stall. */
  freeze(): void;
  /** Lets a frozen server run again (SIGCONT). */
  thaw(): void;
}

/** Tap test options that skip a Redis test, with the reason, when there is no Redis. */
export function redisSkip(server: RedisServer | null): { skip?: string } {
  return server ? {} : { skip: 'redis-server not found (CI sets REQUIRE_REDIS=1 so these always run there)' };
}

const STARTUP_MS = 10_000;
const running = new Set<ChildProcess>();
let noticed = false;

// Whatever ends the test process, no redis-server outlives it.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A redis-server of the test file's own, or null without one; its folder is removed when `t` (the file's root `t`) ends. */
export async function startRedis(t: { teardown(fn: () => void): void }): Promise<RedisServer | null> {
  const binary = findRedisServer();
  if (!binary) {
    if (process.env.REQUIRE_REDIS === '1') {
      throw new Error('Redis is required (REQUIRE_REDIS=1) but redis-server was not found on PATH, /usr/bin, /usr/sbin or /usr/local/bin');
    }
    if (!noticed) {
      noticed = true;
      process.stderr.write(
        "\n*** Redis tests SKIPPED: redis-server not found; install Debian's redis-server package " +
          '(CI sets REQUIRE_REDIS=1 so they always run there)\n\n',
      );
    }
    return null;
  }
  const dir = tempDir(t, 'bestex-redis-');
  // The free port can be taken between our probe and redis-server's bind; a new one then helps.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      let child = await launch(binary, port, dir);
      const stop = async (): Promise<void> => {
        running.delete(child);
        await kill(child);
      };
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop,
        restart: async () => {
          await stop();
          child = await launch(binary, port, dir);
        },
        freeze: () => void child.kill('SIGSTOP'),
        thaw: () => void child.kill('SIGCONT'),
      };
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

function findRedisServer(): string | null {
  const candidates = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin', '/usr/local/bin'];
  for (const dir of candidates.filter(Boolean)) {
    const candidate = join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts redis-server and resolves once it answers PING; rejects with its output if it dies. */
async function launch(binary: string, port: number, dir: string): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--dir', dir];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-4000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  child.once('exit', () => (exited = true));
  child.once('error', (err) => {
    exited = true;
    output += String(err);
  });

  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline && !exited) {
    if (await pong(port)) return child;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  running.delete(child);
  await kill(child);
  throw new Error(`redis-server did not start on port ${port}:\n${output}`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Whether a server on `port` answers a raw PING with +PONG. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString('latin1').startsWith('+PONG')));
  });
}
