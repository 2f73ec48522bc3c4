import type { TriggerDefinition, TriggerPayload } from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
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

export interface SchedulesRepository {
  listPublished(): Promise<PublishedSchedule[]>;
  /**
   * Records a tick and creates its run in one statement. The tick's primary key (flow, time)
   * makes it once whatever the number of apps firing it; the flow row is read FOR SHARE, so a
   * change of published version, a disable or a delete either waits for this statement (and its
   * run exists before that change answers) or is seen by it (and nothing is written).
   */
  fire(tick: TickInput): Promise<TickResult>;
  /** The flow's latest ticks that started no run, newest first. */
  passedTicks(flowId: string, limit: number): Promise<PassedTick[]>;
}

interface ScheduleRow {
  flow_id: string;
  flow_version_id: string;
  trigger: Pick<TriggerDefinition, 'trigger' | 'input'>;
  since: Date;
  last_tick: Date | null;
}

export function createSchedulesRepository(pool: Pool, bounds: { maxQueued: number }): SchedulesRepository {
  const { maxQueued } = bounds;
  return {
    async listPublished() {
      const { rows } = await pool.query<ScheduleRow>(
        `SELECT f.id AS flow_id, f.published_version_id AS flow_version_id, v.definition->'trigger' AS trigger,
           f.schedule_since AS since,
           (SELECT max(t.scheduled_at) FROM schedule_ticks t WHERE t.flow_id = f.id) AS last_tick
         FROM flows f JOIN flow_versions v ON v.id = f.published_version_id
         WHERE f.deleted_at IS NULL AND f.enabled AND v.definition->'trigger'->>'piece' = $1`,
        [SCHEDULE_PIECE],
      );
      return rows.map((row) => ({
        flowId: row.flow_id,
        flowVersionId: row.flow_version_id,
        trigger: { trigger: row.trigger.trigger, input: row.trigger.input ?? {} },
        since: row.since,
        lastTick: row.last_tick,
      }));
    },

    async fire(tick) {
      const { rows } = await pool.query<{
        live: boolean;
        outcome: 'fired' | 'skipped' | 'missed' | null;
        reason: string | null;
        rank: number | null;
      }>(
        `WITH flow AS (
           SELECT id FROM flows
           WHERE id = $2 AND published_version_id = $3 AND enabled AND deleted_at IS NULL
           FOR SHARE),
         backlog AS (SELECT
           (SELECT count(*) FROM (SELECT 1 FROM runs WHERE flow_id = $2 AND status = 'QUEUED' LIMIT $7) q) AS queued,
           (SELECT coalesce(max(rank), 0) FROM runs WHERE flow_id = $2 AND status = 'QUEUED') AS last_rank,
           $9::boolean AND EXISTS (SELECT 1 FROM runs WHERE flow_id = $2 AND source = 'schedule'
             AND status IN ('QUEUED', 'RUNNING', 'PAUSED')) AS busy),
         decided AS (
           SELECT CASE WHEN $10::boolean THEN 'missed'
                       WHEN backlog.busy OR ($8::int > 0 AND backlog.queued >= $8) THEN 'skipped'
                       ELSE 'fired' END AS outcome,
                  CASE WHEN $10::boolean THEN 'catch-up-none'
                       WHEN backlog.busy THEN 'overlap'
                       WHEN $8::int > 0 AND backlog.queued >= $8 THEN 'queue-full' END AS reason
           FROM flow, backlog),
         tick AS (
           INSERT INTO schedule_ticks (flow_id, scheduled_at, flow_version_id, outcome, reason, missed, run_id)
           SELECT $2, $4, $3, outcome, reason, $6, CASE WHEN outcome = 'fired' THEN $1::uuid END FROM decided
           ON CONFLICT (flow_id, scheduled_at) DO NOTHING
           RETURNING outcome, reason),
         created AS (
           INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, source, rank, attempts)
           SELECT $1, $2, $3, 'QUEUED', false, $5, 'schedule', backlog.last_rank + 1, 0
           FROM tick, backlog WHERE tick.outcome = 'fired'
           RETURNING rank)
         SELECT EXISTS (SELECT 1 FROM flow) AS live, (SELECT outcome FROM tick) AS outcome,
           (SELECT reason FROM tick) AS reason, (SELECT rank FROM created) AS rank`,
        [
          tick.runId,
          tick.flowId,
          tick.flowVersionId,
          tick.scheduledAt,
          jsonb(tick.trigger),
          tick.missed,
          maxQueued > 0 ? maxQueued : 1,
          maxQueued,
          tick.overlap === 'skip',
          tick.passOver,
        ],
      );
      const row = rows[0];
      if (row === undefined || !row.live) return { outcome: 'stale' };
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
