import {
  type FlowResponse,
  forUsers,
  type SerializedError,
  type StepDefinition,
  type StepResult,
  serializeError,
} from '@flowbox/protocol';
import type { TemplateScope } from '../../steps/template.ts';
import type { LeafExecutor } from './leaf-executor.ts';
import type { ScopeFrame } from './run-scope.ts';

/** How a run's steps ended: all ran, a `stop` step ended it, or a step failed. */
export type Ending =
  | { kind: 'done' }
  | { kind: 'stopped'; error?: SerializedError }
  | { kind: 'failed'; error: SerializedError };

/** Where the interpreter's results go (flow-executor.ts: redaction, the log's budget, progress, traces). */
export interface StepSink {
  /** Before each step starts; throws to end the run (a progress report the app refused). */
  beforeStep(): void;
  /**
   * A step starts; the function records its result once it ended. `leaf`: the trigger, a piece
   * or a code step (a traced run gives each a span; routers, loops and stops have none).
   */
  begin(name: string, path: string, leaf: boolean): (result: StepResult) => void;
  /** How many top-level steps follow the one starting now (a body's steps count as more to come). */
  position(stepsAfter: number): void;
}

export interface InterpreterDeps {
  leaves: LeafExecutor;
  sink: StepSink;
  /** The run's answer to a sync caller: the path `webhook/return_response` takes too. */
  respond(response: FlowResponse): Promise<void>;
  limits: { codeStepTimeoutMs: number; loopMaxIterations: number };
}

/** One run's interpreter state, shared by the construct runners (loop-step.ts, router-step.ts, stop-step.ts). */
export interface RunContext extends InterpreterDeps {
  /** Set once: the first failure or stop; every body stops before its next step. */
  ending: { ending: Exclude<Ending, { kind: 'done' }>; path: string } | undefined;
  /** Runs `steps` in order in `frame`, their paths under `prefix`; returns early once the run ends. */
  runBody(steps: readonly StepDefinition[], frame: ScopeFrame, prefix: string): Promise<void>;
  /** Ends the run with a failure at `path`, unless it ended already. */
  fail(path: string, error: SerializedError): void;
}

/** A step that did not run code of its own: a router's, a loop's or a stop's record. */
export function containerResult(
  name: string,
  path: string,
  kind: string,
  startedAt: string,
  started: number,
  input: unknown,
): StepResult {
  return { name, path, kind, status: 'SUCCEEDED', input, startedAt, durationMs: performance.now() - started };
}

/** An error of the interpreter's own about a step (bad items, a bad condition), as a step records it. */
export function stepError(error: unknown, step: string): SerializedError {
  return { ...forUsers(serializeError(error, 'STEP_FAILED')), step };
}

export type { TemplateScope };
