import type { Checkpoint, CheckpointStep, StepResult } from '@flowbox/protocol';
import type { RunContext } from './interpreter-context.ts';
import type { ScopeFrame } from './run-scope.ts';

/**
 * The checkpoint of durable runs, engine side. A resumed run's previous checkpoint is its memo:
 * a leaf or waiting step whose path finished there (SUCCEEDED, or FAILED and continued) is not
 * run again but recorded from it, `replayed: true`. A run that can pause records, as its steps
 * finish or block, what the next checkpoint holds: every finished step's output as the step
 * returned it (not redacted, not budgeted), the replayed ones too, and each waiting point's state.
 */

/** The memo's entry for a step that finished before: replay it. Undefined when it must run (or wait). */
export function finishedBefore(context: RunContext, path: string): CheckpointStep | undefined {
  const memo = context.durable.memo;
  if (memo === undefined) return undefined;
  const entry = memo.get(path);
  return entry === undefined || entry.status === 'WAITING' ? undefined : entry;
}

/** The memo's WAITING entry for a step that blocked before: its state (a delay's `until`, a retry's attempts). */
export function waitingBefore(context: RunContext, path: string): CheckpointStep | undefined {
  const entry = context.durable.memo?.get(path);
  return entry?.status === 'WAITING' ? entry : undefined;
}

/**
 * Records a replayed step: its checkpoint output in `frame` (later steps read it) and its result
 * flagged `replayed: true`; the entry goes on into the next checkpoint.
 */
export function replayStep(
  context: RunContext,
  frame: ScopeFrame,
  entry: CheckpointStep,
  result: Pick<StepResult, 'name' | 'path' | 'kind' | 'input'>,
): StepResult {
  const path = result.path ?? result.name;
  context.durable.record?.set(path, entry);
  frame[result.name] = entry.output;
  const replayed: StepResult = {
    ...result,
    status: entry.status === 'FAILED' ? 'FAILED' : 'SUCCEEDED',
    replayed: true,
    startedAt: new Date(context.durable.clock.now()).toISOString(),
    durationMs: 0,
  };
  if (entry.output !== undefined) replayed.output = entry.output;
  if (entry.error !== undefined) {
    replayed.error = entry.error;
    replayed.continued = true;
  }
  if (entry.attempts !== undefined && entry.attempts.length > 0) replayed.attempts = entry.attempts;
  return replayed;
}

/** A finished step's checkpoint entry: its output, or (continued) its error and error output. */
export function finishedEntry(result: StepResult, output: unknown): CheckpointStep {
  const entry: CheckpointStep = { status: result.status === 'FAILED' ? 'FAILED' : 'SUCCEEDED' };
  if (output !== undefined) entry.output = output;
  if (result.status === 'FAILED' && result.error !== undefined) entry.error = result.error;
  if (result.attempts !== undefined) entry.attempts = result.attempts;
  return entry;
}

/**
 * The checkpoint a pausing run uploads: the steps recorded by path. `previous` is the checkpoint
 * the run resumed from (its `resumes` counts on), none the first time.
 */
export function buildCheckpoint(
  run: { runId: string; flowVersionId: string },
  steps: ReadonlyMap<string, CheckpointStep>,
  previous: Pick<Checkpoint, 'resumes'> | undefined,
): Checkpoint {
  return {
    version: 1,
    runId: run.runId,
    flowVersionId: run.flowVersionId,
    resumes: previous === undefined ? 0 : previous.resumes + 1,
    steps: Object.fromEntries(steps),
  };
}
