import type { PieceAuthInfo } from '@flowbox/pieces-framework';
import type { InputValidators } from '@flowbox/pieces-framework/validate';
import { FlowboxError, isFlowboxError, type ResolvedConnections } from '@flowbox/protocol';

/** What of a piece step decides its `ctx.auth`. */
export interface AuthStep {
  name: string;
  action: string;
  connection?: string | undefined;
}

/**
 * The value an action receives as `ctx.auth`: the connection its step names, checked against
 * the credential the action (or its piece) declares, in the engine's realm (as inputs are).
 * Undefined when the action declares none and the step names none. The value is the run's
 * connection: the redactor shows it as `[connection:<name>]` wherever the run is shown.
 */
export function stepAuth(
  step: AuthStep,
  auth: PieceAuthInfo | undefined,
  connections: ResolvedConnections | undefined,
  check: { validators: InputValidators; pieceKey: string },
): unknown {
  if (step.connection === undefined) {
    if (auth?.required === true) {
      throw new FlowboxError(
        'INVALID_STEP_INPUT',
        `step ${step.name}: ${step.action} needs a connection (${auth.displayName}, ${auth.type}): name one as "connection"`,
      );
    }
    return undefined;
  }
  if (auth === undefined) {
    throw new FlowboxError(
      'INVALID_STEP_INPUT',
      `step ${step.name}: ${step.action} declares no auth, so it takes no "connection"; pass a secret as an input template {{connections.${step.connection}}}`,
    );
  }
  const value = connections?.[step.connection];
  if (value === undefined) {
    throw new FlowboxError(
      'CONNECTION_MISSING',
      `step ${step.name}: the run has no connection '${step.connection}'`,
    );
  }
  const mismatch = (why: string) =>
    new FlowboxError(
      'INVALID_STEP_INPUT',
      `step ${step.name}: connection '${step.connection}' does not fit ${auth.displayName} (${auth.type}): ${why}`,
    );
  if (auth.type === 'SECRET_TEXT') {
    if (typeof value !== 'string' || value === '') throw mismatch('expected text');
    return value;
  }
  try {
    const declared = { name: `${step.action}#auth`, inputSchema: auth.schema };
    return check.validators.validate(check.pieceKey, declared, value, step.name);
  } catch (error) {
    // The validator's message names the fields, never their values.
    if (isFlowboxError(error)) throw mismatch(error.message.replace(/^[^:]*: /, ''));
    throw error;
  }
}
