import { randomUUID } from 'node:crypto';
import type { Logger } from '@flowbox/node-kit';
import { FlowboxError, type PollResult, type RunJobData, type SerializedError } from '@flowbox/protocol';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import type { TakenPoll } from './poll-jobs.ts';
import type { PollsRepository } from './polls-repository.ts';

/** Where a poll item's run goes (RunHandoff.submit): a waiting worker, or the queue. */
export type SubmitRun = (job: RunJobData, rank: number) => Promise<unknown>;

/**
 * Takes a poll's outcome from its worker: its new items become runs (PollsRepository.record, one
 * transaction), handed over or queued after they exist; a failure ends the lease and is kept for
 * the inspector, the state untouched, so the next interval polls the same state again.
 */
export class PollResults {
  readonly #repo: PollsRepository;
  readonly #submit: SubmitRun;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #maxItems: number;

  constructor(deps: {
    polls: PollsRepository;
    submit: SubmitRun;
    metrics: AppMetrics;
    logger: Logger;
    /** POLL_MAX_ITEMS. */
    maxItems: number;
  }) {
    this.#repo = deps.polls;
    this.#submit = deps.submit;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.#maxItems = deps.maxItems;
  }

  async record(taken: TakenPoll, result: PollResult): Promise<void> {
    const { job } = taken;
    if (result.outcome.type === 'error') {
      await this.failed(taken, result.outcome.error, result.pollMs);
      return;
    }
    const recorded = await this.#repo.record(
      {
        flowId: job.flowId,
        flowVersionId: job.flowVersionId,
        leaseId: job.jobId,
        items: result.outcome.items,
        state: result.outcome.state,
        startFrom: taken.startFrom,
        maxItems: this.#maxItems,
      },
      randomUUID,
    );
    if (recorded.outcome === 'stale') {
      this.#metrics.pollEnded('stale', result.pollMs);
      this.#logger.info(
        { flowId: job.flowId, jobId: job.jobId },
        'a poll result came for a lease that ended; dropped',
      );
      return;
    }
    this.#metrics.pollEnded('ok', result.pollMs);
    this.#metrics.pollItems(recorded.runs.length);
    if (recorded.runs.length > 0 || recorded.baseline > 0 || recorded.deferred > 0) {
      this.#logger.info(
        {
          flowId: job.flowId,
          runs: recorded.runs.length,
          baseline: recorded.baseline,
          deferred: recorded.deferred,
        },
        'poll recorded',
      );
    }
    for (const run of recorded.runs) {
      this.#metrics.runAccepted();
      const data: RunJobData = {
        version: 1,
        type: 'run-flow',
        runId: run.runId,
        flowId: job.flowId,
        flowVersionId: job.flowVersionId,
        trigger: run.trigger,
        syncInstanceId: null,
        acceptedAt: Date.now(),
      };
      try {
        const path = await this.#submit(data, run.rank);
        this.#metrics.runSubmitted(path === 'handed' ? 'handed' : 'queued');
      } catch (error) {
        // The run is QUEUED in Postgres: the reconciler enqueues it once Redis is back.
        this.#logger.warn({ err: error, runId: run.runId }, 'a poll item run could not be queued yet');
      }
    }
  }

  /** A poll that failed, or whose worker was lost with it: counted, kept, the state untouched. */
  async failed(taken: TakenPoll, error: SerializedError, pollMs = 0): Promise<void> {
    const { job } = taken;
    this.#metrics.pollEnded('failed', pollMs);
    this.#logger.warn(
      { flowId: job.flowId, jobId: job.jobId, error },
      'a poll failed; the next interval polls again',
    );
    await this.#repo.fail(job.flowVersionId, job.jobId, error);
  }
}

/** The failure recorded for a poll whose worker left with it. */
export const pollWorkerLost = (): SerializedError => {
  const error = new FlowboxError(
    'WORKER_LOST',
    'the worker running the poll disconnected; the next interval polls again',
  );
  return { name: error.name, code: error.code, message: error.message };
};
