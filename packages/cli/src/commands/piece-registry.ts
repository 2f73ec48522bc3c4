import { type ApiClient, unwrap } from '../api/client.ts';
import type { JsonSchema } from '../flow-types/json-schema-to-ts.ts';
import type { DescribedPieceVersion } from '../flow-types/pieces-declaration.ts';

export interface PieceListing {
  name: string;
  latest: string;
  versions: string[];
}

export async function listPieces(api: ApiClient): Promise<PieceListing[]> {
  const { data } = await unwrap(api.GET('/v1/pieces'), 'list pieces');
  return data.pieces;
}

/** Every version of every piece in the registry, with its actions' input schemas. */
export async function describePieces(
  api: ApiClient,
): Promise<{ versions: DescribedPieceVersion[]; latest: Map<string, string> }> {
  const pieces = await listPieces(api);
  const versions: DescribedPieceVersion[] = [];
  for (const piece of pieces) {
    const { data } = await unwrap(
      api.GET('/v1/pieces/{name}', { params: { path: { name: piece.name } } }),
      `read piece ${piece.name}`,
    );
    for (const version of data.versions) {
      versions.push({
        name: piece.name,
        version: version.version,
        actions: version.actions.map((action) => ({
          name: action.name,
          input: action.inputSchema as JsonSchema,
        })),
      });
    }
  }
  return { versions, latest: new Map(pieces.map((p) => [p.name, p.latest])) };
}
