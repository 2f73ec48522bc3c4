import { createAction, Property } from '@flowbox/pieces-framework';
import { FlowboxError, flowResponseProblem } from '@flowbox/protocol';

/** Answers the sync webhook caller; the step's output is the response it sent. */
export const returnResponse = createAction({
  name: 'return_response',
  description: 'Sends the HTTP response to the caller of a sync webhook.',
  props: {
    // A number, coerced from text: a template inside a string (`"{{trigger.code}}"`) yields text.
    // The range is checked in `run`, so a templated 101 fails as INVALID_RESPONSE like a bad header.
    status: Property.Number({ displayName: 'Status', integer: true, defaultValue: 200 }),
    headers: Property.Object({ displayName: 'Headers', defaultValue: {} }),
    body: Property.Json({ displayName: 'Body' }),
  },
  async run(input, ctx) {
    const response = { status: input.status, headers: input.headers, body: input.body };
    const problem = flowResponseProblem(response);
    if (problem !== null) {
      throw new FlowboxError('INVALID_RESPONSE', `the response cannot be sent: ${problem}`, {
        step: ctx.stepName,
      });
    }
    await ctx.respond(response);
    return response;
  },
});
