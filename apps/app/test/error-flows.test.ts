import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import {
  BENCHMARK_FLOW,
  type FlowDefinition,
  failedOutcome,
  parseMessage,
  RunJobDataSchema,
  type StepResult,
} from '@flowbox/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository, type FlowsRepository } from '../src/flows/flows-repository.ts';
import { AppMetrics } from '../src/metrics/app-metrics.ts';
import { RUN_QUEUE_NAME, RunQueue } from '../src/queue/run-queue.ts';
import { EndedRuns } from '../src/runs/ended-runs.ts';
import { type ErrorRunQueue, RunLifecycle } from '../src/runs/run-lifecycle.ts';
import { RunProgressStore } from '../src/runs/run-progress-store.ts';
import { RunReconciler } from '../src/runs/run-reconciler.ts';
import { createRunsRepository } from '../src/runs/runs-repository.ts';
import { SyncResponseHub } from '../src/sync/sync-response-hub.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const INSTANCE = 'app-under-test';
const FAILED_STEP: StepResult = {
  name: 'code',
  path: 'code',
  kind: 'code',
  status: 'FAILED',
  input: {},
  error: { name: 'Error', code: 'CODE_STEP_FAILED', message: 'boom' },
  startedAt: '2026-11-25T10:00:00.000Z',
  durationMs: 1,
};
const FAILED = {
  outcome: {
    ...failedOutcome({ name: 'Error', code: 'CODE_STEP_FAILED', message: 'boom', step: 'code' }),
    steps: [FAILED_STEP],
  },
};

// A failed run's error flow run, against real Postgres and Redis: created by the final write
// itself (both or neither), once per failed run however many apps conclude it, and enqueued by
// the reconciler when the enqueue after the write was lost.
describe('error flow runs', () => {
  let pool: Pool;
  let flows: FlowsRepository;
  let redis: Redis;
  let subscriber: Redis;
  let hub: SyncResponseHub;
  let queue: RunQueue;
  let inspect: Queue;
  let prefix: string;
  let databaseUrl: string;
  const pools: Pool[] = [];

  /** One app's lifecycle on its own pool, enqueueing through `errorQueue`. */
  function lifecycleOn(ownPool: Pool, errorQueue: ErrorRunQueue = queue): RunLifecycle {
    return new RunLifecycle({
      runs: createRunsRepository(ownPool),
      ended: new EndedRuns({ ttlMs: 120_000 }),
      progress: new RunProgressStore({ redis, prefix, ttlMs: 60_000 }),
      hub,
      queue: errorQueue,
      maxAttempts: 1,
      metrics: new AppMetrics(),
      logger,
    });
  }

  async function publishedFlow(id: string, definition: FlowDefinition): Promise<string> {
    const version = await flows.createFlow({ id, name: id, definition });
    if (version === null) throw new Error(`flow ${id} exists`);
    await flows.publish(version.id, { key: 'k', sha256: 's', sizeBytes: 1, pieces: [] }, []);
    return version.id;
  }

  /** A RUNNING run of `flowId`'s published version. */
  async function runningRun(lifecycle: RunLifecycle, flowId: string): Promise<string> {
    const id = randomUUID();
    await lifecycle.accept({
      id,
      flowId,
      flowVersionId: `${flowId}-v1`,
      sync: false,
      trigger: { method: 'POST', body: {}, rawBody: null, rawBodyEncoding: 'utf8', headers: {}, query: {} },
      syncInstanceId: null,
    });
    expect(await lifecycle.start(id, 'worker-1')).toBe('started');
    return id;
  }

  const attempt = (runId: string, flowId: string) => ({ runId, flowId, syncInstanceId: null, attempt: 1 });

  const errorRunsOf = async (runId: string) =>
    (
      await pool.query<{
        id: string;
        flow_id: string;
        status: string;
        source: string;
        trigger: { body: unknown };
      }>('SELECT id, flow_id, status, source, trigger FROM runs WHERE caused_by = $1', [runId])
    ).rows;

  async function jobOf(runId: string) {
    const job = await inspect.getJob(runId);
    if (job === undefined) return undefined;
    const parsed = parseMessage(RunJobDataSchema, job.data);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  }

  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
    pool = createPool(databaseUrl, 4);
    await migrate(pool, logger);
    flows = createFlowsRepository(pool);
    await publishedFlow('handler', BENCHMARK_FLOW);
    await publishedFlow('main', { ...BENCHMARK_FLOW, onFailure: 'handler' });
    await publishedFlow('gone-handler', BENCHMARK_FLOW);
    await publishedFlow('orphan', { ...BENCHMARK_FLOW, onFailure: 'gone-handler' });
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    subscriber = new Redis(inject('redisUrl'));
    prefix = testNamespace();
    hub = new SyncResponseHub({ publisher: redis, subscriber, prefix, instanceId: INSTANCE, logger });
    await hub.start();
    queue = new RunQueue({ connection: redis, prefix, maxAttempts: 1, logger });
    inspect = new Queue(RUN_QUEUE_NAME, { connection: redis, prefix });
  });
  afterAll(async () => {
    await hub?.close();
    await inspect?.close();
    await queue?.close();
    redis?.disconnect();
    subscriber?.disconnect();
    for (const other of pools) await other.end();
    await pool?.end();
  });

  it('starts one error run, enqueued, when two apps conclude the same failed run at once', async () => {
    const poolB = createPool(databaseUrl, 2);
    pools.push(poolB);
    const appA = lifecycleOn(pool);
    const appB = lifecycleOn(poolB);
    const runId = await runningRun(appA, 'main');
    const results = await Promise.all([
      appA.conclude(attempt(runId, 'main'), FAILED),
      appB.conclude(attempt(runId, 'main'), FAILED),
    ]);
    expect(results.sort()).toEqual(['already-final', 'finished']);
    const [errorRun, ...more] = await errorRunsOf(runId);
    expect(more).toEqual([]);
    expect(errorRun).toMatchObject({
      flow_id: 'handler',
      status: 'QUEUED',
      trigger: {
        body: {
          runId,
          flowId: 'main',
          flowVersionId: 'main-v1',
          status: 'FAILED',
          error: { code: 'CODE_STEP_FAILED', message: 'boom' },
          failedStep: { name: 'code', path: 'code' },
        },
      },
    });
    expect(await jobOf(String(errorRun?.id))).toMatchObject({ flowId: 'handler', syncInstanceId: null });
  });

  it('writes the final state and the error run together, or neither', async () => {
    const lifecycle = lifecycleOn(pool);
    const runId = await runningRun(lifecycle, 'main');
    // The error run's INSERT is refused: the failed run's final write goes with it.
    await pool.query(`CREATE FUNCTION refuse_error_run() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'error run refused'; END $$`);
    await pool.query(`CREATE TRIGGER refuse_error_run BEFORE INSERT ON runs FOR EACH ROW
      WHEN (NEW.caused_by IS NOT NULL) EXECUTE FUNCTION refuse_error_run()`);
    const refusedTwice = await runningRun(lifecycle, 'main');
    try {
      await expect(createRunsRepository(pool).finish(runId, FAILED)).rejects.toThrow('error run refused');
      expect(await createRunsRepository(pool).get(runId)).toMatchObject({
        status: 'RUNNING',
        finishedAt: null,
      });
      expect(await errorRunsOf(runId)).toEqual([]);
      // The lifecycle's last-resort write ends the run without its error run (what was refused).
      expect(await lifecycle.conclude(attempt(refusedTwice, 'main'), FAILED)).toBe('finished');
      expect(await createRunsRepository(pool).get(refusedTwice)).toMatchObject({
        status: 'INTERNAL_ERROR',
        error: { code: 'INTERNAL', message: expect.stringContaining('error run refused') },
      });
      expect(await errorRunsOf(refusedTwice)).toEqual([]);
    } finally {
      await pool.query('DROP TRIGGER refuse_error_run ON runs');
      await pool.query('DROP FUNCTION refuse_error_run()');
    }
    expect(await lifecycle.conclude(attempt(runId, 'main'), FAILED)).toBe('finished');
    expect(await createRunsRepository(pool).get(runId)).toMatchObject({ status: 'FAILED' });
    expect(await errorRunsOf(runId)).toHaveLength(1);
  });

  it('leaves an error run whose enqueue was lost to the reconciler, which enqueues it once', async () => {
    const lost = lifecycleOn(pool, {
      add: async () => {
        throw new Error('Redis went away');
      },
    });
    const runId = await runningRun(lost, 'main');
    expect(await lost.conclude(attempt(runId, 'main'), FAILED)).toBe('finished');
    const [errorRun] = await errorRunsOf(runId);
    const errorRunId = String(errorRun?.id);
    expect(await jobOf(errorRunId)).toBeUndefined();
    await pool.query(`UPDATE runs SET created_at = now() - interval '30 seconds' WHERE id = $1`, [
      errorRunId,
    ]);
    const reconciler = new RunReconciler({
      pool,
      holder: 'app-a',
      runs: createRunsRepository(pool),
      lifecycle: lifecycleOn(pool),
      queue,
      metrics: new AppMetrics(),
      logger,
      queuedAfterSeconds: 5,
      flowTimeoutSeconds: 60,
      redisDown: () => false,
      isOutage: () => false,
    });
    try {
      expect((await reconciler.reconcile()).requeued).toContain(errorRunId);
      expect(await jobOf(errorRunId)).toMatchObject({ flowId: 'handler', flowVersionId: 'handler-v1' });
      expect((await reconciler.reconcile()).requeued).not.toContain(errorRunId);
    } finally {
      await reconciler.close();
    }
  });

  it('starts the error flow of a run the sweeper ends (RUN_ABANDONED), in the same statement', async () => {
    const lifecycle = lifecycleOn(pool);
    const runId = await runningRun(lifecycle, 'main');
    await pool.query(`UPDATE runs SET started_at = now() - interval '10 minutes' WHERE id = $1`, [runId]);
    expect(await lifecycle.sweep(60)).toContain(runId);
    const [errorRun, ...more] = await errorRunsOf(runId);
    expect(more).toEqual([]);
    expect(errorRun?.source).toBe('error_flow');
    expect(errorRun?.trigger.body).toMatchObject({
      runId,
      flowId: 'main',
      status: 'TIMEOUT',
      error: { code: 'RUN_ABANDONED' },
      failedStep: null,
    });
    expect(await jobOf(String(errorRun?.id))).toMatchObject({ flowId: 'handler' });
  });

  it("starts nothing for an error run's own failure, and says why a deleted error flow did not start", async () => {
    const lifecycle = lifecycleOn(pool);
    const runId = await runningRun(lifecycle, 'main');
    await lifecycle.conclude(attempt(runId, 'main'), FAILED);
    const [errorRun] = await errorRunsOf(runId);
    const errorRunId = String(errorRun?.id);
    // The handler's run fails too: it is an error run (caused_by), so nothing more starts,
    // even were its flow to name an error flow.
    expect(await lifecycle.start(errorRunId, 'worker-1')).toBe('started');
    expect(await lifecycle.conclude(attempt(errorRunId, 'handler'), FAILED)).toBe('finished');
    expect(await errorRunsOf(errorRunId)).toEqual([]);

    expect(await flows.delete('gone-handler')).toBe(true);
    const orphan = await runningRun(lifecycle, 'orphan');
    expect(await lifecycle.conclude(attempt(orphan, 'orphan'), FAILED)).toBe('finished');
    expect(await createRunsRepository(pool).get(orphan)).toMatchObject({
      status: 'FAILED',
      errorFlowSkipped: 'error flow gone-handler does not exist (deleted)',
    });
    expect(await errorRunsOf(orphan)).toEqual([]);
  });
});
