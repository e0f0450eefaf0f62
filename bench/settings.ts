// The bench's settings, read from its environment: BENCH_ROUNDS (default 5), BENCH_DURATION_S
// (measured seconds per measurement, default 3), BENCH_WARMUP_S (first-round warm-up, default 2;
// later rounds min(1, it)). A value out of range stops the bench before anything starts.

export interface Settings {
  readonly rounds: number;
  readonly durationS: number;
  readonly warmupS: number;
  readonly laterWarmupS: number;
}

function seconds(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > 600) {
    throw new Error(`${name} must be a number of seconds from ${min} to 600 (got ${JSON.stringify(raw)})`);
  }
  return value;
}

function roundsFromEnv(): number {
  const raw = process.env.BENCH_ROUNDS;
  if (raw === undefined || raw.trim() === '') return 5;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 100) {
    throw new Error(`BENCH_ROUNDS must be a whole number from 1 to 100 (got ${JSON.stringify(raw)})`);
  }
  return value;
}

/** The settings the environment gives, checked in this order: rounds, duration, warm-up. */
export function settingsFromEnv(): Settings {
  const rounds = roundsFromEnv();
  const durationS = seconds('BENCH_DURATION_S', 3, 1);
  const warmupS = seconds('BENCH_WARMUP_S', 2, 0);
  return { rounds, durationS, warmupS, laterWarmupS: Math.min(1, warmupS) };
}
