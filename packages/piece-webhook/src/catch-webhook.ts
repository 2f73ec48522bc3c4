import { createTrigger } from '@flowbox/pieces-framework';

/** The webhook trigger: the flow starts from the request body. */
export const catchWebhook = createTrigger({
  name: 'catch_webhook',
  description: 'Starts the flow when its webhook is called; the output is the request body.',
  run: (payload) => payload.body,
});
