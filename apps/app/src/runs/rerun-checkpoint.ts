import type { Checkpoint, CheckpointStep, RunLog } from '@flowbox/protocol';

/** The marker the run log puts where it left a step's output out (the engine's log-budget.ts). */
function isDroppedMarker(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && typeof (value as { dropped?: unknown }).dropped === 'string';
}

/**
 * The checkpoint a re-run from the failed step replays: every step of the failed run's log that
 * succeeded (or failed and was continued), by path, with its output as the log kept it. A step
 * whose output the log left out (RUN_LOG_MAX_BYTES) is not in it, so it runs again; the failed
 * step and everything after it run as on a first attempt.
 */
export function rerunCheckpoint(
  log: Pick<RunLog, 'steps'>,
  run: { runId: string; flowVersionId: string },
): { checkpoint: Checkpoint; replayed: number } {
  const steps: Record<string, CheckpointStep> = {};
  for (const step of log.steps) {
    const kept = step.status === 'SUCCEEDED' || (step.status === 'FAILED' && step.continued === true);
    if (!kept || isDroppedMarker(step.output)) continue;
    const entry: CheckpointStep = { status: step.status === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED' };
    if (step.output !== undefined) entry.output = step.output;
    if (step.error !== undefined) entry.error = step.error;
    steps[step.path ?? step.name] = entry;
  }
  return {
    checkpoint: { version: 1, runId: run.runId, flowVersionId: run.flowVersionId, resumes: 0, steps },
    replayed: Object.keys(steps).length,
  };
}
