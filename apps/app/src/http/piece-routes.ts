import { FlowboxError, formatIssues, PiecePublishRequestSchema } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { PieceRegistry } from '../pieces/piece-registry.ts';
import { latestVersion } from '../pieces/piece-versions.ts';
import type { PieceRecord } from '../pieces/pieces-repository.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import { YankPieceQuery } from './views/piece-requests.ts';
import { type PieceDetailView, type PieceSummaryView, pieceVersionView } from './views/piece-view.ts';

type NameParams = { Params: { name: string } };
type VersionParams = { Params: { name: string; version: string } };

/** The latest version not yanked, or '' when every one is. */
const latestOf = (versions: readonly PieceRecord[]) =>
  latestVersion(versions.filter((v) => v.yankedAt === null).map((v) => v.version)) ?? '';

/**
 * The piece registry's API, behind the API key: publish a built piece (its manifest and
 * base64 archive), list pieces, read one piece's versions with their actions' input schemas,
 * yank a version.
 */
export function registerPieceRoutes(
  app: FastifyInstance,
  deps: { registry: PieceRegistry; maxArchiveBytes: number },
): void {
  app.route({
    ...apiRoute(OPS.publishPiece),
    // Base64 is 4/3 of the archive; twice that, so an archive somewhat over the cap is still
    // read and refused 400 naming PIECE_ARCHIVE_MAX_BYTES rather than 413 by the body limit.
    bodyLimit: Math.ceil((deps.maxArchiveBytes * 4) / 3) * 2 + 64 * 1024,
    handler: async (request, reply) => {
      const parsed = PiecePublishRequestSchema.safeParse(request.body ?? {});
      if (!parsed.success) throw new FlowboxError('INVALID_PIECE', formatIssues(parsed.error.issues));
      const archive = Buffer.from(parsed.data.archive, 'base64');
      const { created, piece } = await deps.registry.publish({ manifest: parsed.data.manifest, archive });
      request.log.info(
        { piece: `${piece.name}@${piece.version}`, sha256: piece.sha256, created },
        created ? 'published piece' : 'piece already published',
      );
      return reply.status(created ? 201 : 200).send({ piece: pieceVersionView(piece) });
    },
  });

  app.route({
    ...apiRoute(OPS.listPieces),
    handler: async (): Promise<{ pieces: PieceSummaryView[] }> => {
      const byName = new Map<string, PieceRecord[]>();
      for (const piece of await deps.registry.list()) {
        byName.set(piece.name, [...(byName.get(piece.name) ?? []), piece]);
      }
      return {
        pieces: [...byName].map(([name, versions]) => ({
          name,
          latest: latestOf(versions),
          versions: versions.map((v) => v.version),
        })),
      };
    },
  });

  app.route<NameParams>({
    ...apiRoute(OPS.getPiece),
    handler: async (request): Promise<PieceDetailView> => {
      const versions = await deps.registry.versionsOf(request.params.name);
      return {
        name: request.params.name,
        latest: latestOf(versions),
        versions: versions.map(pieceVersionView),
      };
    },
  });

  app.route<VersionParams>({
    ...apiRoute(OPS.yankPiece),
    handler: async (request) => {
      const query = YankPieceQuery.safeParse(request.query ?? {});
      if (!query.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(query.error.issues));
      const { name, version } = request.params;
      const { piece } = await deps.registry.yank(name, version, query.data.force);
      request.log.warn(
        { piece: `${name}@${version}`, force: query.data.force, yankedAt: piece.yankedAt },
        'yanked piece version',
      );
      return { piece: pieceVersionView(piece) };
    },
  });
}
