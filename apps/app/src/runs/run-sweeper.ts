import type { Logger } from '@flowbox/node-kit';
import type { RunLifecycle } from './run-lifecycle.ts';

/** Past the flow timeout the worker has killed the engine; this leaves time for its report. */
const REPORT_GRACE_SECONDS = 30;
const MAX_INTERVAL_MS = 10_000;

/**
 * Finalises runs that stay RUNNING past their deadline because nothing is left to report on
 * them: the worker and the app holding its lease both died, or the engine's callbacks had
 * nowhere to go. Every app instance sweeps; the update is idempotent and the first final state
 * of a run wins, so a late report changes nothing.
 */
export class RunSweeper {
  readonly #lifecycle: RunLifecycle;
  readonly #logger: Logger;
  readonly #deadlineSeconds: number;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #sweeping: Promise<void> = Promise.resolve();

  constructor(options: { lifecycle: RunLifecycle; logger: Logger; flowTimeoutSeconds: number }) {
    this.#lifecycle = options.lifecycle;
    this.#logger = options.logger;
    this.#deadlineSeconds = options.flowTimeoutSeconds + REPORT_GRACE_SECONDS;
    this.#intervalMs = Math.min(MAX_INTERVAL_MS, (options.flowTimeoutSeconds * 1000) / 2);
  }

  start(): void {
    this.#timer = setInterval(() => {
      this.#sweeping = this.sweep().then(
        () => {},
        (error: unknown) => this.#logger.warn({ err: error }, 'run sweep failed; trying again next interval'),
      );
    }, this.#intervalMs);
    this.#timer.unref();
  }

  /** One pass; returns the ids it finalised. */
  async sweep(): Promise<string[]> {
    const swept = await this.#lifecycle.sweep(this.#deadlineSeconds);
    if (swept.length > 0) this.#logger.warn({ runIds: swept }, 'finalised overdue runs as TIMEOUT');
    return swept;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sweeping;
  }
}
