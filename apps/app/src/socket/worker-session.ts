import type { DispatchedJob } from '@flowbox/protocol';
import type { TakenPoll } from '../polls/poll-jobs.ts';
import type { LeasedJob } from '../queue/leased-job.ts';

/** The `backlog` mark on a job handed to a worker (socket-events.ts). */
export function backlogMark(backlog: boolean): { backlog?: true } {
  return backlog ? { backlog: true } : {};
}

/** A job leased to a worker; `job` is what it was handed, null while it is being dispatched. */
export interface HeldJob {
  lease: LeasedJob;
  job: DispatchedJob | null;
  /** When it was leased to the worker (epoch ms). */
  leasedAt: number;
}

/** A connected worker, as the gateway keeps it. */
export interface WorkerSession {
  workerName: string;
  /**
   * The worker's jobs in the order it runs them: the one it runs, and at most one more taken by
   * a poll ahead of that one's result (`running`). The last handed out is handed again if its
   * answer was lost.
   */
  held: HeldJob[];
  polling: boolean;
  /**
   * A poll ahead of the held job's result that waits for that result: the Redis call that
   * completes the held job then leases the next, and this poll takes it (WorkerGateway).
   */
  parked: ((lease: LeasedJob | null) => void) | null;
  /** A poll ahead may fetch from the queue itself: false once one found a backlog there. */
  fetchAhead: boolean;
  /** Polls of polling triggers handed to this worker, by job id, until their result. */
  polls: Map<string, TakenPoll>;
  disconnected: AbortController;
}

/**
 * Parks a poll ahead until the held job's result: resolves with the lease that result's completion
 * brings (null: none), or null at `deadline` or when the worker leaves.
 */
export function parkUntilResult(session: WorkerSession, deadline: number): Promise<LeasedJob | null> {
  const { signal } = session.disconnected;
  return new Promise((resolve) => {
    const done = (lease: LeasedJob | null) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (session.parked === done) session.parked = null;
      resolve(lease);
    };
    const onAbort = () => done(null);
    const timer = setTimeout(onAbort, deadline - Date.now());
    signal.addEventListener('abort', onAbort, { once: true });
    session.parked = done;
  });
}
