import vm from 'node:vm';
import { CODE_STEP_LINE_OFFSET, CODE_STEP_URL, type CodeRunner, type CodeRunRequest } from './code-runner.ts';
import { type CodeStepStop, toCodeStepError } from './code-step-error.ts';
import type { CodeStepHost } from './code-step-host.ts';
import { HOST_GLOBAL, vmScript } from './code-step-script.ts';

interface Outcome {
  settled: boolean;
  failed: boolean;
  json: unknown;
  error: unknown;
}

/**
 * UNSANDBOXED, for comparison only: code steps in a fresh node:vm context of the engine itself,
 * a separate global scope but no security boundary (`this.constructor.constructor` reaches the
 * engine's realm) and no memory limit. `timeout` stops synchronous loops, microtasks included.
 * The context runs its microtasks only when entered, so the runner enters it again after each
 * host call settles; a wall-clock deadline stops code that waits on something that never comes.
 */
export function createNodeVmRunner(): CodeRunner {
  // Evaluating anything in the context runs its pending microtasks (`afterEvaluate`). Made here,
  // not at import: a compiled script is a native handle, which a startup snapshot cannot hold.
  const reenterScript = new vm.Script('undefined');
  return { run: (request) => runInFreshContext(request, reenterScript), warmUp: async () => {}, close() {} };
}

async function runInFreshContext(request: CodeRunRequest, reenterScript: vm.Script): Promise<unknown> {
  const deadline = performance.now() + request.timeoutMs;
  const timeLeft = () => Math.max(1, Math.ceil(deadline - performance.now()));
  let stop: CodeStepStop | undefined;
  let finished = false;
  let wake: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const end = (why: CodeStepStop) => {
    stop ??= why;
    wake();
  };

  let outcome: Outcome | undefined;
  let context: vm.Context | undefined;
  const reenter = () => {
    if (finished || stop !== undefined || context === undefined) return;
    try {
      reenterScript.runInContext(context, { timeout: timeLeft() });
    } catch (error) {
      end(isTimeout(error) ? { kind: 'timeout' } : { kind: 'failed', error });
      return;
    }
    if (outcome?.settled) wake();
  };
  /** A host promise whose settling lets the code go on: enter the context once it has. */
  const thenReenter = <T>(promise: Promise<T>): Promise<T> => {
    promise.then(
      () => setImmediate(reenter),
      () => setImmediate(reenter),
    );
    return promise;
  };
  const host: CodeStepHost = {
    log: (level, message) => request.host.log(level, message),
    sleep: (ms) => thenReenter(request.host.sleep(ms)),
    fetch: (json) => thenReenter(request.host.fetch(json)),
  };

  try {
    const script = new vm.Script(vmScript(request.source, JSON.stringify(request.inputs ?? null)), {
      filename: CODE_STEP_URL,
      lineOffset: CODE_STEP_LINE_OFFSET,
    });
    context = vm.createContext({ [HOST_GLOBAL]: host }, { microtaskMode: 'afterEvaluate' });
    outcome = script.runInContext(context, { timeout: request.timeoutMs }) as Outcome;
  } catch (error) {
    throw toCodeStepError(isTimeout(error) ? { kind: 'timeout' } : { kind: 'failed', error }, request);
  }
  if (!outcome.settled) {
    const guard = setTimeout(() => end({ kind: 'timeout' }), timeLeft());
    try {
      await stopped;
    } finally {
      clearTimeout(guard);
    }
  }
  // From here nothing of the run may go on: no re-entry, whatever settles later.
  finished = true;
  if (!outcome.settled) throw toCodeStepError(stop ?? { kind: 'timeout' }, request);
  if (outcome.failed) throw toCodeStepError({ kind: 'failed', error: outcome.error }, request);
  return typeof outcome.json === 'string' ? JSON.parse(outcome.json) : undefined;
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}
