import { errorExample, PIECE_VERSION_EXAMPLE } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import { ErrorView } from '../views/error-view.ts';
import {
  PieceParams,
  PieceVersionParams,
  PublishPieceBody,
  YankPieceQuery,
} from '../views/piece-requests.ts';
import { PieceDetailView, PieceListView, PublishedPieceView, YankedPieceView } from '../views/piece-view.ts';
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
      "The manifest and archive as the piece's build wrote them. The names of the built-in pieces (`webhook`, `http`, `math-helper`, every package the app ships) and every name starting `flowbox-` are reserved: 403 PIECE_NAME_RESERVED. Checked before anything is stored: the manifest, the archive, unpacked with the reader and rules a worker uses (size packed and unpacked, gzip, a tar of regular files and directories with relative paths, the entry), and the module, loaded in a child process with no environment, no network and a deadline (one that throws, exits, hangs or uses top-level await is refused). 201 when new; 200 when the same name@version with the same archive is there; 409 when it is there with another. Versions are immutable. A few publishes are checked at once (PIECE_PUBLISH_CONCURRENCY) and a few wait; past them 503 PIECE_PUBLISH_BUSY.",
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
      403: {
        description: "The name is a built-in piece's or starts `flowbox-` (PIECE_NAME_RESERVED).",
        view: ErrorView,
      },
      409: {
        description: 'name@version is published with another archive (PIECE_VERSION_EXISTS).',
        view: ErrorView,
      },
      413: {
        description: 'The body is over twice PIECE_ARCHIVE_MAX_BYTES in base64 (BODY_TOO_LARGE).',
        view: ErrorView,
      },
      503: {
        description:
          'PIECE_PUBLISH_CONCURRENCY publishes are being checked and PIECE_PUBLISH_MAX_QUEUED wait (PIECE_PUBLISH_BUSY); retry later.',
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
  yankPiece: {
    operationId: 'yankPiece',
    method: 'DELETE',
    url: '/v1/pieces/:name/:version',
    tag: 'pieces',
    summary: 'Yanks a piece version: nothing new pins it, flows pinned to it keep running it.',
    description:
      'The version stays in the registry (its archive too): published flow versions that pin it keep running it, but no flow version published from now on can pin it, and a flow that names no version gets the latest one not yanked. A version the published version of a flow pins is refused 409 PIECE_IN_USE naming those flows, unless `?force=true`. Yanking a yanked version answers it unchanged. Yanks are final: publish a new version to replace one.',
    auth: 'apiKey',
    params: PieceVersionParams,
    query: YankPieceQuery,
    responses: {
      200: { description: 'Yanked (or yanked already).', view: YankedPieceView },
      ...errors(401, 404),
      409: {
        description:
          'Published flow versions pin it and `force` is not set (PIECE_IN_USE, naming the flows).',
        view: ErrorView,
      },
    },
    example: {
      status: 409,
      response: errorExample(
        'PIECE_IN_USE',
        'greeter@1.0.0 is pinned by the published versions of flows orders (fl_1); they would keep running it: yank with ?force=true, or publish those flows with another version first',
      ),
    },
  },
} as const satisfies Record<string, ApiOperation>;
