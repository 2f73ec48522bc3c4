import { type Deferred, defer } from '@flowbox/node-kit';
import type { LogPersisted } from '@flowbox/protocol';

/**
 * The log uploads an engine goes on with after their results (`execute-result.logPending`),
 * by requestId, until its `log-persisted` or its exit. Each settles once, never rejects.
 */
export class EngineLogUploads {
  readonly #pending = new Map<string, { runId: string; logKey: string; persisted: Deferred<LogPersisted> }>();

  /** An upload that follows this request's result; resolves with how it ended. */
  track(requestId: string, runId: string, logKey: string): Promise<LogPersisted> {
    const persisted = defer<LogPersisted>();
    this.#pending.set(requestId, { runId, logKey, persisted });
    return persisted.promise;
  }

  /** The engine's `log-persisted`. */
  settle(message: LogPersisted): void {
    this.#pending.get(message.requestId)?.persisted.resolve(message);
    this.#pending.delete(message.requestId);
  }

  /** The engine exited: every upload still in flight ended with it, failed. */
  failAll(reason: string): void {
    for (const [requestId, upload] of this.#pending) {
      upload.persisted.resolve({
        version: 1,
        type: 'log-persisted',
        requestId,
        runId: upload.runId,
        logKey: upload.logKey,
        logError: {
          name: 'FlowboxError',
          code: 'LOG_UPLOAD_FAILED',
          message: `the engine ended before the run log's upload finished (${reason})`,
        },
        logPersistMs: 0,
      });
    }
    this.#pending.clear();
  }

  /** Resolves once none is in flight. */
  async drain(): Promise<void> {
    await Promise.all([...this.#pending.values()].map((upload) => upload.persisted.promise));
  }
}
