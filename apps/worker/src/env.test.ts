import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './env.ts';

const required = {
  APP_URL: 'http://127.0.0.1:3000',
  WORKER_TOKEN: 'secret',
  ENGINE_BUNDLE: 'dist/engine.mjs',
};

describe('worker config', () => {
  it('applies defaults', () => {
    const config = loadConfig(required);
    expect(config).toMatchObject({
      appUrl: 'http://127.0.0.1:3000',
      workerToken: 'secret',
      logLevel: 'info',
      engineBundle: path.resolve('dist/engine.mjs'),
      sandbox: {
        reuse: true,
        maxJobs: 10_000,
        maxRssBytes: 512 * 1024 * 1024,
        isolate: { prewarm: true },
      },
      executionMode: 'SANDBOX_CODE_ONLY',
      fetchLimits: { maxInFlight: 8, maxBufferedBytes: 32 * 1024 * 1024 },
    });
    expect(config.workerId).toMatch(new RegExp(`-${process.pid}$`));
    expect(config.cacheDir).toBe(path.join(tmpdir(), `flowbox-worker-${config.workerId}`));
    expect(config.cacheDirTemporary).toBe(true);
  });

  it('starts engines in their own PID namespace unless ENGINE_PID_NAMESPACE=false', () => {
    expect(loadConfig(required).enginePidNamespace).toBe(true);
    expect(loadConfig({ ...required, ENGINE_PID_NAMESPACE: 'false' }).enginePidNamespace).toBe(false);
  });

  it('reads the token from WORKER_TOKEN_FILE, and takes exactly one of the two', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'flowbox-token-'));
    try {
      const file = path.join(dir, 'token');
      writeFileSync(file, '  from-a-file\n');
      const { WORKER_TOKEN: _, ...withoutToken } = required;
      const config = loadConfig({ ...withoutToken, WORKER_TOKEN_FILE: file });
      expect(config).toMatchObject({ workerToken: 'from-a-file', workerTokenFile: file });
      expect(() => loadConfig({ ...required, WORKER_TOKEN_FILE: file })).toThrow(
        /WORKER_TOKEN: set exactly one of WORKER_TOKEN and WORKER_TOKEN_FILE/,
      );
      expect(() => loadConfig(withoutToken)).toThrow(/set exactly one of WORKER_TOKEN and WORKER_TOKEN_FILE/);
      expect(() => loadConfig({ ...withoutToken, WORKER_TOKEN_FILE: path.join(dir, 'missing') })).toThrow(
        /WORKER_TOKEN_FILE: cannot read/,
      );
      writeFileSync(file, '\n');
      expect(() => loadConfig({ ...withoutToken, WORKER_TOKEN_FILE: file })).toThrow(
        /WORKER_TOKEN_FILE: .* is empty/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bounds every engine at ENGINE_MEMORY_LIMIT_MB, not below the recycling threshold', () => {
    expect(loadConfig(required).engineMemoryLimitBytes).toBe(1024 * 1024 * 1024);
    expect(loadConfig({ ...required, ENGINE_MEMORY_LIMIT_MB: '2048' }).engineMemoryLimitBytes).toBe(
      2048 * 1024 * 1024,
    );
    expect(() => loadConfig({ ...required, ENGINE_MEMORY_LIMIT_MB: '256' })).toThrow(
      /ENGINE_MEMORY_LIMIT_MB: must not be below ENGINE_MAX_RSS_MB/,
    );
    // Cold engines serve one job each: nothing is recycled, any limit goes.
    expect(
      loadConfig({ ...required, REUSE_SANDBOX: 'false', ENGINE_MEMORY_LIMIT_MB: '256' })
        .engineMemoryLimitBytes,
    ).toBe(256 * 1024 * 1024);
  });

  it('takes explicit values', () => {
    const config = loadConfig({
      ...required,
      WORKER_ID: 'w-1',
      LOG_LEVEL: 'debug',
      CACHE_DIR: 'cache',
      REUSE_SANDBOX: 'false',
      PREWARM: 'false',
      EXECUTION_MODE: 'UNSANDBOXED',
    });
    expect(config).toMatchObject({
      workerId: 'w-1',
      logLevel: 'debug',
      cacheDir: path.resolve('cache'),
      cacheDirTemporary: false,
      sandbox: { reuse: false, prewarm: false },
      executionMode: 'UNSANDBOXED',
    });
    expect(loadConfig({ ...required, ENGINE_MAX_JOBS: '2', ENGINE_MAX_RSS_MB: '64' }).sandbox).toEqual({
      reuse: true,
      maxJobs: 2,
      maxRssBytes: 64 * 1024 * 1024,
      isolate: { prewarm: true },
    });
    expect(
      loadConfig({ ...required, CODE_STEP_FETCH_MAX_IN_FLIGHT: '2', CODE_STEP_FETCH_MAX_BUFFERED_MB: '11' })
        .fetchLimits,
    ).toEqual({ maxInFlight: 2, maxBufferedBytes: 11 * 1024 * 1024 });
    expect(loadConfig({ ...required, REUSE_SANDBOX: 'false' }).sandbox).toEqual({
      reuse: false,
      prewarm: true,
    });
  });

  it('reads ISOLATE_MAX_RUNS (100 by default), a positive whole number', () => {
    expect(loadConfig(required).isolateMaxRuns).toBe(100);
    expect(loadConfig({ ...required, ISOLATE_MAX_RUNS: '1' }).isolateMaxRuns).toBe(1);
    expect(() => loadConfig({ ...required, ISOLATE_MAX_RUNS: '0' })).toThrow(/ISOLATE_MAX_RUNS/);
  });

  it('reads RUN_ISOLATION (isolate when unset), and REUSE_SANDBOX as its alias (true: shared, false: process)', () => {
    const warm = { reuse: true, maxJobs: 10_000, maxRssBytes: 512 * 1024 * 1024 };
    const isolate = { ...warm, isolate: { prewarm: true } };
    expect(loadConfig(required).sandbox).toStrictEqual(isolate);
    expect(loadConfig({ ...required, RUN_ISOLATION: 'shared' }).sandbox).toStrictEqual(warm);
    expect(loadConfig({ ...required, RUN_ISOLATION: 'isolate' }).sandbox).toStrictEqual(isolate);
    expect(loadConfig({ ...required, RUN_ISOLATION: 'isolate', PREWARM: 'false' }).sandbox).toStrictEqual({
      ...warm,
      isolate: { prewarm: false },
    });
    expect(loadConfig({ ...required, RUN_ISOLATION: 'process' }).sandbox).toStrictEqual({
      reuse: false,
      prewarm: true,
    });
    expect(loadConfig({ ...required, REUSE_SANDBOX: 'true' }).sandbox).toStrictEqual(warm);
    expect(loadConfig({ ...required, REUSE_SANDBOX: '0' }).sandbox).toMatchObject({ reuse: false });
    // Both set, agreeing: accepted; disagreeing: refused, naming the alias.
    expect(
      loadConfig({ ...required, RUN_ISOLATION: 'isolate', REUSE_SANDBOX: 'true' }).sandbox,
    ).toStrictEqual(isolate);
    expect(() => loadConfig({ ...required, RUN_ISOLATION: 'isolate', REUSE_SANDBOX: 'false' })).toThrow(
      /REUSE_SANDBOX: must agree with RUN_ISOLATION/,
    );
    expect(() => loadConfig({ ...required, RUN_ISOLATION: 'fresh' })).toThrow(/RUN_ISOLATION/);
  });

  it('reads the egress policy from EGRESS, or from its former name CODE_STEP_EGRESS', () => {
    const loopback = { allowPublic: false, named: [{ host: '127.0.0.1', port: 8080 }] };
    expect(loadConfig(required).egress).toEqual({ allowPublic: true, named: [] });
    expect(loadConfig({ ...required, EGRESS: '127.0.0.1:8080' }).egress).toEqual(loopback);
    expect(loadConfig({ ...required, CODE_STEP_EGRESS: '127.0.0.1:8080' }).egress).toEqual(loopback);
    expect(
      loadConfig({ ...required, EGRESS: '127.0.0.1:8080', CODE_STEP_EGRESS: '127.0.0.1:8080' }).egress,
    ).toEqual(loopback);
    expect(() => loadConfig({ ...required, EGRESS: 'none', CODE_STEP_EGRESS: 'public' })).toThrow(
      /CODE_STEP_EGRESS: must not differ from EGRESS/,
    );
    expect(() => loadConfig({ ...required, EGRESS: 'none,public' })).toThrow(/EGRESS/);
  });

  it('names missing and invalid variables without echoing the token', () => {
    expect(() => loadConfig({ APP_URL: 'not a url', WORKER_TOKEN: '' })).toThrow(
      /APP_URL[\s\S]*WORKER_TOKEN/,
    );
    expect(() => loadConfig({ ...required, EXECUTION_MODE: 'VM' })).toThrow(/EXECUTION_MODE/);
    expect(() => loadConfig({ ...required, REUSE_SANDBOX: 'maybe' })).toThrow(/REUSE_SANDBOX/);
    // Room for one largest response, as the relay carries it.
    expect(() => loadConfig({ ...required, CODE_STEP_FETCH_MAX_BUFFERED_MB: '10' })).toThrow(
      /CODE_STEP_FETCH_MAX_BUFFERED_MB.*at least 11/,
    );
    expect(() => loadConfig({ ...required, ENGINE_MAX_JOBS: '0' })).toThrow(/ENGINE_MAX_JOBS/);
  });
});
