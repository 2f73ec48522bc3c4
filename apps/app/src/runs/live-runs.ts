import type { RunFinishedReport, StepResult } from '@flowbox/protocol';

/** What the engine has reported on a run in flight, before the worker's result records it. */
export interface LiveRun {
  steps: StepResult[];
  /** The engine's own verdict, when its finish callback came. */
  finished?: EngineVerdict;
}

export type EngineVerdict = Omit<RunFinishedReport, 'version' | 'type' | 'steps'>;

interface Entry extends LiveRun {
  expiresAt: number;
}

/** A flow far beyond any real one; a runaway engine cannot grow an entry past it. */
const MAX_STEPS = 1_000;

/**
 * The engine's finish reports, and which runs ended recently, in this app's memory. Progress and
 * the response (with its steps) are in Redis (RunProgressStore), so any app shows them; the
 * finish report comes a moment before the worker's result, which carries the same, so it is kept
 * only where it lands: for the record of a run whose worker dies before its result (the engine's
 * own verdict and its last steps), and to refuse callbacks for a run that has ended.
 *
 * Entries expire (in flight: the flow timeout plus grace; ended: as long as an engine token
 * lives), so runs that end on another app instance do not accumulate here. Maps keep insertion
 * order, which is expiry order, so expired entries are dropped from the front as new ones come.
 */
export class LiveRuns {
  readonly #inFlight = new Map<string, Entry>();
  readonly #ended = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: { ttlMs: number; now?: () => number }) {
    this.#ttlMs = options.ttlMs;
    this.#now = options.now ?? Date.now;
  }

  /** False when the run has ended: its engine's token must not be used any more. */
  reportSteps(runId: string, steps: StepResult[]): boolean {
    const entry = this.#entry(runId);
    if (entry === null) return false;
    entry.steps.push(...steps.slice(0, MAX_STEPS - entry.steps.length));
    return true;
  }

  /** The engine's verdict, with the steps its progress reports had not carried. */
  reportFinished(runId: string, verdict: EngineVerdict, steps: StepResult[]): boolean {
    if (!this.reportSteps(runId, steps)) return false;
    const entry = this.#inFlight.get(runId);
    if (entry !== undefined) entry.finished = verdict;
    return true;
  }

  hasEnded(runId: string): boolean {
    const expiresAt = this.#ended.get(runId);
    return expiresAt !== undefined && expiresAt > this.#now();
  }

  get(runId: string): LiveRun | undefined {
    return this.#inFlight.get(runId);
  }

  /** Drops what an attempt reported, without ending the run: it is about to start again. */
  forget(runId: string): void {
    this.#inFlight.delete(runId);
  }

  /** Marks the run ended and returns what the engine had reported on it. */
  end(runId: string): LiveRun | undefined {
    const entry = this.#inFlight.get(runId);
    this.#inFlight.delete(runId);
    this.#purge();
    this.#ended.set(runId, this.#now() + this.#ttlMs);
    return entry;
  }

  get size(): { inFlight: number; ended: number } {
    return { inFlight: this.#inFlight.size, ended: this.#ended.size };
  }

  #entry(runId: string): Entry | null {
    if (this.hasEnded(runId)) return null;
    let entry = this.#inFlight.get(runId);
    if (entry === undefined) {
      this.#purge();
      entry = { steps: [], expiresAt: this.#now() + this.#ttlMs };
      this.#inFlight.set(runId, entry);
    }
    return entry;
  }

  #purge(): void {
    const now = this.#now();
    for (const [runId, entry] of this.#inFlight) {
      if (entry.expiresAt > now) break;
      this.#inFlight.delete(runId);
    }
    for (const [runId, expiresAt] of this.#ended) {
      if (expiresAt > now) break;
      this.#ended.delete(runId);
    }
  }
}
