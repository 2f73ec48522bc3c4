import type { LeasedJob } from './leased-job.ts';

/** One worker's poll, waiting for a job. */
export interface PendingPoll {
  /** The worker that polls. */
  readonly workerId: string;
  /** Answers the poll (a job, or null); a poll answered once ignores the rest. */
  resolve(job: LeasedJob | null): void;
}

interface Entry extends PendingPoll {
  /** Answered: nothing more goes to it. */
  settled: boolean;
  /** Set aside for a run being accepted (claim): its time running out waits for the claim's end. */
  claimed: boolean;
  /** Its time ran out while it was claimed. */
  expired: boolean;
}

/**
 * An idle worker's poll set aside for one run while the run's row is written (JobBroker.claim):
 * the row names the worker, and the run goes to it with no second write.
 */
export interface PollClaim {
  readonly workerId: string;
  /** Gives `lease` to the poll. False when its worker left meanwhile: the lease is the caller's. */
  give(lease: LeasedJob): boolean;
  /** The run was not created: the poll goes back, first in line. */
  putBack(): void;
}

/**
 * The polls of an app's idle workers, oldest first (JobBroker serves them from the queue). A poll
 * leaves the line answered: with a job, or with null when its time is up or its worker left.
 */
export class WaitingPolls {
  readonly #line: Entry[] = [];
  /** A poll joined the line (or came back to it): the broker fetches for it. */
  readonly #joined: () => void;

  constructor(joined: () => void) {
    this.#joined = joined;
  }

  get length(): number {
    return this.#line.length;
  }

  /** A poll for `workerId` joins the line; resolves with its job, or null (see the class). */
  wait(timeoutMs: number, signal: AbortSignal, workerId: string): Promise<LeasedJob | null> {
    return new Promise((resolve) => {
      const poll: Entry = {
        workerId,
        settled: false,
        claimed: false,
        expired: false,
        resolve: (job) => {
          if (poll.settled) return;
          poll.settled = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(job);
        },
      };
      const drop = () => {
        const index = this.#line.indexOf(poll);
        if (index >= 0) this.#line.splice(index, 1);
        poll.resolve(null);
      };
      const onAbort = () => drop();
      const onTimeout = () => {
        if (poll.claimed) poll.expired = true;
        else drop();
      };
      const timer = setTimeout(onTimeout, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#line.push(poll);
      this.#joined();
    });
  }

  /** The oldest poll, out of the line, to be answered by the caller. */
  take(): PendingPoll | undefined {
    return this.#line.shift();
  }

  /**
   * The oldest poll, set aside (see PollClaim): meanwhile no job and no timeout reaches it, and a
   * worker that leaves ends it. `closed` says whether a put-back poll should be answered instead.
   */
  claim(closed: () => boolean): PollClaim | null {
    const poll = this.#line.shift();
    if (poll === undefined) return null;
    poll.claimed = true;
    return {
      workerId: poll.workerId,
      give: (lease) => {
        poll.claimed = false;
        if (poll.settled) return false;
        poll.resolve(lease);
        return true;
      },
      putBack: () => {
        poll.claimed = false;
        if (poll.expired || closed()) poll.resolve(null);
        if (poll.settled) return;
        this.#line.unshift(poll);
        this.#joined();
      },
    };
  }

  /** Answers every poll in line with null. */
  closeAll(): void {
    for (const poll of this.#line.splice(0)) poll.resolve(null);
  }
}
