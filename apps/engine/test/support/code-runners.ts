import type { ExecutionMode } from '@flowbox/protocol';
import type { CodeRunner } from '../../src/code-steps/code-runner.ts';
import { createIsolatedVmRunner } from '../../src/code-steps/isolated-vm-runner.ts';
import { createNodeVmRunner } from '../../src/code-steps/node-vm-runner.ts';

/** The kinds of code runner (SANDBOXED runs code steps in the same isolated-vm runner as SANDBOX_CODE_ONLY). */
export type RunnerKind = Exclude<ExecutionMode, 'SANDBOXED'>;

/** One runner of each kind, for suites that hold both to the same tests; close them after. */
export function codeRunnersByKind(): Record<RunnerKind, CodeRunner> {
  return {
    SANDBOX_CODE_ONLY: createIsolatedVmRunner({
      onCatastrophicError: (message) => {
        throw new Error(`catastrophic isolate error in a test: ${message}`);
      },
    }),
    UNSANDBOXED: createNodeVmRunner(),
  };
}
