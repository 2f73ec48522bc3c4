import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { StackEntries } from '@flowbox/dev';

/** Another commit of flowbox, installed and built beside this one, for `pnpm bench --baseline`. */
export interface BaselineCheckout {
  /** The ref as given (`main`, `55a97c9`, `HEAD~3`). */
  ref: string;
  sha: string;
  root: string;
  /** The app and worker entry files `startStack` runs instead of this checkout's. */
  entries: StackEntries;
}

/** What the measured side is: this working tree, at its HEAD, with or without local changes. */
export interface TreeIdentity {
  sha: string;
  dirty: boolean;
}

/**
 * Checks `ref` out as a detached git worktree under `cacheDir/<sha>`, installs its dependencies
 * and builds it. A checkout that finished before is reused: a baseline is a fixed commit, so a
 * second run against it costs nothing here.
 */
export async function prepareBaseline(
  repoRoot: string,
  ref: string,
  cacheDir: string,
  deps: { signal: AbortSignal; say: (line: string) => void },
): Promise<BaselineCheckout> {
  const sha = (await run('git', ['rev-parse', '--verify', `${ref}^{commit}`], repoRoot, deps.signal)).trim();
  const root = join(cacheDir, sha);
  const done = join(root, '.data', 'flowbox-baseline-ready');
  if (!existsSync(done)) {
    deps.say(`baseline ${ref} (${sha.slice(0, 12)}): checking out into ${root}`);
    await mkdir(cacheDir, { recursive: true });
    if (existsSync(root)) {
      await run('git', ['worktree', 'remove', '--force', root], repoRoot, deps.signal).catch(() => '');
      await rm(root, { recursive: true, force: true });
    }
    await run('git', ['worktree', 'prune'], repoRoot, deps.signal);
    await run('git', ['worktree', 'add', '--detach', root, sha], repoRoot, deps.signal);
    deps.say(`baseline ${ref}: pnpm install and build`);
    await run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], root, deps.signal);
    await run(process.execPath, [join(root, 'scripts', 'build.ts')], root, deps.signal);
    await mkdir(join(root, '.data'), { recursive: true });
    await run('touch', [done], root, deps.signal);
  }
  const workerEnv = readFileSync(join(root, 'apps', 'worker', 'src', 'env.ts'), 'utf8');
  return {
    ref,
    sha,
    root,
    entries: {
      app: join(root, 'apps', 'app', 'src', 'main.ts'),
      worker: join(root, 'apps', 'worker', 'src', 'main.ts'),
      // A worker from before WORKER_TOKEN_FILE reads its token from the environment only.
      workerTokenInEnv: !workerEnv.includes('WORKER_TOKEN_FILE'),
    },
  };
}

/** HEAD's commit and whether the tree differs from it (the report says what B was). */
export async function treeIdentity(repoRoot: string, signal: AbortSignal): Promise<TreeIdentity> {
  const sha = (await run('git', ['rev-parse', 'HEAD'], repoRoot, signal)).trim();
  const status = await run('git', ['status', '--porcelain', '--untracked-files=no'], repoRoot, signal);
  return { sha, dirty: status.trim() !== '' };
}

function run(command: string, args: string[], cwd: string, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, signal, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(`${command} ${args.join(' ')} failed (exit ${code}) in ${cwd}:\n${output.slice(-3000)}`),
        );
    });
  });
}
