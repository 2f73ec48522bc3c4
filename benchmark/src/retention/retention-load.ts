/**
 * `pnpm bench:retention`: seeds finished runs on a local stack, then measures the inspector's
 * reads with the table full, retention deleting the expired runs and their S3 objects, and the
 * reads again. See benchmark/README.md ("Retention at scale").
 */
import {
  AppMetrics,
  BENCHMARK_FLOW_ID,
  createPool,
  createRunsRepository,
  ObjectStorage,
  objectKeys,
  RunRetention,
} from '@flowbox/app';
import { createLogger } from '@flowbox/node-kit';
import { readScriptOptions, runScript, say, writeReport } from '../standalone/script-run.ts';
import { reportHead, startScriptRun } from '../standalone/script-stack.ts';
import { type PartitionProbe, probePartitions } from './partition-probe.ts';
import { inspectorReads, timeReads } from './read-timings.ts';
import { parseRetentionArgs, RETENTION_USAGE } from './retention-args.ts';
import {
  type PassResult,
  type RetentionReport,
  renderRetentionReport,
  reportBaseName,
} from './retention-report.ts';
import { seedFinishedRuns } from './seed-runs.ts';

const RETENTION_DAYS = 30;
/** Log objects put at once while seeding them. */
const PUT_CONCURRENCY = 32;

async function main(): Promise<number> {
  const options = readScriptOptions(RETENTION_USAGE, parseRetentionArgs);
  if (typeof options === 'number') return options;
  // The app's own retention stays off: the script runs the passes and times them.
  const run = await startScriptRun(
    { ...options, apps: 1, workers: 1 },
    { env: { RUN_RETENTION_DAYS: '0' }, name: `retention-${options.expired}` },
  );
  const { local } = run;
  const { s3 } = local;
  const storage = new ObjectStorage(s3);
  const pool = createPool(local.stack.database.url, 4);
  try {
    const { rows } = await local.db.query<{ version: string }>(
      'SELECT published_version_id AS version FROM flows WHERE id = $1',
      [BENCHMARK_FLOW_ID],
    );
    const flowVersionId = rows[0]?.version;
    if (flowVersionId === undefined) throw new Error(`the stack did not seed ${BENCHMARK_FLOW_ID}`);
    const flow = { flowId: BENCHMARK_FLOW_ID, flowVersionId };

    const seedStarted = performance.now();
    await seedFinishedRuns(local.db, flow, options.expired, { fromDaysAgo: 40, toDaysAgo: 31 }, (n) =>
      say(`seeded ${n} expired runs`),
    );
    await seedFinishedRuns(local.db, flow, options.kept, { fromDaysAgo: 7, toDaysAgo: 0 }, (n) =>
      say(`seeded ${n} kept runs`),
    );
    say('VACUUM ANALYZE runs');
    await local.db.query('VACUUM ANALYZE runs');
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const size = await local.db.query<{ bytes: string }>(
      `SELECT pg_total_relation_size('runs')::text AS bytes`,
    );
    const tableBytes = Number(size.rows[0]?.bytes ?? 0);

    const logged = await local.db.query<{ id: string }>(
      `SELECT id FROM runs WHERE created_at < now() - interval '30 days' ORDER BY created_at LIMIT $1`,
      [options.logs],
    );
    const logKeys = logged.rows.map((row) => objectKeys.runLog(row.id));
    say(`putting ${logKeys.length} log objects`);
    await inLanes(logKeys, PUT_CONCURRENCY, (key) =>
      storage.put(key, new TextEncoder().encode('{"steps":[]}'), 'application/json'),
    );

    const appUrl = local.stack.appUrls[0] ?? '';
    const reads = inspectorReads(BENCHMARK_FLOW_ID);
    say('timing the inspector reads, table full');
    const readsFull = await timeReads(appUrl, local.stack.apiKey, reads, options.reads);

    let partitioned: PartitionProbe | null = null;
    if (options.partitions) {
      say('copying the runs into a table partitioned by day');
      partitioned = await probePartitions(local.db, 41, RETENTION_DAYS);
    }

    const retention = new RunRetention({
      pool,
      holder: 'bench-retention',
      runs: createRunsRepository(pool),
      storage,
      metrics: new AppMetrics(),
      logger: createLogger({ name: 'bench-retention', level: 'warn' }),
      days: RETENTION_DAYS,
    });
    const passes: PassResult[] = [];
    const retentionStarted = performance.now();
    for (;;) {
      const started = performance.now();
      const done = await retention.retain();
      passes.push({ runs: done.runs, logs: done.logs, seconds: (performance.now() - started) / 1000 });
      say(`pass ${passes.length}: ${done.runs} runs in ${passes.at(-1)?.seconds.toFixed(1)} s`);
      if (done.runs === 0) break;
    }
    const retentionSeconds = (performance.now() - retentionStarted) / 1000;
    await retention.close();
    const removed = passes.reduce((sum, pass) => sum + pass.runs, 0);

    let logsLeft = 0;
    await inLanes(logKeys, PUT_CONCURRENCY, async (key) => {
      if (await exists(storage, key)) logsLeft++;
    });
    await local.db.query('VACUUM ANALYZE runs');
    say('timing the inspector reads, after retention');
    const readsAfter = await timeReads(appUrl, local.stack.apiKey, reads, options.reads);

    const report: RetentionReport = {
      ...reportHead('pnpm bench:retention', run),
      aborted: false,
      expired: options.expired,
      kept: options.kept,
      logObjects: logKeys.length,
      seedSeconds,
      tableBytes,
      readsFull,
      passes,
      retentionSeconds,
      runsPerSecond: removed / retentionSeconds,
      logsLeft,
      readsAfter,
      partitioned,
    };
    await writeReport(options.outDir, reportBaseName(report), renderRetentionReport(report), report);
    return removed === options.expired && logsLeft === 0 ? 0 : 1;
  } finally {
    storage.close();
    await pool.end();
    await local.close();
  }
}

/** Calls `each` on every item, `lanes` at a time. */
async function inLanes<T>(
  items: readonly T[],
  lanes: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) await each(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
}

async function exists(storage: ObjectStorage, key: string): Promise<boolean> {
  try {
    await storage.getText(key);
    return true;
  } catch {
    return false;
  }
}

runScript('retention', main);
