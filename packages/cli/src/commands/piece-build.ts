import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildPieceArchive } from '@flowbox/pieces-build';
import { formatIssues, type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';
import { type ApiClient, unwrap } from '../api/client.ts';
import { CliError } from '../cli-error.ts';
import { refuseStaleBuild } from './piece-staleness.ts';

/** `flowbox piece build`: what `pnpm build` writes for a built-in piece, with the same code. */
export async function buildPiece(dir: string): Promise<{ manifest: PieceManifest; archiveBytes: number }> {
  try {
    const { manifest, written } = await buildPieceArchive(dir);
    const archive = written.find((file) => file.path.endsWith('piece.tgz'));
    return { manifest, archiveBytes: archive?.bytes ?? 0 };
  } catch (error) {
    throw new CliError(
      'PIECE_BUILD_FAILED',
      `${dir}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export interface PublishedPiece {
  name: string;
  version: string;
  /** 201: a new version; 200: this exact archive was published already. */
  created: boolean;
  ms: number;
  /** Whether the registry found it can run in a V8 isolate (no Node built-ins imported). */
  isolate: { supported: boolean; reason?: string | undefined };
}

/**
 * `flowbox piece publish`: sends the built `dist/` (build first) to `POST /v1/pieces`; refused
 * (PIECE_BUILD_STALE) when a source is newer than the archive.
 */
export async function publishPiece(api: ApiClient, dir: string): Promise<PublishedPiece> {
  const dist = join(dir, 'dist');
  const [manifestText, archive] = await Promise.all([
    readFile(join(dist, 'manifest.json'), 'utf8'),
    readFile(join(dist, 'piece.tgz')),
  ]).catch(() => {
    throw new CliError(
      'PIECE_NOT_BUILT',
      `${dist} has no manifest.json and piece.tgz: run \`flowbox piece build\` first`,
    );
  });
  await refuseStaleBuild(dir, join(dist, 'piece.tgz'));
  const parsed = PieceManifestSchema.safeParse(JSON.parse(manifestText));
  if (!parsed.success) {
    throw new CliError(
      'PIECE_NOT_BUILT',
      `${dist}/manifest.json is not a piece manifest: ${formatIssues(parsed.error.issues)}`,
    );
  }
  const manifest = parsed.data;
  const started = performance.now();
  const { status, data } = await unwrap(
    api.POST('/v1/pieces', { body: { manifest, archive: archive.toString('base64') } }),
    `publish ${manifest.name}@${manifest.version}`,
  );
  return {
    name: manifest.name,
    version: manifest.version,
    created: status === 201,
    ms: Math.round(performance.now() - started),
    isolate: data.piece.isolate,
  };
}
