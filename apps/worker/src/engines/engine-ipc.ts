import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type Deferred, defer, type Logger } from '@flowbox/node-kit';
import {
  type CallbackAnswer,
  callbackRefusal,
  type EngineCallback,
  type EngineToWorker,
  EngineToWorkerSchema,
  type ExecuteResult,
  FlowboxError,
  type LogPersisted,
  parseMessage,
  type WorkerToEngine,
} from '@flowbox/protocol';
import type { EngineLogUploads } from './engine-log-uploads.ts';

export type PollResultMessage = Extract<EngineToWorker, { type: 'poll-result' }>;

/** An execute result; for one with `logPending`, how the upload that follows it ended (never rejects). */
export type EngineExecution = ExecuteResult & { persisted?: Promise<LogPersisted> };

/**
 * The worker's side of one engine's IPC channel: every frame from the engine parsed and
 * dispatched, the one request (a run or a poll) in flight, and the engine's callbacks answered.
 */
export interface EngineIpc {
  /** The request the engine is answering, if any. */
  readonly pendingId: string | undefined;
  /**
   * Sends one request and holds it as pending until the engine answers, exits or cannot receive
   * it; `admit` (a sandboxed engine's relay) sees the job first and may rewrite it.
   */
  request<J>(
    job: J,
    runId: string | undefined,
    forward: ((callback: EngineCallback) => Promise<CallbackAnswer>) | undefined,
    admit: ((job: J) => Promise<J>) | undefined,
    what: string,
    wrap: (requestId: string, job: J) => WorkerToEngine,
  ): { requestId: string; answer: Promise<EngineExecution | PollResultMessage> };
  /** Rejects the request `requestId` with `error`, if it is still the pending one. */
  fail(requestId: string, error: FlowboxError): void;
  /** Rejects whichever request is pending (the engine exited). */
  failPending(error: FlowboxError): void;
}

export interface EngineIpcOptions {
  child: ChildProcess;
  logger: Logger;
  /** The log uploads results announce (`logPending`), settled by the engine's `log-persisted`. */
  uploads: EngineLogUploads;
  /** The engine's `ready`. */
  onReady: () => void;
  /** An ENGINE_CRASHED error naming the engine and the reason. */
  crash: (reason: string) => FlowboxError;
}

export function createEngineIpc({ child, logger, uploads, onReady, crash }: EngineIpcOptions): EngineIpc {
  let pending:
    | {
        requestId: string;
        /** The run's id; undefined for a poll. */
        runId: string | undefined;
        result: Deferred<EngineExecution | PollResultMessage>;
        forward: ((callback: EngineCallback) => Promise<CallbackAnswer>) | undefined;
      }
    | undefined;

  child.on('message', (frame: unknown) => {
    const parsed = parseMessage(EngineToWorkerSchema, frame);
    if (!parsed.ok) {
      logger.warn({ error: parsed.error }, 'dropped a bad IPC frame from the engine');
      return;
    }
    const message = parsed.value;
    switch (message.type) {
      case 'ready':
        onReady();
        return;
      case 'log':
        logger[message.level](message.data ?? {}, message.msg);
        return;
      case 'poll-result':
        if (pending?.requestId !== message.requestId) {
          logger.warn({ requestId: message.requestId }, 'dropped a poll result nobody waits for');
          return;
        }
        pending.result.resolve(message);
        pending = undefined;
        return;
      case 'execute-result': {
        if (pending?.requestId !== message.requestId) {
          logger.warn({ requestId: message.requestId }, 'dropped an execute result nobody waits for');
          return;
        }
        const { logKey } = message.outcome;
        if (message.logPending === true && logKey !== null && pending.runId !== undefined) {
          const persisted = uploads.track(message.requestId, pending.runId, logKey);
          pending.result.resolve({ ...message, persisted });
        } else pending.result.resolve(message);
        pending = undefined;
        return;
      }
      case 'log-persisted':
        uploads.settle(message);
        return;
      case 'callback':
        void answerCallback(message.callId, message.callback);
        return;
    }
  });

  async function answerCallback(callId: number, callback: EngineCallback): Promise<void> {
    const forward = pending?.forward;
    let answer: CallbackAnswer;
    if (forward === undefined) {
      logger.warn({ runId: callback.runId }, 'refused a callback: no job is in progress');
      answer = callbackRefusal('FORBIDDEN', 'no job is in progress');
    } else {
      answer = await forward(callback).catch((error: unknown) =>
        callbackRefusal('CALLBACK_FAILED', error instanceof Error ? error.message : String(error)),
      );
    }
    if (!child.connected) return;
    const reply: WorkerToEngine = { version: 1, type: 'callback-answer', callId, answer };
    child.send(reply, (error) => {
      if (error) logger.warn({ error: error.message }, 'could not answer a callback');
    });
  }

  const fail = (requestId: string, error: FlowboxError) => {
    if (pending?.requestId !== requestId) return;
    pending.result.reject(error);
    pending = undefined;
  };

  return {
    get pendingId() {
      return pending?.requestId;
    },
    request(job, runId, forward, admit, what, wrap) {
      const requestId = randomUUID();
      const result = defer<EngineExecution | PollResultMessage>();
      pending = { requestId, runId, result, forward };
      const deliver = (sent: typeof job) => {
        child.send(wrap(requestId, sent), (error) => {
          if (error) fail(requestId, crash(`could not receive the ${what}: ${error.message}`));
        });
      };
      if (admit === undefined) deliver(job);
      else {
        admit(job).then(deliver, (error: unknown) => {
          fail(
            requestId,
            error instanceof FlowboxError ? error : new FlowboxError('PROVISION_FAILED', String(error)),
          );
        });
      }
      return { requestId, answer: result.promise };
    },
    fail,
    failPending(error) {
      pending?.result.reject(error);
      pending = undefined;
    },
  };
}
