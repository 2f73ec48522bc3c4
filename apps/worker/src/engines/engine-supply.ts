import type { PreloadRequest } from '@flowbox/protocol';
import type { EngineProcess } from './engine-process.ts';

/**
 * Where a job gets its engine. Two implementations, chosen by RUN_ISOLATION:
 * - warm (warm-engine-supply.ts, `shared` and `isolate`): one engine serves job after job,
 *   recycled after a job count, above a memory threshold, and always after a crash or a timeout;
 * - cold (cold-engine-supply.ts, `process`): every job gets a process that never ran another job,
 *   optionally booted ahead while the worker is idle (prewarm).
 * `isolate` holds one of each: warm for its jobs, cold for jobs whose flow needs Node.
 */
export interface EngineSupply {
  /** Begins background work (a cold supply's first prewarm); acquire works without it. */
  start(): void;
  /** `job`: what a cold supply's next spare preloads (the job's pieces, isolate size, app). */
  acquire(job?: PreloadRequest): Promise<AcquiredEngine>;
  /** Hands the engine back after a job; `reusable` is false after a timeout or crash. */
  release(engine: EngineProcess, outcome: { reusable: boolean }): Promise<void>;
  /** The engine held or kept right now, if any (for logs and tests). */
  readonly currentPid: number | undefined;
  /** Kills every engine it holds, spares included. */
  close(): Promise<void>;
}

export interface AcquiredEngine {
  engine: EngineProcess;
  /** How long the job waited for a boot: 0 for a reused engine or a ready prewarmed one. */
  bootMs: number;
  /** True when the engine was booted before the job asked for it (warm reuse or prewarm). */
  preBooted: boolean;
}

/**
 * Forks a fresh engine and resolves once it is ready for a job. `spare`: a cold supply's
 * prewarmed engine, which boots at a lower priority (engine-priority.ts).
 */
export type StartEngine = (options?: { spare?: boolean }) => Promise<EngineProcess>;
