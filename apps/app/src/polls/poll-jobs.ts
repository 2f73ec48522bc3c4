import type { DispatchedPollJob } from '@flowbox/protocol';

/** A poll this app took, as a worker is handed it. */
export interface TakenPoll {
  job: DispatchedPollJob;
  /** The trigger's `startFrom`, for the first poll's result. */
  startFrom: 'new' | 'all';
}

interface Waiting extends TakenPoll {
  /** Past this (epoch ms) its lease has run out: another tick polls instead, so it is dropped. */
  expiresAt: number;
}

/**
 * The polls this app took a tick for, waiting for one of its idle workers (the worker gateway
 * hands them out ahead of runs). Held in memory only: a poll lost with its app costs one
 * interval, since its lease runs out and the next tick polls the same state again.
 */
export class PollJobs {
  readonly #line: Waiting[] = [];
  readonly #listeners = new Set<() => void>();

  get waiting(): number {
    this.#dropExpired();
    return this.#line.length;
  }

  add(poll: TakenPoll, expiresAt: number): void {
    this.#line.push({ ...poll, expiresAt });
    for (const listener of [...this.#listeners]) listener();
  }

  /** The oldest poll whose lease still holds, out of the line. */
  take(): TakenPoll | undefined {
    this.#dropExpired();
    const taken = this.#line.shift();
    return taken === undefined ? undefined : { job: taken.job, startFrom: taken.startFrom };
  }

  /** Calls `listener` whenever a poll joins the line; returns the unsubscribe. */
  onAdded(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #dropExpired(): void {
    const now = Date.now();
    while (this.#line.length > 0 && (this.#line[0]?.expiresAt ?? 0) <= now) this.#line.shift();
  }
}
