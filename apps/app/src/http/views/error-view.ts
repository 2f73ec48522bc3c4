import { ErrorCodeSchema } from '@flowbox/protocol';
import { z } from 'zod';

/** Every error answer: a code from ERROR_CATALOG and a message for people. */
export const ErrorView = z
  .object({
    error: z.object({
      code: ErrorCodeSchema.describe('One of ERROR_CATALOG (packages/protocol/src/errors.ts).'),
      message: z.string(),
    }),
    runId: z.uuid().optional().describe('The run the error is about, when a run was created.'),
  })
  .meta({ id: 'Error', description: 'An error: its code decides the HTTP status.' });
export type ErrorView = z.infer<typeof ErrorView>;
