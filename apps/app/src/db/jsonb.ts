/** A `\u0000` escape not itself escaped (preceded by an even number of backslashes). */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * JSON text for a `jsonb` parameter. Postgres text cannot hold U+0000, so jsonb refuses the
 * `\u0000` escape and the whole statement fails; a webhook body or a step output may carry one,
 * so it is stored as U+FFFD instead, in keys and values alike.
 */
export function jsonb(value: unknown): string | null {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text.includes('\\u0000') ? text.replace(NUL_ESCAPE, '$1\\ufffd') : text;
}
