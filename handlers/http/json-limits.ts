// How much structure a JSON body may have, checked on its text in one pass before anything parses
// it: a body's cost must not grow faster than its size. Every body the contract takes is a flat
// object with one small nested one (a plan's quoteRef), so the limits are far above any valid
// body and far below what makes a parser, or a walk over its result, costly.

/** Objects and arrays inside one another, the body itself the first. */
export const MAX_BODY_DEPTH = 16;
/** Keys in the whole body, every object's together. */
export const MAX_BODY_KEYS = 256;

/** The limit `text` exceeds, in words a caller can act on, or null when it keeps both. */
export function structureProblem(text: string): string | null {
  let depth = 0;
  let keys = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped, whatever it is
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      // { or [
      if (++depth > MAX_BODY_DEPTH) return `the request body nests objects or lists more than ${MAX_BODY_DEPTH} levels deep`;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x3a && ++keys > MAX_BODY_KEYS) return `the request body has more than ${MAX_BODY_KEYS} keys`; // a colon outside a string ends a key
  }
  return null;
}
