import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import { BENCHMARK_FLOW, failedOutcome, type StepResult } from '@flowbox/protocol';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { promSample } from '../../../test/prometheus.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { AppMetrics } from '../src/metrics/app-metrics.ts';
import { EndedRuns } from '../src/runs/ended-runs.ts';
import { RunLifecycle } from '../src/runs/run-lifecycle.ts';
import { RunProgressStore } from '../src/runs/run-progress-store.ts';
import { RunSweeper } from '../src/runs/run-sweeper.ts';
import { createRunsRepository, type RunsRepository } from '../src/runs/runs-repository.ts';
import { SyncResponseHub } from '../src/sync/sync-response-hub.ts';
import { TEST_TRIGGER } from './run-fixtures.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const INSTANCE = 'app-under-test';
const TRIGGER = TEST_TRIGGER;

const step = (name: string): StepResult => ({
  name,
  kind: 'code',
  status: 'SUCCEEDED',
  input: {},
  output: { name },
  startedAt: new Date(0).toISOString(),
  durationMs: 1,
});
const crashed = {
  name: 'EngineCrash',
  code: 'ENGINE_CRASHED' as const,
  message: 'engine exited with code 3',
};

// The lifecycle against real Postgres (the repository's first-final-wins update) and real Redis
// (progress, the sync hub): every transition, and the races between them.
describe('run lifecycle', () => {
  let pool: Pool;
  let runs: RunsRepository;
  let redis: Redis;
  let subscriber: Redis;
  let hub: SyncResponseHub;
  let progress: RunProgressStore;
  let ended: EndedRuns;
  let lifecycle: RunLifecycle;
  let metrics: AppMetrics;

  beforeAll(async () => {
    pool = createPool(await createTestDatabase(), 2);
    await migrate(pool, logger);
    await createFlowsRepository(pool).createFlow({ id: 'flow', name: 'flow', definition: BENCHMARK_FLOW });
    runs = createRunsRepository(pool);
    redis = new Redis(inject('redisUrl'));
    subscriber = new Redis(inject('redisUrl'));
    const prefix = testNamespace();
    hub = new SyncResponseHub({ publisher: redis, subscriber, prefix, instanceId: INSTANCE, logger });
    await hub.start();
    progress = new RunProgressStore({ redis, prefix, ttlMs: 60_000 });
    ended = new EndedRuns({ ttlMs: 120_000 });
    metrics = new AppMetrics();
    lifecycle = new RunLifecycle({
      runs,
      ended,
      progress,
      hub,
      // The flow names no error flow: nothing is enqueued.
      queue: { add: async () => {} },
      maxAttempts: 2,
      metrics,
      logger,
    });
  });
  afterAll(async () => {
    await hub?.close();
    redis?.disconnect();
    subscriber?.disconnect();
    await pool?.end();
  });

  /** An accepted run, started by a worker `ageSeconds` ago unless `running` is false. */
  async function acceptedRun(options: { running?: boolean; ageSeconds?: number } = {}): Promise<string> {
    const id = randomUUID();
    await lifecycle.accept({
      id,
      flowId: 'flow',
      flowVersionId: 'flow-v1',
      sync: true,
      trigger: TRIGGER,
      syncInstanceId: INSTANCE,
    });
    if (options.running !== false) {
      expect(await lifecycle.start(id, 'worker-1')).toBe('started');
      await pool.query('UPDATE runs SET started_at = now() - make_interval(secs => $2) WHERE id = $1', [
        id,
        options.ageSeconds ?? 0,
      ]);
    }
    return id;
  }
  const attempt = (runId: string, n = 1) => ({ runId, flowId: 'flow', syncInstanceId: INSTANCE, attempt: n });

  it('finishes a run once, and tells its waiting caller', async () => {
    const runId = await acceptedRun();
    const waiter = hub.register(runId);
    const outcome = { ...failedOutcome(crashed), steps: [step('trigger')] };
    // The last attempt: a retryable failure is final.
    expect(await lifecycle.conclude(attempt(runId, 2), { outcome })).toBe('finished');
    expect(await waiter.wait(5_000)).toMatchObject({ type: 'run-ended', status: 'INTERNAL_ERROR' });
    expect(await runs.get(runId)).toMatchObject({ status: 'INTERNAL_ERROR', steps: [{ name: 'trigger' }] });
    const finished = async () =>
      (await metrics.registry.getSingleMetric('flowbox_runs_finished_total')?.get())?.values.find(
        (v) => v.labels.status === 'INTERNAL_ERROR',
      )?.value;
    const counted = (await finished()) ?? 0;
    expect(counted).toBeGreaterThanOrEqual(1);
    // A report after that (a duplicate result) changes nothing, tells nobody and counts nothing.
    const success = { outcome: { status: 'SUCCEEDED' as const, steps: [], logKey: 'k' } };
    expect(await lifecycle.conclude(attempt(runId, 2), success)).toBe('already-final');
    expect((await runs.get(runId))?.status).toBe('INTERNAL_ERROR');
    expect(await finished()).toBe(counted);
  });

  it("observes a reported run's duration, its recorded totalMs, by final status", async () => {
    const runId = await acceptedRun();
    const durations = async (what: 'count' | 'sum') =>
      promSample(
        await metrics.registry.metrics(),
        `flowbox_run_duration_seconds_${what}{status="SUCCEEDED"}`,
      ) ?? 0;
    const [countBefore, sumBefore] = [await durations('count'), await durations('sum')];
    const timings = { queueMs: 1, provisionMs: 2, bootMs: 3, runMs: 4, logPersistMs: 5, workerBusyMs: 14 };
    const success = {
      outcome: { status: 'SUCCEEDED' as const, steps: [step('trigger')], logKey: 'k' },
      timings,
    };
    expect(await lifecycle.conclude(attempt(runId, 1), success)).toBe('finished');
    expect(await durations('count')).toBe(countBefore + 1);
    const recorded = (await runs.get(runId))?.timings?.totalMs;
    expect(recorded).toBeGreaterThanOrEqual(0);
    expect((await durations('sum')) - sumBefore).toBeCloseTo((recorded ?? Number.NaN) / 1000, 6);
  });

  it('retries a retryable failure with attempts left, forgetting what the attempt reported', async () => {
    const runId = await acceptedRun();
    await progress.record(runId, [step('trigger')]);
    expect(await lifecycle.conclude(attempt(runId, 1), { outcome: failedOutcome(crashed) })).toBe('retried');
    expect(await runs.get(runId)).toMatchObject({ status: 'QUEUED', error: { code: 'ENGINE_CRASHED' } });
    expect((await progress.read(runId)).steps).toEqual([]);
    // A flow's own failure is never retried.
    const again = await acceptedRun();
    const failed = { name: 'E', code: 'CODE_STEP_FAILED' as const, message: 'boom' };
    expect(await lifecycle.conclude(attempt(again, 1), { outcome: failedOutcome(failed) })).toBe('finished');
    expect((await runs.get(again))?.status).toBe('FAILED');
  });

  it('a retry racing a final state: the final state stands', async () => {
    const runId = await acceptedRun();
    await lifecycle.failUnqueued(
      { id: runId, flowId: 'flow' },
      { name: 'E', code: 'QUEUE_UNAVAILABLE', message: 'redis down' },
    );
    expect(await lifecycle.conclude(attempt(runId, 1), { outcome: failedOutcome(crashed) })).toBe(
      'already-final',
    );
    expect(await runs.get(runId)).toMatchObject({
      status: 'INTERNAL_ERROR',
      error: { code: 'QUEUE_UNAVAILABLE' },
    });
  });

  it('records a lost worker as WORKER_LOST with the steps its engine reported, then refuses its callbacks', async () => {
    const silent = await acceptedRun();
    await progress.record(silent, [step('trigger'), step('step_1')]);
    const lost = lifecycle.lostWorkerOutcome();
    expect(await lifecycle.conclude(attempt(silent, 2), lost)).toBe('finished');
    expect(await runs.get(silent)).toMatchObject({
      status: 'INTERNAL_ERROR',
      error: { code: 'WORKER_LOST' },
      steps: [{ name: 'trigger' }, { name: 'step_1' }],
    });
    // Its engine's token is spent: the engine routes refuse it from now on.
    expect(ended.hasEnded(silent)).toBe(true);
  });

  describe('a final write Postgres refuses', () => {
    // A trigger refuses the statement recording a run whose steps name `refuse-always`, and the
    // first one naming `refuse-once` (a sequence, which a refused statement does not roll back).
    beforeAll(async () => {
      await pool.query('CREATE SEQUENCE refuse_once_seq');
      await pool.query(`CREATE FUNCTION refuse_final_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.steps::text LIKE '%refuse-always%'
            OR (NEW.steps::text LIKE '%refuse-once%' AND nextval('refuse_once_seq') = 1) THEN
            RAISE EXCEPTION 'refused by the test';
          END IF;
          RETURN NEW;
        END $$`);
      await pool.query(
        'CREATE TRIGGER refuse_final_write BEFORE UPDATE OF steps ON runs FOR EACH ROW EXECUTE FUNCTION refuse_final_write()',
      );
    });
    const succeeded = (mark: string) => ({
      outcome: { status: 'SUCCEEDED' as const, steps: [step('trigger'), step(mark)], logKey: 'k' },
    });

    it('ends the run INTERNAL_ERROR naming the refused write, with its log key, and tells its caller', async () => {
      const runId = await acceptedRun();
      const waiter = hub.register(runId);
      expect(await lifecycle.conclude(attempt(runId, 1), succeeded('refuse-always'))).toBe('finished');
      expect(await waiter.wait(5_000)).toMatchObject({
        type: 'run-ended',
        status: 'INTERNAL_ERROR',
        error: { code: 'INTERNAL' },
      });
      const run = await runs.get(runId);
      expect(run).toMatchObject({ status: 'INTERNAL_ERROR', logKey: 'k', steps: [], attempts: 1 });
      expect(run?.error?.message).toBe(
        'the run ended SUCCEEDED but its final state could not be written (refused by the test); it is not run again',
      );
      // Final: the reconciler's lost-worker path finds nothing to run again.
      expect(await lifecycle.conclude(attempt(runId, 1), lifecycle.lostWorkerOutcome())).toBe(
        'already-final',
      );
    });

    it('records the outcome when the write is refused once and taken on its second try', async () => {
      const runId = await acceptedRun();
      expect(await lifecycle.conclude(attempt(runId, 1), succeeded('refuse-once'))).toBe('finished');
      expect(await runs.get(runId)).toMatchObject({
        status: 'SUCCEEDED',
        steps: [{ name: 'trigger' }, { name: 'refuse-once' }],
      });
    });
  });

  it('sweeps only RUNNING runs past the flow timeout plus grace, once; a late report changes nothing', async () => {
    // Flow timeout 60 s: the deadline is 90 s after the start.
    const sweeper = new RunSweeper({ lifecycle, logger, flowTimeoutSeconds: 60 });
    const overdue = await acceptedRun({ ageSeconds: 120 });
    const recent = await acceptedRun({ ageSeconds: 30 });
    const queued = await acceptedRun({ running: false });

    expect(await sweeper.sweep()).toContain(overdue);
    expect(await runs.get(overdue)).toMatchObject({
      status: 'TIMEOUT',
      error: { code: 'RUN_ABANDONED', message: 'no worker reported this run within 90s of its start' },
    });
    expect((await runs.get(recent))?.status).toBe('RUNNING');
    expect((await runs.get(queued))?.status).toBe('QUEUED');
    // The swept run's engine, should it still call back here, is refused from now on.
    expect(ended.hasEnded(overdue)).toBe(true);
    expect(ended.hasEnded(recent)).toBe(false);

    // A second pass finds nothing; the lost worker's late result changes nothing.
    expect(await sweeper.sweep()).not.toContain(overdue);
    const late = { outcome: { status: 'SUCCEEDED' as const, steps: [step('trigger')], logKey: 'k' } };
    expect(await lifecycle.conclude(attempt(overdue, 1), late)).toBe('already-final');
    expect((await runs.get(overdue))?.status).toBe('TIMEOUT');
  });
});
