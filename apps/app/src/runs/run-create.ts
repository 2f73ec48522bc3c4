import {
  FlowboxError,
  parseMessage,
  type SyncMessage,
  SyncMessageSchema,
  type TriggerPayload,
} from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
import type { RunSource } from './run-record.ts';

/** What a webhook records of a run it accepts: all that enqueueing its job again needs. */
export interface NewRun {
  id: string;
  flowId: string;
  flowVersionId: string;
  sync: boolean;
  trigger: TriggerPayload;
  /** The app instance holding the sync caller's connection, or null for an async run. */
  syncInstanceId: string | null;
  /** The webhook's span, when the run is traced. */
  traceparent?: string | undefined;
  /** The run this one re-runs (`POST /v1/runs/:id/rerun`). */
  rerunOf?: string | undefined;
  /** What started the run; unset: `rerun` with `rerunOf`, else `webhook`. */
  source?: RunSource | undefined;
  /**
   * The idle worker the run goes to as it is accepted (RunHandoff.reserve): the row is written
   * RUNNING, its first attempt started. Unset: QUEUED.
   */
  startedBy?: string | undefined;
  /** A sub-flow's run: the parent run and its `flow` step's path, and how deep it is (1 under a top run). */
  parent?: { runId: string; path: string; depth: number } | undefined;
  /**
   * A re-run from the failed step: the checkpoint of the steps it replays. The run is created as
   * its own first resume (`resumes` 1), so its job resumes from it.
   */
  checkpointKey?: string | undefined;
}

/** An `Idempotency-Key` a webhook sent, as the statement that creates its run records it. */
export interface NewIdempotencyKey {
  key: string;
  /** sha256 (hex) of the request's raw body. */
  bodySha256: string;
  ttlHours: number;
}

/** A sync run's answer as its first caller got it, kept on the key for repeats. */
export type KeptAnswer = SyncMessage;

/** A live key: the run it created, what created it, and the answer kept once given. */
export interface IdempotencyKey {
  runId: string;
  bodySha256: string;
  sync: boolean;
  answer: KeptAnswer | null;
}

export type IdempotentCreate =
  | { kind: 'created'; rank: number }
  /** The key is live: no run was created; the key's run answers. */
  | { kind: 'existing'; key: IdempotencyKey }
  /** Its flow has `maxQueued` runs waiting: no run, no key. */
  | { kind: 'queue-full' };

/**
 * One round trip counts the flow's waiting runs (stopped at the bound, on the
 * (flow_id, status, …) index), refuses a deleted flow, and ranks the run after every run of
 * its flow still waiting. The rank only grows while the flow has runs waiting, so no run is
 * overtaken by a later one of its flow; it starts again at 1 once none waits. The bound
 * costs no statement and heals itself: it is the rows, which always reach a final state.
 * A run handed to an idle worker as it is accepted (`startedBy`) is written RUNNING, its
 * first attempt counted, as markRunning would have. With `claim`, the run is inserted only when
 * the `claim` CTE (the idempotency key's row) was.
 */
function createSql(claim: string | null): string {
  const sql = `WITH backlog AS (SELECT
           (SELECT count(*) FROM (SELECT 1 FROM runs WHERE flow_id = $2 AND status = 'QUEUED' LIMIT $5) q) AS queued,
           (SELECT coalesce(max(rank), 0) FROM runs WHERE flow_id = $2 AND status = 'QUEUED') AS last_rank),
         flow AS (SELECT EXISTS (SELECT 1 FROM flows WHERE id = $2 AND deleted_at IS NULL) AS live),
         created AS (
           INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, sync_instance_id, traceparent, rerun_of, rank,
             worker_id, started_at, attempts, source, parent_run_id, parent_path, depth,
             checkpoint_key, resumes)
           SELECT $1, $2, $3, CASE WHEN $11::text IS NULL THEN 'QUEUED' ELSE 'RUNNING' END, $4, $7, $8, $9, $10,
             backlog.last_rank + 1, $11, CASE WHEN $11::text IS NULL THEN NULL ELSE now() END,
             CASE WHEN $11::text IS NULL THEN 0 ELSE 1 END, $12, $13::uuid, $14::text, $15::int,
             $16::text, CASE WHEN $16::text IS NULL THEN 0 ELSE 1 END
           FROM backlog, flow
           WHERE flow.live AND ($6::int = 0 OR backlog.queued < $6)
           RETURNING rank)
         SELECT flow.live, (SELECT rank FROM created) AS rank FROM flow`;
  if (claim === null) return sql;
  return sql
    .replace('created AS (', `${claim},\n         created AS (`)
    .replace('FROM backlog, flow\n', 'FROM backlog, flow, claim\n');
}

/**
 * The key's row, written only where the run is (the flow live, within its bound). A live key
 * held by another request makes it write nothing: Postgres waits for that request's statement,
 * then finds the key taken. An expired key is taken over. $17 key, $18 body sha256, $19 TTL hours.
 */
const CLAIM = `claim AS (
           INSERT INTO idempotency_keys (flow_id, key, body_sha256, sync, run_id, expires_at)
           SELECT $2, $17, $18, $4, $1, now() + make_interval(hours => $19::int)
           FROM backlog, flow WHERE flow.live AND ($6::int = 0 OR backlog.queued < $6)
           ON CONFLICT (flow_id, key) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256, sync = EXCLUDED.sync,
             run_id = EXCLUDED.run_id, expires_at = EXCLUDED.expires_at, response = NULL
           WHERE idempotency_keys.expires_at <= now()
           RETURNING run_id)`;

const CREATE = createSql(null);
const CREATE_WITH_KEY = createSql(CLAIM);

type Named = (name: string) => { name?: string };

function createValues(input: NewRun, maxQueued: number): unknown[] {
  return [
    input.id,
    input.flowId,
    input.flowVersionId,
    input.sync,
    maxQueued > 0 ? maxQueued : 1,
    maxQueued,
    jsonb(input.trigger),
    input.syncInstanceId,
    input.traceparent ?? null,
    input.rerunOf ?? null,
    input.startedBy ?? null,
    input.source ?? (input.rerunOf === undefined ? 'webhook' : 'rerun'),
    input.parent?.runId ?? null,
    input.parent?.path ?? null,
    input.parent?.depth ?? 0,
    input.checkpointKey ?? null,
  ];
}

/** RunsRepository.create. */
export async function createRun(
  pool: Pool,
  named: Named,
  bounds: { maxQueued: number },
  input: NewRun,
): Promise<{ rank: number } | null> {
  const { rows } = await pool.query<{ live: boolean; rank: number | null }>({
    ...named('runs-create'),
    text: CREATE,
    values: createValues(input, bounds.maxQueued),
  });
  const row = rows[0];
  if (row?.live !== true) throw new FlowboxError('FLOW_NOT_FOUND', `flow ${input.flowId} was deleted`);
  return row.rank === null ? null : { rank: row.rank };
}

/** RunsRepository.createWithKey. */
export async function createRunWithKey(
  pool: Pool,
  named: Named,
  bounds: { maxQueued: number },
  input: NewRun,
  key: NewIdempotencyKey,
): Promise<IdempotentCreate> {
  const { rows } = await pool.query<{ live: boolean; rank: number | null }>({
    ...named('runs-create-with-key'),
    text: CREATE_WITH_KEY,
    values: [...createValues(input, bounds.maxQueued), key.key, key.bodySha256, key.ttlHours],
  });
  const row = rows[0];
  if (row?.live !== true) throw new FlowboxError('FLOW_NOT_FOUND', `flow ${input.flowId} was deleted`);
  if (row.rank !== null) return { kind: 'created', rank: row.rank };
  // Nothing written: the key is live (its statement has committed), or the flow's queue is full.
  const existing = await findIdempotencyKey(pool, input.flowId, key.key);
  return existing === null ? { kind: 'queue-full' } : { kind: 'existing', key: existing };
}

/** RunsRepository.idempotencyKey. */
export async function findIdempotencyKey(
  pool: Pool,
  flowId: string,
  key: string,
): Promise<IdempotencyKey | null> {
  const { rows } = await pool.query<{
    run_id: string;
    body_sha256: string;
    sync: boolean;
    response: unknown;
  }>(
    `SELECT run_id, body_sha256, sync, response FROM idempotency_keys
     WHERE flow_id = $1 AND key = $2 AND expires_at > now()`,
    [flowId, key],
  );
  const row = rows[0];
  if (row === undefined) return null;
  const answer = row.response === null ? null : parseMessage(SyncMessageSchema, row.response);
  return {
    runId: row.run_id,
    bodySha256: row.body_sha256,
    sync: row.sync,
    answer: answer?.ok === true ? answer.value : null,
  };
}

/** RunsRepository.keepAnswer: the first answer kept stays. */
export async function keepIdempotentAnswer(
  pool: Pool,
  flowId: string,
  key: string,
  runId: string,
  answer: KeptAnswer,
): Promise<void> {
  await pool.query(
    `UPDATE idempotency_keys SET response = $4 WHERE flow_id = $1 AND key = $2 AND run_id = $3 AND response IS NULL`,
    [flowId, key, runId, jsonb(answer)],
  );
}

/** RunsRepository.pruneIdempotencyKeys. */
export async function pruneIdempotencyKeys(pool: Pool, limit: number): Promise<number> {
  const result = await pool.query(
    `DELETE FROM idempotency_keys WHERE (flow_id, key) IN (
       SELECT flow_id, key FROM idempotency_keys WHERE expires_at <= now() ORDER BY expires_at LIMIT $1)`,
    [limit],
  );
  return result.rowCount ?? 0;
}
