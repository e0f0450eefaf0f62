// What the page checks before it sends anything: the contract's limits (openapi/portal.yaml's
// KeyName, Origins and Origin, which test/portal/page.test.ts holds these to), said in words a
// person can act on, naming the line they typed. The service checks the same again; these only
// spare a round trip and say it better than a field path can.

/** KeyName's maxLength, in characters (code points, as the contract's validator counts them). */
export const NAME_MAX_CHARACTERS = 64;
/** Origins' maxItems. */
export const ORIGINS_MAX = 10;
/** Origin's maxLength. */
export const ORIGIN_MAX_LENGTH = 255;

const EXAMPLE_ORIGIN = 'https://wallet.example';

const characters = (text: string): number => [...text].length;

/** Why the name (as it will be sent: trimmed) cannot be sent, or null when it can. */
export function nameProblem(raw: string): string | null {
  const name = raw.trim();
  if (name === '') return 'A name is required: name the key, such as your app.';
  const length = characters(name);
  if (length > NAME_MAX_CHARACTERS) return `The name is ${length} characters: at most ${NAME_MAX_CHARACTERS}. Shorten it by ${length - NAME_MAX_CHARACTERS}.`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'The name has a control character (a tab or a line break, say): take it out.';
  return null;
}

/** A browser origin as an Origin header names it, or null: the service's own rule (core/keys parseOrigin). */
export function originOf(raw: string): string | null {
  const url = parsed(raw);
  if (url === null || !['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.pathname !== '/' || url.search || url.hash || raw.replace(/\/$/, '') !== url.origin) return null;
  return url.origin;
}

function parsed(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** One thing to fix: on a line of the text typed (1 for the first), or about the whole list (line null). */
export interface Problem {
  readonly line: number | null;
  readonly value: string | null;
  readonly text: string;
}

/**
 * The origins of a textarea, one a line (blank lines skipped), each once, as the service stores
 * them; and what to fix, by the line a person sees it on.
 */
export function readOrigins(text: string): { origins: string[]; problems: Problem[] } {
  const origins = new Set<string>();
  const problems: Problem[] = [];
  for (const [index, line] of text.split('\n').entries()) {
    const value = line.trim();
    if (value === '') continue;
    const at = { line: index + 1, value };
    if (value.length > ORIGIN_MAX_LENGTH) {
      problems.push({ ...at, text: `longer than ${ORIGIN_MAX_LENGTH} characters` });
      continue;
    }
    const origin = originOf(value);
    if (origin !== null) {
      origins.add(origin);
      continue;
    }
    // A web address with something extra (a path, a capital, a user): offer the origin in it.
    const url = parsed(value);
    const near = url !== null && ['http:', 'https:'].includes(url.protocol) && url.host !== '' ? url.origin : null;
    problems.push({ ...at, text: near === null ? `not an origin (scheme://host[:port], such as ${EXAMPLE_ORIGIN})` : `not an origin as a browser sends it; did you mean ${near}?` });
  }
  const count = origins.size + problems.length;
  if (count > ORIGINS_MAX) problems.push({ line: null, value: null, text: `at most ${ORIGINS_MAX} origins; you entered ${count}` });
  return { origins: [...origins], problems };
}

const unit = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** A wait of `seconds` (Retry-After) as a person says it: "in 45 seconds", "in 2 minutes", "in about 1 hour". */
export function waitInWords(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `in ${unit(s, 'second')}`;
  const minutes = Math.round(s / 60);
  if (minutes < 60) return `in ${s % 60 === 0 ? '' : 'about '}${unit(minutes, 'minute')}`;
  const hours = Math.round(s / 3600);
  if (hours <= 24) return `in about ${unit(hours, 'hour')}`;
  return `in about ${unit(Math.round(s / 86_400), 'day')}`;
}

/** WebhookUrl's maxLength. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/**
 * Why a webhook endpoint's URL (as it will be sent: trimmed) cannot be sent, or null when it can.
 * Only its form: whether plain http or an internal address is taken is the service's to say, by
 * its configuration.
 */
export function webhookUrlProblem(raw: string): string | null {
  const value = raw.trim();
  if (value === '') return 'An endpoint URL is required, such as https://hooks.wallet.example/bestex.';
  if (value.length > WEBHOOK_URL_MAX_LENGTH) return `The URL is ${value.length} characters: at most ${WEBHOOK_URL_MAX_LENGTH}.`;
  const url = parsed(value);
  if (url === null || !['http:', 'https:'].includes(url.protocol) || url.host === '') return 'Not a web address: it starts with https://, such as https://hooks.wallet.example/bestex.';
  return null;
}

/** How far apart the trade ledger's `from` and `to` may be (listPartnerTrades' 400), in days. */
export const TRADE_RANGE_MAX_DAYS = 366;

const UTC_DAY = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** Why the days chosen (YYYY-MM-DD, as a date input gives them; empty when unset) cannot be sent, or null when they can. */
export function tradeRangeProblem(from: string, to: string): string | null {
  if (!UTC_DAY.test(from)) return 'Choose the first UTC day of the trades to show.';
  if (!UTC_DAY.test(to)) return 'Choose the last UTC day of the trades to show.';
  if (from > to) return `The first day (${from}) is after the last (${to}): swap them.`;
  const apart = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;
  if (apart > TRADE_RANGE_MAX_DAYS) return `The days are ${apart} days apart: at most ${TRADE_RANGE_MAX_DAYS}. Move the first day later by ${apart - TRADE_RANGE_MAX_DAYS}.`;
  return null;
}
