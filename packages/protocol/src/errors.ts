import { z } from 'zod';
import { ERROR_CATALOG, type ErrorCode, type SerializedError } from './error-catalog.ts';

export * from './error-catalog.ts';

export const ErrorCodeSchema = z.enum(Object.keys(ERROR_CATALOG) as [ErrorCode, ...ErrorCode[]]);

/** How an error crosses a process boundary (IPC, HTTP, Postgres, the run log). */
export const SerializedErrorSchema = z.object({
  name: z.string(),
  code: ErrorCodeSchema,
  message: z.string(),
  stack: z.string().optional(),
  /** The step the error happened in, when it happened in a step. */
  step: z.string().optional(),
});
// The schema parses exactly the catalog's SerializedError (error-catalog.ts), both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const sameShape: Same<z.infer<typeof SerializedErrorSchema>, SerializedError> = true;
void sameShape;
