import { FlowboxError } from '@flowbox/protocol';

/**
 * The error of a step whose input does not fit, as the engine's check words it: for the checks
 * a schema cannot say (one field's rule depending on another), made in `run`.
 */
export function invalidInput(action: string, stepName: string, problems: string): FlowboxError {
  return new FlowboxError('INVALID_STEP_INPUT', `invalid input for ${action}: ${problems}`, {
    step: stepName,
  });
}
