import type { FinalRunStatus, SerializedError, StepResult } from '@flowbox/protocol';

/** The final statuses that start a flow's error flow (`onFailure`). */
export const ERROR_FLOW_STATUSES: ReadonlySet<string> = new Set<FinalRunStatus>([
  'FAILED',
  'TIMEOUT',
  'INTERNAL_ERROR',
]);

/**
 * The error run's trigger body, as the error flow reads it (`{{trigger.body.…}}`):
 * `{ runId, flowId, flowVersionId, status, error: { code, message } | null,
 * failedStep: { name, path } | null }`. The final write adds the first four from the failed
 * run's row; this is the rest, from its outcome. The failed step is the last step recorded
 * FAILED, else the step its error names (a crash reports no steps).
 */
export function errorFlowDetails(outcome: {
  error?: SerializedError | undefined;
  steps?: readonly StepResult[] | undefined;
}): {
  error: { code: string; message: string } | null;
  failedStep: { name: string; path?: string } | null;
} {
  const { error, steps } = outcome;
  const failed = steps?.findLast((step) => step.status === 'FAILED');
  let failedStep: { name: string; path?: string } | null = null;
  if (failed !== undefined) {
    failedStep = { name: failed.name };
    if (failed.path !== undefined) failedStep.path = failed.path;
  } else if (error?.step !== undefined) {
    failedStep = { name: error.step };
  }
  return {
    error: error === undefined ? null : { code: error.code, message: error.message },
    failedStep,
  };
}
