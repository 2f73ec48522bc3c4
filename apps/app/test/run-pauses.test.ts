import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import {
  BENCHMARK_FLOW,
  parseMessage,
  type RunJobData,
  RunJobDataSchema,
  type RunOutcome,
  type StepResult,
  type WaitPoint,
} from '@flowbox/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { promSample } from '../../../test/prometheus.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { AppMetrics } from '../src/metrics/app-metrics.ts';
import { JobBroker } from '../src/queue/job-broker.ts';
import type { LeasedJob } from '../src/queue/leased-job.ts';
import { RUN_QUEUE_NAME, RunQueue, runJobId } from '../src/queue/run-queue.ts';
import { EndedRuns } from '../src/runs/ended-runs.ts';
import { RunLifecycle } from '../src/runs/run-lifecycle.ts';
import { RunProgressStore } from '../src/runs/run-progress-store.ts';
import { RunReconciler } from '../src/runs/run-reconciler.ts';
import { RunResumer } from '../src/runs/run-resumer.ts';
import { RunSweeper } from '../src/runs/run-sweeper.ts';
import { readResumeState } from '../src/runs/run-waits.ts';
import { createRunsRepository, type RunsRepository } from '../src/runs/runs-repository.ts';
import { SyncResponseHub } from '../src/sync/sync-response-hub.ts';
import { createWaitsRepository } from '../src/waits/waits-repository.ts';
import { TEST_TRIGGER } from './run-fixtures.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const INSTANCE = 'app-under-test';

const done = (name: string): StepResult => ({
  name,
  kind: 'code',
  status: 'SUCCEEDED',
  input: {},
  output: { name },
  startedAt: new Date(0).toISOString(),
  durationMs: 1,
});
const waiting = (name: string, waitingFor: string): StepResult => ({
  name,
  kind: 'delay',
  status: 'WAITING',
  input: {},
  waitingFor,
  startedAt: new Date(0).toISOString(),
  durationMs: 0,
});
const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const delayWait = (path: string, resumeAt: string): WaitPoint => ({
  path,
  step: path,
  kind: 'delay',
  resumeAt,
});
const paused = (runId: string, waits: WaitPoint[], resumes = 0): RunOutcome => ({
  status: 'PAUSED',
  steps: [done('first'), waiting(waits[0]?.path ?? 'later', 'a while')],
  logKey: null,
  pause: { waits, checkpointKey: `checkpoints/${runId}/${resumes}.json` },
});

// A run's pause and resume against real Postgres (the conditional updates, run_waits) and real
// Redis (the run queue, its delayed resume jobs): PAUSED outcomes fed to the lifecycle as a
// worker's result would bring them, and resume jobs started as a dispatch starts them.
describe('paused runs', () => {
  let pool: Pool;
  let runs: RunsRepository;
  let redis: Redis;
  let subscriber: Redis;
  let hub: SyncResponseHub;
  let queue: RunQueue;
  let inspect: Queue;
  let prefix: string;
  let metrics: AppMetrics;
  let resumer: RunResumer;
  let lifecycle: RunLifecycle;
  let reconciler: RunReconciler;

  beforeAll(async () => {
    pool = createPool(await createTestDatabase(), 4);
    await migrate(pool, logger);
    await createFlowsRepository(pool).createFlow({ id: 'flow', name: 'flow', definition: BENCHMARK_FLOW });
    runs = createRunsRepository(pool);
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    subscriber = new Redis(inject('redisUrl'));
    prefix = testNamespace();
    hub = new SyncResponseHub({ publisher: redis, subscriber, prefix, instanceId: INSTANCE, logger });
    await hub.start();
    metrics = new AppMetrics();
    queue = new RunQueue({ connection: redis, prefix, maxAttempts: 2, logger });
    inspect = new Queue(RUN_QUEUE_NAME, { connection: redis, prefix });
    resumer = new RunResumer({ pool, queue, metrics, logger });
    lifecycle = new RunLifecycle({
      runs,
      ended: new EndedRuns({ ttlMs: 120_000 }),
      progress: new RunProgressStore({ redis, prefix, ttlMs: 60_000 }),
      hub,
      queue: { add: async () => {} },
      maxAttempts: 2,
      metrics,
      logger,
      pauses: resumer,
    });
    reconciler = new RunReconciler({
      pool,
      holder: 'app-a',
      runs,
      lifecycle,
      queue,
      resumer,
      metrics,
      logger,
      queuedAfterSeconds: 1,
      flowTimeoutSeconds: 60,
      redisDown: () => false,
      isOutage: () => false,
    });
  });
  afterAll(async () => {
    await hub?.close();
    await inspect?.close();
    await queue?.close();
    redis?.disconnect();
    subscriber?.disconnect();
    await pool?.end();
  });

  /** A run started by a worker, as a job's dispatch leaves it. */
  async function runningRun(): Promise<string> {
    const id = randomUUID();
    await lifecycle.accept({
      id,
      flowId: 'flow',
      flowVersionId: 'flow-v1',
      sync: false,
      trigger: TEST_TRIGGER,
      syncInstanceId: null,
    });
    expect(await lifecycle.start(id, 'worker-1')).toBe('started');
    return id;
  }
  const pausedCount = async () => promSample((await metrics.render()).body, 'flowbox_runs_paused_total') ?? 0;
  /** flowbox_runs_resumed_total over its causes. */
  const resumedCount = async () => {
    const text = (await metrics.render()).body;
    return ['timer', 'pause', 'reconciler', 'request', 'child']
      .map((cause) => promSample(text, `flowbox_runs_resumed_total{cause="${cause}"}`) ?? 0)
      .reduce((a, b) => a + b, 0);
  };
  const attempt = (runId: string) => ({ runId, flowId: 'flow', syncInstanceId: null, attempt: 1 });

  async function row(runId: string) {
    const { rows } = await pool.query<{
      status: string;
      resumes: number;
      paused_at: Date | null;
      worker_id: string | null;
      checkpoint_key: string | null;
    }>('SELECT status, resumes, paused_at, worker_id, checkpoint_key FROM runs WHERE id = $1', [runId]);
    return rows[0];
  }
  async function waitsOf(runId: string) {
    const { rows } = await pool.query<{ path: string; kind: string; answered: boolean }>(
      'SELECT path, kind, answered_at IS NOT NULL AS answered FROM run_waits WHERE run_id = $1 ORDER BY path',
      [runId],
    );
    return rows;
  }
  const requestWait = (path: string): WaitPoint => ({ path, step: path, kind: 'request' });
  const causeCount = async (cause: string) =>
    promSample((await metrics.render()).body, `flowbox_runs_resumed_total{cause="${cause}"}`) ?? 0;
  async function jobOf(data: Pick<RunJobData, 'runId' | 'resume'>): Promise<RunJobData | undefined> {
    const job = await inspect.getJob(runJobId(data));
    if (job === undefined) return undefined;
    const parsed = parseMessage(RunJobDataSchema, job.data);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  }

  it('pauses a run with its steps and waits, frees its worker and enqueues its resume job, delayed', async () => {
    const id = await runningRun();
    const pausedBefore = await pausedCount();
    expect(
      await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('later', inSeconds(3600))]) }),
    ).toBe('paused');
    expect(await row(id)).toMatchObject({
      status: 'PAUSED',
      resumes: 0,
      paused_at: expect.any(Date),
      worker_id: null,
      checkpoint_key: `checkpoints/${id}/0.json`,
    });
    expect((await runs.get(id))?.steps.map((step) => step.status)).toEqual(['SUCCEEDED', 'WAITING']);
    expect(await waitsOf(id)).toEqual([{ path: 'later', kind: 'delay', answered: false }]);
    // One job for the pause: its resume, due at the wait's time.
    expect(await jobOf({ runId: id, resume: 1 })).toMatchObject({
      runId: id,
      resume: 1,
      flowVersionId: 'flow-v1',
    });
    // Without the trigger: it waits as long as the pause; its dispatch reads the row's.
    expect(await jobOf({ runId: id, resume: 1 })).not.toHaveProperty('trigger');
    const resumeJob = await inspect.getJob(runJobId({ runId: id, resume: 1 }));
    expect(await resumeJob?.isDelayed()).toBe(true);
    expect(resumeJob?.opts.delay).toBeGreaterThan(3_500_000);
    // No run job: nothing holds a worker while it waits, nor counts as a run waiting to start.
    expect(await jobOf({ runId: id })).toBeUndefined();
    expect(await queue.waiting()).toBe(0);
    expect(await pausedCount()).toBe(pausedBefore + 1);
  });

  it("ends a run whose pause names another run's checkpoint INTERNAL_ERROR, pausing nothing", async () => {
    const id = await runningRun();
    const outcome = paused(id, [delayWait('later', inSeconds(3600))]);
    if (outcome.pause !== undefined) outcome.pause.checkpointKey = `checkpoints/${randomUUID()}/0.json`;
    expect(await lifecycle.conclude(attempt(id), { outcome })).toBe('finished');
    expect(await runs.get(id)).toMatchObject({
      status: 'INTERNAL_ERROR',
      error: { code: 'INTERNAL', message: expect.stringContaining('not its own') },
    });
    expect(await waitsOf(id)).toEqual([]);
  });

  it('resumes exactly once whoever calls, enqueueing the resume job with its number', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('later', inSeconds(3600))]) });
    const resumedBefore = await resumedCount();
    // A timer of another pause resumes nothing.
    expect(await resumer.resume(id, { expectedResumes: 5, cause: 'timer' })).toBeNull();
    const calls = await Promise.all([
      resumer.resume(id, { expectedResumes: 0, cause: 'timer' }),
      resumer.resume(id, { cause: 'reconciler' }),
      resumer.resume(id, { cause: 'request' }),
    ]);
    expect(calls.filter((n) => n !== null)).toEqual([1]);
    expect(await resumedCount()).toBe(resumedBefore + 1);
    expect(await row(id)).toMatchObject({ status: 'QUEUED', resumes: 1, paused_at: null });
    expect(await jobOf({ runId: id, resume: 1 })).toMatchObject({
      runId: id,
      resume: 1,
      flowVersionId: 'flow-v1',
    });
    // In place of the pause's delayed job (same id): due now, not in an hour.
    expect(await (await inspect.getJob(runJobId({ runId: id, resume: 1 })))?.isWaiting()).toBe(true);
    expect(await resumer.resume(id, { cause: 'child' })).toBeNull();
  });

  it('resumes at once a pause whose wait was answered first, or whose time has passed', async () => {
    const answered = await runningRun();
    // A request reached the wait URL before the run reached its wait.
    await pool.query(
      `INSERT INTO run_waits (run_id, path, kind, value, answered_at)
       VALUES ($1, 'approval', 'approval', '{"approved":true}', now())`,
      [answered],
    );
    const outcome = paused(answered, [{ path: 'approval', step: 'approval', kind: 'approval' }]);
    expect(await lifecycle.conclude(attempt(answered), { outcome })).toBe('paused');
    expect(await row(answered)).toMatchObject({ status: 'QUEUED', resumes: 1 });
    // The pause kept what arrived: the resume gets it.
    expect(await readResumeState(pool, answered)).toMatchObject({
      checkpointKey: `checkpoints/${answered}/0.json`,
      values: { approval: { approved: true } },
      lateMs: 0,
    });

    const due = await runningRun();
    await lifecycle.conclude(attempt(due), { outcome: paused(due, [delayWait('later', inSeconds(-5))]) });
    expect(await row(due)).toMatchObject({ status: 'QUEUED', resumes: 1 });
    expect((await readResumeState(pool, due)).lateMs).toBeGreaterThanOrEqual(5_000);
    expect(await jobOf({ runId: due, resume: 1 })).toMatchObject({ resume: 1 });
  });

  it('resumes a run when its due resume job starts, once, counting the late time and the cause', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('soon', inSeconds(0.3))]) });
    // The app's broker takes it once due, as for a worker's poll (behind the jobs the tests
    // above left waiting, settled here).
    const broker = new JobBroker({ connection: redis, prefix, logger, blockSeconds: 1 });
    await broker.start();
    let lease: LeasedJob | null = null;
    try {
      for (;;) {
        lease = await broker.next(10_000, new AbortController().signal, 'worker-2');
        if (lease === null || (lease.data.type === 'run-flow' && lease.data.runId === id)) break;
        await lease.complete();
      }
    } finally {
      await broker.close();
    }
    expect(lease?.data).toMatchObject({ runId: id, resume: 1 });
    expect(await row(id)).toMatchObject({ status: 'PAUSED', resumes: 0 });
    // It came due 5 s ago (a backlog held it): its dispatch says so.
    await pool.query("UPDATE run_waits SET resume_at = now() - interval '5 seconds' WHERE run_id = $1", [id]);
    const timers = await causeCount('timer');
    expect(await lifecycle.start(id, 'worker-2', 1)).toBe('resumed');
    expect(await causeCount('timer')).toBe(timers + 1);
    expect(await row(id)).toMatchObject({
      status: 'RUNNING',
      resumes: 1,
      paused_at: null,
      worker_id: 'worker-2',
    });
    const { rows } = await pool.query<{ attempts: number }>('SELECT attempts FROM runs WHERE id = $1', [id]);
    expect(rows[0]?.attempts).toBe(1);
    expect(await readResumeState(pool, id)).toMatchObject({ trigger: TEST_TRIGGER, syncInstanceId: null });
    expect((await readResumeState(pool, id)).lateMs).toBeGreaterThanOrEqual(5_000);
    // Nothing else resumes it now: a request, the reconciler (the pause's waits are taken).
    expect(await resumer.resume(id, { cause: 'request' })).toBeNull();
    await pool.query("UPDATE runs SET paused_at = now() - interval '1 minute' WHERE id = $1", [id]);
    expect((await reconciler.reconcile()).resumed).not.toContain(id);
    expect(await causeCount('timer')).toBe(timers + 1);
  });

  it('drops a delayed resume job whose pause ended otherwise: resumed by a request, or the run gone', async () => {
    const answered = await runningRun();
    await lifecycle.conclude(attempt(answered), {
      outcome: paused(answered, [delayWait('later', inSeconds(3600))]),
    });
    const timers = await causeCount('timer');
    expect(await resumer.resume(answered, { cause: 'request' })).toBe(1);
    // Its job (in place of the delayed one) starts the QUEUED run as any resume's: no second resume.
    expect(await lifecycle.start(answered, 'worker-2', 1)).toBe('started');
    expect(await causeCount('timer')).toBe(timers);
    // A copy of the pause's job delivered again (a lost lock, the reconciler) runs nothing twice.
    await lifecycle.conclude(attempt(answered), {
      outcome: paused(answered, [delayWait('again', inSeconds(3600))], 1),
    });
    expect(await lifecycle.start(answered, 'worker-3', 1)).toBe('paused');
    expect(await row(answered)).toMatchObject({ status: 'PAUSED', resumes: 1 });

    const deleted = await runningRun();
    await lifecycle.conclude(attempt(deleted), {
      outcome: paused(deleted, [delayWait('later', inSeconds(3600))]),
    });
    await pool.query('DELETE FROM runs WHERE id = $1', [deleted]);
    expect(await lifecycle.start(deleted, 'worker-2', 1)).toBe('ended');
  });

  it('drops the unanswered waits of an earlier pause when the run pauses again', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), {
      outcome: paused(id, [delayWait('first-delay', inSeconds(3600))]),
    });
    await resumer.resume(id, { cause: 'timer' });
    expect(await lifecycle.start(id, 'worker-2')).toBe('started');
    const again = paused(id, [delayWait('second-delay', inSeconds(3600))], 1);
    expect(await lifecycle.conclude(attempt(id), { outcome: again })).toBe('paused');
    expect(await waitsOf(id)).toEqual([{ path: 'second-delay', kind: 'delay', answered: false }]);
    expect(await row(id)).toMatchObject({
      status: 'PAUSED',
      resumes: 1,
      checkpoint_key: `checkpoints/${id}/1.json`,
    });
    expect(await (await inspect.getJob(runJobId({ runId: id, resume: 2 })))?.isDelayed()).toBe(true);
  });

  it('leaves paused runs to their waits: the sweeper, a lost worker and a late result change nothing', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('later', inSeconds(3600))]) });
    await pool.query("UPDATE runs SET started_at = now() - interval '1 hour' WHERE id = $1", [id]);
    const sweeper = new RunSweeper({ lifecycle, logger, flowTimeoutSeconds: 1 });
    expect(await sweeper.sweep()).not.toContain(id);
    expect(await lifecycle.conclude(attempt(id), lifecycle.lostWorkerOutcome())).toBe('already-final');
    expect(
      await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('x', inSeconds(1))]) }),
    ).toBe('already-final');
    expect(await row(id)).toMatchObject({ status: 'PAUSED', resumes: 0 });
    expect(await waitsOf(id)).toEqual([{ path: 'later', kind: 'delay', answered: false }]);
  });

  it('resumes a due run whose resume job Redis lost, and enqueues a resumed run whose job it lost, once', async () => {
    const lostTimer = await runningRun();
    await lifecycle.conclude(attempt(lostTimer), {
      outcome: paused(lostTimer, [delayWait('later', inSeconds(3600))]),
    });
    await inspect.remove(runJobId({ runId: lostTimer, resume: 1 }));
    const notDue = await runningRun();
    await lifecycle.conclude(attempt(notDue), {
      outcome: paused(notDue, [delayWait('later', inSeconds(3600))]),
    });
    // Due, its job still in Redis (behind a backlog, its flow at its cap): on its way.
    const behind = await runningRun();
    await lifecycle.conclude(attempt(behind), {
      outcome: paused(behind, [delayWait('later', inSeconds(3600))]),
    });
    // Due, its job finished without resuming it (as BullMQ's moveToFinished marks a job).
    const finished = await runningRun();
    await lifecycle.conclude(attempt(finished), {
      outcome: paused(finished, [delayWait('later', inSeconds(3600))]),
    });
    await redis.hset(
      inspect.toKey(runJobId({ runId: finished, resume: 1 })),
      'finishedOn',
      String(Date.now()),
    );
    // Their time passed.
    await pool.query(
      "UPDATE run_waits SET resume_at = now() - interval '10 seconds' WHERE run_id = ANY($1::uuid[])",
      [[lostTimer, behind, finished]],
    );

    const first = await reconciler.reconcile();
    expect(first.resumed).toContain(lostTimer);
    expect(first.resumed).toContain(finished);
    expect(first.resumed).not.toContain(notDue);
    expect(first.resumed).not.toContain(behind);
    expect(await row(behind)).toMatchObject({ status: 'PAUSED', resumes: 0 });
    // Made again, due now, in place of the finished one.
    expect(await (await inspect.getJob(runJobId({ runId: finished, resume: 1 })))?.isWaiting()).toBe(true);
    expect(await row(lostTimer)).toMatchObject({ status: 'QUEUED', resumes: 1 });
    expect((await reconciler.reconcile()).resumed).not.toContain(lostTimer);

    // Its resume job lost too (Redis restarted empty again): enqueued again as the resume it is.
    await inspect.remove(runJobId({ runId: lostTimer, resume: 1 }));
    await pool.query("UPDATE runs SET created_at = now() - interval '1 minute' WHERE id = $1", [lostTimer]);
    expect((await reconciler.reconcile()).requeued).toContain(lostTimer);
    expect(await jobOf({ runId: lostTimer, resume: 1 })).toMatchObject({ resume: 1 });
    // The resume has not started yet: none of its attempts is spent.
    expect(await jobOf({ runId: lostTimer, resume: 1 })).toMatchObject({ priorAttempts: 0 });
    expect((await reconciler.reconcile()).requeued).not.toContain(lostTimer);
  });

  it('gives a resume attempts of its own: a resumed run that loses its worker and its job is retried', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('later', inSeconds(3600))]) });
    expect(await resumer.resume(id, { cause: 'timer' })).toBe(1);
    expect(await lifecycle.start(id, 'worker-2', 1)).toBe('started');
    const { rows } = await pool.query<{ attempts: number }>('SELECT attempts FROM runs WHERE id = $1', [id]);
    expect(rows[0]?.attempts).toBe(1);
    // Its worker and its job are gone (SIGKILL, Redis lost the job) past the flow timeout.
    await inspect.remove(runJobId({ runId: id, resume: 1 }));
    await pool.query("UPDATE runs SET started_at = now() - interval '5 minutes' WHERE id = $1", [id]);
    expect((await reconciler.reconcile()).workerLost).toContain(id);
    // With RUN_MAX_ATTEMPTS 2 the resume's first attempt is retried, as a first start's would be.
    expect(await row(id)).toMatchObject({ status: 'QUEUED', resumes: 1 });
    expect(await jobOf({ runId: id, resume: 1 })).toMatchObject({ resume: 1, priorAttempts: 1 });
    expect(await lifecycle.start(id, 'worker-3', 1)).toBe('started');
    const after = await pool.query<{ attempts: number }>('SELECT attempts FROM runs WHERE id = $1', [id]);
    expect(after.rows[0]?.attempts).toBe(2);
  });

  it('does not start a run from the job of an earlier pause, saying why', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), { outcome: paused(id, [delayWait('later', inSeconds(3600))]) });
    // The first start's job delivered again while the run is paused.
    expect(await lifecycle.start(id, 'worker-2', 0)).toBe('paused');
    await resumer.resume(id, { cause: 'timer' });
    // The first start's job while the run waits to run its first resume.
    expect(await lifecycle.start(id, 'worker-2', 0)).toBe('superseded');
    expect(await lifecycle.start(id, 'worker-2', 1)).toBe('started');
    expect(
      await lifecycle.conclude(attempt(id), {
        outcome: paused(id, [delayWait('again', inSeconds(3600))], 1),
      }),
    ).toBe('paused');
    // The resume's job delivered again after the run paused again.
    expect(await lifecycle.start(id, 'worker-3', 1)).toBe('paused');
    expect(await row(id)).toMatchObject({ status: 'PAUSED', resumes: 1 });
  });

  it('resumes a paused run whose wait was answered but whose resume was lost, once, after the grace', async () => {
    const waits = createWaitsRepository(pool);
    const lost = await runningRun();
    await lifecycle.conclude(attempt(lost), { outcome: paused(lost, [requestWait('approval')]) });
    // The answer is written; the app dies before its resume call.
    expect(await waits.answer(lost, 'approval', 'request', { body: 'yes' })).toEqual({ waiting: true });
    // An answer that came early, for a wait the run has not reached: not a lost resume.
    const early = await runningRun();
    await lifecycle.conclude(attempt(early), { outcome: paused(early, [requestWait('first')]) });
    expect(await waits.answer(early, 'later', 'request', { body: 'early' })).toEqual({ waiting: false });
    const fresh = await runningRun();
    await lifecycle.conclude(attempt(fresh), { outcome: paused(fresh, [requestWait('approval')]) });
    await waits.answer(fresh, 'approval', 'request', { body: 'now' });

    // Within the grace (queuedAfterSeconds: 1) nothing is resumed: its resume call may be on its way.
    await pool.query(
      "UPDATE run_waits SET answered_at = now() - interval '1 minute' WHERE run_id = ANY($1::uuid[]) AND answered_at IS NOT NULL",
      [[lost, early]],
    );
    await pool.query("UPDATE runs SET paused_at = now() - interval '2 minutes' WHERE id = ANY($1::uuid[])", [
      [lost, early],
    ]);
    const before = await causeCount('reconciler');
    const pass = await reconciler.reconcile();
    expect(pass.resumed).toContain(lost);
    expect(pass.resumed).not.toContain(early);
    expect(pass.resumed).not.toContain(fresh);
    expect(await causeCount('reconciler')).toBe(before + 1);
    expect(await row(lost)).toMatchObject({ status: 'QUEUED', resumes: 1 });
    expect(await jobOf({ runId: lost, resume: 1 })).toMatchObject({ resume: 1 });
    expect((await readResumeState(pool, lost)).values).toEqual({ approval: { body: 'yes' } });
    expect((await reconciler.reconcile()).resumed).not.toContain(lost);

    // Its resume pauses again elsewhere: the taken answer resumes nothing more.
    expect(await lifecycle.start(lost, 'worker-2', 1)).toBe('started');
    await lifecycle.conclude(attempt(lost), { outcome: paused(lost, [requestWait('next')], 1) });
    await pool.query("UPDATE runs SET paused_at = now() - interval '2 minutes' WHERE id = $1", [lost]);
    expect((await reconciler.reconcile()).resumed).not.toContain(lost);
  });

  it('counts resumes by cause: a wait URL is request, a child run is child', async () => {
    const id = await runningRun();
    await lifecycle.conclude(attempt(id), { outcome: paused(id, [requestWait('approval')]) });
    const [requests, children] = [await causeCount('request'), await causeCount('child')];
    await resumer.resume(id, { cause: 'request' });
    expect(await causeCount('request')).toBe(requests + 1);
    expect(await causeCount('child')).toBe(children);
    expect((await metrics.render()).body).not.toContain('cause="call"');
  });
});
