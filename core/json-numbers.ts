// JSON text read so that no amount passes through a float: a venue that answers
// `14.887162959697779` must never have that rounded on its way to an amount. Answers whose amounts
// are strings need none of this (JSON.parse, about 4x cheaper than the lossless parser as
// profiled); a venue that sends amounts as JSON numbers names the fields that carry them.
import { parse } from 'lossless-json';

/** JSON text with every number as its source text (a string), so none is rounded by a float. */
export function parseJsonKeepingNumbers(text: string): unknown {
  return parse(text, null, (value: string) => value);
}

// A JSON string (escapes included) or a JSON number. Strings are matched whole first, so a digit
// inside one is never taken for a number.
const TOKEN = /"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/g;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The first character at or after `i` that is not JSON whitespace (NaN at the end). */
function nextSolid(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return text.charCodeAt(i);
}

/** The last character before `i` that is not JSON whitespace (NaN at the start). */
function previousSolid(text: string, i: number): number {
  while (i > 0 && isSpace(text.charCodeAt(i - 1))) i--;
  return text.charCodeAt(i - 1);
}

/** Whether a member named in `fields` holds a number anywhere in `value`. */
function holdsNumberIn(value: unknown, fields: ReadonlySet<string>): boolean {
  if (Array.isArray(value)) return value.some((item) => holdsNumberIn(item, fields));
  if (value === null || typeof value !== 'object') return false;
  for (const [name, member] of Object.entries(value)) {
    if (typeof member === 'number' ? fields.has(name) : holdsNumberIn(member, fields)) return true;
  }
  return false;
}

/**
 * JSON text parsed with JSON.parse, except that a number that is the value of a member named in
 * `fields` (at any depth) is its source text, a string. Any other number is a JS number, so
 * `fields` must name every member that carries an amount. Invalid JSON throws as JSON.parse does.
 * The text is parsed once first: that refuses invalid text before the scan, on which an
 * unterminated string would cost time quadratic in its length, and an answer whose named members
 * hold no number (strings) is that parse's result.
 */
export function parseJsonKeepingFields(text: string, fields: ReadonlySet<string>): unknown {
  const parsed = JSON.parse(text) as unknown;
  if (!holdsNumberIn(parsed, fields)) return parsed;
  let out = '';
  let copied = 0;
  /** The last string that was a member name, as JSON text (with its quotes). */
  let member = '';
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const token = match[0];
    const at = match.index;
    if (token.charCodeAt(0) === 0x22) {
      if (nextSolid(text, at + token.length) === 0x3a) member = token;
      continue;
    }
    if (previousSolid(text, at) !== 0x3a || !fields.has(member.slice(1, -1))) continue;
    out += `${text.slice(copied, at)}"${token}"`;
    copied = at + token.length;
  }
  return JSON.parse(out + text.slice(copied));
}
