import type { TriggerPayload } from '@flowbox/protocol';
import type { Pool } from '../db/pool.ts';

/** Which flow version a re-run runs: the run's own, or its flow's published one now. */
export type RerunVersion = 'run' | 'latest';

/** What a re-run starts from: the flow version it runs and the run's kept trigger request. */
export type RerunSource =
  | { kind: 'found'; id: string; flowId: string; flowVersionId: string; trigger: TriggerPayload }
  /** `latest` asked for, and the run's flow has no published version (it was deleted). */
  | { kind: 'no-published-version'; flowId: string }
  /** The run is there but its trigger is not (accepted before migration 0005 kept it). */
  | { kind: 'no-trigger' }
  /** Retention deleted the run (a tombstone says it was there). */
  | { kind: 'removed' }
  | { kind: 'missing' };

/** The runs started as re-runs of `runId`, oldest first. */
export async function queryReruns(pool: Pool, runId: string): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    'SELECT id FROM runs WHERE rerun_of = $1 ORDER BY created_at, id',
    [runId],
  );
  return rows.map((row) => row.id);
}

/** The run of its flow's error flow that `runId`'s failure started (runs_caused_by), if any. */
export async function queryErrorRun(pool: Pool, runId: string): Promise<string | null> {
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM runs WHERE caused_by = $1', [runId]);
  return rows[0]?.id ?? null;
}

/** What a re-run of `runId` on `version` starts from, or why there is none. */
export async function queryRerunSource(
  pool: Pool,
  runId: string,
  version: RerunVersion = 'run',
): Promise<RerunSource> {
  const { rows } = await pool.query<{
    id: string;
    flow_id: string;
    flow_version_id: string | null;
    trigger: TriggerPayload | null;
  }>(
    `SELECT r.id, r.flow_id, r.trigger,
       CASE WHEN $2 THEN f.published_version_id ELSE r.flow_version_id END AS flow_version_id
     FROM runs r LEFT JOIN flows f ON f.id = r.flow_id AND f.deleted_at IS NULL WHERE r.id = $1`,
    [runId, version === 'latest'],
  );
  const row = rows[0];
  if (row !== undefined) {
    if (row.trigger === null) return { kind: 'no-trigger' };
    if (row.flow_version_id === null) return { kind: 'no-published-version', flowId: row.flow_id };
    return {
      kind: 'found',
      id: row.id,
      flowId: row.flow_id,
      flowVersionId: row.flow_version_id,
      trigger: row.trigger,
    };
  }
  const gone = await pool.query('SELECT 1 FROM run_tombstones WHERE id = $1', [runId]);
  return gone.rowCount === 1 ? { kind: 'removed' } : { kind: 'missing' };
}
