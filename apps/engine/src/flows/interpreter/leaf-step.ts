import {
  FlowboxError,
  forUsers,
  type LeafStepDefinition,
  type StepResult,
  serializeError,
  stepPath,
} from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { finishedBefore, finishedEntry, replayStep, waitingBefore } from './checkpoint.ts';
import type { RunContext } from './interpreter-context.ts';
import type { LeafOutcome, LeafRun } from './leaf-executor.ts';
import { attemptWithRetry, type FailedAttempt } from './retry.ts';
import type { ScopeFrame } from './run-scope.ts';

/**
 * A piece or code step: its input resolved over `frame`, run by the mode's leaf executor within
 * its `timeoutMs`, recorded. With `continueOnFailure` a failure is recorded FAILED with
 * `continued: true` and its output `{ error: { code, message } }`, which later steps read; the
 * run goes on. Without it, the failure ends the run. With `retry`, failed attempts are made again
 * (retry.ts); a backoff of PAUSE_MIN_MS or more blocks the step (WAITING). A resumed run's leaf
 * that finished before is replayed from the checkpoint, not run.
 */
export async function runLeaf(
  context: RunContext,
  step: LeafStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, true);
  const kind = step.type === 'code' ? 'code' : `${step.piece}/${step.action}`;
  const done = finishedBefore(context, path);
  if (done !== undefined) {
    record(
      replayStep(context, frame, done, { name: step.name, path, kind, input: replayedInput(step, frame) }),
    );
    return false;
  }
  const startedAt = new Date().toISOString();
  const started = performance.now();
  let input: unknown = step.input;
  let outcome: LeafOutcome;
  let attempts: FailedAttempt[] | undefined;
  try {
    input = resolveTemplates(step.input, frame, step.name);
    const execute = (run: LeafRun) => context.leaves.leaf(step, input, run);
    if (step.retry === undefined) {
      outcome = await withTimeout(context, step, path, execute);
    } else {
      const attempt = () => withTimeout(context, step, path, execute);
      const { clock, pauseMinMs } = context.durable;
      const retried = await attemptWithRetry(
        step.retry,
        waitingBefore(context, path),
        { clock, pauseMinMs },
        attempt,
      );
      attempts = retried.attempts;
      if (retried.kind === 'blocked') {
        const until = new Date(retried.until).toISOString();
        context.block(
          { path, step: step.name, kind: 'retry', resumeAt: until },
          { status: 'WAITING', until, attempts },
        );
        const next = attempts.length + 1;
        record({
          name: step.name,
          path,
          kind,
          status: 'WAITING',
          input,
          attempts,
          waitingFor: `attempt ${next} of ${step.retry.maxAttempts} at ${until}`,
          startedAt,
          durationMs: performance.now() - started,
        });
        return true;
      }
      outcome = retried.outcome;
    }
  } catch (error) {
    outcome = { error: forUsers(serializeError(error, 'STEP_FAILED')) };
  }
  const result: StepResult = {
    name: step.name,
    path,
    kind,
    status: 'SUCCEEDED',
    input,
    startedAt,
    durationMs: 0,
  };
  if (outcome.error === undefined) {
    if (outcome.output !== undefined) result.output = outcome.output;
    frame[step.name] = outcome.output;
  } else {
    result.status = 'FAILED';
    result.error = { ...outcome.error, step: step.name };
    if (step.continueOnFailure === true) {
      const output = { error: { code: outcome.error.code, message: outcome.error.message } };
      result.output = output;
      result.continued = true;
      frame[step.name] = output;
    } else {
      context.fail(path, result.error);
    }
  }
  if (outcome.logs !== undefined && outcome.logs.length > 0) result.logs = outcome.logs;
  if (attempts !== undefined && attempts.length > 0) result.attempts = attempts;
  if (context.durable.record !== undefined && (result.status === 'SUCCEEDED' || result.continued === true)) {
    context.durable.record.set(path, finishedEntry(result, result.output));
  }
  result.durationMs = performance.now() - started;
  record(result);
  return false;
}

/** A replayed leaf's input as the log shows it: resolved again over the replayed outputs when it can be. */
function replayedInput(step: LeafStepDefinition, frame: ScopeFrame): unknown {
  try {
    return resolveTemplates(step.input, frame, step.name);
  } catch {
    return step.input;
  }
}

/**
 * Runs the leaf within the step's `timeoutMs`, if it has one: past it the signal aborts (its
 * requests end) and the step fails STEP_TIMEOUT without waiting for it; a code step's runner is
 * given the same time, so the code itself is stopped.
 */
async function withTimeout(
  context: RunContext,
  step: LeafStepDefinition,
  path: string,
  execute: (run: LeafRun) => Promise<LeafOutcome>,
): Promise<LeafOutcome> {
  const limit = context.limits.codeStepTimeoutMs;
  const timeoutMs = step.timeoutMs;
  if (timeoutMs === undefined) return execute({ path, signal: undefined, codeTimeoutMs: limit });
  const aborts = new AbortController();
  const timeout = (): LeafOutcome => ({
    error: forUsers(
      serializeError(
        new FlowboxError(
          'STEP_TIMEOUT',
          `step ${step.name} did not finish within its timeoutMs (${timeoutMs} ms)`,
        ),
      ),
    ),
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<LeafOutcome>((resolve) => {
    timer = setTimeout(() => {
      const outcome = timeout();
      aborts.abort(new FlowboxError('STEP_TIMEOUT', outcome.error?.message ?? ''));
      resolve(outcome);
    }, timeoutMs);
  });
  try {
    const running = execute({ path, signal: aborts.signal, codeTimeoutMs: Math.min(timeoutMs, limit) });
    const outcome = await Promise.race([running, late]);
    // The code runner's own timeout, when it was the step's: the same failure.
    if (outcome.error?.code === 'CODE_STEP_TIMEOUT' && timeoutMs <= limit)
      return { ...outcome, ...timeout() };
    return outcome;
  } finally {
    clearTimeout(timer);
  }
}
