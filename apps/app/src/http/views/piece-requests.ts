import { PieceManifestSchema, PiecePublishRequestSchema } from '@flowbox/protocol';
import { z } from 'zod';

/** `POST /v1/pieces` as documented; the handler parses PiecePublishRequestSchema (manifest checked by the registry). */
export const PublishPieceBody = PiecePublishRequestSchema.extend({
  manifest: PieceManifestSchema.describe('`dist/manifest.json` as the build wrote it.'),
  archive: z.base64().describe('`dist/piece.tgz`, base64; at most PIECE_ARCHIVE_MAX_BYTES before encoding.'),
}).meta({ id: 'PublishPieceRequest' });

export const PieceParams = z.object({ name: z.string() });
