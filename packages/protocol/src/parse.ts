import type { z } from 'zod';

export const PROTOCOL_VERSION = 1 as const;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Parses a frame with its schema and turns a failure into one readable line. */
export function parseMessage<S extends z.ZodType>(schema: S, frame: unknown): ParseResult<z.infer<S>> {
  const result = schema.safeParse(frame);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: formatIssues(result.error.issues) };
}

export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
