import type { Context, Isolate } from 'isolated-vm';
import { CODE_STEP_LINE_OFFSET, CODE_STEP_URL, type CodeRunRequest } from './code-runner.ts';
import { type CodeStepStop, toCodeStepError } from './code-step-error.ts';
import { isolateClosureBody } from './code-step-script.ts';

type IsolatedVm = typeof import('isolated-vm');

// isolated-vm reports its own `timeout` with this exact message and no other marker.
export const IVM_TIMEOUT_MESSAGE = 'Script execution timed out.';
// V8's RangeError when isolated-vm's allocator refuses an ArrayBuffer past the memory limit.
export const ALLOCATION_REFUSED_MESSAGE = 'Array buffer allocation failed';

/**
 * One code step in `context` of `isolate`, for both places code steps run in isolated-vm: the
 * code-step runner's reused isolate and a run's own isolate (RUN_ISOLATION=isolate). Resolves
 * to the step's output; rejects with its `CODE_STEP_*` FlowboxError. After a timeout the
 * isolate's thread may still be busy: the caller must dispose of it (`mustDispose`).
 */
export async function evalCodeStep(
  ivm: IsolatedVm,
  isolate: Isolate,
  context: Context,
  request: CodeRunRequest,
): Promise<{ output: unknown } | { error: Error; mustDispose: boolean }> {
  const { host } = request;
  const references = [
    new ivm.Reference((level: unknown, message: unknown) => host.log(level, message)),
    new ivm.Reference((ms: unknown) => host.sleep(ms)),
    new ivm.Reference((json: unknown) => host.fetch(json)),
  ];
  let stop: CodeStepStop | undefined;
  let guard: NodeJS.Timeout | undefined;
  try {
    const execution = context.evalClosure(
      isolateClosureBody(request.source),
      [JSON.stringify(request.inputs ?? null), ...references],
      {
        // Bounds synchronous execution (including microtasks)...
        timeout: request.timeoutMs,
        filename: CODE_STEP_URL,
        lineOffset: CODE_STEP_LINE_OFFSET,
        result: { promise: true, copy: true },
      },
    );
    // ...and this bounds promises that never settle, which `timeout` does not see.
    const wallClock = new Promise<never>((_resolve, reject) => {
      guard = setTimeout(() => {
        stop = { kind: 'timeout' };
        reject(new Error('wall-clock timeout'));
      }, request.timeoutMs);
    });
    // The losing promise rejects once the isolate is disposed; nobody awaits it then.
    execution.catch(() => {});
    const json: unknown = await Promise.race([execution, wallClock]);
    return { output: typeof json === 'string' ? JSON.parse(json) : undefined };
  } catch (error) {
    if (stop === undefined && error instanceof Error && error.message === IVM_TIMEOUT_MESSAGE) {
      stop = { kind: 'timeout' };
    }
    // Only the memory limit disposes an isolate before we do: it is the reliable signal. An
    // ArrayBuffer past the limit is refused instead (the isolate is fine): the same limit.
    const limited = isolate.isDisposed || isAllocationRefused(error);
    stop ??= limited ? { kind: 'memory-limit', cause: error } : { kind: 'failed', error };
    return {
      error: toCodeStepError(stop, request),
      mustDispose: stop.kind === 'timeout' || isolate.isDisposed,
    };
  } finally {
    clearTimeout(guard);
    for (const reference of references) reference.release();
  }
}

export function isAllocationRefused(error: unknown): boolean {
  return error instanceof RangeError && error.message === ALLOCATION_REFUSED_MESSAGE;
}
