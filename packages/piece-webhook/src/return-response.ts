import { createAction } from '@flowbox/pieces-framework';
import { z } from 'zod';

const ReturnResponseInputSchema = z.object({
  // Coerced because a template inside a string (`"{{trigger.code}}"`) yields text.
  status: z.coerce.number().int().min(100).max(599).default(200),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.unknown(),
});

/** Answers the sync webhook caller; the step's output is the response it sent. */
export const returnResponse = createAction({
  name: 'return_response',
  description: 'Sends the HTTP response to the caller of a sync webhook.',
  input: ReturnResponseInputSchema,
  async run(input, ctx) {
    const response = { status: input.status, headers: input.headers, body: input.body };
    await ctx.respond(response);
    return response;
  },
});
