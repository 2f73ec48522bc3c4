import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

let harness: WorkerHarness | undefined;
let dir: string | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('ENGINE_CPU_PROF_DIR', () => {
  it('every engine writes its own profile, also when all of them are pid 2 in their PID namespace', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flowbox-engine-prof-'));
    // Cold engines: one per job, three engines that end within a second or so of each other.
    harness = await startWorkerHarness({
      sandbox: { reuse: false, prewarm: false },
      engineCpuProf: { dir, workerId: 'worker-prof' },
    });
    for (const runId of ['run-0', 'run-1', 'run-2']) {
      const result = await harness.runner.run(await harness.job(runId));
      expect(result.outcome.status).toBe('SUCCEEDED');
    }
    // close() waits for every engine to exit, which is when each writes its profile.
    await harness.close();
    harness = undefined;

    const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
    expect(files).toHaveLength(3);
    for (const file of files) {
      expect(file).toMatch(/^engine\.worker-prof\.[0-9a-f]{8}\.[1-3]\.cpuprofile$/);
      // Each a whole V8 profile, as the benchmark's profile merger reads it.
      const profile = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as { nodes: unknown[] };
      expect(profile.nodes.length).toBeGreaterThan(0);
    }
  });
});
