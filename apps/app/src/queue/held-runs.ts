import type { LeasedJob } from './leased-job.ts';

/** How long a run may wait in an app's memory before it goes to the queue (spill), at most. */
export const HELD_RUN_MAX_MS = 1_000;

interface Held {
  lease: LeasedJob;
  rank: number;
  /** When it was held (performance.now()). */
  at: number;
}

/**
 * Fresh runs an app keeps in memory for its own busy workers (see JobBroker.hold): a result's
 * acknowledgement carries the first of them, with no Redis call. Served in the queue's order: by
 * rank within the flow (RunQueue), then first come first.
 *
 * The run's row (QUEUED) stays its durable record: should the app die, the reconciler enqueues
 * it. So that a held run never meets the reconciler (whose copy would start it a second time),
 * nor waits on workers that are gone, the held runs go to the queue (each lease's `release`, in
 * order) once the oldest has waited `maxMs`, and at close; none older is handed out, however late
 * the timer fires.
 */
export class HeldRuns {
  readonly #runs: Held[] = [];
  readonly #max: number;
  readonly #maxMs: number;
  readonly #onSpillError: (error: unknown) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: {
    max: number;
    /** HELD_RUN_MAX_MS, or less: well inside RECONCILE_AFTER_SECONDS. */
    maxMs?: number;
    onSpillError: (error: unknown) => void;
  }) {
    this.#max = options.max;
    this.#maxMs = Math.min(options.maxMs ?? HELD_RUN_MAX_MS, HELD_RUN_MAX_MS);
    this.#onSpillError = options.onSpillError;
  }

  get size(): number {
    return this.#runs.length;
  }

  /** Whether one more run may be held. */
  get hasRoom(): boolean {
    return this.#runs.length < this.#max;
  }

  /** Holds `lease` at its place by `rank`; false when full. */
  add(lease: LeasedJob, rank: number): boolean {
    if (!this.hasRoom) return false;
    const held = { lease, rank, at: performance.now() };
    // After every held run of a rank at most its own: ranks are small and so is the list.
    let at = this.#runs.length;
    while (at > 0 && (this.#runs[at - 1]?.rank ?? 0) > rank) at -= 1;
    this.#runs.splice(at, 0, held);
    if (this.#timer === undefined) this.#watch(this.#maxMs);
    return true;
  }

  /** Ends the held run of `jobId` (its run ended before it started); false when none is held. */
  remove(jobId: string): boolean {
    const at = this.#runs.findIndex((held) => held.lease.jobId === jobId);
    if (at < 0) return false;
    this.#runs.splice(at, 1);
    if (this.#runs.length === 0) this.#stopTimer();
    return true;
  }

  /** The first held run, or null (also when the oldest waited its time: they all go to the queue). */
  take(): LeasedJob | null {
    if (this.#stale(performance.now())) {
      void this.spill();
      return null;
    }
    const held = this.#runs.shift();
    if (this.#runs.length === 0) this.#stopTimer();
    return held?.lease ?? null;
  }

  /** Sends every held run to the queue, in order; a failed add is reported and left to the reconciler. */
  async spill(): Promise<void> {
    this.#stopTimer();
    const runs = this.#runs.splice(0);
    for (const { lease } of runs) {
      await lease.release().catch(this.#onSpillError);
    }
  }

  /** Spills every held run once the oldest has waited `maxMs`; checks again until then. */
  #watch(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#runs.length === 0) return;
      const now = performance.now();
      if (this.#stale(now)) void this.spill();
      else this.#watch(this.#oldest() + this.#maxMs - now);
    }, ms);
  }

  #oldest(): number {
    return Math.min(...this.#runs.map((held) => held.at));
  }

  #stale(now: number): boolean {
    return this.#runs.length > 0 && now - this.#oldest() >= this.#maxMs;
  }

  #stopTimer(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
