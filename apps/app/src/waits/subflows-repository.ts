import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';

/** A run's child as its views list it: the run, the parent's `flow` step path, its status. */
export interface ChildRun {
  id: string;
  path: string;
  status: string;
}

/**
 * The links between a run and the runs its `flow` steps started (migration 0016: runs'
 * parent_run_id, parent_path and depth, unique per parent and path; a waiting step's
 * `run_waits` row of kind `flow`).
 */
export interface SubflowsRepository {
  /** The run's sub-flow depth (0 for a top run), or null when there is no such run. */
  depthOf(runId: string): Promise<number | null>;
  /** The child a parent's step at `path` started already, if any. */
  childAt(parentRunId: string, path: string): Promise<string | null>;
  /** The parent's waiting point on its child, written before the child exists (a fast child's end finds it); an answered one is kept. */
  awaitChild(parentRunId: string, path: string, childRunId: string): Promise<void>;
  /**
   * A child's end as its parent's answer, when the parent waits for it and it was not answered:
   * the parent's id then (to resume it), else null.
   */
  answerParent(childRunId: string, value: unknown): Promise<string | null>;
  children(runId: string): Promise<ChildRun[]>;
}

export function createSubflowsRepository(pool: Pool): SubflowsRepository {
  return {
    async depthOf(runId) {
      const { rows } = await pool.query<{ depth: number }>('SELECT depth FROM runs WHERE id = $1', [runId]);
      return rows[0]?.depth ?? null;
    },

    async childAt(parentRunId, path) {
      const { rows } = await pool.query<{ id: string }>(
        'SELECT id FROM runs WHERE parent_run_id = $1 AND parent_path = $2',
        [parentRunId, path],
      );
      return rows[0]?.id ?? null;
    },

    async awaitChild(parentRunId, path, childRunId) {
      await pool.query(
        `INSERT INTO run_waits (run_id, path, kind, child_run_id) VALUES ($1, $2, 'flow', $3)
         ON CONFLICT (run_id, path) DO UPDATE SET child_run_id = EXCLUDED.child_run_id
           WHERE run_waits.answered_at IS NULL`,
        [parentRunId, path, childRunId],
      );
    },

    async answerParent(childRunId, value) {
      const { rows } = await pool.query<{ run_id: string }>(
        `UPDATE run_waits w SET value = $2, answered_at = now()
         FROM runs c
         WHERE c.id = $1 AND w.run_id = c.parent_run_id AND w.path = c.parent_path AND w.answered_at IS NULL
         RETURNING w.run_id`,
        [childRunId, jsonb(value)],
      );
      return rows[0]?.run_id ?? null;
    },

    async children(runId) {
      const { rows } = await pool.query<{ id: string; parent_path: string; status: string }>(
        'SELECT id, parent_path, status FROM runs WHERE parent_run_id = $1 ORDER BY created_at, id',
        [runId],
      );
      return rows.map((row) => ({ id: row.id, path: row.parent_path, status: row.status }));
    },
  };
}
