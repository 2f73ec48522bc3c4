import { setTimeout as delay } from 'node:timers/promises';
import vm from 'node:vm';
import { CODE_STEP_LINE_OFFSET, CODE_STEP_URL, type CodeRunner } from './code-runner.ts';
import { toCodeStepError } from './code-step-error.ts';
import { vmScript } from './code-step-script.ts';

interface Outcome {
  settled: boolean;
  failed: boolean;
  json: unknown;
  error: unknown;
}

/**
 * UNSANDBOXED: code steps run in the engine process itself, in a fresh node:vm context per run.
 * That is a separate global scope, not a security boundary (`this.constructor.constructor`
 * reaches the engine's realm) and there is no memory limit: it exists to compare against
 * isolated-vm. `timeout` stops synchronous loops, microtasks included (`afterEvaluate`); a
 * wall-clock deadline stops code that awaits a promise that never settles.
 */
export function createNodeVmRunner(): CodeRunner {
  return {
    async run(request) {
      const deadline = performance.now() + request.timeoutMs;
      let outcome: Outcome;
      try {
        const script = new vm.Script(vmScript(request.source, JSON.stringify(request.inputs ?? null)), {
          filename: CODE_STEP_URL,
          lineOffset: CODE_STEP_LINE_OFFSET,
        });
        const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
        outcome = script.runInContext(context, { timeout: request.timeoutMs }) as Outcome;
      } catch (error) {
        if (isTimeout(error)) throw toCodeStepError({ kind: 'timeout' }, request);
        throw toCodeStepError({ kind: 'failed', error }, request);
      }
      if (!outcome.settled) {
        // Nothing inside the context can settle it now; wait out the step's time, as isolated-vm does.
        await delay(Math.max(0, deadline - performance.now()));
        if (!outcome.settled) throw toCodeStepError({ kind: 'timeout' }, request);
      }
      if (outcome.failed) throw toCodeStepError({ kind: 'failed', error: outcome.error }, request);
      return typeof outcome.json === 'string' ? JSON.parse(outcome.json) : undefined;
    },
    warmUp: async () => {},
    close() {},
  };
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}
