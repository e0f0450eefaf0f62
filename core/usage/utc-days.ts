// UTC days as the usage counts are bucketed: a day is named by the millisecond it began.
export const DAY_MS = 86_400_000;

/** How long a day's counts are kept, from the moment the day began. */
export const RETENTION_MS = 8 * DAY_MS;

/** The UTC day `t` falls in, by its first millisecond. */
export const dayStartOf = (t: number): number => t - (((t % DAY_MS) + DAY_MS) % DAY_MS);

/** `YYYY-MM-DD`. */
export const dateOf = (dayStart: number): string => new Date(dayStart).toISOString().slice(0, 10);
