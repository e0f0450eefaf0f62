// JSON text for strings, without JSON.stringify's escape scan where none is needed: the strings
// the service writes on its hot paths are short and almost always plain ASCII.

/** Whether `s` is printable ASCII but '"' and '\', so its JSON text is itself between quotes. */
function isPlain(s: string): boolean {
  // A loop, not a regular expression: for the few short strings per line it costs a tenth.
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** The JSON text of `s`, exactly as JSON.stringify writes it. */
export const jsonString = (s: string): string => (isPlain(s) ? `"${s}"` : JSON.stringify(s));
