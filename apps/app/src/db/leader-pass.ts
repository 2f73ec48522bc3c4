import { withLeaderLock } from './leader-lock.ts';
import type { Pool } from './pool.ts';

/**
 * Periodic work that one app at a time does (the reconciler, retention): every `intervalMs` a
 * pass runs under the leader lock `name` (leader-lock.ts), skipped while a pass of this app is still on or
 * another app holds the lock. `close` stops the ticks and waits for the pass in flight.
 */
export class LeaderPass {
  readonly #pool: Pool;
  readonly #lock: { name: string; holder: string; ttlSeconds: number };
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #passing: Promise<unknown> = Promise.resolve();
  #inPass = false;

  constructor(options: {
    pool: Pool;
    name: string;
    /** This app's INSTANCE_ID: who holds the lock. */
    holder: string;
    ttlSeconds: number;
    intervalMs: number;
  }) {
    this.#pool = options.pool;
    this.#lock = { name: options.name, holder: options.holder, ttlSeconds: options.ttlSeconds };
    this.#intervalMs = options.intervalMs;
  }

  /** Calls `tick` every interval; a tick's failure goes to `onError`, and the next tick tries again. */
  start(tick: () => Promise<unknown>, onError: (error: unknown) => void): void {
    this.#timer = setInterval(() => {
      this.#passing = tick().catch(onError);
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** Runs `work` under the lock unless a pass is on here or elsewhere; true when it ran. */
  async run(work: () => Promise<void>): Promise<boolean> {
    if (this.#inPass) return false;
    this.#inPass = true;
    try {
      return await withLeaderLock(this.#pool, this.#lock, work);
    } finally {
      this.#inPass = false;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#passing;
  }
}
