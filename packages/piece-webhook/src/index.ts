import { createPiece } from '@flowbox/pieces-framework';
import pkg from '../package.json' with { type: 'json' };
import { catchWebhook } from './catch-webhook.ts';
import { returnResponse } from './return-response.ts';

// Name and version live in package.json, which the build also reads for the archive's manifest.
export const webhookPiece = createPiece({
  name: pkg.flowbox.piece.name,
  version: pkg.version,
  triggers: [catchWebhook],
  actions: [returnResponse],
});

/** The piece archive's entry (`index.mjs`) exports the piece as its default. */
export default webhookPiece;
