// Cold engines start from a V8 startup snapshot, and still nothing of one job reaches
// the next. A piece leaves a value in its module scope and on the engine's global; the next
// cold run, in real app, worker and engine processes, must find neither. The same flow on a
// warm engine finds both: the probe does see state that survives.
import type { ExecutionMode } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultStack, faultsFlow, postWebhook, startFaultStack } from './fault-harness.ts';

const REMEMBER = faultsFlow('remember', { value: '{{trigger.value}}' });

interface Found {
  module: string[];
  global: string[];
  /** The engine process that ran the step. */
  instance: string;
}

async function remember(fault: FaultStack, value: string): Promise<Found> {
  const answer = await postWebhook(fault.url, 'remember', { value });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as Found;
}

describe.each<ExecutionMode>(['SANDBOX_CODE_ONLY', 'SANDBOXED'])(
  'cold engines from a startup snapshot (EXECUTION_MODE=%s)',
  (executionMode) => {
    let fault: FaultStack;

    beforeAll(async () => {
      fault = await startFaultStack({
        flows: { remember: REMEMBER },
        workerEnv: { EXECUTION_MODE: executionMode, REUSE_SANDBOX: 'false', PREWARM: 'true' },
      });
    });

    afterAll(async () => {
      await fault?.close();
    });

    it("shows no run a value an earlier run's piece left in its module or on the global", async () => {
      const runs: Found[] = [];
      for (const value of ['secret-of-run-1', 'secret-of-run-2', 'secret-of-run-3']) {
        runs.push(await remember(fault, value));
      }
      for (const found of runs)
        expect({ module: found.module, global: found.global }).toEqual({ module: [], global: [] });
      expect(new Set(runs.map((found) => found.instance)).size).toBe(runs.length);
      // The engines came from the snapshot, not from engine.mjs.
      const started = fault.lines.find(
        ({ line }) => line.json?.msg === 'engines start from a startup snapshot',
      );
      expect(started, 'the worker logs that it starts engines from a snapshot').toBeDefined();
    });
  },
);

describe('the same flow on a warm engine (the probe sees what survives)', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ flows: { remember: REMEMBER }, workerEnv: { REUSE_SANDBOX: 'true' } });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('finds the first run’s value in the second run', async () => {
    const first = await remember(fault, 'secret-of-run-1');
    const second = await remember(fault, 'secret-of-run-2');
    expect(first).toMatchObject({ module: [], global: [] });
    expect(second).toEqual({
      module: ['secret-of-run-1'],
      global: ['secret-of-run-1'],
      instance: first.instance,
    });
  });
});
