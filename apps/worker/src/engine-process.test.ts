import { makeEngineJob, startFakeAppServer } from '@flowbox/engine/testing';
import { FlowResponseReportSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { startEngineProcess } from './engine-process.ts';
import { defaultEngineEntry } from './env.ts';
import { processExists, silentLogger } from './test-helpers.ts';

describe('engine process', () => {
  it('boots the real engine, runs the seeded flow and is killed', async () => {
    const app = await startFakeAppServer();
    const engine = await startEngineProcess({ entry: defaultEngineEntry(), logger: silentLogger() });
    try {
      expect(engine.alive).toBe(true);
      expect(engine.bootMs).toBeGreaterThan(0);

      const result = await engine.execute(makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json')));

      expect(result).toMatchObject({
        type: 'execute-result',
        status: 'SUCCEEDED',
        logKey: 'runs/run-1.json',
      });
      const response = app.requests.find((r) => r.url.endsWith('/response'));
      expect(FlowResponseReportSchema.parse(response?.json).response.body).toEqual({ result: 6 });
    } finally {
      await engine.kill();
      await app.close();
    }
    expect(engine.alive).toBe(false);
    expect(processExists(engine.pid)).toBe(false);
  });

  it('rejects with ENGINE_CRASHED when the engine cannot start', async () => {
    await expect(
      startEngineProcess({ entry: '/nonexistent/engine-main.ts', logger: silentLogger() }),
    ).rejects.toMatchObject({ code: 'ENGINE_CRASHED' });
  });
});
