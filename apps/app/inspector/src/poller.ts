/**
 * Calls `tick` now and then every `intervalMs` after the previous call ended (never two at
 * once), skipping while the tab is hidden, until stopped. Errors go to `onError` and polling
 * goes on: a restarting app should not freeze the page.
 */
export class Poller {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  readonly #intervalMs: number;
  readonly #tick: () => Promise<boolean | undefined>;
  readonly #onError: (error: unknown) => void;

  constructor(
    intervalMs: number,
    tick: () => Promise<boolean | undefined>,
    onError: (error: unknown) => void,
  ) {
    this.#intervalMs = intervalMs;
    this.#tick = tick;
    this.#onError = onError;
  }

  start(): this {
    void this.#run();
    return this;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    let more = true;
    if (document.visibilityState !== 'hidden') {
      try {
        // A tick answers false when there is nothing left to watch (a final run).
        more = (await this.#tick()) !== false;
      } catch (error) {
        this.#onError(error);
      }
    }
    if (more && !this.#stopped) this.#timer = setTimeout(() => void this.#run(), this.#intervalMs);
  }
}
