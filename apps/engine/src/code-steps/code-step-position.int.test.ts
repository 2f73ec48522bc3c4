import type { EngineJob } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness, withCodeStep } from '../../test/support/flow-executor-harness.ts';

const h = useExecutorHarness();

/** Every place a code step runs: isolated-vm's runner, node:vm, and the run's own isolate. */
const MODES: [string, Partial<EngineJob>][] = [
  ['isolated-vm', { executionMode: 'SANDBOX_CODE_ONLY' }],
  ['node:vm', { executionMode: 'UNSANDBOXED' }],
  ["the run's isolate", { executionMode: 'SANDBOX_CODE_ONLY', isolation: 'isolate' }],
];

describe.each(MODES)("a code step's error says where in its code, in %s", (_mode, options) => {
  const failure = async (code: string) => {
    const { outcome } = await h.executor.execute(await h.job(withCodeStep({ code }), options));
    expect(outcome.steps[2]?.error).toEqual(outcome.error);
    return outcome.error;
  };

  it('a runtime error: its line and column in the message, the user frames in the stack', async () => {
    const error = await failure("const f = () => {\n  throw new Error('boom');\n};\nawait null;\nf();");
    expect(error).toMatchObject({
      code: 'CODE_STEP_FAILED',
      step: 'step_2',
      message: 'boom (line 2, column 9)',
    });
    expect(error?.stack?.split('\n')).toEqual([
      'Error: boom',
      '    at f (file:///code-step.js:2:9)',
      '    at codeStep (file:///code-step.js:5:1)',
    ]);
  });

  it('a syntax error: its line and column', async () => {
    const error = await failure('const a = 1;\n  return {;');
    expect(error).toMatchObject({
      code: 'CODE_STEP_FAILED',
      message: "SyntaxError: Unexpected token ';' (line 2, column 11)",
    });
  });
});
