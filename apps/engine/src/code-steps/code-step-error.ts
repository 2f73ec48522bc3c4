import {
  CODE_STEP_FILENAME,
  codeStepPosition,
  describeCodeStepPosition,
  FlowboxError,
  withoutLocationSuffix,
} from '@flowbox/protocol';
import type { CodeRunRequest } from './code-runner.ts';

/** Why a code step stopped, as its runner saw it. */
export type CodeStepStop =
  | { kind: 'timeout' }
  | { kind: 'memory-limit'; cause: unknown }
  | { kind: 'failed'; error: unknown };

/** One mapping for both runners, so a failure reads the same in either execution mode. */
export function toCodeStepError(stop: CodeStepStop, request: CodeRunRequest): FlowboxError {
  switch (stop.kind) {
    case 'timeout':
      return new FlowboxError('CODE_STEP_TIMEOUT', `code step did not finish within ${request.timeoutMs} ms`);
    case 'memory-limit':
      return new FlowboxError(
        'CODE_STEP_MEMORY_LIMIT',
        `code step exceeded its ${request.memoryMb} MB memory limit`,
        { cause: stop.cause },
      );
    case 'failed': {
      const failed = new FlowboxError('CODE_STEP_FAILED', userErrorAt(stop.error, request.source));
      // The user's own stack (lines of their code) says more than the engine's frames would.
      const stack = isError(stop.error) ? stop.error.stack : undefined;
      if (typeof stack === 'string') failed.stack = withoutWrapperFrames(stack, request.source);
      return failed;
    }
  }
}

/** `file:///code-step.js:<line>:<column>` in a frame. */
const CODE_STEP_FRAME = new RegExp(`${CODE_STEP_FILENAME.replace('.', '\\.')}:(\\d+):\\d+`);

/**
 * Drops the code-step frames that are not on a line of the user's code: the wrapper's call of
 * their function and the runner's script around it share the file name, and would point at
 * lines past the end of the code the user wrote.
 */
function withoutWrapperFrames(stack: string, source: string): string {
  // wrapCodeStep puts the code between a first and a last line of its own.
  const userLines = source.split('\n').length - 2;
  return stack
    .split('\n')
    .filter((line) => {
      const lineNumber = CODE_STEP_FRAME.exec(line)?.[1];
      return lineNumber === undefined || (Number(lineNumber) >= 1 && Number(lineNumber) <= userLines);
    })
    .join('\n');
}

/**
 * The user's error with where it happened in their code, e.g. `TypeError: … (line 3, column 12)`:
 * the run's error says it wherever it is shown, stack or not.
 */
function userErrorAt(error: unknown, source: string): string {
  const message = withoutLocationSuffix(describeUserError(error));
  // wrapCodeStep puts the code between a first and a last line of its own.
  const position = codeStepPosition(error, source.split('\n').length - 2);
  return position === undefined ? message : `${message} (${describeCodeStepPosition(position)})`;
}

/** The error the result wrapper throws inside the sandbox, recognised across realms by message. */
export const NOT_JSON_MESSAGE = 'the result must be JSON-serialisable: ';

function describeUserError(error: unknown): string {
  if (isError(error)) {
    const name = typeof error.name === 'string' ? error.name : 'Error';
    return name !== '' && name !== 'Error' ? `${name}: ${error.message}` : String(error.message);
  }
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

/** `instanceof Error` fails for errors thrown in another realm (a node:vm context); the tag does not. */
function isError(value: unknown): value is Error {
  return value instanceof Error || Object.prototype.toString.call(value) === '[object Error]';
}
