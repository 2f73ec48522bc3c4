import type { Logger } from '@flowbox/node-kit';
import type { RefusedDeliveriesRepository, RefusedDelivery } from './refused-deliveries-repository.ts';

/** How often the refusals gathered in memory are written: one batch (two statements) each time. */
export const REFUSALS_FLUSH_MS = 1_000;
/** Rows one flow gets per flush window on one app; further refusals add to the last row's count. */
export const REFUSALS_PER_FLOW_PER_WINDOW = 10;
/** Rows one window holds across all flows; past it refusals of flows not yet in it are not kept. */
export const REFUSALS_MAX_PER_WINDOW = 500;

/** What the refusing route knows; the time and count are added here. */
export type Refusal = Omit<RefusedDelivery, 'receivedAt' | 'suppressed'>;

/**
 * Keeps webhooks refused before any run existed, per flow, without making a refusal cost a
 * Postgres write: `record` only adds to memory (no I/O), and every REFUSALS_FLUSH_MS one batch
 * is written. Within a window each flow gets at most REFUSALS_PER_FLOW_PER_WINDOW rows; past
 * that a refusal adds 1 to its flow's last row (`suppressed`), and the window holds at most
 * REFUSALS_MAX_PER_WINDOW rows, so a flood of any size, to one flow or to many made-up ids,
 * costs at most two statements a second. A batch that cannot be written is dropped with a log
 * line (refusals are a diagnostic, not data the app owes anyone).
 */
export class RefusedDeliveries {
  readonly #repository: RefusedDeliveriesRepository;
  readonly #keepPerFlow: number;
  readonly #logger: Logger;
  readonly #flushMs: number;
  #window = new Map<string, { rows: number; last: RefusedDelivery }>();
  #pending: RefusedDelivery[] = [];
  /** Refusals not kept at all this window (the window was full). */
  #dropped = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;

  constructor(options: {
    repository: RefusedDeliveriesRepository;
    /** REFUSED_DELIVERIES_PER_FLOW; 0 keeps none. */
    keepPerFlow: number;
    logger: Logger;
    flushMs?: number;
  }) {
    this.#repository = options.repository;
    this.#keepPerFlow = options.keepPerFlow;
    this.#logger = options.logger;
    this.#flushMs = options.flushMs ?? REFUSALS_FLUSH_MS;
  }

  get enabled(): boolean {
    return this.#keepPerFlow > 0;
  }

  /** Notes a refusal for the next batch. No I/O. */
  record(refusal: Refusal): void {
    if (!this.enabled) return;
    const seen = this.#window.get(refusal.flowId);
    if (seen !== undefined && seen.rows >= Math.min(REFUSALS_PER_FLOW_PER_WINDOW, this.#keepPerFlow)) {
      seen.last.suppressed += 1;
      return;
    }
    if (this.#pending.length >= REFUSALS_MAX_PER_WINDOW) {
      if (seen === undefined) this.#dropped += 1;
      else seen.last.suppressed += 1;
      return;
    }
    const row: RefusedDelivery = { ...refusal, receivedAt: new Date(), suppressed: 0 };
    this.#pending.push(row);
    this.#window.set(refusal.flowId, { rows: (seen?.rows ?? 0) + 1, last: row });
  }

  start(): void {
    if (!this.enabled || this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.flush(), this.#flushMs);
    this.#timer.unref();
  }

  /** Writes what was gathered (one flush at a time: a call during one waits for it). */
  flush(): Promise<void> {
    this.#flushing ??= this.#write().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#flushing;
    await this.flush();
  }

  async #write(): Promise<void> {
    const batch = this.#pending;
    const dropped = this.#dropped;
    this.#pending = [];
    this.#window = new Map();
    this.#dropped = 0;
    if (dropped > 0) {
      this.#logger.warn(
        { dropped, kept: batch.length },
        'refused webhooks past the recording bound were not kept',
      );
    }
    if (batch.length === 0) return;
    try {
      await this.#repository.insert(batch, this.#keepPerFlow);
    } catch (error) {
      this.#logger.warn(
        { err: error, refusals: batch.length },
        'could not record refused webhooks; they are dropped',
      );
    }
  }
}
