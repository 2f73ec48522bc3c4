import type { Server as HttpServer } from 'node:http';
import type { Logger } from '@flowbox/node-kit';
import {
  type CallbackAnswer,
  callbackRefusal,
  type DispatchedJob,
  EngineCallbackFrameSchema,
  FlowboxError,
  failedOutcome,
  httpStatusOf,
  type JobResultAck,
  JobResultSchema,
  type LogFailedAck,
  LogFailedSchema,
  type PollReply,
  PollRequestSchema,
  type PollResultAck,
  PollResultSchema,
  parseMessage,
  SOCKET_EVENTS,
  serializeError,
  subjectOf,
} from '@flowbox/protocol';
import { Server, type Socket } from 'socket.io';
import type { EngineCallbacks } from '../http/engine-callbacks.ts';
import type { PollJobs } from '../polls/poll-jobs.ts';
import { type PollResults, pollWorkerLost } from '../polls/poll-results.ts';
import { BUSY_FLOW_POSTPONE_MS, type Dispatcher, FlowBusy } from '../queue/dispatcher.ts';
import type { JobSource } from '../queue/job-source.ts';
import type { LeasedJob } from '../queue/leased-job.ts';
import type { TokenService } from '../tokens.ts';
import { backlogMark, type HeldJob, parkUntilResult, type WorkerSession } from './worker-session.ts';

type Ack<T> = (reply: T) => void;

/**
 * The workers' only door into flowbox: socket.io, authenticated by a worker token. A worker
 * polls; the app leases it a job from BullMQ, records its result (and a log upload failed after
 * it). A worker whose job has only its result left may poll once ahead of that result.
 */
export class WorkerGateway {
  readonly #io: Server;
  readonly #broker: JobSource;
  readonly #dispatcher: Dispatcher;
  readonly #tokens: TokenService;
  readonly #logger: Logger;
  readonly #pollMs: number;
  readonly #startAhead: boolean;
  readonly #nextWithResult: boolean;
  readonly #callbacks: EngineCallbacks;
  readonly #countCallback:
    | ((route: 'steps' | 'response' | 'subflows', statusCode: number) => void)
    | undefined;
  readonly #polls: { jobs: PollJobs; results: PollResults } | undefined;
  /** Connected workers' sessions (the busy-workers gauge reads them). */
  readonly #sessions = new Set<WorkerSession>();
  /** Runs being finalised because their worker vanished; close() waits for them. */
  readonly #losses = new Set<Promise<void>>();

  constructor(deps: {
    httpServer: HttpServer;
    broker: JobSource;
    dispatcher: Dispatcher;
    tokens: TokenService;
    logger: Logger;
    pollSeconds: number;
    /**
     * Whether a poll ahead of a result may start a run before that result (false with
     * FLOW_MAX_CONCURRENT_RUNS: the run would hold a place under its flow's cap while it waits,
     * and its own flow's last run would still hold one). Without, it waits for the result.
     */
    startAhead?: boolean;
    /** QUEUE_NEXT_WITH_RESULT: a result's acknowledgement carries the next job (default true). */
    nextWithResult?: boolean;
    /** Largest frame a worker may send: a job result carries the run's steps. */
    maxMessageBytes: number;
    /** Its engine's reports, which a worker forwards: checked as the HTTP callbacks are. */
    callbacks: EngineCallbacks;
    /** Counts each answered callback as the HTTP route's would be (flowbox_engine_callbacks_total). */
    countCallback?: (route: 'steps' | 'response' | 'subflows', statusCode: number) => void;
    /** Polls of polling triggers this app took, handed to idle workers ahead of runs, and their results. */
    polls?: { jobs: PollJobs; results: PollResults };
  }) {
    this.#polls = deps.polls;
    this.#callbacks = deps.callbacks;
    this.#countCallback = deps.countCallback;
    this.#broker = deps.broker;
    this.#dispatcher = deps.dispatcher;
    this.#tokens = deps.tokens;
    this.#logger = deps.logger;
    this.#pollMs = deps.pollSeconds * 1000;
    this.#startAhead = deps.startAhead ?? true;
    this.#nextWithResult = deps.nextWithResult ?? true;
    this.#io = new Server(deps.httpServer, {
      serveClient: false,
      transports: ['websocket'],
      maxHttpBufferSize: deps.maxMessageBytes,
    });
    this.#io.use((socket, next) => {
      const token: unknown = socket.handshake.auth.token;
      if (typeof token !== 'string') return next(new Error('UNAUTHORIZED: missing worker token'));
      try {
        socket.data.workerName = this.#tokens.verifyWorkerToken(token).workerName;
      } catch (error) {
        return next(new Error(`UNAUTHORIZED: ${(error as Error).message}`));
      }
      next();
    });
    this.#io.on('connection', (socket) => this.#onConnection(socket));
  }

  get connectedWorkers(): number {
    return this.#io.of('/').sockets.size;
  }

  /** Connected workers holding a job: a run, or a poll. */
  get busyWorkers(): number {
    let busy = 0;
    for (const session of this.#sessions) if (session.held.length > 0 || session.polls.size > 0) busy += 1;
    return busy;
  }

  async close(): Promise<void> {
    // Disconnecting fails each socket's in-flight job (see the disconnect handler), so nothing
    // stays RUNNING; then the socket.io server (and with it the HTTP server) closes.
    this.#io.disconnectSockets(true);
    await Promise.allSettled([...this.#losses]);
    await this.#io.close();
  }

  #onConnection(socket: Socket): void {
    const session: WorkerSession = {
      workerName: String(socket.data.workerName),
      held: [],
      polling: false,
      parked: null,
      fetchAhead: true,
      polls: new Map(),
      disconnected: new AbortController(),
    };
    const logger = this.#logger.child({ worker: session.workerName, socketId: socket.id });
    logger.info('worker connected');
    this.#sessions.add(session);

    socket.on(SOCKET_EVENTS.poll, (frame: unknown, ack: Ack<PollReply>) => {
      if (typeof ack !== 'function') return;
      void this.#onPoll(session, frame, ack, logger);
    });
    socket.on(SOCKET_EVENTS.jobResult, (frame: unknown, ack: Ack<JobResultAck>) => {
      if (typeof ack !== 'function') return;
      void this.#onJobResult(session, frame, ack, logger);
    });
    socket.on(SOCKET_EVENTS.pollResult, (frame: unknown, ack: Ack<PollResultAck>) => {
      if (typeof ack !== 'function') return;
      void this.#onPollResult(session, frame, ack, logger);
    });
    socket.on(SOCKET_EVENTS.logFailed, (frame: unknown, ack: Ack<LogFailedAck>) => {
      if (typeof ack !== 'function') return;
      void this.#onLogFailed(frame, logger).then(ack);
    });
    socket.on(SOCKET_EVENTS.engineCallback, (frame: unknown, ack: Ack<CallbackAnswer>) => {
      if (typeof ack !== 'function') return;
      void this.#onEngineCallback(frame, logger).then(ack);
    });
    socket.on('disconnect', (reason) => {
      this.#sessions.delete(session);
      session.disconnected.abort();
      logger.info({ reason }, 'worker disconnected');
      const held = session.held;
      session.held = [];
      for (const { lease } of held) {
        const loss = this.#workerLost(lease, logger).finally(() => this.#losses.delete(loss));
        this.#losses.add(loss);
      }
      // A poll lost with its worker: its lease ends now, so the next tick polls the same state.
      for (const taken of session.polls.values()) {
        const loss = (this.#polls?.results.failed(taken, pollWorkerLost()) ?? Promise.resolve())
          .catch((error: unknown) => logger.error({ err: error }, 'could not end a lost poll'))
          .finally(() => this.#losses.delete(loss));
        this.#losses.add(loss);
      }
      session.polls.clear();
    });
  }

  async #onPoll(session: WorkerSession, frame: unknown, ack: Ack<PollReply>, logger: Logger): Promise<void> {
    const parsed = parseMessage(PollRequestSchema, frame);
    if (!parsed.ok) {
      logger.warn({ reason: parsed.error }, 'dropped an invalid poll');
      ack({
        version: 1,
        type: 'error',
        error: { name: 'ProtocolError', code: 'INVALID_REQUEST', message: parsed.error },
      });
      return;
    }
    const { running } = parsed.value;
    // Ahead of its job's result, a worker may take one more: only for the one job it holds. One
    // naming a job it no longer holds here (its session was lost meanwhile) polls as usual.
    const ahead =
      running !== undefined && session.held.length === 1 && session.held[0]?.lease.jobId === running;
    // Else a worker polls only when it holds no job: if it does here, the ack that carried its
    // last job never reached it (a result or poll ack that timed out), so it gets that job again.
    const last = session.held.at(-1);
    if (running === undefined && last?.job != null && !session.polling) {
      logger.warn({ runId: last.job.runId }, 'handing out a job again: its first answer was lost');
      ack({ version: 1, type: 'job', job: last.job });
      return;
    }
    if ((session.held.length > 0 && !ahead) || session.polling) {
      ack({
        version: 1,
        type: 'error',
        error: {
          name: 'ProtocolError',
          code: 'INVALID_REQUEST',
          message:
            'a worker runs one job at a time, and takes the next only ahead of the result of the one it names',
        },
      });
      return;
    }
    session.polling = true;
    try {
      const deadline = Date.now() + this.#pollMs;
      // A poll ahead takes a fresh run the moment it comes, where the queue is known empty (the
      // broker has a blocking fetch out). Under a backlog it would cost a Redis call of its own,
      // so it waits for the held job's result instead, whose completion leases the next job in
      // the same call. A job accepted before the held one was leased (before a plain poll came)
      // shows a backlog; one accepted after, that there was none behind it.
      // A run held in this app for its workers costs no Redis call either way: taken at once, and
      // not marked a backlog, so its worker goes on polling ahead.
      const since = ahead ? (session.held[0]?.leasedAt ?? 0) : Date.now();
      const backlog = (lease: LeasedJob) => lease.data.acceptedAt < since && lease.held !== true;
      let pending: LeasedJob | null = null;
      const free = this.#broker.drained || this.#broker.heldReady;
      if (ahead && (!this.#startAhead || (!free && !session.fetchAhead))) {
        pending = await parkUntilResult(session, deadline);
        if (pending !== null && !backlog(pending)) session.fetchAhead = true;
      }
      // A lease that cannot run (its run ended, or its flow is at its cap) is not this worker's
      // job: the poll goes on for another until its time is up.
      let reply: PollReply = { version: 1, type: 'idle' };
      while (reply.type === 'idle' && !session.disconnected.signal.aborted && Date.now() < deadline) {
        // A plain poll takes a poll job first, and one queued while it waits wakes it.
        const woken = ahead || pending !== null ? null : this.#pollJobFor(session);
        if (woken !== null && 'reply' in woken) {
          reply = woken.reply;
          break;
        }
        const lease =
          pending ??
          (await this.#broker.next(
            deadline - Date.now(),
            woken === null ? session.disconnected.signal : woken.signal,
            parsed.value.workerId,
          ));
        woken?.stop();
        pending = null;
        if (lease === null) {
          if (woken?.signal.aborted === true) continue;
          break;
        }
        if (ahead && backlog(lease)) session.fetchAhead = false;
        const job = await this.#handOut(session, lease, parsed.value.workerId, logger);
        if (job !== null) reply = { version: 1, type: 'job', job, ...backlogMark(backlog(lease)) };
      }
      if (!session.disconnected.signal.aborted) ack(reply);
    } finally {
      session.polling = false;
    }
  }

  /**
   * A poll job for an idle worker: the reply handing it out when one waits, else a signal that
   * aborts when one is queued (or the worker leaves), with `stop` to stop listening.
   */
  #pollJobFor(
    session: WorkerSession,
  ): { reply: PollReply } | { signal: AbortSignal; stop: () => void } | null {
    const polls = this.#polls;
    if (polls === undefined) return null;
    const taken = polls.jobs.take();
    if (taken !== undefined) {
      session.polls.set(taken.job.jobId, taken);
      return { reply: { version: 1, type: 'poll-job', job: taken.job } };
    }
    const wake = new AbortController();
    const stop = polls.jobs.onAdded(() => wake.abort());
    return { signal: AbortSignal.any([session.disconnected.signal, wake.signal]), stop };
  }

  async #onPollResult(
    session: WorkerSession,
    frame: unknown,
    ack: Ack<PollResultAck>,
    logger: Logger,
  ): Promise<void> {
    const parsed = parseMessage(PollResultSchema, frame);
    if (!parsed.ok) {
      logger.warn({ reason: parsed.error }, 'dropped an invalid poll result');
      ack({
        version: 1,
        type: 'error',
        error: { name: 'ProtocolError', code: 'INVALID_REQUEST', message: parsed.error },
      });
      return;
    }
    const result = parsed.value;
    const taken = session.polls.get(result.jobId);
    if (taken === undefined || this.#polls === undefined) {
      ack({
        version: 1,
        type: 'error',
        error: {
          name: 'ProtocolError',
          code: 'INVALID_REQUEST',
          message: `poll ${result.jobId} is not leased to you`,
        },
      });
      return;
    }
    try {
      await this.#polls.results.record(taken, result);
      session.polls.delete(result.jobId);
      ack({ version: 1, type: 'ok' });
    } catch (error) {
      // Kept in the session: a worker that retries the result gets it recorded, or its lease
      // ends when it leaves; either way the state stays where the last recorded poll left it.
      logger.error({ err: error, jobId: result.jobId }, 'could not record a poll result');
      ack({ version: 1, type: 'error', error: serializeError(error) });
    }
  }

  /** Makes `lease` this worker's job; null when it cannot run (the lease is then ended). */
  async #handOut(
    session: WorkerSession,
    lease: LeasedJob,
    workerId: string,
    logger: Logger,
  ): Promise<DispatchedJob | null> {
    if (session.disconnected.signal.aborted) {
      // A run written RUNNING for this worker as it was accepted has had its start: it goes down
      // the lost-worker path. Any other goes back to the queue untouched.
      if (lease.started === true) await this.#dispatcher.workerLost(lease);
      else await lease.release();
      return null;
    }
    const held: HeldJob = { lease, job: null, leasedAt: Date.now() };
    session.held.push(held);
    try {
      held.job = await this.#dispatcher.dispatch(lease, workerId);
      return held.job;
    } catch (error) {
      session.held = session.held.filter((entry) => entry !== held);
      if (error instanceof FlowBusy) {
        await lease.postpone(BUSY_FLOW_POSTPONE_MS).catch((cause: unknown) => {
          logger.warn({ err: cause, runId: subjectOf(lease.data) }, 'could not postpone a job');
        });
        return null;
      }
      if (error instanceof FlowboxError && error.code === 'RUN_ALREADY_FINISHED') {
        logger.warn({ runId: subjectOf(lease.data) }, error.message);
        await lease.complete();
        return null;
      }
      logger.error({ err: error, runId: subjectOf(lease.data) }, 'could not dispatch a job');
      await this.#dispatcher.conclude(lease, { outcome: failedOutcome(serializeError(error)) });
      return null;
    }
  }

  async #onJobResult(
    session: WorkerSession,
    frame: unknown,
    ack: Ack<JobResultAck>,
    logger: Logger,
  ): Promise<void> {
    const parsed = parseMessage(JobResultSchema, frame);
    if (!parsed.ok) {
      logger.warn({ reason: parsed.error }, 'dropped an invalid job result');
      ack({
        version: 1,
        type: 'error',
        error: { name: 'ProtocolError', code: 'INVALID_REQUEST', message: parsed.error },
      });
      return;
    }
    const result = parsed.value;
    const held = session.held.find((entry) => entry.lease.jobId === result.jobId);
    if (held === undefined) {
      ack({
        version: 1,
        type: 'error',
        error: {
          name: 'ProtocolError',
          code: 'INVALID_REQUEST',
          message: `job ${result.jobId} is not leased to you`,
        },
      });
      return;
    }
    const { lease } = held;
    session.held = session.held.filter((entry) => entry !== held);
    try {
      // The next job goes to the worker that asked with this result, or to its poll parked
      // ahead of it; one that took its next job ahead of this result gets no other.
      const parked = session.parked;
      // A poll job waiting goes to this worker's next plain poll, ahead of the queue's next run.
      const fetchNext =
        this.#nextWithResult &&
        (this.#polls?.jobs.waiting ?? 0) === 0 &&
        (result.wantsNext === true || parked !== null) &&
        session.held.length === 0 &&
        !session.disconnected.signal.aborted;
      const next = await this.#dispatcher.conclude(lease, result, {
        fetchNext,
        traceparent: result.traceparent,
      });
      if (parked !== null && session.parked === parked) {
        parked(next);
        ack({ version: 1, type: 'ok' });
        return;
      }
      if (next !== null && result.wantsNext !== true) {
        // Its parked poll ended meanwhile (its long-poll window closed, or the worker left).
        await next.release();
        ack({ version: 1, type: 'ok' });
        return;
      }
      const job = next === null ? null : await this.#handOut(session, next, result.workerId, logger);
      const backlog = next !== null && next.data.acceptedAt < held.leasedAt && next.held !== true;
      ack(
        job === null ? { version: 1, type: 'ok' } : { version: 1, type: 'ok', job, ...backlogMark(backlog) },
      );
    } catch (error) {
      logger.error({ err: error, runId: result.runId }, 'could not record a job result');
      ack({ version: 1, type: 'error', error: serializeError(error) });
    }
  }

  /**
   * A run's log upload failed after its result (the worker sends this behind that result, so the
   * run's end is recorded): the run keeps its outcome and records why it has no log.
   */
  async #onLogFailed(frame: unknown, logger: Logger): Promise<LogFailedAck> {
    const parsed = parseMessage(LogFailedSchema, frame);
    if (!parsed.ok) {
      logger.warn({ reason: parsed.error }, 'dropped an invalid log failure');
      const error = { name: 'ProtocolError', code: 'INVALID_REQUEST' as const, message: parsed.error };
      return { version: 1, type: 'error', error };
    }
    const { runId } = parsed.value;
    try {
      await this.#dispatcher.logFailed(parsed.value);
      return { version: 1, type: 'ok' };
    } catch (error) {
      logger.error({ err: error, runId }, "could not record a run's log failure");
      return { version: 1, type: 'error', error: serializeError(error) };
    }
  }

  /**
   * An engine's progress or response, forwarded by its worker. The engine token decides, as on
   * the HTTP route: the worker that carries it adds no authority of its own.
   */
  async #onEngineCallback(frame: unknown, logger: Logger): Promise<CallbackAnswer> {
    const parsed = parseMessage(EngineCallbackFrameSchema, frame);
    if (!parsed.ok) {
      logger.warn({ reason: parsed.error }, 'refused an invalid engine callback');
      return callbackRefusal('INVALID_REQUEST', parsed.error);
    }
    const { runId, engineToken, traceparent, report } = parsed.value.callback;
    const route =
      report.type === 'steps' ? 'steps' : report.type === 'subflow-start' ? 'subflows' : 'response';
    try {
      const claims = this.#callbacks.authorize(engineToken, runId);
      const result = await this.#callbacks.handle(claims, report, {
        parent: traceparent,
        log: logger,
        attributes: { 'flowbox.transport': 'socket.io' },
      });
      this.#countCallback?.(route, result === undefined ? 204 : 200);
      return result === undefined
        ? { version: 1, type: 'ok' }
        : { version: 1, type: 'subflow-started', runId: result.runId };
    } catch (error) {
      const { code, message } = serializeError(error);
      if (code === 'INTERNAL') logger.error({ err: error, runId }, 'an engine callback failed');
      this.#countCallback?.(route, httpStatusOf(code));
      return callbackRefusal(code, message);
    }
  }

  async #workerLost(lease: LeasedJob, logger: Logger): Promise<void> {
    logger.warn({ runId: subjectOf(lease.data), jobId: lease.jobId }, 'worker lost with a job in flight');
    try {
      await this.#dispatcher.workerLost(lease);
    } catch (error) {
      logger.error(
        { err: error, runId: subjectOf(lease.data) },
        'could not finalise a run whose worker was lost',
      );
    }
  }
}
