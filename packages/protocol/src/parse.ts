import type { z } from 'zod';

export const PROTOCOL_VERSION = 1 as const;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses a frame with its schema and turns a failure into one readable line. */
export function parseMessage<S extends z.ZodType>(schema: S, frame: unknown): ParseResult<z.infer<S>> {
  const result = schema.safeParse(frame);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: formatIssues(result.error.issues) };
}

/** One `path: message` per issue; an unknown key is named in its path (`steps.0.retry: unknown key`). */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => `${[...issue.path, key].join('.')}: unknown key`)
        : [`${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`],
    )
    .join('; ');
}

/** Bounds the passes of parseStored: each removes the unknown keys of one level of nesting. */
const MAX_STRIP_PASSES = 16;

/**
 * Parses what flowbox itself stored (a row, a bundle) with a schema whose objects are strict,
 * dropping the keys it does not know instead of refusing them: a row written by a newer or
 * older version still loads, while new input is refused with the key named (formatIssues).
 */
export function parseStored<S extends z.ZodType>(
  schema: S,
  stored: unknown,
): z.ZodSafeParseResult<z.infer<S>> {
  let value = stored;
  let result = schema.safeParse(value);
  for (let pass = 0; !result.success && pass < MAX_STRIP_PASSES; pass += 1) {
    const unknown = result.error.issues.filter((issue) => issue.code === 'unrecognized_keys');
    if (unknown.length === 0 || unknown.length < result.error.issues.length) return result;
    value = structuredClone(value);
    for (const issue of unknown) {
      const holder = at(value, issue.path);
      if (holder !== null) for (const key of issue.keys) delete holder[key];
    }
    result = schema.safeParse(value);
  }
  return result;
}

function at(value: unknown, path: readonly PropertyKey[]): Record<string, unknown> | null {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return null;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return typeof current === 'object' && current !== null ? (current as Record<string, unknown>) : null;
}
