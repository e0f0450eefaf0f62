// The portal's creation limits: keys are free, so a client IP (its /64 for IPv6) may create a few
// per hour and a few more per UTC day, and the portal as a whole a bounded number per UTC day, a
// last guard set well above what the per-address limits let any few addresses take, so callers
// from many addresses cannot use up everyone's day. All are windows in the shared state, so every
// instance counts the same ones (each falls back to this instance's own count while Redis is
// unreachable, as the rate limits do). Each attempt past validation is counted, refused or not:
// a refused caller retrying at once gains nothing. A refusal's message names the limit; its
// Retry-After says when (the page says that in words).
import { DomainError } from '../errors.js';
import type { RateWindows } from '../state/rate-windows.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface CreationLimitSettings {
  readonly perIpPerHour: number;
  readonly perIpPerDay: number;
  readonly perDay: number;
}

export class CreationLimits {
  constructor(
    private readonly windows: RateWindows,
    private readonly settings: CreationLimitSettings,
    private readonly now: () => Date,
  ) {}

  /** Counts one creation by `clientIp`; throws rate_limited, with the seconds until the refusing limit allows the next, over either limit. */
  async admit(clientIp: string): Promise<void> {
    const { perIpPerHour, perIpPerDay, perDay } = this.settings;
    const byIp = await this.windows.hit(`portal-create:ip:${clientIp}`, HOUR_MS);
    if (byIp.count > perIpPerHour) {
      throw new DomainError('rate_limited', `too many keys created from this address: at most ${keys(perIpPerHour)} an hour`, wholeSeconds(byIp.resetInMs));
    }
    const t = this.now().getTime();
    const day = new Date(t).toISOString().slice(0, 10);
    // A day's windows are named by its date, and end at the next UTC midnight whenever they start.
    const untilMidnight = DAY_MS - (t % DAY_MS);
    const byIpToday = await this.windows.hit(`portal-create:ip-day:${day}:${clientIp}`, untilMidnight);
    if (byIpToday.count > perIpPerDay) {
      throw new DomainError('rate_limited', `too many keys created from this address today: at most ${keys(perIpPerDay)} a UTC day`, wholeSeconds(byIpToday.resetInMs));
    }
    const byDay = await this.windows.hit(`portal-create:day:${day}`, untilMidnight);
    if (byDay.count > perDay) {
      throw new DomainError('rate_limited', `the portal has created as many keys as it may today: at most ${keys(perDay)} a UTC day, from every address`, wholeSeconds(byDay.resetInMs));
    }
  }
}

const wholeSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

const keys = (n: number): string => `${n} ${n === 1 ? 'key' : 'keys'}`;
