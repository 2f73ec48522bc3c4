import { randomUUID } from 'node:crypto';
import type { Logger } from '@flowbox/node-kit';
import { type DispatchedPollJob, serializeError } from '@flowbox/protocol';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { TickLoop } from '../tickers/tick-loop.ts';
import type { PollJobs } from './poll-jobs.ts';
import { lastTickAtOrBefore, type PollSpec, parsePollSpec } from './poll-spec.ts';
import type { PollChange, PollsRepository, PublishedPoll } from './polls-repository.ts';

/** Polls taken at once. */
const CONCURRENCY = 16;

/** Builds a poll's job (presigned bundle and piece downloads), as the dispatcher does a run's. */
export type DispatchPoll = (poll: {
  jobId: string;
  flowId: string;
  flowVersionId: string;
  piece: string;
  state: unknown;
}) => Promise<DispatchedPollJob>;

interface Entry {
  poll: PublishedPoll;
  spec: PollSpec;
  /** Ticks up to and including this are taken (here or by another app). */
  from: Date;
}

/**
 * Takes the ticks of every published polling trigger, the way the schedule ticker fires
 * schedules (schedules/schedule-ticker.ts): every app reads the flows changed since its last read every
 * `refreshMs` (tickers/tick-loop.ts), every app tries each tick (multiples of `intervalSeconds` since the epoch, the
 * first one at once), and one statement lets exactly one app take it (PollsRepository.claimTick).
 * That app queues the poll for its idle workers (PollJobs). A poll still in flight holds a lease,
 * and the ticks meanwhile are passed over: one poll covers whatever the source added since.
 */
export class PollTicker {
  readonly #repo: PollsRepository;
  readonly #jobs: PollJobs;
  readonly #dispatch: DispatchPoll;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  /** A poll's lease: its wait for a worker, and the flow timeout for the poll itself. */
  readonly #leaseMs: number;
  readonly #waitMs: number;
  readonly #hasWorkers: () => boolean;
  readonly #loop: TickLoop<Entry, PollChange>;

  constructor(deps: {
    polls: PollsRepository;
    jobs: PollJobs;
    dispatch: DispatchPoll;
    metrics: AppMetrics;
    logger: Logger;
    refreshMs: number;
    /** FLOW_TIMEOUT_SECONDS in ms: what a poll may take once a worker has it. */
    pollTimeoutMs: number;
    /** How long a taken poll may wait for an idle worker of this app. */
    waitMs: number;
    /** Whether this app has workers connected: an app without any takes no tick (another app's may). */
    hasWorkers?: () => boolean;
  }) {
    this.#hasWorkers = deps.hasWorkers ?? (() => true);
    this.#repo = deps.polls;
    this.#jobs = deps.jobs;
    this.#dispatch = deps.dispatch;
    this.#metrics = deps.metrics;
    this.#logger = deps.logger;
    this.#waitMs = deps.waitMs;
    this.#leaseMs = deps.waitMs + deps.pollTimeoutMs;
    this.#loop = new TickLoop({
      logger: deps.logger,
      refreshMs: deps.refreshMs,
      failedMessage: 'poll pass failed; trying again',
      changes: async (after, recheck) => {
        const { changes, seq } = await this.#repo.listChanged(after, recheck);
        return { rows: changes, seq };
      },
      apply: (rows) => this.#apply(rows),
      takeDue: async (entries, now) => {
        for (let i = 0; i < entries.length; i += CONCURRENCY) {
          await Promise.all(entries.slice(i, i + CONCURRENCY).map((entry) => this.#takeDue(entry, now)));
        }
      },
      // Without workers no tick is due here (another app's may take it): the loop then sleeps
      // until its next read instead of waking at once for a tick it will not take.
      nextAt: (entry) =>
        this.#hasWorkers() ? entry.from.getTime() + entry.spec.intervalSeconds * 1000 : null,
      keyOf: (entry) => entry.poll.flowId,
    });
  }

  start(): void {
    this.#loop.start();
  }

  async close(): Promise<void> {
    await this.#loop.close();
  }

  /** One pass: reload the polled flows when due, take every tick that is due. */
  async tick(now = new Date()): Promise<void> {
    await this.#loop.tick(now);
  }

  #apply(changes: PollChange[]): void {
    const entries = this.#loop.entries;
    for (const { flowId, poll: row } of changes) {
      if (row === null) {
        entries.delete(flowId);
        continue;
      }
      const known = entries.get(flowId);
      const recorded = row.lastTick ?? new Date(0);
      if (known?.poll.flowVersionId === row.flowVersionId) {
        if (recorded > known.from) known.from = recorded;
        continue;
      }
      let spec: PollSpec;
      try {
        // Checked when the version was created; the floor is not applied again to what is published.
        spec = parsePollSpec(row.input, { minIntervalSeconds: 0 });
      } catch (error) {
        this.#logger.error(
          { err: error, flowId },
          'a published polling trigger cannot be read; it is not polled',
        );
        entries.delete(flowId);
        continue;
      }
      entries.set(flowId, { poll: row, spec, from: recorded });
    }
  }

  async #takeDue(entry: Entry, now: Date): Promise<void> {
    const at = lastTickAtOrBefore(entry.spec, now);
    if (at <= entry.from || !this.#hasWorkers()) return;
    entry.from = at;
    const leaseId = randomUUID();
    const { flowId, flowVersionId, piece } = entry.poll;
    const claim = await this.#repo.claimTick({ flowId, flowVersionId, at, leaseId, leaseMs: this.#leaseMs });
    if (claim.outcome === 'stale') {
      this.#loop.recheck(flowId);
      return;
    }
    if (claim.outcome === 'taken') return;
    try {
      const job = await this.#dispatch({ jobId: leaseId, flowId, flowVersionId, piece, state: claim.state });
      this.#jobs.add({ job, startFrom: entry.spec.startFrom }, Date.now() + this.#waitMs);
      this.#metrics.pollStarted();
    } catch (error) {
      const failure = serializeError(error);
      this.#logger.warn({ err: error, flowId }, 'a poll could not be dispatched');
      this.#metrics.pollEnded('failed', 0);
      await this.#repo.fail(flowVersionId, leaseId, failure);
    }
  }
}
