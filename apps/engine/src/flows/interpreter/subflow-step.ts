import { FlowboxError, type SubflowStepDefinition, stepPath } from '@flowbox/protocol';
import { resolveTemplates } from '../../steps/template.ts';
import { finishedBefore, replayStep, waitingBefore } from './checkpoint.ts';
import { succeed } from './delay-step.ts';
import { containerResult, endStep, type RunContext } from './interpreter-context.ts';
import type { ScopeFrame } from './run-scope.ts';
import { finishWaiting, waitOutcome } from './wait-step.ts';

/** A waiting sub-flow's end, as the app hands it to the resume (`values[path]`). */
interface ChildEnd {
  runId: string;
  status: string;
  response?: unknown;
  error?: { code?: string; message?: string };
}

/**
 * `flow`: asks the app to start a run of another flow with `input` (templates resolved) as its
 * trigger body; the app starts at most one child per run and path, so asking again (a resume, a
 * retried attempt) names the same child. Without `wait` the output is `{ runId }` at once. With
 * it the step blocks until the child ended: SUCCEEDED gives `{ runId, status, response }`, any
 * other end fails SUBFLOW_FAILED naming the child; past `timeout`, WAIT_TIMEOUT.
 */
export async function runSubflow(
  context: RunContext,
  step: SubflowStepDefinition,
  frame: ScopeFrame,
  prefix: string,
): Promise<boolean> {
  const path = stepPath(prefix, step.name);
  const record = context.sink.begin(step.name, path, true);
  const written = { flowId: step.flowId, input: step.input, wait: step.wait };
  const done = finishedBefore(context, path);
  if (done !== undefined) {
    record(replayStep(context, frame, done, { name: step.name, path, kind: 'flow', input: written }));
    return false;
  }
  const startedAt = new Date(context.durable.clock.now()).toISOString();
  const started = performance.now();
  const result = containerResult(step.name, path, 'flow', startedAt, started, written);
  let runId = waitingBefore(context, path)?.childRunId;
  try {
    if (runId === undefined) {
      const input = resolveTemplates(step.input, frame, step.name) as Record<string, unknown>;
      result.input = { ...written, input };
      runId = await context.durable.startSubflow({ path, flowId: step.flowId, input, wait: step.wait });
    }
  } catch (error) {
    finishWaiting(context, path, frame, step, result, { kind: 'failed', error });
    endStep(record, result, started);
    return false;
  }
  if (!step.wait) {
    succeed(context, path, frame, step.name, result, { runId });
    endStep(record, result, started);
    return false;
  }
  const child = runId;
  const outcome = waitOutcome(
    context,
    path,
    step.name,
    step.timeout,
    () => ({ kind: 'flow', waitingFor: `run ${child}`, childRunId: child }),
    result,
  );
  finishWaiting(context, path, frame, step, result, outcome, (value) => childOutput(step.name, value));
  endStep(record, result, started);
  return outcome.kind === 'blocked';
}

/** The step's output from its child's end; a child that did not succeed fails it SUBFLOW_FAILED. */
function childOutput(name: string, value: unknown): unknown {
  const end = (typeof value === 'object' && value !== null ? value : {}) as Partial<ChildEnd>;
  if (end.status !== 'SUCCEEDED') {
    const why =
      end.error?.message === undefined ? '' : `: ${end.error.code ?? 'ERROR'}: ${end.error.message}`;
    throw new FlowboxError(
      'SUBFLOW_FAILED',
      `${name}: child run ${end.runId ?? '(unknown)'} ended ${end.status ?? 'without a status'}${why}`,
    );
  }
  const output: Record<string, unknown> = { runId: end.runId, status: end.status };
  if (end.response !== undefined) output.response = end.response;
  return output;
}
