import { z } from 'zod';

/** What a webhook takes: documentation only, as its body parser (webhook-body.ts) takes any type. */
export const WebhookQuery = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .describe('Any parameters; a repeated one reaches the flow as an array of its values.');

export const WEBHOOK_BODIES = {
  'application/json': z
    .record(z.string(), z.unknown())
    .describe('A JSON object: `body` is the object, `rawBody` its text.'),
  'application/x-www-form-urlencoded': z
    .record(z.string(), z.union([z.string(), z.array(z.string())]))
    .describe('`body` holds the fields; a repeated key holds an array of its values.'),
  'text/plain': z.string().describe('Any `text/*`: `body` and `rawBody` are the text.'),
  'application/octet-stream': z.string().meta({
    format: 'binary',
    description: 'Any other type: `body` is null, `rawBody` the bytes in base64.',
  }),
};
