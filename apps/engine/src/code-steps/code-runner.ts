import { CODE_STEP_FILENAME, type ExecutionMode } from '@flowbox/protocol';
import type { CodeStepHost } from './code-step-host.ts';

/** One code step to run: the compiled function from the flow bundle and its resolved input. */
export interface CodeRunRequest {
  /**
   * A function expression of `inputs` (the protocol's `wrapCodeStep`), as the flow bundle
   * stores it; the user's code starts on its second line.
   */
  source: string;
  /** The step's resolved input; JSON values only. The code gets a copy. */
  inputs: unknown;
  timeoutMs: number;
  memoryMb: number;
  /** What the code's console, timers and fetch call (code-step-host.ts); one per step. */
  host: CodeStepHost;
  /**
   * The run the step belongs to: a runner that keeps a context per run (isolated-vm) runs the
   * run's code steps one after another in one context, as a run's isolate does, until
   * `endRun`. Without it, every step gets a fresh context.
   */
  run?: object;
}

/**
 * Where code steps run: one adapter per execution mode (isolated-vm-runner.ts,
 * node-vm-runner.ts), both held to one shared test suite. Each runs the code in a fresh global
 * scope over the request's host, copies the input in and the JSON result out, and fails with a
 * `CODE_STEP_*` FlowboxError. The timeout covers everything the code waits for.
 */
export interface CodeRunner {
  run(request: CodeRunRequest): Promise<unknown>;
  /** Loads what the first run would need, so that cost is paid before a job arrives. */
  warmUp(): Promise<void>;
  /** The run is over: the context its code steps shared is released. */
  endRun?(run: object): void;
  close(): void;
}

export type CodeRunners = Readonly<Record<ExecutionMode, CodeRunner>>;

/** How the runners name the user's code in stack traces (`file:///code-step.js:2:7`). */
export const CODE_STEP_URL = `file:///${CODE_STEP_FILENAME}`;

/** The wrapped source puts the user's line 1 on its line 2 (the protocol's, as the app compiles it). */
export { CODE_STEP_LINE_OFFSET } from '@flowbox/protocol';
