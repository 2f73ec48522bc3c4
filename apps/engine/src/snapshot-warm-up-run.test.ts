import { describe, expect, it } from 'vitest';
import { runWarmUpFlow } from './snapshot-warm-up-run.ts';

describe('the startup snapshot warm-up run', () => {
  // The snapshot build fails on a warm-up that stopped short; this says where, sooner.
  it('preloads as a spare, runs every step of the benchmark flow, calls the app back over IPC and uploads the log', async () => {
    const { requests, callbacks, result, persisted } = await runWarmUpFlow();
    expect(result.outcome).toMatchObject({
      status: 'SUCCEEDED',
      logKey: 'warm-up',
      steps: [
        { name: 'trigger', status: 'SUCCEEDED' },
        { name: 'step_1', status: 'SUCCEEDED', output: { result: 5 } },
        { name: 'step_2', status: 'SUCCEEDED', output: { result: 6 } },
        { name: 'step_3', status: 'SUCCEEDED', output: { status: 200, body: { result: 6 } } },
      ],
    });
    // The response rides the IPC channel, as in a forked engine; only the health check and the
    // log upload are HTTP.
    expect(callbacks).toContain('flow-response');
    expect(requests).toEqual(['GET /health/live', 'POST /log']);
    // The outcome went before the upload, which followed it.
    expect(result.logPending).toBe(true);
    expect(persisted).toMatchObject({ type: 'log-persisted', requestId: 'warm-up', logKey: 'warm-up' });
    expect(persisted.logError).toBeUndefined();
    expect(persisted.spans?.map((span) => span.name)).toEqual(['log.upload']);
  });

  it('leaves no timer, socket or handle behind for the snapshot to hold', async () => {
    const before = process.getActiveResourcesInfo();
    await runWarmUpFlow();
    expect(process.getActiveResourcesInfo()).toEqual(before);
  });
});
