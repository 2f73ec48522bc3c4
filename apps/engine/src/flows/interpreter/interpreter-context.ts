import {
  type CheckpointStep,
  type FlowResponse,
  forUsers,
  type SerializedError,
  type StepDefinition,
  type StepResult,
  serializeError,
  type WaitPoint,
  type WaitUrls,
} from '@flowbox/protocol';
import type { SubflowRequest } from '../../host/app-client.ts';
import type { TemplateScope } from '../../steps/template.ts';
import type { LeafExecutor } from './leaf-executor.ts';
import type { ScopeFrame } from './run-scope.ts';

/**
 * How a run's steps ended: all ran, a `stop` step ended it, a step failed, or every body that
 * could go on stopped at a waiting point (a failure or a stop wins over a pause).
 */
export type Ending =
  | { kind: 'done' }
  | { kind: 'stopped'; error?: SerializedError }
  | { kind: 'failed'; error: SerializedError }
  | { kind: 'paused'; waits: WaitPoint[] };

/** Time as the waiting points read it: injected in tests, `Date.now` and `setTimeout` otherwise. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/**
 * What the waiting points and the replay need (durable runs). `memo`: a resumed run's checkpoint
 * steps by path; `record`: set when the run can pause (its job has a checkpointUpload), it
 * collects the checkpoint's steps as they finish or wait. Both undefined for a run that cannot
 * pause and does not resume: its steps then pay nothing for them.
 */
export interface DurableDeps {
  clock: Clock;
  pauseMinMs: number;
  maxPauseMs: number;
  memo: ReadonlyMap<string, CheckpointStep> | undefined;
  record: Map<string, CheckpointStep> | undefined;
  /** What arrived for waiting points, by path (a request, a child run's end). */
  values: Readonly<Record<string, unknown>>;
  /** The run's id and its wait URLs' key, when the flow has wait steps. */
  waitUrls: { runId: string; urls: WaitUrls } | undefined;
  startSubflow(start: SubflowRequest): Promise<string>;
}

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
  durable: DurableDeps;
}

/**
 * One run's interpreter state, shared by the construct runners (loop-step.ts, router-step.ts,
 * stop-step.ts, delay-step.ts, ...). A runner resolves true when its step blocked at a waiting
 * point (itself, or a step in its bodies): the body it is in stops there.
 */
export interface RunContext extends InterpreterDeps {
  /** Set once: the first failure or stop; every body stops before its next step. */
  ending: { ending: Exclude<Ending, { kind: 'done' } | { kind: 'paused' }>; path: string } | undefined;
  /** Where the run waits so far (bodies that blocked). */
  waits: WaitPoint[];
  /**
   * Runs `steps` in order in `frame`, their paths under `prefix`; returns early once the run ends
   * or a step blocked (then resolves true).
   */
  runBody(steps: readonly StepDefinition[], frame: ScopeFrame, prefix: string): Promise<boolean>;
  /** Ends the run with a failure at `path`, unless it ended already. */
  fail(path: string, error: SerializedError): void;
  /** A step blocks at a waiting point; `state` is its WAITING entry in the checkpoint. */
  block(point: WaitPoint, state: CheckpointStep): void;
}

/** A step that ran in a run that can pause: its checkpoint entry. Nothing when it cannot pause. */
export function remember(context: RunContext, path: string, entry: CheckpointStep): void {
  context.durable.record?.set(path, entry);
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

/** How a step's result is written (what StepSink.begin returns). */
export type RecordStep = (result: StepResult) => void;

/** Writes a construct step's result, its duration measured up to now. */
export function endStep(record: RecordStep, result: StepResult, started: number): void {
  result.durationMs = performance.now() - started;
  record(result);
}

/**
 * Fails a construct step, and with it the run, on an error of the interpreter's own about it
 * (bad items, a bad condition, a template that does not resolve), and writes its result.
 */
export function failStep(
  context: RunContext,
  path: string,
  record: RecordStep,
  result: StepResult,
  started: number,
  error: unknown,
): void {
  result.status = 'FAILED';
  result.error = stepError(error, result.name);
  context.fail(path, result.error);
  endStep(record, result, started);
}

/** An error of the interpreter's own about a step (bad items, a bad condition), as a step records it. */
export function stepError(error: unknown, step: string): SerializedError {
  return { ...forUsers(serializeError(error, 'STEP_FAILED')), step };
}

export type { TemplateScope };
