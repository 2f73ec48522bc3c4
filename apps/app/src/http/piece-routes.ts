import { FlowboxError, formatIssues, PiecePublishRequestSchema } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PieceRegistry } from '../pieces/piece-registry.ts';
import { latestVersion } from '../pieces/piece-versions.ts';
import { PieceDetailView, PieceListView, PublishedPieceView, pieceVersionView } from './piece-views.ts';

type NameParams = { Params: { name: string } };

/**
 * The piece registry's API, behind the API key: publish a built piece (its manifest and
 * base64 archive), list pieces, read one piece's versions with their actions' input schemas.
 */
export function registerPieceRoutes(
  app: FastifyInstance,
  deps: { registry: PieceRegistry; maxArchiveBytes: number },
): void {
  app.post(
    '/v1/pieces',
    {
      // Base64 is 4/3 of the archive; twice that, so an archive somewhat over the cap is still
      // read and refused 400 naming PIECE_ARCHIVE_MAX_BYTES rather than 413 by the body limit.
      bodyLimit: Math.ceil((deps.maxArchiveBytes * 4) / 3) * 2 + 64 * 1024,
      schema: {
        tags: ['pieces'],
        summary:
          'Publishes a built piece as name@version: 201 when new, 200 when the same content is there, 409 when other content is.',
        security: BEARER,
        body: fromZod(PiecePublishRequestSchema),
        response: {
          200: { description: 'Already published with this content.', ...fromZod(PublishedPieceView) },
          201: { description: 'Published.', ...fromZod(PublishedPieceView) },
          ...errors(400, 401, 409, 413, 415),
        },
      },
    },
    async (request, reply) => {
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
  );

  app.get(
    '/v1/pieces',
    {
      schema: {
        tags: ['pieces'],
        summary: 'Lists the published pieces: each with its versions and latest.',
        security: BEARER,
        response: { 200: { description: 'The pieces.', ...fromZod(PieceListView) }, ...errors(401) },
      },
    },
    async (): Promise<z.infer<typeof PieceListView>> => {
      const byName = new Map<string, string[]>();
      for (const piece of await deps.registry.list()) {
        byName.set(piece.name, [...(byName.get(piece.name) ?? []), piece.version]);
      }
      return {
        pieces: [...byName].map(([name, versions]) => ({
          name,
          latest: latestVersion(versions) ?? '',
          versions,
        })),
      };
    },
  );

  app.get<NameParams>(
    '/v1/pieces/:name',
    {
      schema: {
        tags: ['pieces'],
        summary:
          "One piece's versions: sha256, size, publish time, actions with their input schemas (JSON Schema), and isolate support.",
        security: BEARER,
        params: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
        response: { 200: { description: 'The piece.', ...fromZod(PieceDetailView) }, ...errors(401, 404) },
      },
    },
    async (request): Promise<z.infer<typeof PieceDetailView>> => {
      const versions = await deps.registry.versionsOf(request.params.name);
      return {
        name: request.params.name,
        latest: latestVersion(versions.map((v) => v.version)) ?? '',
        versions: versions.map(pieceVersionView),
      };
    },
  );
}

const BEARER = [{ apiKey: [] }];

const ERROR_BODY = fromZod(z.object({ error: z.object({ code: z.string(), message: z.string() }) }));

function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((status) => [status, { description: 'error', ...ERROR_BODY }]));
}

function fromZod(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    unrepresentable: 'any',
  });
  return rest;
}
