import { defer } from '@flowbox/node-kit';

/**
 * The worker's results, in order: the app reads a socket's events in order and counts a job as
 * held until its result arrives, so one result may still be on its way (behind) while the next
 * job runs, and the next plain poll waits for all of them.
 */
export class ResultLine {
  /** Settles once every result handed to the line is acknowledged (or given up). */
  #acknowledged: Promise<unknown> = Promise.resolve();
  /** Settles once the last result handed to the line is on the socket (or given up). */
  #sent: Promise<void> = Promise.resolve();

  acknowledged(): Promise<unknown> {
    return this.#acknowledged;
  }

  sent(): Promise<void> {
    return this.#sent;
  }

  /** Sends after the results before it; `send` calls its `onSent` once the frame is on the socket. */
  behind(send: (onSent: () => void) => Promise<unknown>): void {
    const sent = defer<void>();
    this.#sent = sent.promise;
    this.#acknowledged = this.#acknowledged
      .then(() => send(() => sent.resolve()))
      .finally(() => sent.resolve());
  }
}
