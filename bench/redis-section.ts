// The Redis section, run with REDIS_URL: the same v1 pairs on two service instances sharing that
// Redis, against the same baselines, each gated as a share of one instance's ratio (v2's requests
// reach Redis as v1's do, through the same core: they are measured on one instance only). The service's
// keys are under its fixed prefix `bestex:`; the section removes those its instances created and
// no others (a db of its own in the URL, e.g. redis://127.0.0.1:6379/15, keeps them apart).
import { Redis } from 'ioredis';
import { dataDirOf, startService, type RunningSandbox, type Server } from './deployment.js';
import type { Outcome } from './gates.js';
import { PAIRS, type BaselineKey, type PairKey } from './pairs.js';
import { stop } from './processes.js';
import { report, runSection, type RoundResult, type Section } from './section.js';
import type { Settings } from './settings.js';

/** Every `bestex:*` key in the Redis. */
async function serviceKeys(redis: Redis): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const batch of redis.scanStream({ match: 'bestex:*', count: 1000 }) as AsyncIterable<string[]>) for (const key of batch) keys.add(key);
  return keys;
}

export async function redisSection(
  redisUrl: string,
  root: string,
  sandbox: RunningSandbox,
  ledgerToken: string,
  baselines: Readonly<Record<BaselineKey, Server>>,
  oneInstance: Map<PairKey, RoundResult[]>,
  settings: Settings,
  outcome: Outcome,
): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  const before = await serviceKeys(redis);
  const started: Server[] = [];
  try {
    console.log('');
    console.log('starting two service instances sharing REDIS_URL…');
    for (const name of ['service instance 1', 'service instance 2']) {
      started.push(await startService(name, { dataDir: dataDirOf(root, name), sandbox, ledgerToken, redisUrl }));
    }
    const section: Section = {
      title: 'two instances, one Redis',
      services: started,
      baselines,
      pairs: PAIRS.filter((p) => p.key !== 'fresh50' && p.v1 === undefined),
      redis,
    };
    const results = await runSection(section, settings);
    report(section, results, settings.rounds, outcome, oneInstance);
    console.log(
      "(server CPU: both instances together; Redis cmds/req: INFO stats total_commands_processed over the run, less the bench's own INFO, per response; " +
        "round trips/req: INFO commandstats calls less the commands only the service's scripts send (INCR, INCRBY, PTTL, PEXPIRE, GET, SET, DEL, HGET) and EXEC; Redis CPU: INFO cpu used_cpu_sys + used_cpu_user; " +
        "the baselines' figures count what else reached Redis meanwhile)",
    );
  } finally {
    for (const s of started) await stop(s.child);
    const created = [...(await serviceKeys(redis))].filter((key) => !before.has(key));
    for (let i = 0; i < created.length; i += 500) await redis.unlink(...created.slice(i, i + 500));
    console.log(`Redis: removed the ${created.length} bestex:* keys the bench's instances created; the ${before.size} that were there before are left`);
    await redis.quit();
  }
}
