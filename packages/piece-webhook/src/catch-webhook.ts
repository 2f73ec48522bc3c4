import { createTrigger } from '@flowbox/pieces-framework';

/**
 * The webhook trigger: the flow starts from the whole request (method, headers, query, body,
 * rawBody). Templates still read `{{trigger.x}}` as the body's `x` (the engine's template.ts).
 */
export const catchWebhook = createTrigger({
  name: 'catch_webhook',
  description:
    'Starts the flow when its webhook is called; the output is the request: method, headers, query, body and rawBody.',
  run: (payload) => payload,
});
