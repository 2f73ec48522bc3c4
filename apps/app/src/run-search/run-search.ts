import type { Pool } from '../db/pool.ts';
import { decodeCursor, encodeCursor, type RunPage, type RunPageQuery } from '../runs/run-page.ts';
import { toRunRecord } from '../runs/run-record.ts';

/**
 * How many runs one search request reads at most, in the page's order, to find the ones whose
 * payload holds the text: a bound on its cost (README, Run inspector) rather than an index on
 * every payload, which each accepted run would pay for. The next page goes on from the last run read.
 */
export const SEARCH_SCAN_ROWS = 5_000;

export interface RunSearchQuery extends RunPageQuery {
  /** Only runs created before this moment. */
  until?: Date | undefined;
  /** Text the trigger request's body holds, any case (the body as JSON text, or the text body). */
  payload?: string | undefined;
}

export interface RunSearch {
  /**
   * A page of runs as `RunsRepository.page` gives them, also bounded above by `until` and
   * filtered by payload text. With `payload`, a page may hold fewer runs than `limit` (none,
   * even) and still have a `nextCursor`: the runs past it are not read yet.
   */
  search(query: RunSearchQuery): Promise<RunPage>;
}

/** The columns of a run in a list (all but its steps), as run-page.ts reads them. */
const SUMMARY_COLUMNS = `id, flow_id, flow_version_id, status, sync, '[]'::jsonb AS steps, error, log_key, log_error,
  timings, provisioning, isolation, worker_id, attempts, created_at, started_at, finished_at, rerun_of, source`;
const POSITION = `to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** `%`, `_` and the escape character stand for themselves in the searched text. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/**
 * The filters keep the list's plan (a range scan of one of migration 0004's indexes in the
 * page's order); the payload test runs on the rows that scan reads, which stops after
 * `limit + 1` matches or `scanRows` rows, whichever comes first.
 */
export function createRunSearch(pool: Pool, scanRows = SEARCH_SCAN_ROWS): RunSearch {
  return {
    async search(query) {
      const values: unknown[] = [];
      const param = (value: unknown) => {
        values.push(value);
        return `$${values.length}`;
      };
      const where: string[] = [];
      if (query.flowId !== undefined) where.push(`flow_id = ${param(query.flowId)}`);
      if (query.status !== undefined) where.push(`status = ${param(query.status)}`);
      if (query.since !== undefined) where.push(`created_at >= ${param(query.since)}`);
      if (query.until !== undefined) where.push(`created_at < ${param(query.until)}`);
      const newest = query.order === 'newest';
      if (query.cursor !== undefined) {
        const after = decodeCursor(query.cursor);
        where.push(
          `(created_at, id) ${newest ? '<' : '>'} (${param(after.createdAt)}::timestamptz, ${param(after.id)}::uuid)`,
        );
      }
      const order = newest ? 'DESC' : 'ASC';
      const filter = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
      const wanted = query.limit + 1;
      const scan = query.payload === undefined ? wanted : Math.max(scanRows, wanted);
      const scanLimit = param(scan);
      /** The filters and the scan's bound: what the edge query below needs of `values`. */
      const scanValues = [...values];
      const scanned = `SELECT ${SUMMARY_COLUMNS}, trigger FROM runs ${filter}
        ORDER BY created_at ${order}, id ${order} LIMIT ${scanLimit}`;
      const hit =
        query.payload === undefined
          ? 'true'
          : `(trigger->>'body') ILIKE ${param(likePattern(query.payload))}`;
      const { rows } = await pool.query<{ id: string; position: string }>(
        `SELECT ${SUMMARY_COLUMNS}, ${POSITION} AS position FROM (${scanned}) AS scanned
         WHERE ${hit} ORDER BY created_at ${order}, id ${order} LIMIT ${param(wanted)}`,
        values,
      );
      const page = rows.slice(0, query.limit);
      const runs = page.map((row) => {
        const { steps: _steps, ...summary } = toRunRecord(row);
        return summary;
      });
      const last = page.at(-1);
      if (rows.length > query.limit && last !== undefined) {
        return { runs, nextCursor: encodeCursor({ createdAt: last.position, id: last.id }) };
      }
      if (query.payload === undefined) return { runs, nextCursor: null };
      // Fewer matches than a page: the scan read every run there is, or stopped at its bound.
      const edge = await pool.query<{ id: string; position: string; read: number }>(
        `SELECT id, ${POSITION} AS position, read FROM (
           SELECT id, created_at, row_number() OVER (ORDER BY created_at ${order}, id ${order})::int AS read
           FROM (SELECT id, created_at FROM runs ${filter} ORDER BY created_at ${order}, id ${order} LIMIT ${scanLimit}) AS scanned
         ) AS numbered ORDER BY read DESC LIMIT 1`,
        scanValues,
      );
      const end = edge.rows[0];
      return {
        runs,
        nextCursor:
          end !== undefined && end.read >= scan
            ? encodeCursor({ createdAt: end.position, id: end.id })
            : null,
      };
    },
  };
}
