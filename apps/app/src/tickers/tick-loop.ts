import type { Logger } from '@flowbox/node-kit';

/** The flows changed since a ticker's last read (Postgres's `flows.trigger_seq`, migration 0019). */
export interface Changes<Row> {
  /** One row per changed flow: its published trigger now, or that it has none to tick. */
  rows: Row[];
  /** The highest change number read: the next read asks for the changes after it. */
  seq: number;
}

export interface TickLoopDeps<Entry, Row> {
  logger: Logger;
  refreshMs: number;
  /** What a failed pass logs. */
  failedMessage: string;
  /**
   * Reads the flows changed after change number `after` (-1: every flow), and the flows in
   * `recheck` whatever their number (a tick found them no longer published).
   */
  changes: (after: number, recheck: string[]) => Promise<Changes<Row>>;
  /** Brings the loop's entries up to date with the changed flows just read. */
  apply: (rows: Row[]) => void;
  /** Takes the due ticks of these entries (each has one due at `now`). */
  takeDue: (entries: Entry[], now: Date) => Promise<void>;
  /** When the entry's next tick is due (ms since the epoch), or null: none comes. */
  nextAt: (entry: Entry) => number | null;
  /** The entry's flow id: its key in `entries`. */
  keyOf: (entry: Entry) => string;
}

/**
 * The pass loop of a ticker (schedules/schedule-ticker.ts, polls/poll-ticker.ts): it holds the
 * ticker's entries (by flow id), reads the flows changed since its last read every `refreshMs`,
 * takes every due tick, and sleeps until the soonest next tick or the next read. A read between
 * changes is one query answering no rows, whatever the number of flows. A failed pass is logged
 * and tried again after `refreshMs`.
 */
export class TickLoop<Entry, Row> {
  readonly entries = new Map<string, Entry>();
  readonly #deps: TickLoopDeps<Entry, Row>;
  #seq = -1;
  readonly #recheck = new Set<string>();
  #loadedAt = 0;
  /** The soonest next tick the last pass saw (ms since the epoch). */
  #soonest = Number.POSITIVE_INFINITY;
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

  /** Drops the flow's entry and reads the flow again on the next pass (it is no longer published as it was). */
  recheck(flowId: string): void {
    this.entries.delete(flowId);
    this.#recheck.add(flowId);
    this.#loadedAt = 0;
  }

  /** One pass: read the changed flows when due, take every tick that is due. */
  async tick(now = new Date()): Promise<void> {
    if (now.getTime() - this.#loadedAt >= this.#deps.refreshMs) await this.#load(now);
    // One walk over the entries a pass, no query: about a millisecond at 10,000 flows (a heap
    // would spare it, for nothing measurable at a pass every 2 s).
    const due: Entry[] = [];
    let soonest = Number.POSITIVE_INFINITY;
    for (const entry of this.entries.values()) {
      const next = this.#deps.nextAt(entry);
      if (next === null) continue;
      if (next <= now.getTime()) due.push(entry);
      else if (next < soonest) soonest = next;
    }
    if (due.length > 0) await this.#deps.takeDue(due, now);
    for (const entry of due) {
      if (this.entries.get(this.#deps.keyOf(entry)) !== entry) continue;
      const next = this.#deps.nextAt(entry);
      if (next !== null && next < soonest) soonest = next;
    }
    this.#soonest = soonest;
  }

  async #load(now: Date): Promise<void> {
    const recheck = [...this.#recheck];
    const changes = await this.#deps.changes(this.#seq, recheck);
    for (const flowId of recheck) this.#recheck.delete(flowId);
    this.#seq = Math.max(this.#seq, changes.seq);
    this.#loadedAt = now.getTime();
    this.#deps.apply(changes.rows);
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
    const soonest = Math.min(this.#loadedAt + this.#deps.refreshMs, this.#soonest);
    return Math.max(0, Math.min(this.#deps.refreshMs, soonest - Date.now()));
  }
}
