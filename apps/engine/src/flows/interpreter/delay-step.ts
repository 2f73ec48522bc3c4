import {
  type DelayStepDefinition,
  durationMs,
  FlowboxError,
  type StepResult,
  stepPath,
} from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { finishedBefore, replayStep, waitingBefore } from './checkpoint.ts';
import { containerResult, endStep, failStep, type RunContext } from './interpreter-context.ts';
import type { ScopeFrame } from './run-scope.ts';

/**
 * `delay`: waits `for` a duration or `until` a time, both fixed when the step is first reached
 * (`until` is kept in the checkpoint). Less than PAUSE_MIN_MS left: sleeps in place. More: the
 * step blocks (WAITING) and the run pauses; a resume at or after `until` succeeds with
 * `{ scheduledFor, resumedAt, lateMs }`. A `for`/`until` that is not a duration or date, or a
 * wait past RUN_MAX_PAUSE_DAYS, fails INVALID_DELAY.
 */
export async function runDelay(
  context: RunContext,
  step: DelayStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, false);
  const written = step.for === undefined ? { until: step.until } : { for: step.for };
  const done = finishedBefore(context, path);
  if (done !== undefined) {
    record(replayStep(context, frame, done, { name: step.name, path, kind: 'delay', input: written }));
    return false;
  }
  const { clock } = context.durable;
  const startedAt = new Date(clock.now()).toISOString();
  const started = performance.now();
  const result = containerResult(step.name, path, 'delay', startedAt, started, written);
  let until: number;
  try {
    const kept = waitingBefore(context, path)?.until;
    if (kept === undefined) {
      const input = resolveTemplates(written, frame, step.name, '') as typeof written;
      result.input = input;
      until = firstUntil(step, input, clock.now(), context.durable.maxPauseMs);
    } else {
      until = Date.parse(kept);
    }
  } catch (error) {
    failStep(context, path, record, result, started, error);
    return false;
  }
  const scheduledFor = new Date(until).toISOString();
  const left = until - clock.now();
  if (left >= context.durable.pauseMinMs && left > 0) {
    context.block(
      { path, step: step.name, kind: 'delay', resumeAt: scheduledFor },
      { status: 'WAITING', until: scheduledFor },
    );
    result.status = 'WAITING';
    result.waitingFor = `until ${scheduledFor}`;
    endStep(record, result, started);
    return true;
  }
  if (left > 0) await clock.sleep(left);
  const now = clock.now();
  const output = { scheduledFor, resumedAt: new Date(now).toISOString(), lateMs: Math.max(0, now - until) };
  succeed(context, path, frame, step.name, result, output);
  endStep(record, result, started);
  return false;
}

/** A waiting step's success: its output in the frame and in the next checkpoint. */
export function succeed(
  context: RunContext,
  path: string,
  frame: ScopeFrame,
  name: string,
  result: StepResult,
  output: unknown,
): void {
  result.status = 'SUCCEEDED';
  result.output = output;
  frame[name] = output;
  context.durable.record?.set(path, { status: 'SUCCEEDED', output });
}

/** When a delay reached for the first time ends, from its resolved `for` or `until`. */
function firstUntil(
  step: DelayStepDefinition,
  input: { for?: unknown; until?: unknown },
  now: number,
  maxPauseMs: number,
): number {
  let until: number;
  if (step.for !== undefined) {
    const ms = durationMs(input.for);
    if (ms === undefined) {
      throw new FlowboxError(
        'INVALID_DELAY',
        `delay ${step.name}: for must be a duration such as "5s" or "2h", not ${JSON.stringify(input.for)}`,
      );
    }
    until = now + ms;
  } else {
    const at = typeof input.until === 'string' ? Date.parse(input.until) : Number.NaN;
    if (Number.isNaN(at)) {
      throw new FlowboxError(
        'INVALID_DELAY',
        `delay ${step.name}: until must be an ISO date, not ${JSON.stringify(input.until)}`,
      );
    }
    until = at;
  }
  if (until - now > maxPauseMs) {
    throw new FlowboxError(
      'INVALID_DELAY',
      `delay ${step.name}: ${new Date(until).toISOString()} is further than the ${maxPauseMs} ms a run may wait (RUN_MAX_PAUSE_DAYS)`,
    );
  }
  return until;
}
