import type { DispatchedJob, JobResultAck, PollReply } from '@flowbox/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { io, type Socket } from 'socket.io-client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import { waitUntil } from '../../../test/wait.ts';
import type { FlowboxApp } from '../src/app.ts';
import type { AppConfig } from '../src/env.ts';
import { RUN_QUEUE_NAME } from '../src/queue/run-queue.ts';
import { getRun, postJson, startTestApp } from './app-harness.ts';
import { jobResult } from './run-fixtures.ts';

/**
 * A webhook accepted while a worker of this app waits for a job goes to that worker directly
 * (QUEUE_DIRECT_HANDOFF): no BullMQ job exists for it. One accepted while the app's workers are
 * all busy and the queue is empty is held in the app for the first of them to finish
 * (QUEUE_HELD_RUNS_MAX): no BullMQ job either. What sends the run on again (a retry) goes
 * through the queue. Real Postgres and Redis; the worker is a socket.io client.
 */
describe.each([
  { direct: true, path: 'handed', nextWithResult: true, heldMax: 64 },
  { direct: false, path: 'queued', nextWithResult: true, heldMax: 64 },
  { direct: true, path: 'handed', nextWithResult: false, heldMax: 64 },
  { direct: false, path: 'queued', nextWithResult: false, heldMax: 64 },
  { direct: true, path: 'handed', nextWithResult: true, heldMax: 0 },
])(
  'QUEUE_DIRECT_HANDOFF=$direct QUEUE_NEXT_WITH_RESULT=$nextWithResult QUEUE_HELD_RUNS_MAX=$heldMax',
  ({ direct, path, nextWithResult, heldMax }) => {
    // Held: the next run waits in the app, not in Redis.
    const held = direct && heldMax > 0;
    let app: FlowboxApp;
    let url: string;
    let config: AppConfig;
    let redis: Redis;
    let inspect: Queue;
    const sockets: Socket[] = [];

    beforeAll(async () => {
      ({ app, url, config } = await startTestApp({
        QUEUE_DIRECT_HANDOFF: String(direct),
        QUEUE_NEXT_WITH_RESULT: String(nextWithResult),
        QUEUE_HELD_RUNS_MAX: String(heldMax),
      }));
      redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
      inspect = new Queue(RUN_QUEUE_NAME, { connection: redis, prefix: config.REDIS_PREFIX });
    });
    afterEach(() => {
      for (const socket of sockets.splice(0)) socket.disconnect();
    });
    afterAll(async () => {
      await inspect.close();
      redis.disconnect();
      await app.close();
    });

    const scrape = async () => (await fetch(`${url}/metrics`)).text();

    async function waitingWorker(name: string): Promise<{ socket: Socket; job: Promise<DispatchedJob> }> {
      const socket = io(url, {
        auth: { token: app.tokens.signWorkerToken(name, 60) },
        transports: ['websocket'],
        reconnection: false,
      });
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('connect_error', reject);
      });
      const before = promSample(await scrape(), 'flowbox_workers_waiting') ?? 0;
      const job = socket
        .timeout(10_000)
        .emitWithAck('poll', { version: 1, type: 'poll', workerId: name })
        .then((reply: PollReply) => {
          if (reply.type !== 'job') throw new Error(`expected a job, got ${JSON.stringify(reply)}`);
          return reply.job;
        });
      // The poll is out once the app counts it: a webhook from now on finds this worker waiting.
      await waitUntil(
        async () => (promSample(await scrape(), 'flowbox_workers_waiting') ?? 0) > before,
        5_000,
        'the worker waiting',
      );
      return { socket, job };
    }

    it(`${path}: the run reaches the waiting worker, ${direct ? 'with no job in Redis' : 'through a BullMQ job'}`, async () => {
      const submittedBefore = promSample(await scrape(), `flowbox_runs_submitted_total{path="${path}"}`) ?? 0;
      const worker = await waitingWorker('w1');
      const accepted = await postJson(`${url}/v1/webhooks/benchmark`, {});
      expect(accepted.status).toBe(202);
      const { runId } = (await accepted.json()) as { runId: string };
      const job = await worker.job;
      expect(job.runId).toBe(runId);
      const running = await getRun(url, runId);
      expect(running).toMatchObject({ status: 'RUNNING', attempts: 1, workerId: 'w1' });
      expect((await inspect.getJob(runId)) === undefined).toBe(direct);
      // Handed over, the run was written RUNNING for its worker as it was accepted (one statement,
      // one instant); queued, it started in a write of its own when the worker leased it.
      const { createdAt, startedAt } = running as { createdAt: string; startedAt: string };
      if (direct) expect(startedAt).toBe(createdAt);
      else expect(Date.parse(startedAt)).toBeGreaterThan(Date.parse(createdAt));

      const ack = (await worker.socket
        .timeout(5_000)
        .emitWithAck('job-result', jobResult(job))) as JobResultAck;
      expect(ack).toMatchObject({ type: 'ok' });
      expect(await getRun(url, runId)).toMatchObject({ status: 'SUCCEEDED' });
      const after = await scrape();
      expect(promSample(after, `flowbox_runs_submitted_total{path="${path}"}`)).toBe(submittedBefore + 1);
      // Nothing was left behind in the queue.
      expect(await inspect.getWaitingCount()).toBe(0);
      expect(await inspect.getActiveCount()).toBe(0);
    });

    it(`${path}: a run whose worker is lost is retried through the queue, a second later`, async () => {
      const first = await waitingWorker('w1');
      const pending = postJson(`${url}/v1/webhooks/benchmark/sync`, {});
      const job = await first.job;
      first.socket.disconnect();
      // The retry waits in the queue (delayed) with its first attempt counted.
      await waitUntil(
        async () => (await inspect.getJob(job.runId))?.isDelayed() ?? false,
        5_000,
        'the retry queued',
      );
      const second = await waitingWorker('w2');
      const retried = await second.job;
      expect(retried.runId).toBe(job.runId);
      expect(await getRun(url, job.runId)).toMatchObject({ status: 'RUNNING', attempts: 2 });
      const ack = (await second.socket
        .timeout(5_000)
        .emitWithAck('job-result', jobResult(retried))) as JobResultAck;
      expect(ack).toMatchObject({ type: 'ok' });
      // The sync caller waited across both attempts; the run succeeded without a response step: 204.
      expect((await pending).status).toBe(204);
      expect(await getRun(url, job.runId)).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
    });

    it(`${path}: a finished run's worker gets the next ${held ? 'held run' : 'queued job'} ${nextWithResult ? "with its result's ack" : 'by polling again'}`, async () => {
      const worker = await waitingWorker('w1');
      const first = (await (await postJson(`${url}/v1/webhooks/benchmark`, {})).json()) as { runId: string };
      const job = await worker.job;
      expect(job.runId).toBe(first.runId);
      // No poll waits now: the next run is held in the app, or queued.
      const second = (await (await postJson(`${url}/v1/webhooks/benchmark`, {})).json()) as { runId: string };
      expect(await inspect.getJob(second.runId)).toEqual(held ? undefined : expect.anything());
      const ack = (await worker.socket
        .timeout(5_000)
        .emitWithAck('job-result', { ...jobResult(job), wantsNext: true })) as JobResultAck;
      if (ack.type !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(ack)}`);
      let next: DispatchedJob;
      if (nextWithResult) {
        if (ack.job === undefined) throw new Error(`expected a job, got ${JSON.stringify(ack)}`);
        next = ack.job;
      } else {
        expect(ack.job).toBeUndefined();
        const reply = (await worker.socket
          .timeout(10_000)
          .emitWithAck('poll', { version: 1, type: 'poll', workerId: 'w1' })) as PollReply;
        if (reply.type !== 'job') throw new Error(`expected a job, got ${JSON.stringify(reply)}`);
        next = reply.job;
      }
      expect(next.runId).toBe(second.runId);
      const done = (await worker.socket
        .timeout(5_000)
        .emitWithAck('job-result', jobResult(next))) as JobResultAck;
      expect(done).toMatchObject({ type: 'ok' });
      expect(await getRun(url, second.runId)).toMatchObject({ status: 'SUCCEEDED' });
    });

    it.runIf(held)(
      `${path}: a held run whose workers stay busy goes to the queue, and a poll takes it`,
      async () => {
        const worker = await waitingWorker('w1');
        const first = (await (await postJson(`${url}/v1/webhooks/benchmark`, {})).json()) as {
          runId: string;
        };
        const job = await worker.job;
        expect(job.runId).toBe(first.runId);
        const second = (await (await postJson(`${url}/v1/webhooks/benchmark`, {})).json()) as {
          runId: string;
        };
        expect(await inspect.getJob(second.runId)).toBeUndefined();
        // Nobody finishes: it goes to the queue (HELD_RUN_MAX_MS), unstarted.
        await waitUntil(async () => (await inspect.getJob(second.runId)) !== undefined, 5_000, 'the spill');
        expect(await getRun(url, second.runId)).toMatchObject({ status: 'QUEUED' });
        await worker.socket.timeout(5_000).emitWithAck('job-result', jobResult(job));
        const other = await waitingWorker('w2');
        const next = await other.job;
        expect(next.runId).toBe(second.runId);
        await other.socket.timeout(5_000).emitWithAck('job-result', jobResult(next));
        expect(await getRun(url, second.runId)).toMatchObject({ status: 'SUCCEEDED' });
      },
    );
  },
);
