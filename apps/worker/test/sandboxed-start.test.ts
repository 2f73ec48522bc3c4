import { spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');

/** Runs the worker's main with this PATH (and EXECUTION_MODE=SANDBOXED); resolves with how it ended. */
function startWorker(
  path: string,
  env: Record<string, string> = { EXECUTION_MODE: 'SANDBOXED' },
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: path,
      ...env,
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

describe('engines in their own PID namespace (ENGINE_PID_NAMESPACE) without bubblewrap', () => {
  let emptyPath: string;

  beforeAll(async () => {
    emptyPath = await mkdtemp(join(tmpdir(), 'flowbox-no-bwrap-'));
  });

  afterAll(async () => {
    await rm(emptyPath, { recursive: true, force: true });
  });

  it('refuses to start, naming the setting that accepts engines beside the worker', async () => {
    const { code, output } = await startWorker(emptyPath, {});
    expect(code).toBe(1);
    expect(output).toContain("so that piece code cannot read the worker's token from /proc");
    expect(output).toContain('set ENGINE_PID_NAMESPACE=false');
  });

  it('starts with ENGINE_PID_NAMESPACE=false, warning that piece code can read its token', async () => {
    // Past the check it keeps retrying the app, which is not there: the warning comes first.
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: emptyPath,
        ENGINE_PID_NAMESPACE: 'false',
        APP_URL: 'http://127.0.0.1:9',
        WORKER_TOKEN: 'not-a-real-token',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('piece code can read its token')) resolve();
      });
      child.on('exit', () => resolve());
    });
    child.kill('SIGKILL');
    expect(output).toContain('ENGINE_PID_NAMESPACE=false: engines run beside the worker');
  });
});
