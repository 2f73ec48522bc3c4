import type { Logger } from '@flowbox/node-kit';

/** Entries whose due ticks are taken at once. */
const CONCURRENCY = 16;

export interface TickLoopDeps<Entry, Row> {
  logger: Logger;
  refreshMs: number;
  /** What a failed pass logs. */
  failedMessage: string;
  /** Reads the published rows from Postgres. */
  list: () => Promise<Row[]>;
  /** Brings the loop's entries up to date with the rows just read. */
  apply: (rows: Row[]) => void;
  /** Takes the entry's ticks that are due at `now`. */
  takeDue: (entry: Entry, now: Date) => Promise<void>;
  /** When the entry's next tick is due (ms since the epoch), or null: none comes. */
  nextAt: (entry: Entry) => number | null;
}

/**
 * The pass loop of a ticker (schedules/schedule-ticker.ts, polls/poll-ticker.ts): it holds the
 * ticker's entries, reloads them from Postgres every `refreshMs` (or on the next pass after
 * `reloadNext`), takes every due tick of every entry, and sleeps until the soonest next tick or
 * the next reload. A failed pass is logged and tried again after `refreshMs`.
 */
export class TickLoop<Entry, Row> {
  readonly entries = new Map<string, Entry>();
  readonly #deps: TickLoopDeps<Entry, Row>;
  #loadedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #passing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(deps: TickLoopDeps<Entry, Row>) {
    this.#deps = deps;
  }

  start(): void {
    this.#wake(0);
  }

  /** Stops the loop; resolves once a pass under way has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#passing;
  }

  /** Makes the next pass reload the entries (one of them is no longer published). */
  reloadNext(): void {
    this.#loadedAt = 0;
  }

  /** One pass: reload the entries when due, take every tick that is due. */
  async tick(now = new Date()): Promise<void> {
    if (now.getTime() - this.#loadedAt >= this.#deps.refreshMs) await this.#load(now);
    const entries = [...this.entries.values()];
    for (let i = 0; i < entries.length; i += CONCURRENCY) {
      await Promise.all(entries.slice(i, i + CONCURRENCY).map((entry) => this.#deps.takeDue(entry, now)));
    }
  }

  async #load(now: Date): Promise<void> {
    const rows = await this.#deps.list();
    this.#loadedAt = now.getTime();
    this.#deps.apply(rows);
  }

  #wake(delayMs: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#passing = this.tick().then(
        () => this.#wake(this.#delayToNext()),
        (error: unknown) => {
          // Postgres down or a tick refused: the due ticks wait for the next try, not a hot loop.
          this.#deps.logger.warn({ err: error, retryInMs: this.#deps.refreshMs }, this.#deps.failedMessage);
          this.#wake(this.#deps.refreshMs);
        },
      );
    }, delayMs);
    this.#timer.unref();
  }

  #delayToNext(): number {
    let soonest = this.#loadedAt + this.#deps.refreshMs;
    for (const entry of this.entries.values()) {
      const next = this.#deps.nextAt(entry);
      if (next !== null) soonest = Math.min(soonest, next);
    }
    return Math.max(0, Math.min(this.#deps.refreshMs, soonest - Date.now()));
  }
}
