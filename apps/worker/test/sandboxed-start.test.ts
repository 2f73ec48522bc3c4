import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

/** Runs the worker's main with this PATH and EXECUTION_MODE=SANDBOXED; resolves with how it ended. */
function startWorker(path: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: path,
      EXECUTION_MODE: 'SANDBOXED',
      // Nothing listens here: a worker that got past its sandbox check would keep retrying.
      APP_URL: 'http://127.0.0.1:9',
      WORKER_TOKEN: 'not-a-real-token',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    });
  });
}

describe('EXECUTION_MODE=SANDBOXED without bubblewrap', () => {
  let emptyPath: string;

  beforeAll(async () => {
    // A PATH with prlimit but no bwrap.
    emptyPath = await mkdtemp(join(tmpdir(), 'flowbox-no-bwrap-'));
    await symlink('/usr/bin/prlimit', join(emptyPath, 'prlimit'));
  });

  afterAll(async () => {
    await rm(emptyPath, { recursive: true, force: true });
  });

  it('refuses to start, saying what to install, instead of running unconfined', async () => {
    const { code, output } = await startWorker(emptyPath);
    expect(code).toBe(1);
    expect(output).toContain('EXECUTION_MODE=SANDBOXED needs bubblewrap (bwrap), which is not on PATH');
    expect(output).toContain('apt-get install bubblewrap');
  });
});
