import { getPriority } from 'node:os';
import type { JobResult } from '@flowbox/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SPARE_NICENESS } from '../src/engines/engine-priority.ts';
import { processExists, recordingLogger } from '../src/test-helpers.ts';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

const MB = 1024 * 1024;
let harness: WorkerHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function runJobs(h: WorkerHarness, count: number): Promise<JobResult[]> {
  const results: JobResult[] = [];
  for (let i = 0; i < count; i += 1) results.push(await h.runner.run(await h.job(`run-${i}`)));
  return results;
}

const enginePids = (results: JobResult[]) => results.map((r) => r.provisioning?.engine.pid);
const served = (results: JobResult[]) => results.map((r) => r.provisioning?.engine.jobsServed);

describe('warm engines (REUSE_SANDBOX=true)', () => {
  it('reuse one engine process: only the first job boots', async () => {
    harness = await startWorkerHarness({ sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 512 * MB } });
    const results = await runJobs(harness, 3);

    expect(results.map((r) => r.outcome.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(new Set(enginePids(results)).size).toBe(1);
    expect(served(results)).toEqual([1, 2, 3]);
    expect(results.map((r) => r.provisioning?.engine.preBooted)).toEqual([false, true, true]);
    expect(results[0]?.timings.bootMs).toBeGreaterThan(0);
    expect(results.slice(1).map((r) => r.timings.bootMs)).toEqual([0, 0]);
    expect(harness.booted).toHaveLength(1);
  });

  it('recycle an engine after ENGINE_MAX_JOBS jobs', async () => {
    harness = await startWorkerHarness({ sandbox: { reuse: true, maxJobs: 2, maxRssBytes: 512 * MB } });
    const results = await runJobs(harness, 5);

    const [a, b, c] = harness.booted.map((e) => e.pid);
    expect(enginePids(results)).toEqual([a, a, b, b, c]);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(served(results)).toEqual([1, 2, 1, 2, 1]);
    // A recycled engine is gone before the next job starts.
    for (const pid of [a, b]) expect(pid !== undefined && processExists(pid)).toBe(false);
  });

  it('recycle an engine whose RSS is above ENGINE_MAX_RSS_MB after a job', async () => {
    // Each engine's RSS reads 40 MB more after every job: the second job crosses 64 MB.
    const reads = new Map<number, number>();
    harness = await startWorkerHarness({
      sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 64 * MB },
      readRss: async (pid) => {
        reads.set(pid, (reads.get(pid) ?? 0) + 1);
        return (reads.get(pid) ?? 0) * 40 * MB;
      },
    });
    const results = await runJobs(harness, 3);

    const [a, b] = harness.booted.map((e) => e.pid);
    expect(enginePids(results)).toEqual([a, a, b]);
    expect(a !== undefined && processExists(a)).toBe(false);
    expect(b !== undefined && processExists(b)).toBe(true);
  });
});

describe('warm engines for runs in their own isolate (RUN_ISOLATION=isolate)', () => {
  it("boot a recycled engine's replacement while idle, with the last job's snapshot and context made", async () => {
    const { logger, lines } = recordingLogger();
    harness = await startWorkerHarness({
      sandbox: { reuse: true, maxJobs: 1, maxRssBytes: 512 * MB, isolate: { prewarm: false } },
      logger,
    });
    const snapshotsBuiltBy = (pid: number | undefined) =>
      lines.filter((line) => line.msg === 'built an isolate snapshot' && line.enginePid === pid).length;
    const first = await harness.runner.run(await harness.job('run-0'));
    expect(first.outcome.status).toBe('SUCCEEDED');
    // Recycled after its one job: the next engine boots now and preloads the job's pieces.
    const next = await harness.bootedEngine(1);
    await vi.waitFor(() => expect(snapshotsBuiltBy(next.pid)).toBe(1), { timeout: 30_000 });
    expect(next.jobsServed).toBe(0);

    const second = await harness.runner.run(await harness.job('run-1'));
    expect(second.outcome.status).toBe('SUCCEEDED');
    expect(second.provisioning?.engine).toMatchObject({ pid: next.pid, preBooted: true, jobsServed: 1 });
    expect(second.timings.bootMs).toBe(0);
    // The job used the snapshot built ahead.
    expect(snapshotsBuiltBy(next.pid)).toBe(1);
  });
});

describe('cold engines (REUSE_SANDBOX=false)', () => {
  it('run every job in a new engine process, killed after it', async () => {
    const started = await startWorkerHarness({ sandbox: { reuse: false, prewarm: false } });
    harness = started;
    const results = await runJobs(started, 3);

    expect(results.map((r) => r.outcome.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    const pids = enginePids(results);
    expect(new Set(pids).size).toBe(3);
    expect(served(results)).toEqual([1, 1, 1]);
    expect(results.map((r) => r.provisioning?.engine.preBooted)).toEqual([false, false, false]);
    for (const result of results) expect(result.timings.bootMs).toBeGreaterThan(0);
    // Killed (SIGKILL sent) once its log upload, which follows the job's result, ended; the
    // worker does not wait for the exit, and the harness's close() checks that every process is gone.
    await started.runner.logsSettled();
    await expect.poll(() => started.booted.every((engine) => !engine.alive)).toBe(true);
    // Without prewarm nothing boots ahead.
    expect(started.booted).toHaveLength(3);
  });

  it('with prewarm, boot the next engine while idle: the job waits for no boot', async () => {
    harness = await startWorkerHarness({ sandbox: { reuse: false, prewarm: true } });
    const results: JobResult[] = [];
    for (let i = 0; i < 3; i += 1) {
      // Wait on the event, not a clock: the spare for job i has finished booting.
      const spare = await harness.bootedEngine(i);
      expect(spare.jobsServed).toBe(0);
      // Booted at a lower priority, so it does not slow the job running beside it.
      expect(getPriority(spare.pid)).toBe(SPARE_NICENESS);
      const result = await harness.runner.run(await harness.job(`run-${i}`));
      expect(result.provisioning?.engine).toEqual({ pid: spare.pid, jobsServed: 1, preBooted: true });
      expect(result.timings.bootMs).toBe(0);
      results.push(result);
    }
    expect(results.map((r) => r.outcome.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(new Set(enginePids(results)).size).toBe(3);
    // The spare for the next job is booting (or booted) already; close() must kill it too.
    const next = await harness.bootedEngine(3);
    expect(processExists(next.pid)).toBe(true);
    await harness.close();
    harness = undefined;
    expect(processExists(next.pid)).toBe(false);
  });

  it('with prewarm, hand the first job the spare booted at start, booted or still booting', async () => {
    harness = await startWorkerHarness({ sandbox: { reuse: false, prewarm: true } });
    // The job is sent at once: the spare started at start() may still be booting.
    const result = await harness.runner.run(await harness.job('run-0'));
    expect(result.outcome.status).toBe('SUCCEEDED');
    expect(result.provisioning?.engine).toEqual({
      pid: harness.booted[0]?.pid,
      jobsServed: 1,
      preBooted: true,
    });
  });
});
