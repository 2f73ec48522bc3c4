import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Deferred, defer } from '@flowbox/node-kit';
import {
  type DispatchedJob,
  type DispatchedPollJob,
  type EngineCallback,
  type JobResult,
  JobResultSchema,
  type PollReply,
  PollRequestSchema,
  type PollResult,
  PollResultSchema,
  SOCKET_EVENTS,
} from '@flowbox/protocol';
import { Server, type Socket } from 'socket.io';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeDispatchedJob, silentLogger } from '../test-helpers.ts';
import { type AppConnection, createAppConnection } from './app-connection.ts';

/** A socket.io "app" whose poll answers the test scripts one at a time. */
interface FakeBroker {
  url: string;
  tokens: unknown[];
  /** The next poll: the test answers it through `reply`. */
  nextPoll(): Promise<{ request: unknown; reply: (answer: unknown) => void; socket: Socket }>;
  results: unknown[];
  nextResult(): Promise<unknown>;
  /** Engine callbacks forwarded to it, each acknowledged `ok`. */
  callbacks: unknown[];
  /** Poll results, each acknowledged `ok`; resolves with the first. */
  pollResult: Promise<unknown>;
  /** Set: results are acknowledged only when the test calls the acks kept here. */
  heldResultAcks: Array<() => void> | null;
  /** What reached it, in order: `result <runId>`, `ack <runId>`, `log-failed <runId>`. */
  order: string[];
  /** Resolves with the next log failure it receives (acknowledged `ok`). */
  nextLogFailure(): Promise<unknown>;
  close(): Promise<void>;
}

async function startFakeBroker(): Promise<FakeBroker> {
  const httpServer = http.createServer();
  const io = new Server(httpServer, { transports: ['websocket'] });
  const tokens: unknown[] = [];
  const results: unknown[] = [];
  const callbacks: unknown[] = [];
  const polls: Deferred<{ request: unknown; reply: (answer: unknown) => void; socket: Socket }>[] = [defer()];
  const resultWaiters: Deferred<unknown>[] = [defer()];
  const pollResult = defer<unknown>();
  let polled = 0;
  let reported = 0;
  const order: string[] = [];
  const logFailures: Deferred<unknown>[] = [defer()];
  let failed = 0;
  io.use((socket, next) => {
    const auth: unknown = socket.handshake.auth;
    tokens.push((auth as { token?: unknown }).token);
    next();
  });
  io.on('connection', (socket) => {
    socket.on(SOCKET_EVENTS.poll, (request: unknown, ack: (answer: unknown) => void) => {
      polls[polled]?.resolve({ request, reply: ack, socket });
      polled += 1;
      polls.push(defer());
    });
    socket.on(SOCKET_EVENTS.logFailed, (frame: unknown, ack: (answer: unknown) => void) => {
      order.push(`log-failed ${(frame as { runId?: string }).runId}`);
      ack({ version: 1, type: 'ok' });
      logFailures[failed]?.resolve(frame);
      failed += 1;
      logFailures.push(defer());
    });
    socket.on(SOCKET_EVENTS.jobResult, (result: unknown, ack: (answer: unknown) => void) => {
      results.push(result);
      const { runId } = result as { runId?: string };
      order.push(`result ${runId}`);
      const acknowledge = () => {
        order.push(`ack ${runId}`);
        ack({ version: 1, type: 'ok' });
      };
      if (fake.heldResultAcks === null) acknowledge();
      else fake.heldResultAcks.push(acknowledge);
      resultWaiters[reported]?.resolve(result);
      reported += 1;
      resultWaiters.push(defer());
    });
    socket.on(SOCKET_EVENTS.engineCallback, (frame: unknown, ack: (answer: unknown) => void) => {
      callbacks.push(frame);
      ack({ version: 1, type: 'ok' });
    });
    socket.on(SOCKET_EVENTS.pollResult, (frame: unknown, ack: (answer: unknown) => void) => {
      pollResult.resolve(frame);
      ack({ version: 1, type: 'ok' });
    });
  });
  httpServer.listen(0, '127.0.0.1');
  await once(httpServer, 'listening');
  const { port } = httpServer.address() as AddressInfo;
  let pollsTaken = 0;
  let resultsTaken = 0;
  let failuresTaken = 0;
  const fake: FakeBroker = {
    url: `http://127.0.0.1:${port}`,
    tokens,
    results,
    callbacks,
    pollResult: pollResult.promise,
    heldResultAcks: null,
    order,
    nextLogFailure: () => {
      const next = logFailures[failuresTaken];
      failuresTaken += 1;
      if (next === undefined) throw new Error('log failures out of order');
      return next.promise;
    },
    nextPoll: () => {
      const next = polls[pollsTaken];
      pollsTaken += 1;
      if (next === undefined) throw new Error('polls out of order');
      return next.promise;
    },
    nextResult: () => {
      const next = resultWaiters[resultsTaken];
      resultsTaken += 1;
      if (next === undefined) throw new Error('results out of order');
      return next.promise;
    },
    close: async () => {
      await io.close();
    },
  };
  return fake;
}

let broker: FakeBroker;
let connection: AppConnection;
let ran: DispatchedJob[];
let polledJobs: DispatchedPollJob[];
/** What a job does while it runs (its engine's callbacks, its tail), when a test says. */
let duringRun: ((job: DispatchedJob) => Promise<void>) | undefined;

beforeEach(async () => {
  broker = await startFakeBroker();
  ran = [];
  polledJobs = [];
  duringRun = undefined;
  connection = createAppConnection({
    appUrl: broker.url,
    token: 'worker-token',
    workerId: 'worker-1',
    logger: silentLogger(),
    retryDelayMs: 5,
    runPoll: async (job): Promise<PollResult> => {
      polledJobs.push(job);
      return {
        version: 1,
        type: 'poll-result',
        workerId: 'worker-1',
        jobId: job.jobId,
        flowVersionId: job.flowVersionId,
        outcome: { type: 'ok', items: [{ key: 'a', item: { id: 'a' } }], state: { cursor: 1 } },
        pollMs: 3,
      };
    },
    runJob: async (job): Promise<JobResult> => {
      ran.push(job);
      await duringRun?.(job);
      return {
        version: 1,
        type: 'job-result',
        workerId: 'worker-1',
        jobId: job.jobId,
        runId: job.runId,
        outcome: { status: 'SUCCEEDED', steps: [], logKey: null },
        timings: { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 2, logPersistMs: 1, workerBusyMs: 4 },
      };
    },
  });
  connection.start();
});

afterEach(async () => {
  await connection.close();
  await broker.close();
});

const jobReply = (job: DispatchedJob): PollReply => ({ version: 1, type: 'job', job });

/** Its engine's response callback; `last`: no step follows the response. */
const response = (job: DispatchedJob, last: boolean): EngineCallback => ({
  runId: job.runId,
  engineToken: 'engine-token',
  report: {
    version: 1,
    type: 'flow-response',
    response: { status: 200, headers: {}, body: {} },
    steps: [],
    last,
  },
});

describe('app connection', () => {
  it('runs a poll job it is handed, reports its items, and polls again holding no job', async () => {
    const job: DispatchedPollJob = {
      jobId: 'lease-1',
      flowId: 'f',
      flowVersionId: 'v',
      bundle: { url: 'http://s3.example/b', sha256: 'a'.repeat(64), sizeBytes: 10 },
      pieces: [],
      state: null,
      timeoutMs: 1_000,
      maxResultBytes: 1_000_000,
      acceptedAt: Date.now(),
    };
    (await broker.nextPoll()).reply({ version: 1, type: 'poll-job', job });
    const result = PollResultSchema.parse(await broker.pollResult);
    expect(result).toMatchObject({
      jobId: 'lease-1',
      flowVersionId: 'v',
      outcome: { type: 'ok', state: { cursor: 1 } },
    });
    expect(polledJobs.map((j) => j.jobId)).toEqual(['lease-1']);
    expect(PollRequestSchema.parse((await broker.nextPoll()).request)).toEqual({
      version: 1,
      type: 'poll',
      workerId: 'worker-1',
    });
    expect(ran).toEqual([]);
  });

  it('authenticates, polls, runs the job it gets and reports the result', async () => {
    const first = await broker.nextPoll();
    expect(PollRequestSchema.parse(first.request)).toEqual({
      version: 1,
      type: 'poll',
      workerId: 'worker-1',
    });
    expect(broker.tokens).toEqual(['worker-token']);
    first.reply({ version: 1, type: 'idle' });

    const second = await broker.nextPoll();
    const job = makeDispatchedJob('run-1');
    second.reply(jobReply(job));

    const result = JobResultSchema.parse(await broker.nextResult());
    expect(result).toMatchObject({ runId: 'run-1', jobId: 'job-run-1', outcome: { status: 'SUCCEEDED' } });
    expect(ran.map((j) => j.runId)).toEqual(['run-1']);
    // It polls again after reporting.
    await broker.nextPoll();
  });

  it("sends a log failure reported while its job still runs only once that job's result is acknowledged", async () => {
    const heldAcks: Array<() => void> = [];
    broker.heldResultAcks = heldAcks;
    // The upload failed at once: the runner reports it before the job's result is even out.
    duringRun = async (job) => {
      connection.reportLogFailure({
        version: 1,
        type: 'log-failed',
        workerId: 'worker-1',
        jobId: job.jobId,
        runId: job.runId,
        logKey: `runs/${job.runId}/log.json`,
        logError: { name: 'FlowboxError', code: 'LOG_UPLOAD_FAILED', message: 'refused' },
      });
    };
    (await broker.nextPoll()).reply(jobReply(makeDispatchedJob('run-1')));
    await broker.nextResult();
    expect(broker.order).toEqual(['result run-1']);
    for (const ack of heldAcks) ack();
    expect(await broker.nextLogFailure()).toMatchObject({ type: 'log-failed', runId: 'run-1' });
    expect(broker.order).toEqual(['result run-1', 'ack run-1', 'log-failed run-1']);
  });

  it('drops a bad poll reply and keeps polling', async () => {
    (await broker.nextPoll()).reply({ version: 1, type: 'job', job: { runId: 'no' } });
    const next = await broker.nextPoll();
    next.reply(jobReply(makeDispatchedJob('run-2')));
    expect(JobResultSchema.parse(await broker.nextResult()).runId).toBe('run-2');
    expect(ran.map((j) => j.runId)).toEqual(['run-2']);
  });

  it('reconnects after the app drops it', async () => {
    const first = await broker.nextPoll();
    first.socket.disconnect(true);
    const afterReconnect = await broker.nextPoll();
    expect(afterReconnect.socket.id).not.toBe(first.socket.id);
    expect(broker.tokens).toEqual(['worker-token', 'worker-token']);
  });

  it("forwards its engine's callback as an acknowledged event, and fails it at once while not connected", async () => {
    await broker.nextPoll();
    const callback: EngineCallback = {
      runId: 'run-1',
      engineToken: 'engine-token',
      report: { version: 1, type: 'steps', steps: [] },
    };
    expect(await connection.forwardCallback(callback)).toEqual({ version: 1, type: 'ok' });
    expect(broker.callbacks).toEqual([{ version: 1, type: 'engine-callback', callback }]);

    // Never buffered for a reconnect (the app ends the job of a worker that left): CALLBACK_FAILED now.
    const offline = createAppConnection({
      appUrl: broker.url,
      token: 'worker-token',
      workerId: 'worker-2',
      logger: silentLogger(),
      runJob: () => Promise.reject(new Error('no job expected')),
    });
    expect(await offline.forwardCallback(callback)).toEqual({
      version: 1,
      type: 'error',
      error: { code: 'CALLBACK_FAILED', message: 'the worker is not connected to the app' },
    });
    await offline.close();
    expect(broker.callbacks).toHaveLength(1);
  });

  it("polls ahead when its engine sends the last step's response, and runs that job once the last one's result is out", async () => {
    const tail = defer<undefined>();
    duringRun = async (job) => {
      if (job.runId !== 'run-1') return;
      // A response that is not the last step asks for nothing.
      expect(await connection.forwardCallback(response(job, false))).toEqual({ version: 1, type: 'ok' });
      expect(await connection.forwardCallback(response(job, true))).toEqual({ version: 1, type: 'ok' });
      await tail.promise;
    };
    (await broker.nextPoll()).reply(jobReply(makeDispatchedJob('run-1')));

    // The poll ahead names the job still running; its answer waits in the worker for that job's end.
    const ahead = await broker.nextPoll();
    expect(PollRequestSchema.parse(ahead.request)).toEqual({
      version: 1,
      type: 'poll',
      workerId: 'worker-1',
      running: 'job-run-1',
    });
    ahead.reply(jobReply(makeDispatchedJob('run-2')));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ran.map((j) => j.runId)).toEqual(['run-1']);
    tail.resolve(undefined);

    // The first result asks for no next job (it came ahead); the second, with no poll ahead, does.
    expect(JobResultSchema.parse(await broker.nextResult())).toMatchObject({
      runId: 'run-1',
      wantsNext: false,
    });
    expect(JobResultSchema.parse(await broker.nextResult())).toMatchObject({
      runId: 'run-2',
      wantsNext: true,
    });
    expect(ran.map((j) => j.runId)).toEqual(['run-1', 'run-2']);
    // Then a plain poll: it holds no job.
    expect(PollRequestSchema.parse((await broker.nextPoll()).request).running).toBeUndefined();
  });

  it('sends a poll ahead after the result of the job before: the app refuses one from a worker it sees holding two', async () => {
    // Replayed from a benchmark: run-2, taken ahead, finished while run-1's result waited for its
    // acknowledgement, so run-2's result queued behind it; run-3, taken ahead, answered, and its
    // poll ahead overtook run-2's result. The app saw two jobs held, refused, the worker paused 2 s.
    const heldAcks: Array<() => void> = [];
    broker.heldResultAcks = heldAcks;
    duringRun = async (job) => {
      expect(await connection.forwardCallback(response(job, true))).toEqual({ version: 1, type: 'ok' });
    };
    (await broker.nextPoll()).reply(jobReply(makeDispatchedJob('run-1')));
    const aheadOfRun1 = await broker.nextPoll();
    expect(PollRequestSchema.parse(aheadOfRun1.request).running).toBe('job-run-1');
    aheadOfRun1.reply(jobReply(makeDispatchedJob('run-2')));
    expect(JobResultSchema.parse(await broker.nextResult()).runId).toBe('run-1');
    const aheadOfRun2 = await broker.nextPoll();
    expect(PollRequestSchema.parse(aheadOfRun2.request).running).toBe('job-run-2');

    const aheadOfRun3 = broker.nextPoll().then(({ request }) => ({
      running: PollRequestSchema.parse(request).running,
      resultsBefore: broker.results.map((result) => JobResultSchema.parse(result).runId),
    }));
    aheadOfRun2.reply(jobReply(makeDispatchedJob('run-3')));
    // Time for run-2 to end and run-3 to answer while run-1's result is still unacknowledged.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ran.map((j) => j.runId)).toEqual(['run-1', 'run-2', 'run-3']);
    broker.heldResultAcks = null;
    for (const ack of heldAcks.splice(0)) ack();
    expect(await aheadOfRun3).toEqual({ running: 'job-run-3', resultsBefore: ['run-1', 'run-2'] });
  });

  it('takes its next job with the result, not by a poll ahead, when the app says runs are queueing', async () => {
    duringRun = async (job) => {
      expect(await connection.forwardCallback(response(job, true))).toEqual({ version: 1, type: 'ok' });
    };
    (await broker.nextPoll()).reply({ ...jobReply(makeDispatchedJob('run-1')), backlog: true });
    expect(JobResultSchema.parse(await broker.nextResult())).toMatchObject({
      runId: 'run-1',
      wantsNext: true,
    });
    // The next poll is a plain one, after the result.
    expect(PollRequestSchema.parse((await broker.nextPoll()).request).running).toBeUndefined();
  });

  it('polls only after the result with WORKER_POLL_AHEAD off', async () => {
    await connection.close();
    connection = createAppConnection({
      appUrl: broker.url,
      token: 'worker-token',
      workerId: 'worker-3',
      logger: silentLogger(),
      retryDelayMs: 5,
      pollAhead: false,
      runJob: async (job): Promise<JobResult> => {
        ran.push(job);
        expect(await connection.forwardCallback(response(job, true))).toEqual({ version: 1, type: 'ok' });
        return {
          version: 1,
          type: 'job-result',
          workerId: 'worker-3',
          jobId: job.jobId,
          runId: job.runId,
          outcome: { status: 'SUCCEEDED', steps: [], logKey: null },
          timings: { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 2, logPersistMs: 1, workerBusyMs: 4 },
        };
      },
    });
    connection.start();
    // The first connection's pending poll is answered idle as it leaves; the new one's comes next.
    let first = await broker.nextPoll();
    while (PollRequestSchema.parse(first.request).workerId !== 'worker-3') first = await broker.nextPoll();
    first.reply(jobReply(makeDispatchedJob('run-1')));
    // The last response went, yet the next request is the result, asking for the next job.
    expect(JobResultSchema.parse(await broker.nextResult())).toMatchObject({
      runId: 'run-1',
      wantsNext: true,
    });
    expect(ran.map((j) => j.runId)).toEqual(['run-1']);
    expect(PollRequestSchema.parse((await broker.nextPoll()).request)).toEqual({
      version: 1,
      type: 'poll',
      workerId: 'worker-3',
    });
  });

  it('closes promptly while a long-poll is pending', async () => {
    await broker.nextPoll();
    const started = performance.now();
    await connection.close();
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
