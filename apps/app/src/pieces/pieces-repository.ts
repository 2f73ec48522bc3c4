import { type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';
import type { Pool } from '../db/pool.ts';

export interface PieceRecord {
  name: string;
  version: string;
  archiveKey: string;
  sha256: string;
  sizeBytes: number;
  manifest: PieceManifest;
}

export interface PiecesRepository {
  /** Records a published archive; a rebuilt archive of the same version replaces the old one. */
  upsert(piece: PieceRecord): Promise<void>;
  list(): Promise<PieceRecord[]>;
}

interface PieceRow {
  name: string;
  version: string;
  archive_key: string;
  sha256: string;
  size_bytes: number;
  manifest: unknown;
}

export function createPiecesRepository(pool: Pool): PiecesRepository {
  return {
    async upsert(piece) {
      await pool.query(
        `INSERT INTO pieces (name, version, archive_key, sha256, size_bytes, manifest) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (name, version) DO UPDATE
         SET archive_key = $3, sha256 = $4, size_bytes = $5, manifest = $6, published_at = now()
         WHERE pieces.sha256 <> $4`,
        [
          piece.name,
          piece.version,
          piece.archiveKey,
          piece.sha256,
          piece.sizeBytes,
          JSON.stringify(piece.manifest),
        ],
      );
    },

    async list() {
      const { rows } = await pool.query<PieceRow>('SELECT * FROM pieces ORDER BY name, version');
      return rows.map((row) => ({
        name: row.name,
        version: row.version,
        archiveKey: row.archive_key,
        sha256: row.sha256,
        sizeBytes: row.size_bytes,
        manifest: PieceManifestSchema.parse(row.manifest),
      }));
    },
  };
}
