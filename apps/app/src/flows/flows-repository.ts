import {
  type FlowDefinition,
  FlowDefinitionSchema,
  type PieceRef,
  type WebhookVerify,
  WebhookVerifySchema,
} from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';

export interface PublishedFlow {
  flowId: string;
  flowVersionId: string;
  enabled: boolean;
  /** The published definition's `runWhenCallerGone`: run a sync run whose caller has left. */
  runWhenCallerGone: boolean;
  /** The published definition's `trigger.verify`: how its webhooks' senders are checked, if at all. */
  verify: WebhookVerify | null;
  /** The published definition's trigger piece: `schedule` flows start from ticks, not webhooks. */
  triggerPiece: string;
}

export interface FlowBundleRecord {
  key: string;
  sha256: string;
  sizeBytes: number;
  pieces: PieceRef[];
}

export interface FlowVersionRecord {
  id: string;
  flowId: string;
  number: number;
  definition: FlowDefinition;
  bundle: FlowBundleRecord | null;
  /** The connections the version references, recorded at publish (empty before). */
  connections: string[];
  createdAt: Date;
  publishedAt: Date | null;
}

/** A published version's trigger, as the flow lists show it. */
export interface FlowTriggerRecord {
  piece: string;
  trigger: string;
  input: Record<string, unknown>;
}

export interface FlowRecord {
  id: string;
  name: string;
  enabled: boolean;
  publishedVersionId: string | null;
  trigger: FlowTriggerRecord | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface FlowsRepository {
  /** The flow's published version, or null when the flow does not exist or has none. */
  findPublished(flowId: string): Promise<PublishedFlow | null>;
  getFlow(flowId: string): Promise<FlowRecord | null>;
  listFlows(): Promise<FlowRecord[]>;
  /** Creates a flow and its version 1 in one transaction; false when the id is taken. */
  createFlow(input: {
    id: string;
    name: string;
    definition: FlowDefinition;
  }): Promise<FlowVersionRecord | null>;
  addVersion(flowId: string, definition: FlowDefinition): Promise<FlowVersionRecord>;
  getVersion(flowVersionId: string): Promise<FlowVersionRecord | null>;
  listVersions(flowId: string): Promise<FlowVersionRecord[]>;
  /** Records a built bundle and the connections it references, and makes its version the published one. */
  publish(flowVersionId: string, bundle: FlowBundleRecord, connections: readonly string[]): Promise<void>;
  update(
    flowId: string,
    changes: { name?: string | undefined; enabled?: boolean | undefined },
  ): Promise<FlowRecord | null>;
  /**
   * Deletes a flow, softly: the row stays (its id stays taken) with its versions, which its runs
   * reference, but no read or webhook finds it again. False when there is no such flow.
   */
  delete(flowId: string): Promise<boolean>;
}

interface FlowRow {
  id: string;
  name: string;
  enabled: boolean;
  published_version_id: string | null;
  trigger?: { piece: string; trigger: string; input?: Record<string, unknown> } | null;
  created_at: Date;
  updated_at: Date;
}

interface VersionRow {
  id: string;
  flow_id: string;
  number: number;
  definition: unknown;
  bundle_key: string | null;
  bundle_sha256: string | null;
  bundle_size: number | null;
  bundle_pieces: PieceRef[] | null;
  connections: string[] | null;
  created_at: Date;
  published_at: Date | null;
}

const toFlow = (row: FlowRow): FlowRecord => ({
  id: row.id,
  name: row.name,
  enabled: row.enabled,
  publishedVersionId: row.published_version_id,
  trigger:
    row.trigger == null
      ? null
      : { piece: row.trigger.piece, trigger: row.trigger.trigger, input: row.trigger.input ?? {} },
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const toVersion = (row: VersionRow): FlowVersionRecord => ({
  id: row.id,
  flowId: row.flow_id,
  number: row.number,
  definition: FlowDefinitionSchema.parse(row.definition),
  bundle:
    row.bundle_key === null || row.bundle_sha256 === null
      ? null
      : {
          key: row.bundle_key,
          sha256: row.bundle_sha256,
          sizeBytes: row.bundle_size ?? 0,
          pieces: row.bundle_pieces ?? [],
        },
  connections: row.connections ?? [],
  createdAt: row.created_at,
  publishedAt: row.published_at,
});

/** A flow's columns with its published version's trigger. */
const WITH_TRIGGER = `SELECT f.*, v.definition->'trigger' AS trigger
  FROM flows f LEFT JOIN flow_versions v ON v.id = f.published_version_id`;

const INSERT_VERSION = `
  INSERT INTO flow_versions (id, flow_id, number, definition)
  SELECT $1 || '-v' || n, $1, n, $2
  FROM (SELECT coalesce(max(number), 0) + 1 AS n FROM flow_versions WHERE flow_id = $1) next
  RETURNING *`;

export function createFlowsRepository(pool: Pool): FlowsRepository {
  return {
    async findPublished(flowId) {
      const { rows } = await pool.query<
        FlowRow & { run_when_caller_gone: boolean; verify: unknown; trigger_piece: string | null }
      >(
        `SELECT f.id, f.published_version_id, f.enabled,
           coalesce(v.definition->'runWhenCallerGone' = 'true'::jsonb, false) AS run_when_caller_gone,
           v.definition->'trigger'->'verify' AS verify, v.definition->'trigger'->>'piece' AS trigger_piece
         FROM flows f LEFT JOIN flow_versions v ON v.id = f.published_version_id WHERE f.id = $1 AND f.deleted_at IS NULL`,
        [flowId],
      );
      const row = rows[0];
      if (row === undefined || row.published_version_id === null) return null;
      return {
        flowId: row.id,
        flowVersionId: row.published_version_id,
        enabled: row.enabled,
        runWhenCallerGone: row.run_when_caller_gone,
        verify: row.verify == null ? null : WebhookVerifySchema.parse(row.verify),
        triggerPiece: row.trigger_piece ?? '',
      };
    },

    async getFlow(flowId) {
      const { rows } = await pool.query<FlowRow>(`${WITH_TRIGGER} WHERE f.id = $1 AND f.deleted_at IS NULL`, [
        flowId,
      ]);
      return rows[0] === undefined ? null : toFlow(rows[0]);
    },

    async listFlows() {
      const { rows } = await pool.query<FlowRow>(
        `${WITH_TRIGGER} WHERE f.deleted_at IS NULL ORDER BY f.created_at, f.id`,
      );
      return rows.map(toFlow);
    },

    async createFlow({ id, name, definition }) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const inserted = await client.query(
          'INSERT INTO flows (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
          [id, name],
        );
        if (inserted.rowCount === 0) {
          await client.query('ROLLBACK');
          return null;
        }
        const { rows } = await client.query<VersionRow>(INSERT_VERSION, [id, jsonb(definition)]);
        await client.query('COMMIT');
        return toVersion(rows[0] as VersionRow);
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },

    async addVersion(flowId, definition) {
      const { rows } = await pool.query<VersionRow>(INSERT_VERSION, [flowId, jsonb(definition)]);
      return toVersion(rows[0] as VersionRow);
    },

    async getVersion(flowVersionId) {
      const { rows } = await pool.query<VersionRow>('SELECT * FROM flow_versions WHERE id = $1', [
        flowVersionId,
      ]);
      return rows[0] === undefined ? null : toVersion(rows[0]);
    },

    async listVersions(flowId) {
      const { rows } = await pool.query<VersionRow>(
        'SELECT * FROM flow_versions WHERE flow_id = $1 ORDER BY number',
        [flowId],
      );
      return rows.map(toVersion);
    },

    async publish(flowVersionId, bundle, connections) {
      // One statement, so a version is never published without its bundle.
      await pool.query(
        `WITH v AS (
           UPDATE flow_versions
           SET bundle_key = $2, bundle_sha256 = $3, bundle_size = $4, bundle_pieces = $5,
               connections = $6::text[], published_at = coalesce(published_at, now())
           WHERE id = $1 RETURNING flow_id)
         UPDATE flows SET published_version_id = $1, updated_at = now(),
           schedule_since = CASE WHEN published_version_id IS DISTINCT FROM $1 THEN now() ELSE schedule_since END
         FROM v WHERE flows.id = v.flow_id`,
        [
          flowVersionId,
          bundle.key,
          bundle.sha256,
          bundle.sizeBytes,
          JSON.stringify(bundle.pieces),
          connections,
        ],
      );
    },

    async update(flowId, { name, enabled }) {
      const { rows } = await pool.query<FlowRow>(
        `WITH f AS (
           UPDATE flows SET name = coalesce($2, name), enabled = coalesce($3, enabled), updated_at = now(),
             schedule_since = CASE WHEN $3 AND NOT enabled THEN now() ELSE schedule_since END
           WHERE id = $1 AND deleted_at IS NULL RETURNING *)
         SELECT f.*, v.definition->'trigger' AS trigger FROM f LEFT JOIN flow_versions v ON v.id = f.published_version_id`,
        [flowId, name ?? null, enabled ?? null],
      );
      return rows[0] === undefined ? null : toFlow(rows[0]);
    },

    async delete(flowId) {
      const result = await pool.query(
        'UPDATE flows SET deleted_at = now(), updated_at = now() WHERE id = $1 AND deleted_at IS NULL',
        [flowId],
      );
      return result.rowCount === 1;
    },
  };
}
