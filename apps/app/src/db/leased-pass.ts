import { withLease } from './lease.ts';
import type { Pool } from './pool.ts';

/**
 * Periodic work that one app at a time does (the reconciler, retention): every `intervalMs` a
 * pass runs under the lease `name` (lease.ts), skipped while a pass of this app is still on or
 * another app holds the lease. `close` stops the ticks and waits for the pass in flight.
 */
export class LeasedPass {
  readonly #pool: Pool;
  readonly #lease: { name: string; holder: string; ttlSeconds: number };
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #passing: Promise<unknown> = Promise.resolve();
  #inPass = false;

  constructor(options: {
    pool: Pool;
    name: string;
    /** This app's INSTANCE_ID: who holds the lease. */
    holder: string;
    ttlSeconds: number;
    intervalMs: number;
  }) {
    this.#pool = options.pool;
    this.#lease = { name: options.name, holder: options.holder, ttlSeconds: options.ttlSeconds };
    this.#intervalMs = options.intervalMs;
  }

  /** Calls `tick` every interval; a tick's failure goes to `onError`, and the next tick tries again. */
  start(tick: () => Promise<unknown>, onError: (error: unknown) => void): void {
    this.#timer = setInterval(() => {
      this.#passing = tick().catch(onError);
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Runs `work` under the lease unless a pass is on here or elsewhere; true when it ran. */
  async run(work: () => Promise<void>): Promise<boolean> {
    if (this.#inPass) return false;
    this.#inPass = true;
    try {
      return await withLease(this.#pool, this.#lease, work);
    } finally {
      this.#inPass = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#passing;
  }
}
