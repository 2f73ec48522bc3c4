import { FlowboxError, type RunStatus } from '@flowbox/protocol';
import type { Pool } from '../db/pool.ts';
import { type RunRecord, toRunRecord } from './run-record.ts';

/** A run in a list: everything but its steps (read one run for those). */
export type RunSummaryRecord = Omit<RunRecord, 'steps'>;

export interface RunPageQuery {
  flowId?: string | undefined;
  status?: RunStatus | undefined;
  /** Only runs created at or after this moment. */
  since?: Date | undefined;
  /** `newest` first (the inspector) or `oldest` first (the benchmark reads forward from `since`). */
  order: 'newest' | 'oldest';
  /** Where the previous page ended: its `nextCursor`. */
  cursor?: string | undefined;
  limit: number;
}

export interface RunPage {
  runs: RunSummaryRecord[];
  /** Pass as `cursor` for the next page; null when this page holds the last runs there are now. */
  nextCursor: string | null;
}

/** A position in the order (created_at, id). created_at keeps Postgres' microseconds. */
interface Position {
  createdAt: string;
  id: string;
}

const POSITION = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)\|([0-9a-f-]{36})$/;

export function encodeCursor(position: Position): string {
  return Buffer.from(`${position.createdAt}|${position.id}`).toString('base64url');
}

export function decodeCursor(cursor: string): Position {
  const match = POSITION.exec(Buffer.from(cursor, 'base64url').toString());
  if (match === null) throw new FlowboxError('INVALID_REQUEST', 'cursor: not a cursor this API gave');
  return { createdAt: match[1] ?? '', id: match[2] ?? '' };
}

/**
 * One page of runs by keyset: `(created_at, id)` past the cursor, in the page's order, with
 * only the filters given in the WHERE clause, so each filter shape is a range scan of one of
 * migration 0004's indexes that stops after `limit + 1` rows (the extra row says whether a
 * next page exists). The cursor carries created_at to the microsecond: a millisecond Date
 * would skip or repeat runs created within the same millisecond.
 */
export async function queryRunPage(pool: Pool, query: RunPageQuery): Promise<RunPage> {
  const where: string[] = [];
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (query.flowId !== undefined) where.push(`flow_id = ${param(query.flowId)}`);
  if (query.status !== undefined) where.push(`status = ${param(query.status)}`);
  if (query.since !== undefined) where.push(`created_at >= ${param(query.since)}`);
  const newest = query.order === 'newest';
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor);
    where.push(
      `(created_at, id) ${newest ? '<' : '>'} (${param(after.createdAt)}::timestamptz, ${param(after.id)}::uuid)`,
    );
  }
  const direction = newest ? 'DESC' : 'ASC';
  // `position` is to_char's text and only rebuilds the cursor; the run's columns are parsed.
  const { rows } = await pool.query<{ id: string; position: string }>(
    `SELECT id, flow_id, flow_version_id, status, sync, '[]'::jsonb AS steps, error, log_key, log_error, timings,
            provisioning, isolation, worker_id, attempts, created_at, started_at, finished_at, rerun_of, source,
            resumes, paused_at, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position
     FROM runs ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY created_at ${direction}, id ${direction}
     LIMIT ${param(query.limit + 1)}`,
    values,
  );
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    runs: page.map((row) => {
      const { steps: _steps, ...summary } = toRunRecord(row);
      return summary;
    }),
    nextCursor:
      rows.length > query.limit && last !== undefined
        ? encodeCursor({ createdAt: last.position, id: last.id })
        : null,
  };
}
