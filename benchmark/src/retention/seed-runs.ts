import type pg from 'pg';

/** Rows a seeding statement inserts: one generate_series each, short enough to report progress. */
const CHUNK = 100_000;

/**
 * Inserts `count` finished runs of `flowId` created evenly between `fromDaysAgo` and `toDaysAgo`,
 * one in ten FAILED, each with its log key recorded; `onChunk` hears the total so far.
 */
export async function seedFinishedRuns(
  db: pg.Client,
  run: { flowId: string; flowVersionId: string },
  count: number,
  span: { fromDaysAgo: number; toDaysAgo: number },
  onChunk: (seeded: number) => void,
): Promise<void> {
  for (let at = 0; at < count; at += CHUNK) {
    const n = Math.min(CHUNK, count - at);
    await db.query(
      `INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, started_at, finished_at,
                         log_key, trigger, source)
       SELECT r.id, $1, $2, CASE WHEN (g % 10) = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END, true,
              r.created_at, r.created_at, r.created_at + interval '5 milliseconds',
              'runs/' || r.id || '/log.json', '{"method":"POST","headers":{},"query":{},"body":{}}'::jsonb,
              'webhook'
       FROM generate_series($3::bigint, $4::bigint) g,
            LATERAL (SELECT gen_random_uuid() AS id,
                            now() - make_interval(days => $5)
                              + (g::float8 / $6::float8) * make_interval(days => $5 - $7) AS created_at) r`,
      [run.flowId, run.flowVersionId, at, at + n - 1, span.fromDaysAgo, count, span.toDaysAgo],
    );
    onChunk(at + n);
  }
}
