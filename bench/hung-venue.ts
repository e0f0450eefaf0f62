// The hung-venue check: a second sandbox whose nightly quote path never answers, and a second
// service with a known venue deadline; fresh quotes must still answer within it (docs/performance.md,
// "The hung-venue check").
import { dataDirOf, startSandbox, startService, waitForLive } from './deployment.js';
import { HUNG_SLACK_MS, record, type Outcome } from './gates.js';
import { describe, measure } from './measure.js';
import { FRESH_WIDE, WIDE, type Pair } from './pairs.js';
import { stop } from './processes.js';
import { fmt, invalid, rejectionsText, verdict } from './report.js';
import type { Settings } from './settings.js';

/** The hung check's arrivals per second: about what WIDE closed-loop connections reach when every answer takes the deadline. */
const HUNG_ARRIVALS = 150;
/** The hung scenario's per-venue deadline (how far past it the quote's p99 may be: HUNG_SLACK_MS). */
const HUNG_TIMEOUT_MS = 300;
const HUNG_VENUE = 'nightly';
/** Nightly's quote, not its token list (its probe): the venue stays live, every quote waits on it. */
const HUNG_PATH = '/nightly/nswap/quote';

/**
 * The hung venue: a sandbox whose nightly quote never answers, and a service with a known deadline.
 * One measurement, not rounds: its p99 has no spread to read, so it is always judged.
 */
export async function hungScenario(root: string, ledgerToken: string, settings: Settings, outcome: Outcome): Promise<void> {
  console.log('');
  console.log(`starting a second sandbox with SANDBOX_HANG_PATHS=${HUNG_PATH} and a service with VENUE_TIMEOUT_MS=${HUNG_TIMEOUT_MS}…`);
  const sandbox = await startSandbox('the hung sandbox', dataDirOf(root, 'hung-sandbox'), ledgerToken, [HUNG_PATH]);
  const service = await startService('the hung service', {
    dataDir: dataDirOf(root, 'hung-service'),
    sandbox,
    ledgerToken,
    redisUrl: '',
    env: { VENUE_TIMEOUT_MS: String(HUNG_TIMEOUT_MS) },
  });
  try {
    // Live by its probe, so every quote really asks it and waits (else venue_down, and nothing waits).
    await waitForLive(service, HUNG_VENUE);
    const paced: Pair = { ...FRESH_WIDE, name: `fresh keyless quote, ${HUNG_ARRIVALS} arrivals/s`, arrivalsPerSecond: HUNG_ARRIVALS };
    const m = await measure(`fresh quotes with ${HUNG_VENUE} hung, ${HUNG_ARRIVALS} arrivals/s`, [service], paced, settings.warmupS, settings.durationS, null);
    const lockstep = await measure(`fresh quotes with ${HUNG_VENUE} hung, ${WIDE} connections`, [service], FRESH_WIDE, settings.warmupS, settings.durationS, null);
    const boundMs = HUNG_TIMEOUT_MS + HUNG_SLACK_MS;
    const hungTimeouts = m.rejections[`${HUNG_VENUE} timeout`] ?? 0;
    const others = Object.entries(m.rejections).filter(([what]) => what.endsWith(' timeout') && !what.startsWith(`${HUNG_VENUE} `));
    const otherTimeouts = others.reduce((sum, [, n]) => sum + n, 0);
    const p99Pass = Number.isFinite(m.p99Ms) && m.p99Ms <= boundMs;
    // The check means something only when the hung venue timed out in every answer.
    const hangHeld = m.inspected > 0 && hungTimeouts === m.inspected;
    record(outcome, 'one venue hung: p99', verdict(p99Pass));
    record(outcome, 'one venue hung: other venues marked timeout', verdict(otherTimeouts === 0));
    record(outcome, 'one venue hung: the hang held', verdict(hangHeld));
    if (invalid(m) || invalid(lockstep)) outcome.invalid = true;
    console.log('');
    console.log(`== one venue hung (${HUNG_VENUE}'s quote never answered; VENUE_TIMEOUT_MS=${HUNG_TIMEOUT_MS}; fresh amounts arriving ${HUNG_ARRIVALS}/s, open loop) ==`);
    console.log(`hung: ${describe(m)}`);
    console.log(`hung: quote p99 ${fmt(m.p99Ms, 3)} ms (target <= VENUE_TIMEOUT_MS + ${HUNG_SLACK_MS} = ${boundMs} ms) ${verdict(p99Pass)}`);
    console.log(`hung: other venues marked timeout: ${otherTimeouts} (target 0) ${verdict(otherTimeouts === 0)}; every rejection: ${rejectionsText(m.rejections)}`);
    console.log(`hung: ${HUNG_VENUE} marked timeout in ${hungTimeouts} of ${m.inspected} answers read ${hangHeld ? '(the hang held)' : '(the hang did not hold: the check is void) FAIL'}`);
    for (const [which, run] of [['open loop', m], ['closed loop', lockstep]] as const) {
      if (invalid(run)) console.log(`hung, ${which}: INVALID RUN (${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts, ${run.ok} 2xx)`);
    }
    console.log(
      `hung, ${WIDE} closed-loop connections (informational: in lockstep, one burst per deadline): ${describe(lockstep)}; ` +
        `p99 ${fmt(lockstep.p99Ms - HUNG_TIMEOUT_MS, 1)} ms past the deadline; every rejection: ${rejectionsText(lockstep.rejections)}`,
    );
  } finally {
    await stop(service.child);
    await stop(sandbox.child);
  }
}
