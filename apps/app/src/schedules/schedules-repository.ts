import type { TriggerDefinition, TriggerPayload } from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
import { changeSeq } from '../tickers/change-seq.ts';
import { SCHEDULE_PIECE } from './schedule-spec.ts';

/** A published, enabled flow whose trigger is a schedule, as the ticker reads it. */
export interface PublishedSchedule {
  flowId: string;
  flowVersionId: string;
  trigger: Pick<TriggerDefinition, 'trigger' | 'input'>;
  /** Ticks at or before this are not this schedule's (another version's, or while disabled). */
  since: Date;
  /** The flow's last recorded tick (fired, skipped or missed), or null. */
  lastTick: Date | null;
}

/** One tick to record, and the run it starts unless skipped. */
export interface TickInput {
  runId: string;
  flowId: string;
  flowVersionId: string;
  scheduledAt: Date;
  trigger: TriggerPayload;
  /** Ticks passed over before this one (after an outage). */
  missed: number;
  /** `skip`: record the tick skipped while the flow's previous scheduled run is not final. */
  overlap: 'allow' | 'skip';
  /** Record the tick as missed (catchUp none) instead of firing it. */
  passOver: boolean;
}

export type TickResult =
  | { outcome: 'fired'; rank: number }
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'missed' }
  /** Another app recorded this tick first: nothing was written. */
  | { outcome: 'duplicate' }
  /** The version is no longer the flow's published one (or the flow was disabled or deleted). */
  | { outcome: 'stale' };

/** A tick that did not start a run, as the inspector lists them. */
export interface PassedTick {
  scheduledAt: Date;
  outcome: 'skipped' | 'missed';
  reason: string | null;
  missed: number;
}

/** A flow changed since the ticker's last read: its schedule now, or null (it has none to tick). */
export interface ScheduleChange {
  flowId: string;
  schedule: PublishedSchedule | null;
}

export interface SchedulesRepository {
  /**
   * The flows whose change number (`flows.trigger_seq`) is above `after` (-1: every flow), and
   * the flows in `recheck` whatever their number; `seq`: the highest number among them (`after`
   * when none changed).
   */
  listChanged(after: number, recheck: readonly string[]): Promise<{ changes: ScheduleChange[]; seq: number }>;
  /**
   * Records ticks and creates their runs in one statement, at most one tick per flow; the
   * results come in the ticks' order. Each tick's primary key (flow, time) makes it once
   * whatever the number of apps firing it; the flow rows are read FOR SHARE, so a change of
   * published version, a disable or a delete either waits for this statement (and its runs
   * exist before that change answers) or is seen by it (and nothing is written for that flow).
   */
  fireMany(ticks: readonly TickInput[]): Promise<TickResult[]>;
  /** The flow's latest ticks that started no run, newest first. */
  passedTicks(flowId: string, limit: number): Promise<PassedTick[]>;
}

interface ScheduleRow {
  flow_id: string;
  seq: string;
  live: boolean;
  flow_version_id: string;
  trigger: Pick<TriggerDefinition, 'trigger' | 'input'> | null;
  since: Date;
  last_tick: Date | null;
}

interface FiredRow {
  live: boolean;
  outcome: 'fired' | 'skipped' | 'missed' | null;
  reason: string | null;
  rank: number | null;
}

export function createSchedulesRepository(pool: Pool, bounds: { maxQueued: number }): SchedulesRepository {
  const { maxQueued } = bounds;
  return {
    async listChanged(after, recheck) {
      // The first read lists the live schedules only, from the counter read before it.
      const first = after < 0 ? await changeSeq(pool) : after;
      const { rows } = await pool.query<ScheduleRow>(
        `SELECT c.flow_id, c.seq, c.live, c.flow_version_id, c.trigger, c.since,
           CASE WHEN c.live THEN (SELECT max(t.scheduled_at) FROM schedule_ticks t WHERE t.flow_id = c.flow_id)
           END AS last_tick
         FROM (SELECT f.id AS flow_id, f.trigger_seq AS seq, f.published_version_id AS flow_version_id,
                 v.definition->'trigger' AS trigger, f.schedule_since AS since,
                 coalesce(f.deleted_at IS NULL AND f.enabled AND v.definition->'trigger'->>'piece' = $1, false) AS live
               FROM flows f LEFT JOIN flow_versions v ON v.id = f.published_version_id
               WHERE f.trigger_seq > $2 ${recheck.length > 0 ? 'OR f.id = ANY($3::text[])' : ''}) c
         WHERE c.live OR $2 >= 0`,
        // The ids only when some are asked for: `trigger_seq > n` alone is one scan of its index.
        recheck.length > 0 ? [SCHEDULE_PIECE, after, recheck] : [SCHEDULE_PIECE, after],
      );
      let seq = first;
      const changes = rows.map((row): ScheduleChange => {
        seq = Math.max(seq, Number(row.seq));
        return {
          flowId: row.flow_id,
          schedule:
            !row.live || row.trigger === null
              ? null
              : {
                  flowId: row.flow_id,
                  flowVersionId: row.flow_version_id,
                  trigger: { trigger: row.trigger.trigger, input: row.trigger.input ?? {} },
                  since: row.since,
                  lastTick: row.last_tick,
                },
        };
      });
      return { changes, seq };
    },

    async fireMany(ticks) {
      if (ticks.length === 0) return [];
      // One statement for the batch. Ticks are written in flow order, so two apps writing the
      // same batch wait on each other's rows in one order and never deadlock.
      const { rows } = await pool.query<FiredRow & { i: number }>(
        `WITH input AS (
           SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::jsonb[],
             $6::int[], $7::boolean[], $8::boolean[])
             WITH ORDINALITY AS t(run_id, flow_id, flow_version_id, scheduled_at, trigger, missed,
               overlap_skip, pass_over, i)),
         live AS (
           SELECT input.* FROM input JOIN flows f ON f.id = input.flow_id
             AND f.published_version_id = input.flow_version_id AND f.enabled AND f.deleted_at IS NULL
           ORDER BY input.flow_id
           FOR SHARE OF f),
         backlog AS (
           SELECT live.*,
             (SELECT count(*) FROM (SELECT 1 FROM runs r WHERE r.flow_id = live.flow_id
               AND r.status = 'QUEUED' LIMIT $9) q) AS queued,
             (SELECT coalesce(max(r.rank), 0) FROM runs r WHERE r.flow_id = live.flow_id
               AND r.status = 'QUEUED') AS last_rank,
             live.overlap_skip AND EXISTS (SELECT 1 FROM runs r WHERE r.flow_id = live.flow_id
               AND r.source = 'schedule' AND r.status IN ('QUEUED', 'RUNNING', 'PAUSED')) AS busy
           FROM live),
         decided AS (
           SELECT backlog.*,
             CASE WHEN pass_over THEN 'missed'
                  WHEN busy OR ($10::int > 0 AND queued >= $10) THEN 'skipped'
                  ELSE 'fired' END AS outcome,
             CASE WHEN pass_over THEN 'catch-up-none'
                  WHEN busy THEN 'overlap'
                  WHEN $10::int > 0 AND queued >= $10 THEN 'queue-full' END AS reason
           FROM backlog),
         tick AS (
           INSERT INTO schedule_ticks (flow_id, scheduled_at, flow_version_id, outcome, reason, missed, run_id)
           SELECT flow_id, scheduled_at, flow_version_id, outcome, reason, missed,
             CASE WHEN outcome = 'fired' THEN run_id END
           FROM decided ORDER BY flow_id
           ON CONFLICT (flow_id, scheduled_at) DO NOTHING
           RETURNING flow_id, outcome, reason, run_id),
         -- The fired ticks' run ids as one array: a join of the two CTEs is planned as a nested
         -- loop (a CTE is estimated at one row), 500 x 500 scans per batch.
         created AS (
           INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, source, rank, attempts)
           SELECT d.run_id, d.flow_id, d.flow_version_id, 'QUEUED', false, d.trigger, 'schedule', d.last_rank + 1, 0
           FROM decided d WHERE d.run_id = ANY (ARRAY(SELECT run_id FROM tick WHERE run_id IS NOT NULL))
           RETURNING id, rank)
         SELECT input.i::int AS i, live.flow_id IS NOT NULL AS live, tick.outcome, tick.reason, created.rank
         FROM input LEFT JOIN live ON live.flow_id = input.flow_id
           LEFT JOIN tick ON tick.flow_id = input.flow_id
           LEFT JOIN created ON created.id = input.run_id`,
        [
          ticks.map((tick) => tick.runId),
          ticks.map((tick) => tick.flowId),
          ticks.map((tick) => tick.flowVersionId),
          ticks.map((tick) => tick.scheduledAt),
          ticks.map((tick) => jsonb(tick.trigger)),
          ticks.map((tick) => tick.missed),
          ticks.map((tick) => tick.overlap === 'skip'),
          ticks.map((tick) => tick.passOver),
          maxQueued > 0 ? maxQueued : 1,
          maxQueued,
        ],
      );
      const results: TickResult[] = ticks.map(() => ({ outcome: 'stale' }));
      for (const row of rows) results[row.i - 1] = tickResult(row);
      return results;
    },

    async passedTicks(flowId, limit) {
      const { rows } = await pool.query<{
        scheduled_at: Date;
        outcome: 'skipped' | 'missed';
        reason: string | null;
        missed: number;
      }>(
        `SELECT scheduled_at, outcome, reason, missed FROM schedule_ticks
         WHERE flow_id = $1 AND outcome <> 'fired' ORDER BY scheduled_at DESC LIMIT $2`,
        [flowId, limit],
      );
      return rows.map((row) => ({
        scheduledAt: row.scheduled_at,
        outcome: row.outcome,
        reason: row.reason,
        missed: row.missed,
      }));
    },
  };
}

function tickResult(row: FiredRow): TickResult {
  if (!row.live) return { outcome: 'stale' };
  switch (row.outcome) {
    case null:
      return { outcome: 'duplicate' };
    case 'fired':
      return { outcome: 'fired', rank: row.rank ?? 1 };
    case 'skipped':
      return { outcome: 'skipped', reason: row.reason ?? 'skipped' };
    case 'missed':
      return { outcome: 'missed' };
  }
}
