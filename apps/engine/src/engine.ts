import {
  type ExecuteResult,
  failedOutcome,
  forUsers,
  type PollOutcome,
  serializeError,
  type WorkerToEngine,
} from '@flowbox/protocol';
import type { FlowExecutor } from './flows/flow-executor.ts';
import type { EngineIpcChannel } from './host/ipc-channel.ts';
import type { PollExecutor } from './pieces/poll-executor.ts';

export interface Engine {
  /** Listens for jobs (main.ts tells the worker it is ready once the runtime is warm). */
  start(): void;
  /** Resolves when the job in progress (if any) has answered. */
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

/** Serves `execute` requests from the worker one at a time. */
export function createEngine(deps: EngineDeps): Engine {
  const { channel, executor } = deps;
  // The worker sends one job at a time; chaining keeps that true even if it did not.
  let queue: Promise<void> = Promise.resolve();

  const handle = async (message: Extract<WorkerToEngine, { type: 'execute' }>): Promise<void> => {
    const { requestId, job } = message;
    let result: ExecuteResult;
    try {
      const execution = await executor.execute(job);
      result = { version: 1, type: 'execute-result', requestId, ...execution };
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
    await channel.sendResult(result).catch((error: unknown) => {
      channel.log('error', 'could not send the execute result', {
        runId: job.runId,
        error: serializeError(error),
      });
    });
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
    await channel
      .sendResult({ version: 1, type: 'poll-result', requestId, outcome })
      .catch((error: unknown) => {
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
    close: () => queue,
  };
}
