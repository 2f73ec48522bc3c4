import type { SerializedError, TriggerPayload } from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
import { changeSeq } from '../tickers/change-seq.ts';

/** A published, enabled flow whose trigger is a piece's polling trigger, as the poll ticker reads it. */
export interface PublishedPoll {
  flowId: string;
  flowVersionId: string;
  /** The trigger's piece: the one piece a poll needs. */
  piece: string;
  input: Record<string, unknown>;
  /** The latest tick any app took for this version, or null before the first. */
  lastTick: Date | null;
}

/** A tick this app took: the poll to run, from the state the last recorded poll left. */
export type TickClaim =
  | { outcome: 'claimed'; leaseId: string; state: unknown }
  /** Another app took this tick, or a poll of this version is still in flight. */
  | { outcome: 'taken' }
  /** The version is no longer the flow's published one (or the flow was disabled or deleted). */
  | { outcome: 'stale' };

/** A poll's items, in the source's order, each with its dedupe key. */
export interface PollItems {
  flowId: string;
  flowVersionId: string;
  leaseId: string;
  items: ReadonlyArray<{ key: string; item: unknown }>;
  state: unknown;
  /** `all`: the first poll starts a run for each item instead of recording a baseline. */
  startFrom: 'new' | 'all';
  /** POLL_MAX_ITEMS: the most runs one poll starts. */
  maxItems: number;
}

export type RecordResult =
  | {
      outcome: 'recorded';
      /** The runs created (QUEUED, source `poll`), in the items' order, with their rank. */
      runs: Array<{ runId: string; trigger: TriggerPayload; rank: number }>;
      /** New items seen by the first poll and recorded without a run. */
      baseline: number;
      /** New items left for the next poll (POLL_MAX_ITEMS or the flow's queue bound). */
      deferred: number;
    }
  /** The lease is gone (its poll was given up, or a newer one runs) or the version unpublished: nothing written. */
  | { outcome: 'stale' };

/** What the API and the inspector show of a polled flow version. */
export interface PollStatus {
  flowVersionId: string;
  baselineAt: Date | null;
  lastTick: Date;
  lastPolledAt: Date | null;
  polling: boolean;
  polls: number;
  itemsFound: number;
  failures: number;
  lastError: SerializedError | null;
  lastErrorAt: Date | null;
}

/** A flow changed since the poll ticker's last read: its polled version now, or null (none). */
export interface PollChange {
  flowId: string;
  poll: PublishedPoll | null;
}

export interface PollsRepository {
  /**
   * The flows whose change number (`flows.trigger_seq`) is above `after` (-1: every flow), and
   * the flows in `recheck`; `seq`: the highest number among them (`after` when none changed).
   */
  listChanged(after: number, recheck: readonly string[]): Promise<{ changes: PollChange[]; seq: number }>;
  /**
   * Takes the tick `at` for the version, once whatever the number of apps: the row's update
   * succeeds for the first app only (`last_tick < at`), and not while a poll holds an unexpired
   * lease. The flow row is read FOR SHARE, as a schedule tick's is.
   */
  claimTick(tick: {
    flowId: string;
    flowVersionId: string;
    at: Date;
    leaseId: string;
    leaseMs: number;
  }): Promise<TickClaim>;
  /**
   * Records a poll's new items and creates their runs, in one transaction under the lease: the
   * item keys' primary key makes an item start one run however many polls find it, and the
   * state is advanced in the same transaction (not at all when items were left for later).
   */
  record(poll: PollItems, newRunId: () => string): Promise<RecordResult>;
  /** A poll that failed or was lost: the lease ends, the state stays, the failure is counted and kept. */
  fail(flowVersionId: string, leaseId: string, error: SerializedError): Promise<boolean>;
  status(flowVersionId: string): Promise<PollStatus | null>;
}

export function createPollsRepository(pool: Pool, bounds: { maxQueued: number }): PollsRepository {
  return {
    async listChanged(after, recheck) {
      // The first read lists the polled flows only, from the counter read before it.
      const first = after < 0 ? await changeSeq(pool) : after;
      const { rows } = await pool.query<{
        flow_id: string;
        seq: string;
        flow_version_id: string | null;
        piece: string | null;
        input: Record<string, unknown> | null;
        last_tick: Date | null;
      }>(
        `SELECT f.id AS flow_id, f.trigger_seq AS seq, v.id AS flow_version_id,
           v.definition->'trigger'->>'piece' AS piece, v.definition->'trigger'->'input' AS input,
           tp.last_tick
         FROM flows f
         LEFT JOIN LATERAL (
           SELECT v.* FROM flow_versions v
           JOIN pieces p ON p.name = v.definition->'trigger'->>'piece'
             AND p.version = (SELECT e->>'version' FROM jsonb_array_elements(v.bundle_pieces) e
                              WHERE e->>'name' = p.name LIMIT 1)
           WHERE v.id = f.published_version_id AND f.deleted_at IS NULL AND f.enabled
             AND coalesce(p.manifest->'polling', '[]'::jsonb) ? (v.definition->'trigger'->>'trigger')) v ON true
         LEFT JOIN trigger_polls tp ON tp.flow_version_id = v.id
         WHERE (f.trigger_seq > $1 ${recheck.length > 0 ? 'OR f.id = ANY($2::text[])' : ''})
           AND (v.id IS NOT NULL OR $1 >= 0)`,
        // The ids only when some are asked for: `trigger_seq > n` alone is one scan of its index.
        recheck.length > 0 ? [after, recheck] : [after],
      );
      let seq = first;
      const changes = rows.map((row): PollChange => {
        seq = Math.max(seq, Number(row.seq));
        return {
          flowId: row.flow_id,
          poll:
            row.flow_version_id === null
              ? null
              : {
                  flowId: row.flow_id,
                  flowVersionId: row.flow_version_id,
                  piece: row.piece ?? '',
                  input: row.input ?? {},
                  lastTick: row.last_tick,
                },
        };
      });
      return { changes, seq };
    },

    async claimTick(tick) {
      const { rows } = await pool.query<{ live: boolean; claimed: boolean; state: unknown }>(
        `WITH flow AS (
           SELECT id FROM flows
           WHERE id = $1 AND published_version_id = $2 AND enabled AND deleted_at IS NULL
           FOR SHARE),
         claimed AS (
           INSERT INTO trigger_polls (flow_version_id, flow_id, last_tick, lease_id, leased_until)
           SELECT $2, $1, $3, $4, now() + $5 * interval '1 millisecond' FROM flow
           ON CONFLICT (flow_version_id) DO UPDATE
             SET last_tick = EXCLUDED.last_tick, lease_id = EXCLUDED.lease_id,
                 leased_until = EXCLUDED.leased_until
             WHERE trigger_polls.last_tick < EXCLUDED.last_tick
               AND (trigger_polls.leased_until IS NULL OR trigger_polls.leased_until < now())
           RETURNING state)
         SELECT EXISTS (SELECT 1 FROM flow) AS live, EXISTS (SELECT 1 FROM claimed) AS claimed,
           (SELECT state FROM claimed) AS state`,
        [tick.flowId, tick.flowVersionId, tick.at, tick.leaseId, tick.leaseMs],
      );
      const row = rows[0];
      if (row === undefined || !row.live) return { outcome: 'stale' };
      if (!row.claimed) return { outcome: 'taken' };
      return { outcome: 'claimed', leaseId: tick.leaseId, state: row.state ?? null };
    },

    async record(poll, newRunId) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const live = await client.query(
          `SELECT 1 FROM flows WHERE id = $1 AND published_version_id = $2 AND enabled AND deleted_at IS NULL
           FOR SHARE`,
          [poll.flowId, poll.flowVersionId],
        );
        const held = await client.query<{ state: unknown; baselined: boolean }>(
          `SELECT state, baseline_at IS NOT NULL AS baselined FROM trigger_polls
           WHERE flow_version_id = $1 AND lease_id = $2 FOR UPDATE`,
          [poll.flowVersionId, poll.leaseId],
        );
        const row = held.rows[0];
        if (live.rowCount === 0 || row === undefined) {
          await client.query('ROLLBACK');
          return { outcome: 'stale' };
        }
        // New: not recorded before, first of its key in this answer, in the source's order.
        const keys = [...new Set(poll.items.map((entry) => entry.key))];
        const known = await client.query<{ key: string }>(
          'SELECT key FROM poll_items WHERE flow_version_id = $1 AND key = ANY($2::text[])',
          [poll.flowVersionId, keys],
        );
        const seen = new Set(known.rows.map((r) => r.key));
        const fresh: Array<{ key: string; item: unknown }> = [];
        for (const entry of poll.items) {
          if (seen.has(entry.key)) continue;
          seen.add(entry.key);
          fresh.push(entry);
        }
        const baseline = !row.baselined && poll.startFrom === 'new';
        let room = baseline ? fresh.length : Math.min(fresh.length, poll.maxItems);
        let rank = 0;
        if (!baseline && fresh.length > 0) {
          const backlog = await client.query<{ queued: number; last_rank: number }>(
            `SELECT (SELECT count(*)::int FROM (SELECT 1 FROM runs WHERE flow_id = $1 AND status = 'QUEUED' LIMIT $2) q) AS queued,
               (SELECT coalesce(max(rank), 0)::int FROM runs WHERE flow_id = $1 AND status = 'QUEUED') AS last_rank`,
            [poll.flowId, bounds.maxQueued > 0 ? bounds.maxQueued : 1],
          );
          const { queued = 0, last_rank = 0 } = backlog.rows[0] ?? {};
          if (bounds.maxQueued > 0) room = Math.min(room, Math.max(0, bounds.maxQueued - queued));
          rank = last_rank;
        }
        const taken = fresh.slice(0, room);
        const runs = baseline
          ? []
          : taken.map((entry, index) => ({
              runId: newRunId(),
              trigger: itemTrigger(entry.item),
              rank: rank + index + 1,
            }));
        if (runs.length > 0) {
          await client.query(
            `INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, source, rank, attempts)
             SELECT id, $1, $2, 'QUEUED', false, trigger, 'poll', rank, 0
             FROM unnest($3::uuid[], $4::jsonb[], $5::int[]) AS t(id, trigger, rank)`,
            [
              poll.flowId,
              poll.flowVersionId,
              runs.map((r) => r.runId),
              runs.map((r) => jsonb(r.trigger)),
              runs.map((r) => r.rank),
            ],
          );
        }
        if (taken.length > 0) {
          await client.query(
            `INSERT INTO poll_items (flow_version_id, key, run_id)
             SELECT $1, key, run_id FROM unnest($2::text[], $3::uuid[]) AS t(key, run_id)`,
            [poll.flowVersionId, taken.map((e) => e.key), taken.map((_e, i) => runs[i]?.runId ?? null)],
          );
        }
        const deferred = fresh.length - taken.length;
        await client.query(
          `UPDATE trigger_polls SET
             state = CASE WHEN $3::boolean THEN $4::jsonb ELSE state END,
             baseline_at = coalesce(baseline_at, now()), lease_id = NULL, leased_until = NULL,
             polls = polls + 1, items_found = items_found + $5, failures = 0, last_polled_at = now()
           WHERE flow_version_id = $1 AND lease_id = $2`,
          [poll.flowVersionId, poll.leaseId, deferred === 0, jsonb(poll.state ?? null), taken.length],
        );
        await client.query('COMMIT');
        return { outcome: 'recorded', runs, baseline: baseline ? taken.length : 0, deferred };
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },

    async fail(flowVersionId, leaseId, error) {
      const { rowCount } = await pool.query(
        `UPDATE trigger_polls SET lease_id = NULL, leased_until = NULL, polls = polls + 1,
           failures = failures + 1, last_error = $3, last_error_at = now(), last_polled_at = now()
         WHERE flow_version_id = $1 AND lease_id = $2`,
        [flowVersionId, leaseId, jsonb(error)],
      );
      return (rowCount ?? 0) > 0;
    },

    async status(flowVersionId) {
      const { rows } = await pool.query<{
        baseline_at: Date | null;
        last_tick: Date;
        last_polled_at: Date | null;
        polling: boolean;
        polls: string;
        items_found: string;
        failures: number;
        last_error: SerializedError | null;
        last_error_at: Date | null;
      }>(
        `SELECT baseline_at, last_tick, last_polled_at, leased_until > now() AS polling, polls, items_found,
           failures, last_error, last_error_at
         FROM trigger_polls WHERE flow_version_id = $1`,
        [flowVersionId],
      );
      const row = rows[0];
      if (row === undefined) return null;
      return {
        flowVersionId,
        baselineAt: row.baseline_at,
        lastTick: row.last_tick,
        lastPolledAt: row.last_polled_at,
        polling: row.polling === true,
        polls: Number(row.polls),
        itemsFound: Number(row.items_found),
        failures: row.failures,
        lastError: row.last_error,
        lastErrorAt: row.last_error_at,
      };
    },
  };
}

/**
 * A poll item as its run's trigger: the item is the body, which the trigger step outputs. An
 * object or a string is the body as it is; any other value is `{ value }`.
 */
function itemTrigger(item: unknown): TriggerPayload {
  const body =
    typeof item === 'string' || (typeof item === 'object' && item !== null && !Array.isArray(item))
      ? (item as string | Record<string, unknown>)
      : { value: item ?? null };
  return { method: 'POST', headers: {}, query: {}, body, rawBody: null, rawBodyEncoding: 'utf8' };
}
