import type { EngineCallback, StepResult } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { forwardingFor } from './callback-forwarding.ts';

const JOB = {
  runId: 'run-1',
  engineToken: 'token-1',
  logUpload: { url: 'http://s3/upload', fields: {}, key: 'runs/run-1.json', maxBytes: 1_000 },
};

const step = (output: unknown): StepResult => ({
  name: 'step_1',
  kind: 'test',
  status: 'SUCCEEDED',
  input: {},
  output,
  startedAt: '2026-11-25T00:00:00.000Z',
  durationMs: 1,
});

const stepsCallback = (overrides: Partial<EngineCallback> = {}, output: unknown = 1): EngineCallback => ({
  runId: JOB.runId,
  engineToken: JOB.engineToken,
  report: { version: 1, type: 'steps', steps: [step(output)] },
  ...overrides,
});

describe('forwarding an engine callback for the job the worker holds', () => {
  const forwarded: EngineCallback[] = [];
  const forward = forwardingFor(JOB, async (callback) => {
    forwarded.push(callback);
    return { version: 1, type: 'ok' };
  });

  it("passes the job's own run and token on, untouched, and answers with the app's answer", async () => {
    const callback = stepsCallback();
    expect(await forward(callback)).toEqual({ version: 1, type: 'ok' });
    expect(forwarded.at(-1)).toBe(callback);
  });

  it("refuses another run's callback or another token without sending anything", async () => {
    const sent = forwarded.length;
    for (const other of [{ runId: 'run-2' }, { engineToken: 'token-2' }]) {
      expect(await forward(stepsCallback(other))).toMatchObject({
        type: 'error',
        error: { code: 'FORBIDDEN', message: "not this job's run or engine token" },
      });
    }
    expect(forwarded).toHaveLength(sent);
  });

  it('refuses a report over the run log limit and its envelope (the HTTP body limit), without sending it', async () => {
    const sent = forwarded.length;
    const huge = 'x'.repeat(JOB.logUpload.maxBytes + 64 * 1024);
    expect(await forward(stepsCallback({}, huge))).toMatchObject({
      type: 'error',
      error: {
        code: 'BODY_TOO_LARGE',
        message: expect.stringMatching(/^the steps report is \d+ bytes, over 66536$/),
      },
    });
    expect(forwarded).toHaveLength(sent);
    // Just under the bound still goes.
    const fits = 'x'.repeat(64 * 1024);
    expect(await forward(stepsCallback({}, fits))).toEqual({ version: 1, type: 'ok' });
    expect(forwarded).toHaveLength(sent + 1);
  });
});
