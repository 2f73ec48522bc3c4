/**
 * An escape Postgres jsonb refuses, not itself escaped (preceded by an even number of
 * backslashes): `\u0000`, and a UTF-16 surrogate. JSON.stringify writes a paired surrogate as
 * its character, so every surrogate escape in its text is a lone one.
 */
const REFUSED_ESCAPE = /(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g;

/**
 * JSON text for a `jsonb` parameter. Postgres text cannot hold U+0000, and jsonb refuses a lone
 * surrogate (`invalid input syntax for type json`): either would fail the whole statement. A
 * webhook body, a step output or an upstream answer may carry them (a code step's `slice` that
 * splits an emoji is enough), so each is stored as U+FFFD instead, in keys and values alike.
 */
export function jsonb(value: unknown): string | null {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text.includes('\\u0000') || text.includes('\\ud') ? text.replace(REFUSED_ESCAPE, '$1\\ufffd') : text;
}
