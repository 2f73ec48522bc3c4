import type pg from 'pg';

/** What the partitioned copy of the runs table measured (all times in ms). */
export interface PartitionProbe {
  partitions: number;
  copySeconds: number;
  /** A run by id on the plain runs table (median of the lookups). */
  byIdPlainMs: number;
  /** A run by id alone on the partitioned copy: every partition's id index probed. */
  byIdAllPartitionsMs: number;
  /** A run by id with its day as a bound (as a time-carrying id would give): one partition. */
  byIdPrunedMs: number;
  /** Partitions wholly past the retention detached and dropped, and the rows they held. */
  dropped: { partitions: number; rows: number; ms: number };
}

const LOOKUPS = 200;

/**
 * Copies `runs` into `runs_by_day`, partitioned by RANGE (created_at) one UTC day a partition
 * (`days` back and one ahead, plus a default), and measures what the partitioned design would
 * cost: lookups by id with and without the day's bound, and expiry as DETACH + DROP of the
 * partitions wholly older than `retentionDays`. Leaves the copy dropped.
 */
export async function probePartitions(
  db: pg.Client,
  days: number,
  retentionDays: number,
): Promise<PartitionProbe> {
  const copyStarted = performance.now();
  await db.query('DROP TABLE IF EXISTS runs_by_day');
  await db.query('CREATE TABLE runs_by_day (LIKE runs INCLUDING DEFAULTS) PARTITION BY RANGE (created_at)');
  await db.query(
    `DO $$ DECLARE d int; lo timestamptz; BEGIN
       FOR d IN -1..${days} LOOP
         lo := (date_trunc('day', now() AT TIME ZONE 'UTC') - make_interval(days => d)) AT TIME ZONE 'UTC';
         EXECUTE format('CREATE TABLE runs_by_day_%s PARTITION OF runs_by_day FOR VALUES FROM (%L) TO (%L)',
                        to_char(lo AT TIME ZONE 'UTC', 'YYYYMMDD'), lo, lo + interval '1 day');
       END LOOP;
     END $$`,
  );
  await db.query('CREATE TABLE runs_by_day_default PARTITION OF runs_by_day DEFAULT');
  await db.query('INSERT INTO runs_by_day SELECT * FROM runs');
  await db.query('CREATE INDEX ON runs_by_day (id)');
  await db.query('CREATE INDEX ON runs_by_day (created_at, id)');
  await db.query('ANALYZE runs_by_day');
  const copySeconds = (performance.now() - copyStarted) / 1000;

  const sample = await db.query<{ id: string; day: string }>(
    `SELECT id, date_trunc('day', created_at AT TIME ZONE 'UTC')::text AS day FROM runs
     ORDER BY random() LIMIT ${LOOKUPS}`,
  );
  const median = async (
    name: string,
    text: string,
    params: (row: { id: string; day: string }) => unknown[],
  ) => {
    const ms: number[] = [];
    for (const row of sample.rows) {
      const started = performance.now();
      const { rowCount } = await db.query({ name, text, values: params(row) });
      ms.push(performance.now() - started);
      if (rowCount !== 1) throw new Error(`${name} found ${rowCount} rows for ${row.id}`);
    }
    ms.sort((a, b) => a - b);
    return ms[Math.floor(ms.length / 2)] ?? 0;
  };
  const byIdPlainMs = await median('probe-plain', 'SELECT id, status FROM runs WHERE id = $1', (r) => [r.id]);
  const byIdAllPartitionsMs = await median(
    'probe-all',
    'SELECT id, status FROM runs_by_day WHERE id = $1',
    (r) => [r.id],
  );
  const byIdPrunedMs = await median(
    'probe-pruned',
    `SELECT id, status FROM runs_by_day WHERE id = $1
       AND created_at >= ($2::timestamp AT TIME ZONE 'UTC') AND created_at < ($2::timestamp AT TIME ZONE 'UTC') + interval '1 day'`,
    (r) => [r.id, r.day],
  );

  const { rows } = await db.query<{ name: string; rows: number }>(
    `SELECT c.relname AS name, (SELECT count(*)::int FROM runs_by_day) AS rows
     FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'runs_by_day'::regclass AND c.relname <> 'runs_by_day_default'
       AND to_date(substr(c.relname, 13), 'YYYYMMDD') + 1
           <= (now() AT TIME ZONE 'UTC' - make_interval(days => $1))::date`,
    [retentionDays],
  );
  const before = rows[0]?.rows ?? 0;
  const dropStarted = performance.now();
  for (const partition of rows) {
    await db.query(`ALTER TABLE runs_by_day DETACH PARTITION ${partition.name}`);
    await db.query(`DROP TABLE ${partition.name}`);
  }
  const dropMs = performance.now() - dropStarted;
  const after = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs_by_day');
  await db.query('DROP TABLE runs_by_day');
  return {
    partitions: days + 3,
    copySeconds,
    byIdPlainMs,
    byIdAllPartitionsMs,
    byIdPrunedMs,
    dropped: { partitions: rows.length, rows: before - (after.rows[0]?.n ?? 0), ms: dropMs },
  };
}
