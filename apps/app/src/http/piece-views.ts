import { PieceActionInfoSchema } from '@flowbox/protocol';
import { z } from 'zod';
import type { PieceRecord } from '../pieces/pieces-repository.ts';

/** The piece registry's answers, as zod views: the routes build them, the OpenAPI document shows them. */

export const IsolateSupportView = z.object({
  supported: z.boolean(),
  /** Why not, e.g. `imports node:fs, node:net`. */
  reason: z.string().optional(),
});

export const PieceVersionView = z.object({
  name: z.string(),
  version: z.string(),
  sha256: z.string(),
  sizeBytes: z.number().int(),
  publishedAt: z.iso.datetime(),
  actions: z.array(PieceActionInfoSchema),
  triggers: z.array(z.string()),
  /** Node built-ins the piece's module imports; null for a version published before they were recorded. */
  nodeBuiltins: z.array(z.string()).nullable(),
  /** Whether it can run in a V8 isolate (RUN_ISOLATION=isolate): not when it imports Node built-ins. */
  isolate: IsolateSupportView,
});
export type PieceVersionView = z.infer<typeof PieceVersionView>;

export const PublishedPieceView = z.object({ piece: PieceVersionView });

export const PieceListView = z.object({
  pieces: z.array(z.object({ name: z.string(), latest: z.string(), versions: z.array(z.string()) })),
});

export const PieceDetailView = z.object({
  name: z.string(),
  latest: z.string(),
  versions: z.array(PieceVersionView),
});

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
    isolate:
      builtins === null
        ? { supported: false, reason: 'not checked: published before the registry recorded imports' }
        : builtins.length === 0
          ? { supported: true }
          : { supported: false, reason: `imports ${builtins.map((b) => `node:${b}`).join(', ')}` },
  };
}
