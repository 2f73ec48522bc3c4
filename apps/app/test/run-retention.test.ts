import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type S3rverServer, startS3rver } from '@flowbox/local-services';
import { createLogger } from '@flowbox/node-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createRefusedDeliveriesRepository } from '../src/deliveries/refused-deliveries-repository.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { withPublishedFlowCache } from '../src/flows/published-flow-cache.ts';
import { BENCHMARK_FLOW, BENCHMARK_FLOW_ID, BENCHMARK_FLOW_VERSION_ID } from '../src/flows/seed.ts';
import { AppMetrics } from '../src/metrics/app-metrics.ts';
import { RunRetention } from '../src/runs/run-retention.ts';
import { createRunsRepository, type RunsRepository } from '../src/runs/runs-repository.ts';
import { ObjectStorage, objectKeys } from '../src/storage/object-storage.ts';
import { manage, testAppConfig } from './app-harness.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const TRIGGER = {
  method: 'POST',
  headers: {},
  query: {},
  body: { n: 1 },
  rawBody: '{"n":1}',
  rawBodyEncoding: 'utf8' as const,
};

// Retention against real Postgres (rows, lease, tombstones) and S3 (the logs: versitygw, and the
// embedded s3rver of `pnpm dev`), and the re-run route's answers for what it deleted, through an
// app on the same database and bucket.
describe('run retention', () => {
  let app: FlowboxApp;
  let url: string;
  let pool: Pool;
  let runs: RunsRepository;
  let storage: ObjectStorage;
  let metrics: AppMetrics;
  let s3rver: S3rverServer;
  let s3rverDir: string;
  let s3rverStorage: ObjectStorage;

  beforeAll(async () => {
    const config = await testAppConfig();
    app = await createApp(config, logger);
    url = await startApp(app, { seedBenchmarkFlow: true });
    pool = createPool(config.DATABASE_URL, 2);
    runs = createRunsRepository(pool);
    storage = new ObjectStorage({
      endpoint: config.S3_ENDPOINT,
      region: config.S3_REGION,
      bucket: config.S3_BUCKET,
      accessKeyId: config.S3_ACCESS_KEY_ID,
      secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    });
    metrics = new AppMetrics();
    s3rverDir = await mkdtemp(join(tmpdir(), 'flowbox-retention-s3rver-'));
    const credentials = { accessKeyId: 'local-dev', secretAccessKey: 'local-dev-secret-0123456789' };
    s3rver = await startS3rver({ dataDir: s3rverDir, bucket: 'runs', ...credentials });
    s3rverStorage = new ObjectStorage({
      endpoint: s3rver.endpoint,
      region: 'us-east-1',
      bucket: 'runs',
      ...credentials,
    });
  });
  afterAll(async () => {
    await app?.close();
    storage?.close();
    s3rverStorage?.close();
    await s3rver?.close();
    if (s3rverDir !== undefined) await rm(s3rverDir, { recursive: true, force: true });
    await pool?.end();
  });

  const retention = (days: number, holder = 'app-a', store: ObjectStorage = storage) =>
    new RunRetention({
      pool,
      holder,
      runs,
      refusedDeliveries: createRefusedDeliveriesRepository(pool),
      storage: store,
      metrics,
      logger,
      days,
    });

  /** A run `ageDays` old; finished with a log in S3 (`store`) unless `queued`. */
  async function runAged(
    ageDays: number,
    options: { queued?: boolean; store?: ObjectStorage } = {},
  ): Promise<string> {
    const id = randomUUID();
    const created = await runs.create({
      id,
      flowId: BENCHMARK_FLOW_ID,
      flowVersionId: BENCHMARK_FLOW_VERSION_ID,
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    });
    expect(created).not.toBeNull();
    if (options.queued !== true) {
      const logKey = objectKeys.runLog(id);
      await (options.store ?? storage).put(
        logKey,
        new TextEncoder().encode('{"steps":[]}'),
        'application/json',
      );
      await pool.query(
        `UPDATE runs SET status = 'SUCCEEDED', finished_at = now(), log_key = $2 WHERE id = $1`,
        [id, logKey],
      );
    }
    await pool.query(`UPDATE runs SET created_at = now() - make_interval(days => $2) WHERE id = $1`, [
      id,
      ageDays,
    ]);
    return id;
  }

  async function logExists(runId: string, store: ObjectStorage = storage): Promise<boolean> {
    const response = await fetch(await store.presignDownload(objectKeys.runLog(runId), 60));
    await response.arrayBuffer();
    if (response.status !== 200 && response.status !== 404) throw new Error(`S3 answered ${response.status}`);
    return response.status === 200;
  }

  const deleted = async (kind: string) =>
    (await metrics.registry.getSingleMetric('flowbox_retention_deleted_total')?.get())?.values.find(
      (v) => v.labels.kind === kind,
    )?.value ?? 0;

  it.each([
    ['versitygw', () => storage],
    ['the embedded s3rver', () => s3rverStorage],
  ])(
    'deletes finished runs past the retention and their S3 logs (%s), and nothing younger or unfinished',
    async (_, of) => {
      const store = of();
      metrics = new AppMetrics();
      const old = [await runAged(31, { store }), await runAged(45, { store })];
      const young = await runAged(29, { store });
      const oldQueued = await runAged(40, { queued: true, store });
      for (const id of [...old, young]) expect(await logExists(id, store)).toBe(true);

      // RUN_RETENTION_DAYS=0 keeps everything.
      expect(await retention(0, 'app-a', store).retain()).toEqual({
        runs: 0,
        logs: 0,
        tombstones: 0,
        ticks: 0,
        refusedDeliveries: 0,
        idempotencyKeys: 0,
      });
      const done = await retention(30, 'app-a', store).retain();
      expect(done).toMatchObject({ runs: 2, logs: 2 });

      for (const id of old) {
        expect(await runs.get(id)).toBeNull();
        expect(await logExists(id, store)).toBe(false);
        expect((await manage(url, 'GET', `/v1/runs/${id}`)).status).toBe(404);
      }
      expect(await runs.get(young)).not.toBeNull();
      expect(await logExists(young, store)).toBe(true);
      expect((await runs.get(oldQueued))?.status).toBe('QUEUED');
      expect(await deleted('run')).toBe(2);
      expect(await deleted('log')).toBe(2);
      // A second pass finds nothing more.
      expect(await retention(30, 'app-a', store).retain()).toMatchObject({ runs: 0, logs: 0 });
    },
  );

  it('deletes a backlog larger than one batch in one pass, reading past old unfinished runs', async () => {
    // 25,000 finished runs 40 days old (more than two batches of 10,000), with 300 queued runs
    // among the oldest: the pass reads on past them, and leaves them (seeded without a trigger).
    const seededQueued = `status = 'QUEUED' AND trigger IS NULL`;
    const seeded = await pool.query<{ n: number }>(
      `WITH made AS (
         INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, finished_at, log_key)
         SELECT gen_random_uuid(), $1, $2, CASE WHEN g <= 300 THEN 'QUEUED' ELSE 'SUCCEEDED' END, false,
                now() - interval '40 days' + g * interval '1 millisecond',
                CASE WHEN g <= 300 THEN NULL ELSE now() END, NULL
         FROM generate_series(1, 25300) g RETURNING 1)
       SELECT count(*)::int AS n FROM made`,
      [BENCHMARK_FLOW_ID, BENCHMARK_FLOW_VERSION_ID],
    );
    expect(seeded.rows[0]?.n).toBe(25_300);
    const count = async (where: string) =>
      (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE ${where}`)).rows[0]?.n;

    expect((await retention(30).retain()).runs).toBe(25_000);
    expect(await count(`status = 'SUCCEEDED' AND created_at < now() - interval '30 days'`)).toBe(0);
    expect(await count(seededQueued)).toBe(300);
    const tombstones = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM run_tombstones');
    expect(tombstones.rows[0]?.n).toBeGreaterThanOrEqual(25_000);
    await pool.query(`DELETE FROM runs WHERE ${seededQueued}`);
  });

  it('keeps the rows of a batch whose objects S3 failed to delete, and deletes them next pass', async () => {
    // 25,000 old finished runs: three batches, each 20 DeleteObjects requests (log and checkpoint
    // keys). S3 fails from the 21st request on: the first batch goes, rows and objects; the
    // second batch's rows stay (its objects were not all deleted), and so does the third. 50 days
    // old: older than any other test's runs, so the batches hold these alone.
    const seeded = `trigger IS NULL AND status = 'SUCCEEDED' AND created_at < now() - interval '49 days'`;
    await pool.query(
      `INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, finished_at)
       SELECT gen_random_uuid(), $1, $2, 'SUCCEEDED', false,
              now() - interval '50 days' + g * interval '1 millisecond', now()
       FROM generate_series(1, 25000) g`,
      [BENCHMARK_FLOW_ID, BENCHMARK_FLOW_VERSION_ID],
    );
    const left = async () =>
      (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE ${seeded}`)).rows[0]?.n;
    let requests = 0;
    const failing = {
      deleteMany: async (keys: readonly string[]) => {
        requests++;
        if (requests > 20) throw new Error('S3 is down');
        await storage.deleteMany(keys);
      },
    };
    const pass = (store: { deleteMany(keys: readonly string[]): Promise<void> }) =>
      new RunRetention({ pool, holder: 'app-a', runs, storage: store, metrics, logger, days: 30 }).retain();

    await expect(pass(failing)).rejects.toThrow('S3 is down');
    expect(await left()).toBe(15_000);
    expect((await pass(storage)).runs).toBe(15_000);
    expect(await left()).toBe(0);
  });

  it("keeps paused runs, and deletes a removed run's checkpoints with its log", async () => {
    const object = (key: string) => storage.put(key, new TextEncoder().encode('{}'), 'application/json');
    const exists = async (key: string) => {
      const response = await fetch(await storage.presignDownload(key, 60));
      await response.arrayBuffer();
      return response.status === 200;
    };
    const resumed = await runAged(40);
    await pool.query('UPDATE runs SET resumes = 2 WHERE id = $1', [resumed]);
    const checkpoints = [0, 1, 2].map((n) => `checkpoints/${resumed}/${n}.json`);
    for (const key of checkpoints) await object(key);
    const paused = await runAged(40, { queued: true });
    await pool.query("UPDATE runs SET status = 'PAUSED', paused_at = now() WHERE id = $1", [paused]);
    await object(`checkpoints/${paused}/0.json`);

    await retention(30).retain();
    expect(await runs.get(resumed)).toBeNull();
    for (const key of checkpoints) expect(await exists(key)).toBe(false);
    expect((await runs.get(paused))?.status).toBe('PAUSED');
    expect(await exists(`checkpoints/${paused}/0.json`)).toBe(true);
  });

  it('answers a re-run of a run retention deleted 410, of an unknown run 404, of a kept one 202', async () => {
    const old = await runAged(60);
    const young = await runAged(1);
    await retention(30).retain();

    const gone = await manage(url, 'POST', `/v1/runs/${old}/rerun`);
    expect(gone.status).toBe(410);
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('RUN_TRIGGER_GONE');
    expect((await manage(url, 'POST', `/v1/runs/${randomUUID()}/rerun`)).status).toBe(404);
    expect((await manage(url, 'POST', '/v1/runs/not-a-uuid/rerun')).status).toBe(404);

    const rerun = await manage(url, 'POST', `/v1/runs/${young}/rerun`);
    expect(rerun.status).toBe(202);
    const { runId } = (await rerun.json()) as { runId: string };
    const view = (await (await manage(url, 'GET', `/v1/runs/${runId}`)).json()) as {
      rerunOf: string;
      flowVersionId: string;
    };
    expect(view).toMatchObject({ rerunOf: young, flowVersionId: BENCHMARK_FLOW_VERSION_ID });
    const original = (await (await manage(url, 'GET', `/v1/runs/${young}`)).json()) as { reruns: string[] };
    expect(original.reruns).toEqual([runId]);
  });

  it('answers a re-run of a run from before triggers were kept 410', async () => {
    const id = await runAged(1);
    await pool.query('UPDATE runs SET trigger = NULL WHERE id = $1', [id]);
    const answer = await manage(url, 'POST', `/v1/runs/${id}/rerun`);
    expect(answer.status).toBe(410);
  });

  it('prunes tombstones as old as the retention', async () => {
    const old = await runAged(60);
    await retention(30).retain();
    await pool.query(
      `UPDATE run_tombstones SET removed_at = now() - make_interval(days => 31) WHERE id = $1`,
      [old],
    );
    expect((await retention(30).retain()).tombstones).toBe(1);
    expect((await manage(url, 'POST', `/v1/runs/${old}/rerun`)).status).toBe(404);
  });

  it("prunes schedule ticks as old as the retention, keeping each flow's latest", async () => {
    const tick = (days: number) =>
      pool.query(
        `INSERT INTO schedule_ticks (flow_id, scheduled_at, flow_version_id, outcome)
         VALUES ($1, now() - make_interval(days => $2), $1 || '-v1', 'skipped')`,
        [BENCHMARK_FLOW_ID, days],
      );
    for (const days of [50, 40, 35]) await tick(days);
    const left = async () =>
      (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM schedule_ticks')).rows[0]?.n;
    // All three are past 30 days; the latest stays: the ticker reads where the schedule stands from it.
    expect((await retention(30).retain()).ticks).toBe(2);
    expect(await left()).toBe(1);
    await tick(1);
    expect((await retention(30).retain()).ticks).toBe(1);
    expect(await left()).toBe(1);
  });

  it('deletes refused webhook deliveries older than the retention, keeping newer ones', async () => {
    const deliveries = createRefusedDeliveriesRepository(pool);
    const refusal = (ageDays: number) => ({
      flowId: BENCHMARK_FLOW_ID,
      receivedAt: new Date(Date.now() - ageDays * 86_400_000),
      code: 'WEBHOOK_SIGNATURE_INVALID',
      message: `refused ${ageDays} days ago`,
      httpStatus: 401,
      method: 'POST',
      sync: false,
      sourceAddress: '127.0.0.1',
      headers: {},
      suppressed: 0,
    });
    expect(await deliveries.insert([refusal(40), refusal(31), refusal(1)], 100)).toBe(3);
    expect((await retention(30).retain()).refusedDeliveries).toBe(2);
    expect((await deliveries.list(BENCHMARK_FLOW_ID, 10)).map((row) => row.message)).toEqual([
      'refused 1 days ago',
    ]);
  });

  it('deletes expired idempotency keys and keeps live ones', async () => {
    const runId = await runAged(1);
    await pool.query(
      `INSERT INTO idempotency_keys (flow_id, key, body_sha256, sync, run_id, expires_at) VALUES
         ('flow', 'expired', 'x', false, $1, now() - interval '1 second'),
         ('flow', 'live', 'x', false, $1, now() + interval '1 hour')`,
      [runId],
    );
    expect((await retention(30).retain()).idempotencyKeys).toBe(1);
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM idempotency_keys');
    expect(rows.map((row) => row.key)).toEqual(['live']);
  });

  it('prunes refused deliveries, expired idempotency keys and old schedule ticks in one pass', async () => {
    await pool.query(
      `INSERT INTO schedule_ticks (flow_id, scheduled_at, flow_version_id, outcome)
       SELECT $1, now() - make_interval(days => d), $1 || '-v1', 'skipped' FROM unnest(ARRAY[60, 45]) d`,
      [BENCHMARK_FLOW_ID],
    );
    await createRefusedDeliveriesRepository(pool).insert(
      [
        {
          flowId: BENCHMARK_FLOW_ID,
          receivedAt: new Date(Date.now() - 50 * 86_400_000),
          code: 'FLOW_NOT_FOUND',
          message: 'refused 50 days ago',
          httpStatus: 404,
          method: 'POST',
          sync: false,
          sourceAddress: '127.0.0.1',
          headers: {},
          suppressed: 0,
        },
      ],
      100,
    );
    const runId = await runAged(1);
    await pool.query(
      `INSERT INTO idempotency_keys (flow_id, key, body_sha256, sync, run_id, expires_at)
       VALUES ('flow', 'expired-too', 'x', false, $1, now() - interval '1 second')`,
      [runId],
    );
    // The flow's newer tick (a day old) stays; both older ones go with the delivery and the key.
    expect(await retention(30).retain()).toMatchObject({
      ticks: 2,
      refusedDeliveries: 1,
      idempotencyKeys: 1,
    });
  });

  it('lets one app at a time delete (the lease), the other skipping its turn', async () => {
    await runAged(90);
    await pool.query(
      `INSERT INTO leases (name, holder, expires_at) VALUES ('run-retention', 'app-b', now() + interval '1 minute')
       ON CONFLICT (name) DO UPDATE SET holder = 'app-b', expires_at = EXCLUDED.expires_at`,
    );
    expect(await retention(30, 'app-a').retain()).toMatchObject({ runs: 0 });
    expect(await retention(30, 'app-b').retain()).toMatchObject({ runs: 1 });
  });

  it("refuses a deleted flow's runs in the INSERT itself, while another app's cache still has it published", async () => {
    const other = withPublishedFlowCache(createFlowsRepository(pool), {
      ttlMs: 600_000,
      maxEntries: 10,
      maxBytes: 1 << 20,
    });
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'short-lived',
      name: 'short-lived',
      definition: BENCHMARK_FLOW,
      publish: true,
    });
    expect(created.status).toBe(201);
    const cached = await other.findPublished('short-lived');
    expect(cached).not.toBeNull();
    expect((await manage(url, 'DELETE', '/v1/flows/short-lived')).status).toBe(204);
    // Stale on purpose: this "app" has not heard of the deletion.
    expect(await other.findPublished('short-lived')).toEqual(cached);
    const run = {
      id: randomUUID(),
      flowId: 'short-lived',
      flowVersionId: cached?.flowVersionId ?? '',
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    };
    await expect(runs.create(run)).rejects.toMatchObject({ code: 'FLOW_NOT_FOUND' });
    expect(await runs.get(run.id)).toBeNull();
  });
});
