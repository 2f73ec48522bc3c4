import type { DispatchedJob, JobResultAck, PollReply } from '@flowbox/protocol';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { Socket } from 'socket.io-client';
import { describe, expect, inject, it } from 'vitest';
import { RUN_QUEUE_NAME } from '../src/queue/run-queue.ts';
import { getRun, postJson } from './app-harness.ts';
import { jobResult } from './run-fixtures.ts';
import { useWorkerProtocolApp } from './socket-workers.ts';

/**
 * A worker whose job has only its tail left (log upload, result) polls ahead of that result,
 * naming the job it holds (PollRequest `running`). Driven over socket.io as a worker would,
 * against real Redis, Postgres and S3.
 */
// Runs accepted while the worker is busy go to the queue here (QUEUE_HELD_RUNS_MAX=0): these
// are the queue's backlog paths; the held runs' are below.
describe.each([true, false])('polls ahead of a result, QUEUE_NEXT_WITH_RESULT=%s', (nextWithResult) => {
  const h = useWorkerProtocolApp({
    QUEUE_NEXT_WITH_RESULT: String(nextWithResult),
    QUEUE_HELD_RUNS_MAX: '0',
  });
  const connectWorker = (name: string) => h.connectWorker(h.app.tokens.signWorkerToken(name, 60));

  function poll(socket: Socket, running?: string): Promise<PollReply> {
    const request = {
      version: 1,
      type: 'poll',
      workerId: 'w1',
      ...(running === undefined ? {} : { running }),
    };
    return socket.timeout(10_000).emitWithAck('poll', request) as Promise<PollReply>;
  }

  function jobOf(reply: PollReply): DispatchedJob {
    if (reply.type !== 'job') throw new Error(`expected a job, got ${JSON.stringify(reply)}`);
    return reply.job;
  }

  async function finish(socket: Socket, job: DispatchedJob, wantsNext: boolean): Promise<JobResultAck> {
    return (await socket
      .timeout(5_000)
      .emitWithAck('job-result', jobResult(job, undefined, { wantsNext }))) as JobResultAck;
  }

  async function accept(): Promise<string> {
    const answer = await postJson(`${h.url}/v1/webhooks/benchmark`, {});
    expect(answer.status).toBe(202);
    return ((await answer.json()) as { runId: string }).runId;
  }

  it('hands a run that comes in meanwhile to the poll ahead, and records both results', async () => {
    const worker = await connectWorker('w1');
    const firstRun = await accept();
    const first = jobOf(await poll(worker));
    expect(first.runId).toBe(firstRun);

    const ahead = poll(worker, first.jobId);
    // One poll ahead at a time, and only naming the job the worker holds.
    expect(await poll(worker, first.jobId)).toMatchObject({
      type: 'error',
      error: { code: 'INVALID_REQUEST' },
    });
    const secondRun = await accept();
    const reply = await ahead;
    const second = jobOf(reply);
    expect(second.runId).toBe(secondRun);
    // It came in after the first was leased: no backlog, so the worker may poll ahead again.
    expect(reply).not.toHaveProperty('backlog');
    expect((await getRun(h.url, secondRun)).status).toBe('RUNNING');

    expect(await finish(worker, first, false)).toEqual({ version: 1, type: 'ok' });
    expect((await getRun(h.url, firstRun)).status).toBe('SUCCEEDED');
    expect(await finish(worker, second, true)).toEqual({ version: 1, type: 'ok' });
    expect((await getRun(h.url, secondRun)).status).toBe('SUCCEEDED');
  });

  it('takes a poll ahead naming a job this app no longer counts as held (the worker was lost) as a plain poll', async () => {
    const worker = await connectWorker('w1');
    const runId = await accept();
    const job = jobOf(await poll(worker, 'a-job-ended-the-lost-worker-way'));
    expect(job.runId).toBe(runId);
    expect(await finish(worker, job, false)).toEqual({ version: 1, type: 'ok' });
  });

  it('under a backlog, waits for the result and takes the next job from its completion, in order', async () => {
    const worker = await connectWorker('w1');
    const runs = [await accept(), await accept(), await accept()];
    const firstReply = await poll(worker);
    const first = jobOf(firstReply);
    // Each was waiting when asked for: the worker is told runs queue (so it would not poll
    // ahead: it takes its next job with its result). One that does anyway takes the next, and
    // the app learns there is a backlog.
    expect(firstReply).toMatchObject({ backlog: true });
    const secondReply = await poll(worker, first.jobId);
    const second = jobOf(secondReply);
    expect(secondReply).toMatchObject({ backlog: true });
    expect([first.runId, second.runId]).toEqual(runs.slice(0, 2));
    expect(await finish(worker, first, false)).toEqual({ version: 1, type: 'ok' });

    // So the next poll ahead asks Redis for nothing: it waits for the result, though a job waits.
    let answered = false;
    const ahead = poll(worker, second.jobId).then((reply) => {
      answered = true;
      return reply;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    expect((await getRun(h.url, runs[2] ?? '')).status).toBe('QUEUED');
    // The result's completion leases the third run for the poll ahead rather than the ack, or
    // (QUEUE_NEXT_WITH_RESULT=false) the poll ahead fetches it once the result is in.
    expect(await finish(worker, second, false)).toEqual({ version: 1, type: 'ok' });
    const thirdReply = await ahead;
    const third = jobOf(thirdReply);
    expect(third.runId).toBe(runs[2]);
    expect(thirdReply).toMatchObject({ backlog: true });
    expect(await finish(worker, third, true)).toEqual({ version: 1, type: 'ok' });
    for (const runId of runs) expect((await getRun(h.url, runId)).status).toBe('SUCCEEDED');
  });

  it('sends both runs of a worker lost while it held two the lost-worker way', async () => {
    const worker = await connectWorker('w1');
    const runs = [await accept(), await accept()];
    const first = jobOf(await poll(worker));
    const second = jobOf(await poll(worker, first.jobId));
    expect([first.runId, second.runId]).toEqual(runs);
    worker.disconnect();

    // Each goes back to the queue for its second attempt (RUN_MAX_ATTEMPTS is 2), and runs there.
    const other = await connectWorker('w2');
    const retried: string[] = [];
    let job = jobOf(await poll(other));
    retried.push(job.runId);
    const ack = await finish(other, job, true);
    job = ack.type === 'ok' && ack.job !== undefined ? ack.job : jobOf(await poll(other));
    retried.push(job.runId);
    expect(retried.sort()).toEqual([...runs].sort());
    await finish(other, job, false);
    for (const runId of runs)
      expect(await getRun(h.url, runId)).toMatchObject({ status: 'SUCCEEDED', attempts: 2 });
  });
});

describe('polls ahead of a result, under FLOW_MAX_CONCURRENT_RUNS', () => {
  const h = useWorkerProtocolApp({ FLOW_MAX_CONCURRENT_RUNS: '1' });

  it('starts no run before the result: it would hold a place under its flow cap while it waits', async () => {
    const worker = await h.connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const accept = async () =>
      ((await (await postJson(`${h.url}/v1/webhooks/benchmark`, {})).json()) as { runId: string }).runId;
    const firstRun = await accept();
    const first = await worker
      .timeout(10_000)
      .emitWithAck('poll', { version: 1, type: 'poll', workerId: 'w1' });
    if (first.type !== 'job') throw new Error(`expected a job, got ${JSON.stringify(first)}`);
    expect(first.job.runId).toBe(firstRun);
    const secondRun = await accept();
    let answered = false;
    const ahead = worker
      .timeout(10_000)
      .emitWithAck('poll', { version: 1, type: 'poll', workerId: 'w1', running: first.job.jobId })
      .then((reply: PollReply) => {
        answered = true;
        return reply;
      });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    expect((await getRun(h.url, secondRun)).status).toBe('QUEUED');
    // Still waiting in the queue, not put off for having found its flow at the cap.
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const inspect = new Queue(RUN_QUEUE_NAME, { connection: redis, prefix: h.config.REDIS_PREFIX });
    try {
      expect(await inspect.getJobCounts('wait', 'prioritized', 'delayed')).toEqual({
        wait: 1,
        prioritized: 0,
        delayed: 0,
      });
    } finally {
      await inspect.close();
      redis.disconnect();
    }
    await worker
      .timeout(5_000)
      .emitWithAck('job-result', jobResult(first.job, undefined, { wantsNext: false }));
    const reply = await ahead;
    expect(reply).toMatchObject({ type: 'job', job: { runId: secondRun } });
    expect((await getRun(h.url, secondRun)).status).toBe('RUNNING');
  });
});

describe('polls ahead of a result, with runs held for the busy worker (QUEUE_HELD_RUNS_MAX)', () => {
  const h = useWorkerProtocolApp({});

  const poll = (socket: Socket, running?: string): Promise<PollReply> =>
    socket.timeout(10_000).emitWithAck('poll', {
      version: 1,
      type: 'poll',
      workerId: 'w1',
      ...(running === undefined ? {} : { running }),
    }) as Promise<PollReply>;
  const jobOf = (reply: PollReply): DispatchedJob => {
    if (reply.type !== 'job') throw new Error(`expected a job, got ${JSON.stringify(reply)}`);
    return reply.job;
  };
  const finish = async (socket: Socket, job: DispatchedJob, wantsNext: boolean) =>
    (await socket
      .timeout(5_000)
      .emitWithAck('job-result', jobResult(job, undefined, { wantsNext }))) as JobResultAck;
  const accept = async () =>
    ((await (await postJson(`${h.url}/v1/webhooks/benchmark`, {})).json()) as { runId: string }).runId;

  it('hands a held run to a poll ahead at once, unmarked, so the worker goes on polling ahead; no job in Redis', async () => {
    const worker = await h.connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const firstRun = await accept();
    const first = jobOf(await poll(worker));
    expect(first.runId).toBe(firstRun);
    // Accepted while the worker runs `first`: held in the app.
    const [secondRun, thirdRun] = [await accept(), await accept()];
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const inspect = new Queue(RUN_QUEUE_NAME, { connection: redis, prefix: h.config.REDIS_PREFIX });
    try {
      expect(await inspect.getJob(secondRun)).toBeUndefined();
      expect(await inspect.getJob(thirdRun)).toBeUndefined();
    } finally {
      await inspect.close();
      redis.disconnect();
    }
    const secondReply = await poll(worker, first.jobId);
    const second = jobOf(secondReply);
    expect(second.runId).toBe(secondRun);
    expect(secondReply).not.toHaveProperty('backlog');
    expect(await finish(worker, first, false)).toEqual({ version: 1, type: 'ok' });
    const thirdReply = await poll(worker, second.jobId);
    const third = jobOf(thirdReply);
    expect(third.runId).toBe(thirdRun);
    expect(thirdReply).not.toHaveProperty('backlog');
    expect(await finish(worker, second, false)).toEqual({ version: 1, type: 'ok' });
    expect(await finish(worker, third, true)).toEqual({ version: 1, type: 'ok' });
    for (const runId of [firstRun, secondRun, thirdRun]) {
      expect((await getRun(h.url, runId)).status).toBe('SUCCEEDED');
    }
  });
});
