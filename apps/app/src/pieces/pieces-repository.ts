import {
  type PieceActionInfo,
  PieceActionInfoSchema,
  type PieceManifest,
  PieceManifestSchema,
} from '@flowbox/protocol';
import { z } from 'zod';
import type { Pool } from '../db/pool.ts';

export interface PieceRecord {
  name: string;
  version: string;
  archiveKey: string;
  sha256: string;
  sizeBytes: number;
  manifest: PieceManifest;
  /** Node built-ins the module imports; null for a row published before the registry checked. */
  nodeBuiltins: string[] | null;
  /** Actions with their input schemas; null as for nodeBuiltins. */
  actions: PieceActionInfo[] | null;
  publishedAt: Date;
  /** When the version was yanked: flows pinned to it keep running it, nothing new may pin it. */
  yankedAt: Date | null;
}

export type NewPieceRecord = Omit<PieceRecord, 'publishedAt' | 'yankedAt'>;

/** A flow whose published version pins a piece version. */
export interface PieceUse {
  flowId: string;
  flowName: string;
  flowVersionId: string;
}

/** What a yank found: done (or done before), refused because flows pin it, or no such version. */
export type YankOutcome =
  | { result: 'yanked'; piece: PieceRecord }
  | { result: 'in-use'; usedBy: PieceUse[] }
  | { result: 'missing' };

/** What an insert found: the version is new, or already there (with the same content or not). */
export type InsertOutcome =
  | { outcome: 'created'; piece: PieceRecord }
  | { outcome: 'exists'; piece: PieceRecord };

export interface PiecesRepository {
  /**
   * Records a new version; a version is immutable, so an existing row is never changed, only
   * returned (the caller compares its sha256). Safe when several apps insert at once: the
   * primary key decides, and the loser reads the winner's row.
   */
  insert(piece: NewPieceRecord): Promise<InsertOutcome>;
  /** Fills in what publishing learns (nodeBuiltins, actions) on a row recorded before it did. */
  fillChecks(
    piece: Pick<PieceRecord, 'name' | 'version' | 'sha256' | 'nodeBuiltins' | 'actions'>,
  ): Promise<void>;
  list(): Promise<PieceRecord[]>;
  get(name: string, version: string): Promise<PieceRecord | null>;
  versionsOf(name: string): Promise<PieceRecord[]>;
  /**
   * Marks name@version yanked (kept if it was already) unless a flow's published version pins
   * it and `force` is false: one statement, so a flow published in between makes it refuse.
   */
  yank(name: string, version: string, force: boolean): Promise<YankOutcome>;
}

interface PieceRow {
  name: string;
  version: string;
  archive_key: string;
  sha256: string;
  size_bytes: number;
  manifest: unknown;
  node_builtins: string[] | null;
  actions: unknown;
  published_at: Date;
  yanked_at: Date | null;
}

/** The published versions of flows not deleted whose bundle pins piece $1 at version $2. */
const USES = `
  SELECT f.id AS "flowId", f.name AS "flowName", v.id AS "flowVersionId"
  FROM flows f JOIN flow_versions v ON v.id = f.published_version_id
  WHERE f.deleted_at IS NULL
    AND v.bundle_pieces @> jsonb_build_array(jsonb_build_object('name', $1::text, 'version', $2::text))`;

const ActionsSchema = z.array(PieceActionInfoSchema).nullable();

export function createPiecesRepository(pool: Pool): PiecesRepository {
  const get = async (name: string, version: string): Promise<PieceRecord | null> => {
    const { rows } = await pool.query<PieceRow>('SELECT * FROM pieces WHERE name = $1 AND version = $2', [
      name,
      version,
    ]);
    const [row] = rows;
    return row === undefined ? null : fromRow(row);
  };

  return {
    async insert(piece) {
      const { rows } = await pool.query<PieceRow>(
        `INSERT INTO pieces (name, version, archive_key, sha256, size_bytes, manifest, node_builtins, actions)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (name, version) DO NOTHING RETURNING *`,
        [
          piece.name,
          piece.version,
          piece.archiveKey,
          piece.sha256,
          piece.sizeBytes,
          JSON.stringify(piece.manifest),
          piece.nodeBuiltins,
          piece.actions === null ? null : JSON.stringify(piece.actions),
        ],
      );
      const [created] = rows;
      if (created !== undefined) return { outcome: 'created', piece: fromRow(created) };
      const existing = await pool.query<PieceRow>('SELECT * FROM pieces WHERE name = $1 AND version = $2', [
        piece.name,
        piece.version,
      ]);
      const [row] = existing.rows;
      if (row === undefined)
        throw new Error(`piece ${piece.name}@${piece.version} vanished after a conflict`);
      return { outcome: 'exists', piece: fromRow(row) };
    },

    async fillChecks(piece) {
      await pool.query(
        `UPDATE pieces SET node_builtins = $4, actions = $5
         WHERE name = $1 AND version = $2 AND sha256 = $3 AND (node_builtins IS NULL OR actions IS NULL)`,
        [piece.name, piece.version, piece.sha256, piece.nodeBuiltins, JSON.stringify(piece.actions)],
      );
    },

    async list() {
      const { rows } = await pool.query<PieceRow>(
        'SELECT * FROM pieces ORDER BY name, published_at, version',
      );
      return rows.map(fromRow);
    },

    get,

    async yank(name, version, force) {
      const { rows } = await pool.query<PieceRow>(
        `UPDATE pieces SET yanked_at = COALESCE(yanked_at, now())
         WHERE name = $1 AND version = $2 AND ($3 OR NOT EXISTS (${USES}))
         RETURNING *`,
        [name, version, force],
      );
      const [yanked] = rows;
      if (yanked !== undefined) return { result: 'yanked', piece: fromRow(yanked) };
      if ((await get(name, version)) === null) return { result: 'missing' };
      const uses = await pool.query<PieceUse>(`${USES} ORDER BY f.id`, [name, version]);
      return { result: 'in-use', usedBy: uses.rows };
    },

    async versionsOf(name) {
      const { rows } = await pool.query<PieceRow>(
        'SELECT * FROM pieces WHERE name = $1 ORDER BY published_at, version',
        [name],
      );
      return rows.map(fromRow);
    },
  };
}

function fromRow(row: PieceRow): PieceRecord {
  return {
    name: row.name,
    version: row.version,
    archiveKey: row.archive_key,
    sha256: row.sha256,
    sizeBytes: row.size_bytes,
    manifest: PieceManifestSchema.parse(row.manifest),
    nodeBuiltins: row.node_builtins,
    actions: ActionsSchema.parse(row.actions ?? null),
    publishedAt: row.published_at,
    yankedAt: row.yanked_at,
  };
}
