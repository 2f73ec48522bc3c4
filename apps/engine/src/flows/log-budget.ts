import type { StepResult } from '@flowbox/protocol';

/** Room in the run log for what surrounds the steps (ids, dates, a run error). */
const LOG_ENVELOPE_BYTES = 4_096;

/** What a step's input or output left out of the log is replaced by. */
export interface DroppedMarker {
  dropped: string;
}

export interface LogBudget {
  /** The result as the log, progress reports and the outcome carry it: within the budget. */
  fit(result: StepResult): StepResult;
  /** How many steps had their input or output left out. */
  dropped(): number;
}

/**
 * Keeps a run's steps within RUN_LOG_MAX_BYTES, which bounds every message that carries steps.
 * A step past it keeps its status, error and timing; its output (and its input, if that alone is
 * too large) is replaced by a marker saying how many bytes were left out, and the log counts it
 * (`dropped`). The run itself is untouched: later steps read the real output, and a sync
 * caller's response is sent as the flow made it.
 */
export function createLogBudget(maxBytes: number): LogBudget {
  let left = maxBytes - LOG_ENVELOPE_BYTES;
  let dropped = 0;
  const size = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  return {
    fit(result) {
      const bytes = size(result);
      if (bytes <= left) {
        left -= bytes;
        return result;
      }
      dropped += 1;
      const slim: StepResult = { ...result };
      if (result.output !== undefined) slim.output = marker(size(result.output));
      if (size(slim) > left) slim.input = marker(size(result.input));
      if (slim.logs !== undefined && size(slim) > left) slim.logs = undefined;
      left = Math.max(0, left - size(slim));
      return slim;
    },
    dropped: () => dropped,
  };
}

function marker(bytes: number): DroppedMarker {
  return { dropped: `${bytes} bytes (RUN_LOG_MAX_BYTES)` };
}
