import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ManagedProcess, spawnManaged } from '@flowbox/local-services';
import { afterEach, describe, expect, it } from 'vitest';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

/**
 * A SANDBOXED cold worker with its own TMPDIR: its prewarmed engine makes both the cache
 * (unless CACHE_DIR is set) and a sandbox directory there before any job. Nothing listens at
 * APP_URL; the worker keeps retrying it until it is stopped.
 */
function startWorker(tmp: string, env: Record<string, string> = {}): ManagedProcess {
  return spawnManaged({
    name: 'worker',
    command: process.execPath,
    args: [MAIN],
    env: {
      PATH: process.env.PATH ?? '',
      TMPDIR: tmp,
      APP_URL: 'http://127.0.0.1:9',
      WORKER_TOKEN: 'not-a-real-token',
      WORKER_ID: 'w-tmp',
      EXECUTION_MODE: 'SANDBOXED',
      REUSE_SANDBOX: 'false',
      ENGINE_SNAPSHOT: 'false',
      LOG_LEVEL: 'debug',
      ...env,
    },
  });
}

const flowboxEntries = async (dir: string) =>
  (await readdir(dir)).filter((name) => name.startsWith('flowbox-'));

describe('what a worker leaves in tmp after a clean shutdown', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  it('removes its temporary cache and its sandboxes’ directories', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'flowbox-tmpdirs-'));
    cleanups.push(() => rm(tmp, { recursive: true, force: true }));
    const worker = startWorker(tmp);
    cleanups.push(() => worker.stop('SIGKILL', 1_000));
    await worker.waitForLine(/engine ready/, 60_000);
    // Made while it ran, so the check below can fail.
    expect((await flowboxEntries(tmp)).sort()).toEqual([
      expect.stringMatching(/^flowbox-sandbox-/),
      'flowbox-worker-w-tmp',
    ]);

    const exit = await worker.stop('SIGTERM', 20_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(await flowboxEntries(tmp)).toEqual([]);
  }, 90_000);

  it('keeps a CACHE_DIR that was set', async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'flowbox-tmpdirs-'));
    cleanups.push(() => rm(tmp, { recursive: true, force: true }));
    const cacheDir = join(tmp, 'kept-cache');
    const worker = startWorker(tmp, { CACHE_DIR: cacheDir });
    cleanups.push(() => worker.stop('SIGKILL', 1_000));
    await worker.waitForLine(/engine ready/, 60_000);

    const exit = await worker.stop('SIGTERM', 20_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(existsSync(join(cacheDir, 'engine'))).toBe(true);
    expect(await flowboxEntries(tmp)).toEqual([]);
  }, 90_000);
});
