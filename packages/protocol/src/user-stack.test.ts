import { describe, expect, it } from 'vitest';
import { flowRelativeStack, forUsers } from './user-stack.ts';

const SHA = 'a'.repeat(64);
const CACHE = '/tmp/flowbox-worker-worker-0';

describe('flowRelativeStack', () => {
  it("keeps the header and the code step's frames, and drops the engine's and Node's", () => {
    const stack = [
      'TypeError: inputs.x is not a function',
      '    at file:///code-step.js:2:14',
      '    at step (file:///code-step.js:5:3)',
      '    at (<isolated-vm boundary>)',
      `    at runOnce (file://${CACHE}/engine/${SHA}/engine.mjs:1234:56)`,
      '    at process.processTicksAndRejections (node:internal/process/task_queues:105:5)',
    ].join('\n');
    expect(flowRelativeStack(stack)).toBe(
      [
        'TypeError: inputs.x is not a function',
        '    at file:///code-step.js:2:14',
        '    at step (file:///code-step.js:5:3)',
      ].join('\n'),
    );
  });

  it("rewrites a piece's frames relative to the piece, without the cache or the archive's hash", () => {
    const stack = [
      'Error: the service said no',
      `    at Object.run (file://${CACHE}/pieces/http@1.2.0-${SHA}/dist/index.js:10:11)`,
      `    at ${CACHE}/pieces/@acme/mail@0.1.0-${SHA}/lib/send.js:3:9`,
      `    at runStep (file://${CACHE}/engine/${SHA}/engine.mjs:99:1)`,
    ].join('\n');
    const kept = flowRelativeStack(stack) ?? '';
    expect(kept).toBe(
      [
        'Error: the service said no',
        '    at Object.run (pieces/http@1.2.0/dist/index.js:10:11)',
        '    at pieces/@acme/mail@0.1.0/lib/send.js:3:9',
      ].join('\n'),
    );
    expect(kept).not.toContain(CACHE);
  });

  it('leaves nothing when no frame is the flow’s, or there is no stack', () => {
    const engineOnly = `FlowboxError: code step did not finish within 1000 ms\n    at toCodeStepError (file://${CACHE}/engine/${SHA}/engine.mjs:1:2)`;
    expect(flowRelativeStack(engineOnly)).toBeUndefined();
    expect(flowRelativeStack('Error: no frames')).toBeUndefined();
    expect(flowRelativeStack(undefined)).toBeUndefined();
  });

  it('forUsers drops a stack with nothing of the flow and keeps everything else', () => {
    const error = {
      name: 'FlowboxError',
      code: 'ENGINE_CRASHED' as const,
      message: 'engine 12 exited',
      step: 'code',
      stack: 'FlowboxError: engine 12 exited\n    at onExit (/srv/flowbox/apps/worker/dist/main.js:1:1)',
    };
    expect(forUsers(error)).toEqual({
      name: 'FlowboxError',
      code: 'ENGINE_CRASHED',
      message: 'engine 12 exited',
      step: 'code',
    });
  });
});
