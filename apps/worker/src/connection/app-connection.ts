import { setTimeout as sleep } from 'node:timers/promises';
import { defer, type Logger } from '@flowbox/node-kit';
import {
  type CallbackAnswer,
  CallbackAnswerSchema,
  callbackRefusal,
  type DispatchedJob,
  type DispatchedPollJob,
  type EngineCallback,
  type EngineCallbackFrame,
  type JobResult,
  JobResultAckSchema,
  type LogFailed,
  LogFailedAckSchema,
  PollReplySchema,
  type PollRequest,
  type PollResult,
  PollResultAckSchema,
  parseMessage,
  SOCKET_EVENTS,
  serializeError,
} from '@flowbox/protocol';
import { io, type Socket } from 'socket.io-client';
import {
  type Handed,
  mayPollAhead,
  type PollState,
  PollStateError,
  transition,
  WAITING,
} from './poll-state.ts';
import { ResultLine } from './result-line.ts';

/**
 * The worker's only line to the app: socket.io, authenticated by the worker token. A loop
 * long-polls for a job, runs it, and reports its result; the app answers through acks. When its
 * engine sends a job's last step (the response), the worker polls for the next job while this
 * one's tail (result, the app's final write) still runs, and delivers that result while the next
 * job runs. A run's log upload goes on in its engine after the result; only its failure is told
 * to the app, behind that result.
 */
export interface AppConnection {
  start(): void;
  /**
   * Passes its engine's callback to the app and resolves with the app's answer; CALLBACK_FAILED
   * when the socket is down or the app does not answer in time.
   */
  forwardCallback(callback: EngineCallback): Promise<CallbackAnswer>;
  /**
   * Tells the app that a run's log upload, which followed its result, failed: sent once that
   * result is acknowledged, so the app has recorded the run's end when it arrives.
   */
  reportLogFailure(failure: LogFailed): void;
  /** Stops polling, lets the job in progress finish and report, then disconnects. */
  close(): Promise<void>;
}

export interface AppConnectionOptions {
  appUrl: string;
  token: string;
  workerId: string;
  logger: Logger;
  runJob(job: DispatchedJob): Promise<JobResult>;
  /**
   * A polling trigger's poll (poll-runner.ts); the app hands one only to a worker that holds no
   * job. Without it, a poll is answered as failed.
   */
  runPoll?: (job: DispatchedPollJob) => Promise<PollResult>;
  /** The app holds a poll for up to ~20 s before answering idle. */
  pollAckTimeoutMs?: number;
  resultAckTimeoutMs?: number;
  resultAttempts?: number;
  /** How long an engine's callback may wait for the app (as long as its HTTP request could). */
  callbackAckTimeoutMs?: number;
  /** Pause after an error answer, a bad frame or a refused connection. */
  retryDelayMs?: number;
  /** WORKER_POLL_AHEAD: poll for the next job once the flow's last response went (default on). */
  pollAhead?: boolean;
  /** Before close() disconnects: the log uploads still in flight end (and report a failure). */
  beforeDisconnect?: () => Promise<void>;
}

export function createAppConnection(options: AppConnectionOptions): AppConnection {
  const { logger } = options;
  const pollAckTimeoutMs = options.pollAckTimeoutMs ?? 30_000;
  const resultAckTimeoutMs = options.resultAckTimeoutMs ?? 10_000;
  const resultAttempts = options.resultAttempts ?? 5;
  const retryDelayMs = options.retryDelayMs ?? 2_000;
  const callbackAckTimeoutMs = options.callbackAckTimeoutMs ?? 30_000;
  const pollAheadEnabled = options.pollAhead ?? true;
  const stop = new AbortController();
  let loop: Promise<void> | undefined;

  const socket: Socket = io(options.appUrl, {
    auth: { token: options.token },
    transports: ['websocket'],
    autoConnect: false,
  });

  const pause = () => sleep(retryDelayMs, undefined, { signal: stop.signal }).catch(() => {});
  // socket.io retries lost connections itself, but not ones the server refused or closed.
  const reconnectLater = () => {
    void pause().then(() => {
      if (!stop.signal.aborted) socket.connect();
    });
  };
  socket.on('connect', () => logger.info({ appUrl: options.appUrl }, 'connected to the app'));
  socket.on('disconnect', (reason) => {
    logger.warn({ reason }, 'disconnected from the app');
    if (reason === 'io server disconnect' && !stop.signal.aborted) reconnectLater();
  });
  socket.on('connect_error', (error) => {
    logger.warn({ error: error.message, retrying: socket.active }, 'could not connect to the app');
    if (!socket.active && !stop.signal.aborted) reconnectLater();
  });

  const connected = (signal: AbortSignal): Promise<void> => {
    if (socket.connected) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onConnect = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        socket.off('connect', onConnect);
        reject(signal.reason);
      };
      socket.once('connect', onConnect);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };

  const aborted = new Promise<never>((_resolve, reject) => {
    stop.signal.addEventListener('abort', () => reject(stop.signal.reason), { once: true });
  });
  aborted.catch(() => {});

  /** `running`: the job whose tail is still running (a poll ahead of its result). */
  const poll = async (running?: string): Promise<Handed | undefined> => {
    await connected(stop.signal);
    const request: PollRequest = {
      version: 1,
      type: 'poll',
      workerId: options.workerId,
      ...(running === undefined ? {} : { running }),
    };
    let frame: unknown;
    try {
      const ack = socket.timeout(pollAckTimeoutMs).emitWithAck(SOCKET_EVENTS.poll, request);
      ack.catch(() => {});
      // Closing must not wait out a long-poll; a job the app hands out meanwhile is the app's to requeue.
      frame = await Promise.race([ack, aborted]);
    } catch (error) {
      if (!stop.signal.aborted) logger.warn({ error: String(error) }, 'poll got no answer');
      return undefined;
    }
    const parsed = parseMessage(PollReplySchema, frame);
    if (!parsed.ok) {
      logger.error({ error: parsed.error }, 'dropped a bad poll reply');
      await pause();
      return undefined;
    }
    const reply = parsed.value;
    if (reply.type === 'job') return { job: reply.job, backlog: reply.backlog === true };
    if (reply.type === 'poll-job') {
      const { job } = reply;
      await deliverPoll(
        options.runPoll === undefined
          ? {
              version: 1,
              type: 'poll-result',
              workerId: options.workerId,
              jobId: job.jobId,
              flowVersionId: job.flowVersionId,
              outcome: {
                type: 'error',
                error: { name: 'FlowboxError', code: 'INTERNAL', message: 'this worker runs no polls' },
              },
              pollMs: 0,
            }
          : await options.runPoll(job),
      );
      return undefined;
    }
    if (reply.type === 'error') {
      logger.warn({ error: reply.error }, 'the app answered the poll with an error');
      await pause();
    }
    return undefined;
  };

  // Delivery outlives close(): a finished run's result must still reach the app. Resolves with
  // the next job when the app handed one back with the acknowledgement. `onSent`: once the result
  // is on the socket (the app reads a socket's events in order).
  const deliver = async (result: JobResult, onSent?: () => void): Promise<Handed | undefined> => {
    const ids = { runId: result.runId, jobId: result.jobId };
    for (let attempt = 1; attempt <= resultAttempts; attempt += 1) {
      try {
        await connected(AbortSignal.timeout(resultAckTimeoutMs));
        const acknowledged = socket.timeout(resultAckTimeoutMs).emitWithAck(SOCKET_EVENTS.jobResult, result);
        onSent?.();
        const frame: unknown = await acknowledged;
        const parsed = parseMessage(JobResultAckSchema, frame);
        if (!parsed.ok) logger.error({ ...ids, error: parsed.error }, 'dropped a bad job-result ack');
        else if (parsed.value.type === 'error') {
          logger.warn({ ...ids, error: parsed.value.error }, 'the app rejected the job result');
        } else {
          const { job, backlog } = parsed.value;
          return job === undefined ? undefined : { job, backlog: backlog === true };
        }
        return undefined;
      } catch (error) {
        logger.warn({ ...ids, attempt, error: String(error) }, 'job result not acknowledged');
      }
    }
    logger.error(ids, 'gave up delivering the job result');
    return undefined;
  };

  /**
   * A poll's result: delivered like a job's, a few attempts, then dropped. A lost one costs only
   * a delay: the app took nothing from it, and polls the same state again on its next interval.
   */
  const deliverPoll = async (result: PollResult): Promise<void> => {
    const ids = { jobId: result.jobId, flowVersionId: result.flowVersionId };
    for (let attempt = 1; attempt <= resultAttempts; attempt += 1) {
      try {
        await connected(AbortSignal.timeout(resultAckTimeoutMs));
        const frame: unknown = await socket
          .timeout(resultAckTimeoutMs)
          .emitWithAck(SOCKET_EVENTS.pollResult, result);
        const parsed = parseMessage(PollResultAckSchema, frame);
        if (!parsed.ok) logger.error({ ...ids, error: parsed.error }, 'dropped a bad poll-result ack');
        else if (parsed.value.type === 'error') {
          logger.warn({ ...ids, error: parsed.value.error }, 'the app rejected the poll result');
        }
        return;
      } catch (error) {
        logger.warn({ ...ids, attempt, error: String(error) }, 'poll result not acknowledged');
      }
    }
    logger.error(ids, 'gave up delivering the poll result');
  };

  /** Jobs whose results are not yet acknowledged (or given up): a log failure waits for its job's. */
  const resultsDelivered = new Map<string, Promise<void>>();
  /** Log failures on their way; close() waits for them. */
  const failures = new Set<Promise<void>>();
  const deliverLogFailure = async (failure: LogFailed): Promise<void> => {
    const ids = { runId: failure.runId, jobId: failure.jobId };
    for (let attempt = 1; attempt <= resultAttempts; attempt += 1) {
      try {
        await connected(AbortSignal.timeout(resultAckTimeoutMs));
        const acknowledged = socket.timeout(resultAckTimeoutMs).emitWithAck(SOCKET_EVENTS.logFailed, failure);
        const parsed = parseMessage(LogFailedAckSchema, await acknowledged);
        if (!parsed.ok) logger.error({ ...ids, error: parsed.error }, 'dropped a bad log-failed ack');
        else if (parsed.value.type === 'error') {
          logger.warn({ ...ids, error: parsed.value.error }, "the app refused a run's log failure");
        }
        return;
      } catch (error) {
        logger.warn({ ...ids, attempt, error: String(error) }, 'log failure not acknowledged');
      }
    }
    logger.error(ids, "gave up telling the app of a run's log failure");
  };

  let state: PollState = WAITING;
  const results = new ResultLine();
  const pollAhead = (runId: string) => {
    if (!pollAheadEnabled || !mayPollAhead(state, runId)) return;
    if (stop.signal.aborted || !socket.connected || state.type !== 'running') return;
    const { jobId } = state.handed.job;
    // The app takes a poll ahead only from a worker that holds just the job it names: a poll that
    // overtook the result of the job before (still behind an earlier one's acknowledgement)
    // would find two, be refused, and the worker would pause. So it follows that result.
    const ahead = results
      .sent()
      .then(() => poll(jobId))
      .catch(() => undefined);
    state = transition(state, { type: 'polled-ahead', ahead });
  };

  const runHanded = async (handed: Handed): Promise<void> => {
    const { job } = handed;
    state = transition(state, { type: 'started' });
    // A log failure reported for this job waits for its result's acknowledgement.
    const delivered = defer<void>();
    resultsDelivered.set(job.jobId, delivered.promise);
    const settled = () => {
      resultsDelivered.delete(job.jobId);
      delivered.resolve();
    };
    let result: JobResult | undefined;
    try {
      result = await options.runJob(job);
    } catch (error) {
      // The runner reports every failure as a result; reaching here is a bug.
      logger.error({ runId: job.runId, jobId: job.jobId, err: serializeError(error) }, 'job runner failed');
    }
    state = transition(state, { type: 'finished' });
    if (result === undefined) return settled();
    const finished = result;
    if (state.type === 'ahead') {
      // The next job comes with the poll ahead, so this result asks for none.
      results.behind((onSent) => deliver({ ...finished, wantsNext: false }, onSent).finally(settled));
      return;
    }
    await results.acknowledged();
    const next = await deliver({ ...finished, wantsNext: !stop.signal.aborted }).finally(settled);
    state = transition(state, { type: 'answered', handed: next });
  };

  const run = async (): Promise<void> => {
    // Closing ends only a worker in `waiting`: a handed job runs, since the app counts on this
    // worker for it, and so does one a poll ahead brings.
    for (;;) {
      const current = state;
      if (current.type === 'handed') await runHanded(current.handed);
      else if (current.type === 'ahead') {
        state = transition(current, { type: 'answered', handed: await current.ahead });
      } else if (current.type === 'waiting') {
        // A plain poll means "I hold no job": only once the app has the last result.
        await results.acknowledged();
        if (stop.signal.aborted) break;
        const handed = await poll().catch(() => undefined);
        state = transition(state, { type: 'answered', handed });
      } else {
        throw new PollStateError(`the poll loop found the worker ${current.type}`);
      }
    }
    await results.acknowledged();
  };

  const forwardCallback = async (callback: EngineCallback): Promise<CallbackAnswer> => {
    // Not buffered for a reconnect: the app fails the job of a worker that left, so a report
    // held until then would arrive for an ended run. The engine gets CALLBACK_FAILED at once.
    if (!socket.connected)
      return callbackRefusal('CALLBACK_FAILED', 'the worker is not connected to the app');
    const frame: EngineCallbackFrame = { version: 1, type: 'engine-callback', callback };
    // The flow's last step: its next job may come while this run's tail runs. Asked before the
    // response goes, so the app has the poll before the caller, answered, sends its next request.
    const { report } = callback;
    if (report.type === 'flow-response' && report.last === true) pollAhead(callback.runId);
    let answer: unknown;
    try {
      answer = await socket.timeout(callbackAckTimeoutMs).emitWithAck(SOCKET_EVENTS.engineCallback, frame);
    } catch (error) {
      return callbackRefusal('CALLBACK_FAILED', `the app did not answer the callback: ${String(error)}`);
    }
    const parsed = parseMessage(CallbackAnswerSchema, answer);
    if (parsed.ok) return parsed.value;
    logger.error({ runId: callback.runId, error: parsed.error }, 'dropped a bad callback answer');
    return callbackRefusal('CALLBACK_FAILED', `the app's answer was not understood: ${parsed.error}`);
  };

  return {
    forwardCallback,
    reportLogFailure(failure) {
      // After its run's result is acknowledged: the app has written the run's end by then.
      const sending = (resultsDelivered.get(failure.jobId) ?? Promise.resolve()).then(() =>
        deliverLogFailure(failure),
      );
      failures.add(sending);
      void sending.finally(() => failures.delete(sending));
    },
    start() {
      if (loop !== undefined) return;
      socket.connect();
      loop = run();
    },
    async close() {
      stop.abort(new Error('closing'));
      await loop;
      await options.beforeDisconnect?.();
      await results.acknowledged();
      await Promise.all(failures);
      socket.removeAllListeners();
      socket.disconnect();
    },
  };
}
