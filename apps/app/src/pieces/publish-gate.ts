import { FlowboxError } from '@flowbox/protocol';

export interface PublishGateLimits {
  /** Publishes checked at once (PIECE_PUBLISH_CONCURRENCY). */
  concurrency: number;
  /** Publishes waiting for a place (PIECE_PUBLISH_MAX_QUEUED); one more is refused. */
  maxQueued: number;
}

/**
 * Bounds the publishes an app checks at once: each unpacks an archive (up to
 * PIECE_UNPACKED_MAX_BYTES on disk, then in memory for the load check) and loads its module in
 * a child, so their number times that is the memory publishing can take. A few more wait in
 * line; past them a publish is refused at once (PIECE_PUBLISH_BUSY, 503) rather than held.
 */
export class PublishGate {
  readonly #limits: PublishGateLimits;
  readonly #waiting: Array<() => void> = [];
  #running = 0;

  constructor(limits: PublishGateLimits) {
    this.#limits = limits;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.#enter();
    try {
      return await task();
    } finally {
      this.#leave();
    }
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  async #enter(): Promise<void> {
    if (this.#running < this.#limits.concurrency) {
      this.#running += 1;
      return;
    }
    if (this.#waiting.length >= this.#limits.maxQueued) {
      throw new FlowboxError(
        'PIECE_PUBLISH_BUSY',
        `${this.#running} publishes are being checked and ${this.#waiting.length} wait (PIECE_PUBLISH_CONCURRENCY, PIECE_PUBLISH_MAX_QUEUED); retry later`,
      );
    }
    // The place is handed over by #leave, so #running counts this publish from then on.
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  #leave(): void {
    const next = this.#waiting.shift();
    if (next !== undefined) next();
    else this.#running -= 1;
  }
}
