import { type ApiClient, unwrap } from '../api/client.ts';
import { CliError } from '../cli-error.ts';
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
    // A yanked version cannot be pinned by a new flow version: no type for it.
    for (const version of data.versions.filter((v) => v.yankedAt === null)) {
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

/** `flowbox piece yank <name>@<version>`: nothing new pins it; flows pinned to it keep running it. */
export async function yankPiece(
  api: ApiClient,
  ref: string,
  force: boolean,
): Promise<{ name: string; version: string; yankedAt: string }> {
  const at = ref.lastIndexOf('@');
  if (at <= 0 || at === ref.length - 1) {
    throw new CliError('INVALID_ARGUMENT', `yank ${ref}: name the version as <name>@<version>`);
  }
  const [name, version] = [ref.slice(0, at), ref.slice(at + 1)];
  const { data } = await unwrap(
    api.DELETE('/v1/pieces/{name}/{version}', {
      params: { path: { name, version }, query: force ? { force: 'true' } : {} },
    }),
    `yank ${name}@${version}`,
  );
  return { name, version, yankedAt: data.piece.yankedAt ?? '' };
}
