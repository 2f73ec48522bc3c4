import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import { BENCHMARK_FLOW, parseMessage, RunJobDataSchema, type TriggerPayload } from '@flowbox/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { AppMetrics } from '../src/metrics/app-metrics.ts';
import { RUN_QUEUE_NAME, RunQueue } from '../src/queue/run-queue.ts';
import { EndedRuns } from '../src/runs/ended-runs.ts';
import { RunLifecycle } from '../src/runs/run-lifecycle.ts';
import { RunProgressStore } from '../src/runs/run-progress-store.ts';
import { RunReconciler } from '../src/runs/run-reconciler.ts';
import { createRunsRepository, type RunsRepository } from '../src/runs/runs-repository.ts';
import { SyncResponseHub } from '../src/sync/sync-response-hub.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const INSTANCE = 'app-under-test';
const TRIGGER: TriggerPayload = {
  method: 'POST',
  body: { n: 7 },
  rawBody: null,
  rawBodyEncoding: 'utf8',
  headers: { 'x-a': 'b' },
  query: { q: '1' },
};
const FLOW_TIMEOUT_SECONDS = 60;

// The reconciler against real Postgres (the run rows, the lease) and real Redis (the
// BullMQ queue): what Redis lost is enqueued again from the row, once, whatever else runs.
describe('run reconciler', () => {
  let pool: Pool;
  let runs: RunsRepository;
  let redis: Redis;
  let subscriber: Redis;
  let hub: SyncResponseHub;
  let lifecycle: RunLifecycle;
  let queue: RunQueue;
  let inspect: Queue;
  let metrics: AppMetrics;
  let databaseUrl: string;
  let reconciler: RunReconciler;
  const otherPools: Pool[] = [];

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    pool = createPool(databaseUrl, 4);
    await migrate(pool, logger);
    await createFlowsRepository(pool).createFlow({ id: 'flow', name: 'flow', definition: BENCHMARK_FLOW });
    runs = createRunsRepository(pool);
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    subscriber = new Redis(inject('redisUrl'));
    const prefix = testNamespace();
    hub = new SyncResponseHub({ publisher: redis, subscriber, prefix, instanceId: INSTANCE, logger });
    await hub.start();
    metrics = new AppMetrics();
    lifecycle = new RunLifecycle({
      runs,
      ended: new EndedRuns({ ttlMs: 120_000 }),
      progress: new RunProgressStore({ redis, prefix, ttlMs: 60_000 }),
      hub,
      // Built below; read when a final write starts an error flow.
      queue: { add: (data, rank) => queue.add(data, rank) },
      maxAttempts: 2,
      metrics,
      logger,
    });
    queue = new RunQueue({ connection: redis, prefix, maxAttempts: 2, logger });
    inspect = new Queue(RUN_QUEUE_NAME, { connection: redis, prefix });
    reconciler = reconcilerOn(pool);
  });
  afterAll(async () => {
    await hub?.close();
    await inspect?.close();
    await queue?.close();
    redis?.disconnect();
    subscriber?.disconnect();
    for (const other of otherPools) await other.end();
    await pool?.end();
  });

  function reconcilerOn(ownPool: Pool, holder = 'app-a'): RunReconciler {
    return new RunReconciler({
      pool: ownPool,
      holder,
      runs,
      lifecycle,
      queue,
      metrics,
      logger,
      queuedAfterSeconds: 5,
      flowTimeoutSeconds: FLOW_TIMEOUT_SECONDS,
      redisDown: () => false,
      isOutage: () => false,
    });
  }

  /** An accepted run, `ageSeconds` old; started by a worker that long ago when `running`. */
  async function acceptedRun(options: { ageSeconds: number; running?: boolean }): Promise<string> {
    const id = randomUUID();
    await lifecycle.accept({
      id,
      flowId: 'flow',
      flowVersionId: 'flow-v1',
      sync: true,
      trigger: TRIGGER,
      syncInstanceId: INSTANCE,
    });
    if (options.running === true) expect(await lifecycle.start(id, 'worker-1')).toBe('started');
    await pool.query(
      `UPDATE runs SET created_at = now() - make_interval(secs => $2),
         started_at = CASE WHEN started_at IS NULL THEN NULL ELSE now() - make_interval(secs => $2) END
       WHERE id = $1`,
      [id, options.ageSeconds],
    );
    return id;
  }

  const recovered = async (action: string) =>
    (await metrics.registry.getSingleMetric('flowbox_runs_recovered_total')?.get())?.values.find(
      (v) => v.labels.action === action,
    )?.value ?? 0;

  async function jobOf(runId: string) {
    const job = await inspect.getJob(runId);
    if (job === undefined) return undefined;
    const parsed = parseMessage(RunJobDataSchema, job.data);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  }

  it('enqueues a QUEUED run whose job Redis lost again, from its row, once', async () => {
    const lost = await acceptedRun({ ageSeconds: 30 });
    // Young: its webhook may be enqueueing it right now.
    const young = await acceptedRun({ ageSeconds: 0 });
    // Its job is there: left alone.
    const present = await acceptedRun({ ageSeconds: 30 });
    await queue.add({
      version: 1,
      type: 'run-flow',
      runId: present,
      flowId: 'flow',
      flowVersionId: 'flow-v1',
      trigger: { method: 'POST', body: {}, rawBody: null, rawBodyEncoding: 'utf8', headers: {}, query: {} },
      syncInstanceId: null,
      acceptedAt: 1,
    });
    const before = await recovered('requeued');

    const first = await reconciler.reconcile();
    expect(first.requeued).toContain(lost);
    expect(first.requeued).not.toContain(young);
    expect(first.requeued).not.toContain(present);
    expect(await jobOf(lost)).toMatchObject({
      runId: lost,
      flowVersionId: 'flow-v1',
      trigger: TRIGGER,
      syncInstanceId: INSTANCE,
      priorAttempts: 0,
    });
    expect(await jobOf(young)).toBeUndefined();
    // The job that was there is the one that is there.
    expect((await jobOf(present))?.acceptedAt).toBe(1);
    expect(await recovered('requeued')).toBe(before + first.requeued.length);

    // Its job exists now: a second pass leaves it alone.
    expect((await reconciler.reconcile()).requeued).not.toContain(lost);
  });

  it('keeps a trigger with a NUL (jsonb cannot hold U+0000: stored as U+FFFD) and enqueues it again', async () => {
    const id = randomUUID();
    await lifecycle.accept({
      id,
      flowId: 'flow',
      flowVersionId: 'flow-v1',
      sync: false,
      trigger: {
        method: 'POST',
        body: { text: 'a\u0000b' },
        rawBody: null,
        rawBodyEncoding: 'utf8',
        headers: {},
        query: {},
      },
      syncInstanceId: null,
    });
    await pool.query(`UPDATE runs SET created_at = now() - interval '30 seconds' WHERE id = $1`, [id]);
    expect((await reconciler.reconcile()).requeued).toContain(id);
    expect((await jobOf(id))?.trigger?.body).toEqual({ text: 'a\ufffdb' });
  });

  it('two apps at once enqueue a lost job once', async () => {
    // Another app's, with its own pool: the two take turns under the lease.
    const otherPool = createPool(databaseUrl, 2);
    otherPools.push(otherPool);
    const other = reconcilerOn(otherPool, 'app-b');
    const lost = await acceptedRun({ ageSeconds: 30 });
    const passes = await Promise.all([reconciler.reconcile(), other.reconcile(), reconciler.reconcile()]);
    expect(passes.flatMap((p) => p.requeued).filter((id) => id === lost)).toHaveLength(1);
  });

  it('takes a RUNNING run past its flow timeout whose job is gone down the lost-worker path', async () => {
    const lost = await acceptedRun({ ageSeconds: FLOW_TIMEOUT_SECONDS + 20, running: true });
    // Still within the flow timeout: its worker may be running it.
    const recent = await acceptedRun({ ageSeconds: 20, running: true });
    const before = await recovered('worker_lost');

    const pass = await reconciler.reconcile();
    expect(pass.workerLost).toEqual([lost]);
    // One attempt of two made: retried, from the start, under its own job id, counting on.
    expect(await runs.get(lost)).toMatchObject({
      status: 'QUEUED',
      attempts: 1,
      error: { code: 'WORKER_LOST' },
    });
    expect(await jobOf(lost)).toMatchObject({ runId: lost, priorAttempts: 1, syncInstanceId: INSTANCE });
    expect((await runs.get(recent))?.status).toBe('RUNNING');
    expect(await recovered('worker_lost')).toBe(before + 1);

    // Its last attempt lost the same way: final, and its sync caller hears so.
    expect(await lifecycle.start(lost, 'worker-2')).toBe('started');
    await inspect.remove(lost);
    await pool.query(`UPDATE runs SET started_at = now() - make_interval(secs => $2) WHERE id = $1`, [
      lost,
      FLOW_TIMEOUT_SECONDS + 20,
    ]);
    const waiter = hub.register(lost);
    expect((await reconciler.reconcile()).workerLost).toEqual([lost]);
    expect(await waiter.wait(5_000)).toMatchObject({ type: 'run-ended', status: 'INTERNAL_ERROR' });
    expect(await runs.get(lost)).toMatchObject({
      status: 'INTERNAL_ERROR',
      attempts: 2,
      error: { code: 'WORKER_LOST' },
    });
    expect(await jobOf(lost)).toBeUndefined();
  });
});
