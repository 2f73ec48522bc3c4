import { PieceActionInfoSchema } from '@flowbox/protocol';
import { z } from 'zod';
import type { PieceRecord } from '../../pieces/pieces-repository.ts';
import { DateTime } from './date-time.ts';

/** The piece registry's answers. */

export const IsolateSupportView = z
  .object({
    supported: z.boolean(),
    reason: z.string().optional().describe('Why not, e.g. `imports node:fs, node:net`.'),
  })
  .describe(
    'Whether the piece can run in a V8 isolate (RUN_ISOLATION=isolate): not when it imports Node built-ins.',
  );

const PieceActionView = PieceActionInfoSchema.extend({
  inputSchema: z
    .record(z.string(), z.unknown())
    .describe("The action's input as JSON Schema, from its zod schema."),
}).meta({ id: 'PieceAction' });

export const PieceVersionView = z
  .object({
    name: z.string(),
    version: z.string(),
    sha256: z.string().describe("The archive's sha256: S3 key and the worker's check."),
    sizeBytes: z.number().int(),
    publishedAt: DateTime,
    actions: z.array(PieceActionView),
    triggers: z.array(z.string()),
    nodeBuiltins: z
      .array(z.string())
      .nullable()
      .describe(
        "Node built-ins the piece's module imports; null for a version published before they were recorded.",
      ),
    isolate: IsolateSupportView,
    yankedAt: DateTime.nullable().describe(
      'When the version was yanked (`DELETE /v1/pieces/{name}/{version}`): flows pinned to it keep running it, nothing new can pin it. Null while it is not.',
    ),
  })
  .meta({ id: 'PieceVersion', description: 'One immutable published version of a piece.' });
export type PieceVersionView = z.infer<typeof PieceVersionView>;

export const PublishedPieceView = z.object({ piece: PieceVersionView }).meta({ id: 'PublishedPiece' });

export const PieceSummaryView = z
  .object({
    name: z.string(),
    latest: z
      .string()
      .describe(
        'The highest version not yanked (semver; releases before pre-releases); empty when every one is.',
      ),
    versions: z.array(z.string()).describe('Every published version, yanked ones included.'),
  })
  .meta({ id: 'PieceSummary' });
export type PieceSummaryView = z.infer<typeof PieceSummaryView>;

export const PieceListView = z.object({ pieces: z.array(PieceSummaryView) }).meta({ id: 'PieceList' });

export const PieceDetailView = z
  .object({
    name: z.string(),
    latest: z.string().describe('The highest version not yanked; empty when every one is.'),
    versions: z.array(PieceVersionView),
  })
  .meta({ id: 'PieceDetail' });
export type PieceDetailView = z.infer<typeof PieceDetailView>;

export function pieceVersionView(piece: PieceRecord): PieceVersionView {
  const builtins = piece.nodeBuiltins;
  return {
    name: piece.name,
    version: piece.version,
    sha256: piece.sha256,
    sizeBytes: piece.sizeBytes,
    publishedAt: piece.publishedAt.toISOString(),
    // A version recorded before the registry loaded pieces has only the manifest's names.
    actions:
      piece.actions ?? piece.manifest.actions.map((name) => ({ name, description: '', inputSchema: {} })),
    triggers: piece.manifest.triggers,
    nodeBuiltins: builtins,
    yankedAt: piece.yankedAt?.toISOString() ?? null,
    isolate:
      builtins === null
        ? { supported: false, reason: 'not checked: published before the registry recorded imports' }
        : builtins.length === 0
          ? { supported: true }
          : { supported: false, reason: `imports ${builtins.map((b) => `node:${b}`).join(', ')}` },
  };
}

export const YankedPieceView = z
  .object({ piece: PieceVersionView })
  .meta({ id: 'YankedPiece', description: 'The version, now yanked.' });
