import {
  type ExecuteResult,
  failedOutcome,
  forUsers,
  type PollOutcome,
  serializeError,
  type WorkerToEngine,
} from '@flowbox/protocol';
import type { FlowExecution, FlowExecutor } from './flows/flow-executor.ts';
import type { EngineIpcChannel } from './host/ipc-channel.ts';
import type { PollExecutor } from './pieces/poll-executor.ts';

export interface Engine {
  /** Listens for jobs (main.ts tells the worker it is ready once the runtime is warm). */
  start(): void;
  /** Resolves when the job in progress (if any) has answered and every log upload has ended. */
  close(): Promise<void>;
}

export interface EngineDeps {
  channel: EngineIpcChannel;
  executor: FlowExecutor;
  /** Polling triggers' polls (`execute-poll`); without, a poll is answered INTERNAL. */
  polls?: PollExecutor;
  /** After each result is sent, off the job's path. */
  afterJob?: () => void;
}

/**
 * Serves `execute` requests from the worker one at a time. A run's log is uploaded after its
 * result is sent, while the next job may already run; its `log-persisted` says how that ended.
 */
export function createEngine(deps: EngineDeps): Engine {
  const { channel, executor } = deps;
  // The worker sends one job at a time; chaining keeps that true even if it did not.
  let queue: Promise<void> = Promise.resolve();
  const uploads = new Set<Promise<void>>();

  const persistLog = async (
    requestId: string,
    runId: string,
    persist: NonNullable<FlowExecution['persistLog']>,
  ): Promise<void> => {
    const report = await persist();
    if (report.logError !== undefined) {
      channel.log('error', 'run log upload failed', { runId, error: report.logError });
    }
    await channel.send({ version: 1, type: 'log-persisted', requestId, runId, ...report }).catch(() => {
      // The worker is gone: the engine is about to exit, and the run is final already.
    });
  };

  const handle = async (message: Extract<WorkerToEngine, { type: 'execute' }>): Promise<void> => {
    const { requestId, job } = message;
    let result: ExecuteResult;
    let persist: FlowExecution['persistLog'];
    try {
      const { persistLog: upload, ...execution } = await executor.execute(job);
      result = { version: 1, type: 'execute-result', requestId, ...execution };
      if (upload !== undefined) {
        result.logPending = true;
        persist = upload;
      }
    } catch (error) {
      // The executor turns flow failures into outcomes; reaching here is a bug in the engine.
      const serialized = serializeError(error);
      channel.log('error', 'flow execution crashed', { runId: job.runId, error: serialized });
      result = {
        version: 1,
        type: 'execute-result',
        requestId,
        // The full stack is in the log line above; the run's record gets the flow's part.
        outcome: failedOutcome(forUsers(serialized)),
        timings: { runMs: 0, logPersistMs: 0 },
      };
    }
    const sent = channel.send(result).catch((error: unknown) => {
      channel.log('error', 'could not send the execute result', {
        runId: job.runId,
        error: serializeError(error),
      });
    });
    if (persist !== undefined) {
      // Not chained to the queue: the next job does not wait for S3.
      const upload = persistLog(requestId, job.runId, persist);
      uploads.add(upload);
      void upload.finally(() => uploads.delete(upload));
    }
    await sent;
    deps.afterJob?.();
  };

  const handlePoll = async (message: Extract<WorkerToEngine, { type: 'execute-poll' }>): Promise<void> => {
    const { requestId, job } = message;
    const outcome: PollOutcome =
      deps.polls === undefined
        ? {
            type: 'error',
            error: { name: 'FlowboxError', code: 'INTERNAL', message: 'this engine runs no polls' },
          }
        : await deps.polls.poll(job);
    await channel.send({ version: 1, type: 'poll-result', requestId, outcome }).catch((error: unknown) => {
      channel.log('error', 'could not send the poll result', {
        flowId: job.flowId,
        error: serializeError(error),
      });
    });
    deps.afterJob?.();
  };

  return {
    start() {
      channel.onMessage((message) => {
        // A preload does not hold up a job that comes meanwhile: the job's own piece loads join
        // the ones in progress (the piece loader shares them) instead of waiting for all of them.
        if (message.type === 'preload') {
          void executor.preload(message);
        } else if (message.type === 'execute-poll') {
          queue = queue.then(() => handlePoll(message));
        } else queue = queue.then(() => handle(message));
      });
    },
    close: async () => {
      await queue;
      await Promise.all(uploads);
    },
  };
}
