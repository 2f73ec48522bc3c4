import type { TriggerPayload } from '@flowbox/protocol';
import type { Pool } from '../db/pool.ts';

/** What a re-run starts from: the run's flow version and its kept trigger request. */
export type RerunSource =
  | { kind: 'found'; id: string; flowId: string; flowVersionId: string; trigger: TriggerPayload }
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

/** What a re-run of `runId` starts from, or why there is none. */
export async function queryRerunSource(pool: Pool, runId: string): Promise<RerunSource> {
  const { rows } = await pool.query<{
    id: string;
    flow_id: string;
    flow_version_id: string;
    trigger: TriggerPayload | null;
  }>('SELECT id, flow_id, flow_version_id, trigger FROM runs WHERE id = $1', [runId]);
  const row = rows[0];
  if (row !== undefined) {
    if (row.trigger === null) return { kind: 'no-trigger' };
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
