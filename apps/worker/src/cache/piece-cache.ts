import { readFileSync, statSync } from 'node:fs';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FlowboxError, type PieceDownload, PieceManifestSchema, parseMessage } from '@flowbox/protocol';
import { z } from 'zod';
import { downloadVerified, type FetchFn } from './artifact-download.ts';
import type { CachedArtifact } from './bundle-cache.ts';
import { type CacheLayout, renameDirIntoPlace } from './cache-layout.ts';
import { extractArchive } from './tar-extract.ts';

/** Written last into an unpacked piece: its presence means the directory is complete. */
export const PIECE_MARKER = '.flowbox-complete.json';

const MarkerSchema = z.object({
  version: z.literal(1),
  sha256: z.string(),
  files: z.array(z.object({ path: z.string(), size: z.number().int().nonnegative() })),
});
type Marker = z.infer<typeof MarkerSchema>;

export interface PieceCacheOptions {
  layout: CacheLayout;
  fetch: FetchFn;
  fetchTimeoutMs: number;
}

/**
 * Piece archives by name, version and hash, unpacked. A hit reads the marker and stats the files
 * it lists (the archive was verified by hash when it was unpacked); a missing or truncated file
 * or a missing marker makes it a miss, and the archive is fetched and unpacked again.
 */
export function createPieceCache(options: PieceCacheOptions) {
  const { layout } = options;

  const unpack = async (piece: PieceDownload, target: string): Promise<void> => {
    const label = `piece archive ${piece.name}@${piece.version}`;
    const archive = await downloadVerified({
      fetch: options.fetch,
      artifact: piece,
      label,
      timeoutMs: options.fetchTimeoutMs,
    });
    const tmpDir = await layout.tmpPath(path.basename(target));
    try {
      const files = await extractArchive(archive, tmpDir, label);
      await checkManifest(tmpDir, piece, label);
      const marker: Marker = {
        version: 1,
        sha256: piece.sha256,
        files: await Promise.all(
          files.map(async (file) => ({ path: file, size: (await stat(path.join(tmpDir, file))).size })),
        ),
      };
      await writeFile(path.join(tmpDir, PIECE_MARKER), JSON.stringify(marker));
      // A broken entry under the final name would block the rename.
      await rm(target, { recursive: true, force: true });
      const placed = await renameDirIntoPlace(tmpDir, target);
      if (placed === 'raced' && !(await holds(target, piece))) {
        throw new FlowboxError('PROVISION_FAILED', `${label}: another process left a broken ${target}`);
      }
    } finally {
      await rm(tmpDir, { recursive: true, force: true });
    }
  };

  return {
    async ensure(piece: PieceDownload): Promise<CachedArtifact> {
      const dir = layout.pieceDir(piece.name, piece.version, piece.sha256);
      if (await holds(dir, piece)) return { path: dir, outcome: 'hit' };
      await unpack(piece, dir);
      return { path: dir, outcome: 'miss' };
    },
  };
}

/** Synchronous for the reason bundle-cache.ts gives: a marker and a few stats before every job. */
async function holds(dir: string, piece: PieceDownload): Promise<boolean> {
  let marker: Marker;
  try {
    const parsed = parseMessage(MarkerSchema, JSON.parse(readFileSync(path.join(dir, PIECE_MARKER), 'utf8')));
    if (!parsed.ok || parsed.value.sha256 !== piece.sha256) return false;
    marker = parsed.value;
  } catch {
    return false;
  }
  return marker.files.every(
    (file) => statSync(path.join(dir, file.path), { throwIfNoEntry: false })?.size === file.size,
  );
}

/** The archive must hold the piece the app said it is, in the layout the engine loads. */
async function checkManifest(dir: string, piece: PieceDownload, label: string): Promise<void> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8'));
  } catch (error) {
    throw new FlowboxError('PROVISION_FAILED', `${label}: no readable manifest.json: ${String(error)}`);
  }
  const parsed = parseMessage(PieceManifestSchema, raw);
  if (!parsed.ok) throw new FlowboxError('PROVISION_FAILED', `${label}: bad manifest.json: ${parsed.error}`);
  if (parsed.value.name !== piece.name || parsed.value.version !== piece.version) {
    throw new FlowboxError(
      'PROVISION_FAILED',
      `${label}: the archive holds ${parsed.value.name}@${parsed.value.version}`,
    );
  }
  const entry = await stat(path.join(dir, parsed.value.entry)).catch(() => undefined);
  if (entry?.isFile() !== true) {
    throw new FlowboxError('PROVISION_FAILED', `${label}: no ${parsed.value.entry} beside manifest.json`);
  }
}
