import type { ConsoleLine, LeafStepDefinition, SerializedError } from '@flowbox/protocol';

/**
 * What a leaf did: its output, or its error as users see it (forUsers); a code step's console.
 * A leaf executor never throws for the step's own failure.
 */
export interface LeafOutcome {
  output?: unknown;
  error?: SerializedError;
  logs?: ConsoleLine[];
}

/** One leaf's run: the step's path in the run, and the signal that ends it (its timeoutMs). */
export interface LeafRun {
  path: string;
  /** Aborted when the step's `timeoutMs` passed: its requests end, its timers stop (none without one). */
  signal: AbortSignal | undefined;
  /** The wall-clock time a code step's runner gives it: the step's `timeoutMs` when tighter. */
  codeTimeoutMs: number;
}

/**
 * Runs one leaf of the flow tree on its input, already resolved by the interpreter: the
 * trigger, a piece's action or a code step. One per isolation mode: the engine's realm
 * (host-leaf-executor.ts: shared, process, SANDBOXED) and a run's isolate
 * (isolate/isolate-leaf-executor.ts). Templates, scope, recording and control flow are the
 * interpreter's, the same in every mode.
 */
export interface LeafExecutor {
  trigger(input: unknown): Promise<LeafOutcome>;
  leaf(step: LeafStepDefinition, input: unknown, run: LeafRun): Promise<LeafOutcome>;
  /** The run is over: what its leaves shared (a code steps' context) goes. */
  close?(): void;
}
