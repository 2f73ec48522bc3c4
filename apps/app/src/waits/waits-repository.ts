import type { WaitPointKind } from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';

/** A run as a wait URL sees it: where it is, and the flow version whose wait steps it names. */
export interface WaitRun {
  status: string;
  flowVersionId: string;
  finished: boolean;
}

/**
 * The `run_waits` rows an answer writes (migration 0016): one per run and waiting path. A row
 * may be written before the run reaches its wait (an early request, a fast child's end); the
 * pause then finds it answered and resumes at once.
 */
export interface WaitsRepository {
  run(runId: string): Promise<WaitRun | null>;
  /**
   * Keeps `value` as the answer of the wait at `path`, once: null when it was answered already
   * (one conditional statement, so of two concurrent calls exactly one gets an answer). `waiting`:
   * the run's pause had written the row (it waits there now); false when the answer came first.
   */
  answer(
    runId: string,
    path: string,
    kind: WaitPointKind,
    value: unknown,
  ): Promise<{ waiting: boolean } | null>;
  /** Names the app whose caller waits for the run's next answer (a `/sync` wait URL). */
  answerTo(runId: string, syncInstanceId: string): Promise<void>;
}

export function createWaitsRepository(pool: Pool): WaitsRepository {
  return {
    async run(runId) {
      const { rows } = await pool.query<{ status: string; flow_version_id: string; finished: boolean }>(
        'SELECT status, flow_version_id, finished_at IS NOT NULL AS finished FROM runs WHERE id = $1',
        [runId],
      );
      const row = rows[0];
      return row === undefined
        ? null
        : { status: row.status, flowVersionId: row.flow_version_id, finished: row.finished };
    },

    async answer(runId, path, kind, value) {
      // xmax is 0 on a row this statement inserted, set on one it updated (the pause's).
      const { rows } = await pool.query<{ waiting: boolean }>(
        `INSERT INTO run_waits (run_id, path, kind, value, answered_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (run_id, path) DO UPDATE SET value = EXCLUDED.value, answered_at = now()
           WHERE run_waits.answered_at IS NULL
         RETURNING xmax <> 0 AS waiting`,
        [runId, path, kind, jsonb(value)],
      );
      const row = rows[0];
      return row === undefined ? null : { waiting: row.waiting };
    },

    async answerTo(runId, syncInstanceId) {
      await pool.query('UPDATE runs SET sync_instance_id = $2 WHERE id = $1 AND finished_at IS NULL', [
        runId,
        syncInstanceId,
      ]);
    },
  };
}
