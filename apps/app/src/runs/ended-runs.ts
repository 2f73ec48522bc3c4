/**
 * The runs that ended recently, in this app's memory: an engine's callbacks for one of them are
 * refused (its token is spent), even while the token has not expired.
 *
 * Entries expire as long as an engine token lives, so the set stays bounded. A Map keeps
 * insertion order, which is expiry order, so expired entries are dropped from the front as new
 * ones come. Across apps, a late callback that reaches another instance is answered there and
 * changes nothing durable (docs/guarantees.md).
 */
export class EndedRuns {
  readonly #ended = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { ttlMs: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  hasEnded(runId: string): boolean {
    const expiresAt = this.#ended.get(runId);
    return expiresAt !== undefined && expiresAt > this.#now();
  }

  end(runId: string): void {
    this.#purge();
    this.#ended.delete(runId);
    this.#ended.set(runId, this.#now() + this.#ttlMs);
  }

  get size(): number {
    return this.#ended.size;
  }

  #purge(): void {
    const now = this.#now();
    for (const [runId, expiresAt] of this.#ended) {
      if (expiresAt > now) break;
      this.#ended.delete(runId);
    }
  }
}
