import type { Pool } from '../db/pool.ts';
import type { SealedValue } from './connection-cipher.ts';

/** A published flow version that references a connection. */
export interface ConnectionUse {
  flowId: string;
  flowVersionId: string;
}

/** What the API shows of a connection: never its value. */
export interface ConnectionSummary {
  name: string;
  createdAt: Date;
  updatedAt: Date;
  /** The flows whose published version references it. */
  usedBy: ConnectionUse[];
}

export interface SealedConnection extends SealedValue {
  name: string;
}

export interface ConnectionsRepository {
  /** False when the name is taken. */
  create(name: string, sealed: SealedValue): Promise<boolean>;
  /** False when there is no such connection. */
  update(name: string, sealed: SealedValue): Promise<boolean>;
  /**
   * Deletes it unless a flow's published version references it: 'in-use' with those versions,
   * 'missing' when there is no such connection.
   */
  delete(
    name: string,
  ): Promise<{ result: 'deleted' | 'missing' } | { result: 'in-use'; usedBy: ConnectionUse[] }>;
  list(): Promise<ConnectionSummary[]>;
  get(name: string): Promise<ConnectionSummary | null>;
  /** The sealed values of those of `names` that exist. */
  sealed(names: readonly string[]): Promise<SealedConnection[]>;
  /** The names among `names` that exist. */
  existing(names: readonly string[]): Promise<Set<string>>;
  /** Rows by the key that sealed them, for the start-up check and the rotation pass. */
  countByKey(): Promise<Map<string, number>>;
  /** Rows sealed under any key but `keyId`. */
  sealedUnderOtherKeys(keyId: string): Promise<SealedConnection[]>;
  /** Seals a row again, only if it is still sealed under `fromKeyId` (another app may have done it). */
  reseal(name: string, fromKeyId: string, sealed: SealedValue): Promise<void>;
}

interface Row {
  name: string;
  ciphertext: Buffer;
  iv: Buffer;
  auth_tag: Buffer;
  key_id: string;
}

interface SummaryRow {
  name: string;
  created_at: Date;
  updated_at: Date;
  used_by: ConnectionUse[] | null;
}

const toSealed = (row: Row): SealedConnection => ({
  name: row.name,
  ciphertext: row.ciphertext,
  iv: row.iv,
  authTag: row.auth_tag,
  keyId: row.key_id,
});

const toSummary = (row: SummaryRow): ConnectionSummary => ({
  name: row.name,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  usedBy: row.used_by ?? [],
});

/** The published versions of flows not deleted that reference connection $1. */
const USES = `
  SELECT f.id AS "flowId", v.id AS "flowVersionId"
  FROM flows f JOIN flow_versions v ON v.id = f.published_version_id
  WHERE f.deleted_at IS NULL AND c.name = ANY(v.connections)`;

const SUMMARY = `
  SELECT c.name, c.created_at, c.updated_at,
    (SELECT json_agg(u ORDER BY u."flowId") FROM (${USES}) u) AS used_by
  FROM connections c`;

export function createConnectionsRepository(pool: Pool): ConnectionsRepository {
  return {
    async create(name, sealed) {
      const result = await pool.query(
        `INSERT INTO connections (name, ciphertext, iv, auth_tag, key_id) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (name) DO NOTHING`,
        [name, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId],
      );
      return result.rowCount === 1;
    },

    async update(name, sealed) {
      const result = await pool.query(
        `UPDATE connections SET ciphertext = $2, iv = $3, auth_tag = $4, key_id = $5, updated_at = now()
         WHERE name = $1`,
        [name, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId],
      );
      return result.rowCount === 1;
    },

    async delete(name) {
      // One statement: a version published in between makes it refuse, not delete.
      const deleted = await pool.query(
        `DELETE FROM connections c WHERE c.name = $1 AND NOT EXISTS (${USES})`,
        [name],
      );
      if (deleted.rowCount === 1) return { result: 'deleted' };
      const summary = await this.get(name);
      if (summary === null) return { result: 'missing' };
      return { result: 'in-use', usedBy: summary.usedBy };
    },

    async list() {
      const { rows } = await pool.query<SummaryRow>(`${SUMMARY} ORDER BY c.name`);
      return rows.map(toSummary);
    },

    async get(name) {
      const { rows } = await pool.query<SummaryRow>(`${SUMMARY} WHERE c.name = $1`, [name]);
      return rows[0] === undefined ? null : toSummary(rows[0]);
    },

    async sealed(names) {
      if (names.length === 0) return [];
      const { rows } = await pool.query<Row>('SELECT * FROM connections WHERE name = ANY($1::text[])', [
        names,
      ]);
      return rows.map(toSealed);
    },

    async existing(names) {
      if (names.length === 0) return new Set();
      const { rows } = await pool.query<{ name: string }>(
        'SELECT name FROM connections WHERE name = ANY($1::text[])',
        [names],
      );
      return new Set(rows.map((row) => row.name));
    },

    async countByKey() {
      const { rows } = await pool.query<{ key_id: string; n: number }>(
        'SELECT key_id, count(*)::int AS n FROM connections GROUP BY key_id',
      );
      return new Map(rows.map((row) => [row.key_id, row.n]));
    },

    async sealedUnderOtherKeys(keyId) {
      const { rows } = await pool.query<Row>('SELECT * FROM connections WHERE key_id <> $1', [keyId]);
      return rows.map(toSealed);
    },

    async reseal(name, fromKeyId, sealed) {
      await pool.query(
        `UPDATE connections SET ciphertext = $3, iv = $4, auth_tag = $5, key_id = $6
         WHERE name = $1 AND key_id = $2`,
        [name, fromKeyId, sealed.ciphertext, sealed.iv, sealed.authTag, sealed.keyId],
      );
    },
  };
}
