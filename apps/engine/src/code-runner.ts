import { FlowboxError } from '@flowbox/protocol';
import ivm from 'isolated-vm';

export interface CodeRunRequest {
  /** The body of `async (inputs) => { ... }`. */
  code: string;
  /** The step's resolved input; JSON values only. */
  inputs: unknown;
  timeoutMs: number;
  memoryMb: number;
}

export interface CodeRunner {
  /** Runs one code step in a fresh isolate and returns its (JSON) result. */
  run(request: CodeRunRequest): Promise<unknown>;
}

export interface CodeRunnerOptions {
  /** v8 lost control of an isolate: the process must log and abort (isolated-vm's advice). */
  onCatastrophicError(message: string): void;
}

// isolated-vm reports its own `timeout` with this exact message and no other marker.
const IVM_TIMEOUT_MESSAGE = 'Script execution timed out.';

/**
 * The user's code runs as the body of an async arrow function inside an empty context: no
 * require, process, timers or network, only `inputs`. Inputs cross in as JSON text and the
 * result crosses out as JSON text, so nothing but plain data passes the boundary. JSON is
 * captured before the user's code runs so that overwriting it cannot confuse the wrapper.
 */
function wrap(code: string): string {
  return `const { parse, stringify } = JSON;
return (async (inputs) => {
${code}
})(parse($0)).then((result) => {
  try {
    return stringify(result);
  } catch (error) {
    throw new TypeError('the result must be JSON-serialisable: ' + error.message);
  }
});`;
}

export function createCodeRunner(options: CodeRunnerOptions): CodeRunner {
  return {
    async run(request) {
      const isolate = new ivm.Isolate({
        memoryLimit: request.memoryMb,
        onCatastrophicError: options.onCatastrophicError,
      });
      let timedOut = false;
      let guard: NodeJS.Timeout | undefined;
      try {
        const context = await isolate.createContext();
        const execution = context.evalClosure(wrap(request.code), [JSON.stringify(request.inputs ?? null)], {
          // Bounds synchronous execution (including microtasks)...
          timeout: request.timeoutMs,
          filename: 'file:///code-step.js',
          lineOffset: -2,
          result: { promise: true, copy: true },
        });
        // ...and this bounds promises that never settle, which `timeout` does not see.
        const wallClock = new Promise<never>((_resolve, reject) => {
          guard = setTimeout(() => {
            timedOut = true;
            reject(new Error('wall-clock timeout'));
          }, request.timeoutMs);
        });
        // The losing promise rejects once the isolate is disposed; nobody awaits it then.
        execution.catch(() => {});
        const json: unknown = await Promise.race([execution, wallClock]);
        return typeof json === 'string' ? JSON.parse(json) : undefined;
      } catch (error) {
        throw toCodeStepError(error, { timedOut, disposed: isolate.isDisposed, request });
      } finally {
        clearTimeout(guard);
        if (!isolate.isDisposed) isolate.dispose();
      }
    },
  };
}

function toCodeStepError(
  error: unknown,
  state: { timedOut: boolean; disposed: boolean; request: CodeRunRequest },
): FlowboxError {
  const { timeoutMs, memoryMb } = state.request;
  if (state.timedOut || (error instanceof Error && error.message === IVM_TIMEOUT_MESSAGE)) {
    return new FlowboxError('CODE_STEP_TIMEOUT', `code step did not finish within ${timeoutMs} ms`);
  }
  // Only the memory limit disposes an isolate before we do: it is the reliable signal.
  if (state.disposed) {
    return new FlowboxError('CODE_STEP_MEMORY_LIMIT', `code step exceeded its ${memoryMb} MB memory limit`, {
      cause: error,
    });
  }
  const failed = new FlowboxError('CODE_STEP_FAILED', describeUserError(error));
  // The user's own stack (lines of their code) says more than the engine's frames would.
  if (error instanceof Error && typeof error.stack === 'string') failed.stack = error.stack;
  return failed;
}

function describeUserError(error: unknown): string {
  if (error instanceof Error) {
    return error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message;
  }
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
