import { PieceManifestSchema, PiecePublishRequestSchema } from '@flowbox/protocol';
import { z } from 'zod';

/** `POST /v1/pieces` as documented; the handler parses PiecePublishRequestSchema (manifest checked by the registry). */
export const PublishPieceBody = PiecePublishRequestSchema.extend({
  manifest: PieceManifestSchema.describe('`dist/manifest.json` as the build wrote it.'),
  archive: z.base64().describe('`dist/piece.tgz`, base64; at most PIECE_ARCHIVE_MAX_BYTES before encoding.'),
}).meta({ id: 'PublishPieceRequest' });

export const PieceParams = z.object({ name: z.string() });

export const PieceVersionParams = z.object({ name: z.string(), version: z.string() });

export const YankPieceQuery = z.object({
  force: z
    .enum(['true', 'false', ''])
    .optional()
    .transform((value) => value === 'true' || value === '')
    .describe(
      'Yank it even though published flow versions pin it (`?force` or `?force=true`); they keep running it.',
    ),
});
