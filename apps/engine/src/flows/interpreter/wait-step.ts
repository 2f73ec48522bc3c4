import {
  durationMs,
  FlowboxError,
  type SerializedError,
  type StepResult,
  stepPath,
  type WaitStepDefinition,
} from '@flowbox/protocol';
import { finishedBefore, replayStep, waitingBefore } from './checkpoint.ts';
import { succeed } from './delay-step.ts';
import { containerResult, endStep, type RunContext, stepError } from './interpreter-context.ts';
import type { ScopeFrame } from './run-scope.ts';

/**
 * `wait`: the value that reached its URL (the resume's `values[path]`) is its output. Without
 * one, it blocks until its timeout (`since` + `timeout`, or RUN_MAX_PAUSE_DAYS), kept from when
 * it was first reached; past that it fails WAIT_TIMEOUT (with `continueOnFailure`, the error is
 * its output and the run goes on).
 */
export async function runWait(
  context: RunContext,
  step: WaitStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, false);
  const input = { kind: step.kind, timeout: step.timeout };
  const done = finishedBefore(context, path);
  if (done !== undefined) {
    record(replayStep(context, frame, done, { name: step.name, path, kind: 'wait', input }));
    return false;
  }
  const { clock } = context.durable;
  const startedAt = new Date(clock.now()).toISOString();
  const started = performance.now();
  const result = containerResult(step.name, path, 'wait', startedAt, started, input);
  const outcome = waitOutcome(
    context,
    path,
    step.name,
    step.timeout,
    () => ({ kind: step.kind, waitingFor: step.kind === 'approval' ? 'an approval' : 'a request' }),
    result,
  );
  finishWaiting(context, path, frame, step, result, outcome);
  endStep(record, result, started);
  return outcome.kind === 'blocked';
}

/** What a waiting point decided this time: its value arrived, it timed out, or it waits on. */
export type WaitOutcome =
  | { kind: 'value'; value: unknown }
  | { kind: 'failed'; error: unknown }
  | { kind: 'blocked' };

/**
 * The decision a wait and a waiting sub-flow share: `values[path]` present → that value; else
 * past the timeout → WAIT_TIMEOUT; else block (a WaitPoint with `timeoutAt`, the checkpoint's
 * WAITING entry with `since` and `until`). `point` names what it waits for.
 */
export function waitOutcome(
  context: RunContext,
  path: string,
  name: string,
  timeout: WaitStepDefinition['timeout'],
  point: () => { kind: 'request' | 'approval' | 'flow'; waitingFor: string; childRunId?: string },
  result?: StepResult,
): WaitOutcome {
  const { durable } = context;
  if (Object.hasOwn(durable.values, path)) return { kind: 'value', value: durable.values[path] };
  const timeoutMs = timeout === undefined ? durable.maxPauseMs : durationMs(timeout);
  if (timeoutMs === undefined || timeoutMs > durable.maxPauseMs) {
    return {
      kind: 'failed',
      error: new FlowboxError(
        'INVALID_DELAY',
        timeoutMs === undefined
          ? `${name}: timeout must be a duration such as "24h", not ${JSON.stringify(timeout)}`
          : `${name}: timeout ${JSON.stringify(timeout)} is longer than the ${durable.maxPauseMs} ms a run may wait (RUN_MAX_PAUSE_DAYS)`,
      ),
    };
  }
  const now = durable.clock.now();
  const kept = waitingBefore(context, path)?.since;
  const since = kept === undefined ? now : Date.parse(kept);
  const timeoutAt = since + timeoutMs;
  if (now >= timeoutAt) {
    return {
      kind: 'failed',
      error: new FlowboxError(
        'WAIT_TIMEOUT',
        `${name}: nothing arrived within its timeout (${new Date(timeoutAt).toISOString()})`,
      ),
    };
  }
  const waiting = point();
  const at = new Date(timeoutAt).toISOString();
  const childRunId = waiting.childRunId === undefined ? {} : { childRunId: waiting.childRunId };
  context.block(
    { path, step: name, kind: waiting.kind, timeoutAt: at, ...childRunId },
    { status: 'WAITING', since: new Date(since).toISOString(), until: at, ...childRunId },
  );
  if (result !== undefined) result.waitingFor = waiting.waitingFor;
  return { kind: 'blocked' };
}

/**
 * Records what `waitOutcome` decided on `result`: the value as the output, a failure (ending the
 * run, or continued), or WAITING.
 */
export function finishWaiting(
  context: RunContext,
  path: string,
  frame: ScopeFrame,
  step: { name: string; continueOnFailure?: boolean | undefined },
  result: StepResult,
  outcome: WaitOutcome,
  output: (value: unknown) => unknown = (value) => value,
): void {
  if (outcome.kind === 'blocked') {
    result.status = 'WAITING';
    return;
  }
  if (outcome.kind === 'value') {
    let shown: unknown;
    try {
      shown = output(outcome.value);
    } catch (error) {
      finishWaiting(context, path, frame, step, result, { kind: 'failed', error }, output);
      return;
    }
    succeed(context, path, frame, step.name, result, shown);
    return;
  }
  const error: SerializedError = stepError(outcome.error, step.name);
  result.status = 'FAILED';
  result.error = error;
  if (step.continueOnFailure === true) {
    const continued = { error: { code: error.code, message: error.message } };
    result.output = continued;
    result.continued = true;
    frame[step.name] = continued;
    context.durable.record?.set(path, { status: 'FAILED', output: continued, error });
  } else {
    context.fail(path, error);
  }
}
