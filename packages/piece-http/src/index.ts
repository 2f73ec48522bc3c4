import { createPiece } from '@flowbox/pieces-framework';
import pkg from '../package.json' with { type: 'json' };
import { newItems } from './new-items.ts';
import { sendRequest } from './send-request.ts';

// Name and version live in package.json, which the build also reads for the archive's manifest.
export const httpPiece = createPiece({
  name: pkg.flowbox.piece.name,
  version: pkg.version,
  actions: [sendRequest],
  triggers: [newItems],
});

/** The piece archive's entry (`index.mjs`) exports the piece as its default. */
export default httpPiece;
