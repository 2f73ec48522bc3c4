import {
  type ErrorResponse,
  ErrorResponseSchema,
  FlowboxError,
  type FlowDefinition,
  FlowDefinitionSchema,
  formatIssues,
  type PieceRef,
  parseStored,
  type WebhookVerify,
  WebhookVerifySchema,
} from '@flowbox/protocol';
import type { PoolClient } from 'pg';
import type { z } from 'zod';
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
  /** The published trigger is a piece's polling trigger: its flow starts from polls, not webhooks. */
  triggerPolls: boolean;
  /** The published definition's `errorResponse`: what a sync caller of a failed run is answered. */
  errorResponse: ErrorResponse | null;
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

/** What publishing records of a version: its built bundle and the connections it references. */
export interface PublishRecord {
  bundle: FlowBundleRecord;
  connections: string[];
}

/** Checks and builds a new version's bundle (FlowPublisher.prepare); throwing refuses the publish. */
export type PrepareBundle = (version: FlowVersionRecord) => Promise<PublishRecord>;

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
  /**
   * Creates a flow and its version 1 in one transaction; null when the id is taken. With
   * `publish`, the version is published in the same transaction: when it throws, nothing stays.
   */
  createFlow(
    input: { id: string; name: string; definition: FlowDefinition },
    publish?: PrepareBundle,
  ): Promise<FlowVersionRecord | null>;
  /** Adds a version; with `publish`, publishes it in the same transaction (as createFlow). */
  addVersion(flowId: string, definition: FlowDefinition, publish?: PrepareBundle): Promise<FlowVersionRecord>;
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
  definition: storedDefinition(row),
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
/**
 * A stored definition loads even when it holds keys this version does not know (written by a
 * newer app, or a field since removed): they are dropped, where a new definition is refused.
 */
function storedDefinition(row: VersionRow): FlowDefinition {
  const parsed = parseStored(FlowDefinitionSchema, row.definition);
  if (!parsed.success) {
    throw new FlowboxError(
      'INTERNAL',
      `flow version ${row.id} holds an invalid definition: ${formatIssues(parsed.error.issues)}`,
    );
  }
  return parsed.data;
}

function stored<S extends z.ZodType>(schema: S, value: unknown, field: string): z.infer<S> {
  const parsed = parseStored(schema, value);
  if (!parsed.success) {
    throw new FlowboxError('INTERNAL', `invalid stored ${field}: ${formatIssues(parsed.error.issues)}`);
  }
  return parsed.data;
}

const INSERT_VERSION = `
  INSERT INTO flow_versions (id, flow_id, number, definition)
  SELECT $1 || '-v' || n, $1, n, $2
  FROM (SELECT coalesce(max(number), 0) + 1 AS n FROM flow_versions WHERE flow_id = $1) next
  RETURNING *`;

type Queryable = Pick<Pool, 'query'> | PoolClient;

async function recordPublish(db: Queryable, flowVersionId: string, record: PublishRecord): Promise<void> {
  const { bundle, connections } = record;
  // One statement, so a version is never published without its bundle.
  await db.query(
    `WITH v AS (
       UPDATE flow_versions
       SET bundle_key = $2, bundle_sha256 = $3, bundle_size = $4, bundle_pieces = $5,
           connections = $6::text[], published_at = coalesce(published_at, now())
       WHERE id = $1 RETURNING flow_id)
     UPDATE flows SET published_version_id = $1, updated_at = now(),
       schedule_since = CASE WHEN published_version_id IS DISTINCT FROM $1 THEN now() ELSE schedule_since END
     FROM v WHERE flows.id = v.flow_id`,
    [flowVersionId, bundle.key, bundle.sha256, bundle.sizeBytes, JSON.stringify(bundle.pieces), connections],
  );
}

/** Publishes a version inserted in this transaction, when asked; its errors roll the insert back. */
async function publishNew(
  client: PoolClient,
  version: FlowVersionRecord,
  publish: PrepareBundle | undefined,
): Promise<FlowVersionRecord> {
  if (publish === undefined) return version;
  const record = await publish(version);
  await recordPublish(client, version.id, record);
  return { ...version, ...record, publishedAt: new Date() };
}

/** Runs `work` in a transaction: committed when it returns, rolled back when it throws. */
async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

export function createFlowsRepository(pool: Pool): FlowsRepository {
  return {
    async findPublished(flowId) {
      const { rows } = await pool.query<
        FlowRow & {
          run_when_caller_gone: boolean;
          verify: unknown;
          error_response: unknown;
          trigger_piece: string | null;
          trigger_polls: boolean;
        }
      >(
        `SELECT f.id, f.published_version_id, f.enabled,
           coalesce(v.definition->'runWhenCallerGone' = 'true'::jsonb, false) AS run_when_caller_gone,
           v.definition->'trigger'->'verify' AS verify, v.definition->'errorResponse' AS error_response,
           v.definition->'trigger'->>'piece' AS trigger_piece,
           EXISTS (SELECT 1 FROM pieces p WHERE p.name = v.definition->'trigger'->>'piece'
             AND p.version = (SELECT e->>'version' FROM jsonb_array_elements(v.bundle_pieces) e
                              WHERE e->>'name' = p.name LIMIT 1)
             AND coalesce(p.manifest->'polling', '[]'::jsonb) ? (v.definition->'trigger'->>'trigger')) AS trigger_polls
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
        verify: row.verify == null ? null : stored(WebhookVerifySchema, row.verify, 'trigger.verify'),
        errorResponse:
          row.error_response == null
            ? null
            : stored(ErrorResponseSchema, row.error_response, 'errorResponse'),
        triggerPiece: row.trigger_piece ?? '',
        triggerPolls: row.trigger_polls === true,
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

    async createFlow({ id, name, definition }, publish) {
      return inTransaction(pool, async (client) => {
        const inserted = await client.query(
          'INSERT INTO flows (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
          [id, name],
        );
        if (inserted.rowCount === 0) return null;
        const { rows } = await client.query<VersionRow>(INSERT_VERSION, [id, jsonb(definition)]);
        return publishNew(client, toVersion(rows[0] as VersionRow), publish);
      });
    },

    async addVersion(flowId, definition, publish) {
      if (publish === undefined) {
        const { rows } = await pool.query<VersionRow>(INSERT_VERSION, [flowId, jsonb(definition)]);
        return toVersion(rows[0] as VersionRow);
      }
      return inTransaction(pool, async (client) => {
        const { rows } = await client.query<VersionRow>(INSERT_VERSION, [flowId, jsonb(definition)]);
        return publishNew(client, toVersion(rows[0] as VersionRow), publish);
      });
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
      await recordPublish(pool, flowVersionId, { bundle, connections: [...connections] });
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
