import type { RunJobData } from '@flowbox/protocol';
import { directLease } from './direct-lease.ts';
import type { JobSource } from './job-source.ts';
import type { LeasedJob } from './leased-job.ts';
import type { RunQueue } from './run-queue.ts';
import type { PollClaim } from './waiting-polls.ts';

/** How an accepted run reached a worker's side: handed to a waiting worker, or queued in BullMQ. */
export type Submitted = 'handed' | 'queued';

/**
 * Sends a newly accepted run on its way. When a worker of this app is waiting for a job, the
 * queue has none for it (its poll would have taken it), so the run goes to that worker at once:
 * no BullMQ add, no blocking wake-up, no lease script, no completion script (docs/performance.md).
 * When every worker of this app is busy, the run waits in the app's memory for the first of them
 * to finish (JobBroker.hold; its result's acknowledgement carries it): no Redis call at all once
 * the queue is empty. Otherwise, or while Redis is down (a webhook then answers 503 rather than depend on a store it
 * cannot reach), it is queued.
 *
 * A webhook reserves that worker before it writes the run (`reserve`): the row is then written
 * RUNNING under the worker, and the run's dispatch makes no second write (one Postgres statement
 * and round trip fewer per run, on the caller's path). Not under FLOW_MAX_CONCURRENT_RUNS, whose
 * bound is counted where a run starts.
 */
export class RunHandoff {
  readonly #queue: RunQueue;
  readonly #broker: JobSource;
  readonly #direct: boolean;
  readonly #startOnAccept: boolean;
  readonly #redisDown: () => boolean;
  readonly #workerLost: (lease: LeasedJob) => Promise<void>;
  readonly #hasWorkers: () => boolean;

  constructor(options: {
    queue: RunQueue;
    broker: JobSource;
    /** QUEUE_DIRECT_HANDOFF. */
    direct: boolean;
    /** FLOW_MAX_CONCURRENT_RUNS is 0: a run may start where it is accepted. */
    startOnAccept: boolean;
    redisDown: () => boolean;
    /** A started run whose worker left before it got the run (Dispatcher.workerLost). */
    workerLost: (lease: LeasedJob) => Promise<void>;
    /** Workers are connected to this app: a run held for them (JobBroker.hold) reaches one. */
    hasWorkers?: () => boolean;
  }) {
    this.#hasWorkers = options.hasWorkers ?? (() => false);
    this.#queue = options.queue;
    this.#broker = options.broker;
    this.#direct = options.direct;
    this.#startOnAccept = options.startOnAccept;
    this.#redisDown = options.redisDown;
    this.#workerLost = options.workerLost;
  }

  /**
   * An idle worker of this app for the run about to be accepted, or null (none waits, or the run
   * must queue). Its id goes into the run's row; then `submit` with it, or `putBack` when no run
   * was created.
   */
  reserve(): PollClaim | null {
    if (!this.#direct || !this.#startOnAccept || this.#redisDown()) return null;
    return this.#broker.claim();
  }

  /**
   * Throws QUEUE_UNAVAILABLE when the run could be neither handed over nor queued. With
   * `reserved`, the run was written RUNNING for that worker and goes to it; should the worker have
   * left meanwhile, the run takes the lost-worker path (retried while attempts are left).
   */
  async submit(job: RunJobData, rank: number, reserved: PollClaim | null = null): Promise<Submitted> {
    if (reserved !== null) {
      const lease = this.#lease(job, rank, { started: true });
      if (!reserved.give(lease)) await this.#workerLost(lease);
      return 'handed';
    }
    if (this.#direct && !this.#redisDown() && this.#broker.offer(() => this.#lease(job, rank))) {
      return 'handed';
    }
    // Every worker of this app busy: the first of them to finish takes it.
    if (this.#canHold() && this.#broker.hold(() => this.#lease(job, rank), rank)) return 'queued';
    await this.#queue.add(job, rank);
    return 'queued';
  }

  /**
   * Submits many runs (a schedule's due ticks): each goes to a waiting worker while one waits,
   * the rest to the queue in one bulk add. Throws QUEUE_UNAVAILABLE when the bulk add fails.
   */
  async submitMany(runs: ReadonlyArray<{ job: RunJobData; rank: number }>): Promise<Submitted[]> {
    const paths: Submitted[] = [];
    const queued: Array<{ data: RunJobData; rank: number }> = [];
    // Once an offer finds no waiting worker, none waits for the rest either.
    let offering = this.#direct && !this.#redisDown();
    for (const { job, rank } of runs) {
      offering &&= this.#broker.offer(() => this.#lease(job, rank));
      if (offering) {
        paths.push('handed');
      } else {
        queued.push({ data: job, rank });
        paths.push('queued');
      }
    }
    if (queued.length > 0) await this.#queue.addBulk(queued);
    return paths;
  }

  /**
   * Takes a waiting run's job out (its run ended before it started): a held run, or its job in
   * the queue. Whether one was removed.
   */
  async drop(runId: string): Promise<boolean> {
    if (this.#broker.dropHeld(runId)) return true;
    return this.#queue.remove(runId);
  }

  /** As for a direct hand-off; FLOW_MAX_CONCURRENT_RUNS counts where runs start, so not under it. */
  #canHold(): boolean {
    return this.#direct && this.#startOnAccept && !this.#redisDown() && this.#hasWorkers();
  }

  #lease(job: RunJobData, rank: number, { started = false } = {}): LeasedJob {
    return directLease(job, rank, {
      queue: this.#queue,
      nextWaiting: () => this.#broker.nextWaiting(),
      started,
    });
  }
}
