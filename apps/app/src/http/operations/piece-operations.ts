import { PIECE_VERSION_EXAMPLE } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import { ErrorView } from '../views/error-view.ts';
import { PieceParams, PublishPieceBody } from '../views/piece-requests.ts';
import { PieceDetailView, PieceListView, PublishedPieceView } from '../views/piece-view.ts';
import { errors } from './responses.ts';

/** The piece registry (behind the API key). */
export const PIECE_OPERATIONS = {
  publishPiece: {
    operationId: 'publishPiece',
    method: 'POST',
    url: '/v1/pieces',
    tag: 'pieces',
    summary: 'Publishes a built piece as name@version.',
    description:
      "The manifest and archive as the piece's build wrote them. Checked before anything is stored: the manifest, the archive (size, gzip, a tar of regular files with relative paths, the entry), and the module, loaded in a child process with no environment, no network and a deadline (one that throws, exits, hangs or uses top-level await is refused). 201 when new; 200 when the same name@version with the same archive is there; 409 when it is there with another. Versions are immutable.",
    auth: 'apiKey',
    body: PublishPieceBody,
    responses: {
      200: { description: 'Already published with this archive: nothing changed.', view: PublishedPieceView },
      201: { description: 'Published.', view: PublishedPieceView },
      400: {
        description: 'The piece is refused (INVALID_PIECE, naming the problem); nothing is stored.',
        view: ErrorView,
      },
      ...errors(401),
      409: {
        description: 'name@version is published with another archive (PIECE_VERSION_EXISTS).',
        view: ErrorView,
      },
      413: {
        description: 'The body is over twice PIECE_ARCHIVE_MAX_BYTES in base64 (BODY_TOO_LARGE).',
        view: ErrorView,
      },
    },
    example: {
      request: {
        manifest: { name: 'greeter', version: '1.0.0', entry: 'index.mjs', actions: ['greet'], triggers: [] },
        archive: 'H4sIAAAAAAAAA+3BAQ0AAADCoPdPbQ8HFAAAAAAAAAAA',
      },
      status: 201,
      response: { piece: PIECE_VERSION_EXAMPLE },
    },
  },
  listPieces: {
    operationId: 'listPieces',
    method: 'GET',
    url: '/v1/pieces',
    tag: 'pieces',
    summary: 'Every published piece: its versions and the latest.',
    auth: 'apiKey',
    responses: { 200: { description: 'The pieces.', view: PieceListView }, ...errors(401) },
    example: {
      status: 200,
      response: { pieces: [{ name: 'greeter', latest: '1.0.0', versions: ['1.0.0'] }] },
    },
  },
  getPiece: {
    operationId: 'getPiece',
    method: 'GET',
    url: '/v1/pieces/:name',
    tag: 'pieces',
    summary:
      "One piece's versions: sha256, size, publish time, actions with their input schemas (JSON Schema) and whether it can run in an isolate.",
    auth: 'apiKey',
    params: PieceParams,
    responses: { 200: { description: 'The piece.', view: PieceDetailView }, ...errors(401, 404) },
    example: {
      status: 200,
      response: { name: 'greeter', latest: '1.0.0', versions: [PIECE_VERSION_EXAMPLE] },
    },
  },
} as const satisfies Record<string, ApiOperation>;
