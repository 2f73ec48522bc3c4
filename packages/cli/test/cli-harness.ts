import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { type RunningStack, startStack } from '../../../apps/dev/src/stack.ts';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';

/** The `flowbox` command as users run it. */
export const FLOWBOX_BIN = join(import.meta.dirname, '..', 'bin', 'flowbox');
export const CHECKOUT = join(import.meta.dirname, '..', '..', '..');

export interface CliStack {
  stack: RunningStack;
  url: string;
  apiKey: string;
  close(): Promise<void>;
}

/** One app and one worker as real processes on the test stores, as `pnpm dev` starts them. */
export async function startCliStack(workerEnv: Record<string, string> = {}): Promise<CliStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'flowbox-cli-stack-'));
  const stack = await startStack({
    dataDir,
    apps: 1,
    workers: 1,
    port: 0,
    logLevel: 'warn',
    databaseUrl: await createTestDatabase(),
    redisUrl: inject('redisUrl'),
    s3: { ...inject('s3'), bucket: await createTestBucket() },
    appEnv: { REDIS_PREFIX: testNamespace(), WORKER_POLL_SECONDS: '2' },
    workerEnv,
    baseEnv: process.env,
  });
  return {
    stack,
    url: stack.appUrls[0] ?? '',
    apiKey: stack.apiKey,
    close: async () => {
      await stack.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Exec {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; a non-zero exit is a result, not an error. */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<Exec> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
  });
}

/** `flowbox <args>` against `cli`, from `cwd`. */
export function flowbox(cli: CliStack, args: readonly string[], cwd: string): Promise<Exec> {
  return run(process.execPath, [FLOWBOX_BIN, ...args], {
    cwd,
    env: { ...process.env, FLOWBOX_URL: cli.url, FLOWBOX_API_KEY: cli.apiKey },
  });
}
