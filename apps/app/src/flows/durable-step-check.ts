import { durationMs, type StepDefinition } from '@flowbox/protocol';

/** Whether a value is written as it is (no `{{`): checked now, not when the run reaches it. */
function isLiteral(value: unknown): boolean {
  return typeof value === 'number' || (typeof value === 'string' && !value.includes('{{'));
}

/** A literal duration's problem (`for`, `timeout`): not one, or longer than RUN_MAX_PAUSE_DAYS. */
function durationProblem(value: unknown, where: string, maxPauseMs: number): string | null {
  if (value === undefined || !isLiteral(value)) return null;
  const parsed = durationMs(value);
  if (parsed === undefined) {
    return `${where}: ${JSON.stringify(value)} is not a duration (e.g. "500ms", "5s", "24h", "7d", or milliseconds)`;
  }
  if (parsed > maxPauseMs) {
    return `${where}: ${JSON.stringify(value)} is longer than RUN_MAX_PAUSE_DAYS (${maxPauseMs / 86_400_000} days)`;
  }
  return null;
}

/** An ISO date: `2026-11-29`, `2026-11-29T12:00:00Z`, with an offset or fractions. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * What the steps that make a run wait say as written, checked when the flow is created so that
 * a run does not fail INVALID_DELAY for it later: a delay's `for` and a wait's or sub-flow's
 * `timeout` are durations within RUN_MAX_PAUSE_DAYS, a delay's `until` an ISO date. Templates
 * are checked by the engine when the step runs.
 */
export function durableStepProblem(step: StepDefinition, at: string, maxPauseMs: number): string | null {
  switch (step.type) {
    case 'delay': {
      const problem = durationProblem(step.for, `${at}.for`, maxPauseMs);
      if (problem !== null) return problem;
      if (step.until !== undefined && isLiteral(step.until)) {
        const until = step.until.trim();
        if (!ISO_DATE.test(until) || Number.isNaN(Date.parse(until))) {
          return `${at}.until: ${JSON.stringify(step.until)} is not an ISO date (e.g. "2026-12-01T09:00:00Z"), nor a template that gives one`;
        }
      }
      return null;
    }
    case 'wait':
    case 'flow':
      return durationProblem(step.timeout, `${at}.timeout`, maxPauseMs);
    default:
      return null;
  }
}
