import { createPiece } from '@flowbox/pieces-framework';
import { catchWebhook } from './catch-webhook.ts';
import { returnResponse } from './return-response.ts';

export const webhookPiece = createPiece({
  name: 'webhook',
  version: '0.1.0',
  triggers: [catchWebhook],
  actions: [returnResponse],
});
