import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { type ObjectStorage, objectKeys } from '../storage/object-storage.ts';
import type { PieceCatalog } from './piece-catalog.ts';
import type { PieceRecord, PiecesRepository } from './pieces-repository.ts';

/**
 * Uploads every catalog piece's archive to S3 under its sha256 and records it, so workers can
 * fetch the exact bytes the app vouches for. Runs at every app start; re-uploading an
 * unchanged archive writes the same key with the same bytes.
 */
export async function publishPieces(deps: {
  catalog: PieceCatalog;
  storage: ObjectStorage;
  pieces: PiecesRepository;
}): Promise<Map<string, PieceRecord>> {
  const published = new Map<string, PieceRecord>();
  for (const { manifest, archivePath } of deps.catalog.all) {
    const bytes = await readFile(archivePath);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const record: PieceRecord = {
      name: manifest.name,
      version: manifest.version,
      archiveKey: objectKeys.pieceArchive(manifest.name, manifest.version, sha256),
      sha256,
      sizeBytes: bytes.byteLength,
      manifest,
    };
    await deps.storage.put(record.archiveKey, bytes, 'application/gzip');
    await deps.pieces.upsert(record);
    published.set(`${record.name}@${record.version}`, record);
  }
  return published;
}
