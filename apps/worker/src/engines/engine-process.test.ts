import { describe, expect, it } from 'vitest';
import { defaultEngineBundle } from '../env.ts';
import { processExists, silentLogger } from '../test-helpers.ts';
import { startEngineProcess } from './engine-process.ts';

// Running jobs on an engine is covered end to end in test/job-runner.test.ts.
describe('engine process', () => {
  it('boots the built engine, counts no job yet, and is killed', async () => {
    const engine = await startEngineProcess({ entry: defaultEngineBundle(), logger: silentLogger() });
    try {
      expect(engine.alive).toBe(true);
      expect(engine.jobsServed).toBe(0);
      expect(engine.bootMs).toBeGreaterThan(0);
      expect(processExists(engine.pid)).toBe(true);
    } finally {
      await engine.kill();
    }
    expect(engine.alive).toBe(false);
    expect(processExists(engine.pid)).toBe(false);
  });

  it('rejects with ENGINE_CRASHED when the engine cannot start', async () => {
    await expect(
      startEngineProcess({ entry: '/nonexistent/engine.mjs', logger: silentLogger() }),
    ).rejects.toMatchObject({ code: 'ENGINE_CRASHED' });
  });
});
