import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, type LogLine, type ManagedProcess, spawnManaged } from '@flowbox/local-services';
import { BENCHMARK_FLOW_ID } from '@flowbox/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { childrenOf, isRunning, killQuietly } from './faults/processes.ts';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const DEV_MAIN = join(REPO, 'apps/dev/src/main.ts');
/** Bound on a whole stack stopping: the launcher's own grace period is 20 s. */
const STOPPED_WITHIN_MS = 45_000;

/** What a stack runs, by command line. */
const ROLES = {
  app: /apps\/app\/src\/main\.ts/,
  worker: /apps\/worker\/src\/main\.ts/,
  redis: /redis-server/,
  engine: /worker-cache\/worker-0\/engine\//,
} as const;

interface DevStack {
  /** What the test started: the launcher, a wrapper around it, or pnpm. */
  started: ManagedProcess;
  /** Every line the launcher wrote (its own and those of its processes, which it relays). */
  lines: LogLine[];
  launcherPid: number;
  dataDir: string;
  url: string;
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Node running the launcher (not a shell whose command line mentions it). */
function isLauncher(pid: number): boolean {
  const [, script] = commandOf(pid).split(' ');
  return script?.endsWith('apps/dev/src/main.ts') ?? false;
}

function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of childrenOf(next)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

/** The launcher's processes by role; the test fails unless each role runs. */
function stackProcesses(launcherPid: number): Record<keyof typeof ROLES, number[]> {
  const pids = descendantsOf(launcherPid);
  const byRole = Object.fromEntries(
    Object.entries(ROLES).map(([role, pattern]) => [
      role,
      pids.filter((pid) => pattern.test(commandOf(pid))),
    ]),
  ) as Record<keyof typeof ROLES, number[]>;
  for (const [role, rolePids] of Object.entries(byRole)) expect(rolePids, role).not.toHaveLength(0);
  return byRole;
}

async function waitUntilGone(pids: number[]): Promise<void> {
  await vi.waitFor(() => expect(pids.filter(isRunning)).toEqual([]), {
    timeout: STOPPED_WITHIN_MS,
    interval: 200,
  });
}

const flowboxEntries = async (dir: string) =>
  (await readdir(dir)).filter((name) => name.startsWith('flowbox-'));

async function syncWebhook(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${url}/v1/webhooks/${BENCHMARK_FLOW_ID}/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  return { status: response.status, body: await response.text() };
}

describe('stopping pnpm dev', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  });

  const tempDir = async (prefix: string) => {
    const dir = await mkdtemp(join(tmpdir(), prefix));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    return dir;
  };

  /**
   * `how`: `launcher` runs the launcher in a process group of its own (as a terminal would);
   * `wrapped` under a shell that can be SIGKILLed; `pnpm` as `pnpm run dev` does.
   * `tmp` is the stack's TMPDIR, so what it leaves there can be counted.
   */
  async function startDev(
    how: 'launcher' | 'wrapped' | 'pnpm',
    tmp: string,
    env: Record<string, string> = {},
  ): Promise<DevStack> {
    const dataDir = await tempDir('flowbox-dev-');
    const port = await freePort();
    const fullEnv = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TMPDIR: tmp,
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...env,
    };
    const [command, args] =
      how === 'launcher'
        ? [process.execPath, [DEV_MAIN]]
        : how === 'wrapped'
          ? ['sh', ['-c', '"$0" "$1" & wait', process.execPath, DEV_MAIN]]
          : ['pnpm', ['run', '--silent', 'dev']];
    const lines: LogLine[] = [];
    const started = spawnManaged({
      name: `pnpm dev (${how})`,
      command,
      args,
      cwd: REPO,
      env: fullEnv,
      ownProcessGroup: how === 'launcher',
      onLine: (line) => lines.push(line),
    });
    // A launcher that failed to stop may have been reparented: it is killed by its PID.
    let launcher: number | undefined;
    cleanups.push(async () => {
      for (const pid of [
        started.pid,
        ...(launcher === undefined ? [] : [launcher, ...descendantsOf(launcher)]),
      ]) {
        killQuietly(pid);
      }
      await started.stop('SIGKILL', 1_000);
    });
    await started.waitForLine(/flowbox is up/, 120_000);
    launcher = how === 'launcher' ? started.pid : descendantsOf(started.pid).find((pid) => isLauncher(pid));
    const launcherPid = launcher;
    if (launcherPid === undefined) throw new Error('no launcher under the process started');
    const url = `http://127.0.0.1:${port}`;
    // A run, so the worker has an engine (and in SANDBOXED mode a sandbox directory) to stop.
    expect(await syncWebhook(url)).toEqual({ status: 200, body: '{"result":6}' });
    return { started, lines, launcherPid, dataDir, url };
  }

  it('keeps two stacks on one host apart (each caches in its DATA_DIR), and SIGTERM or SIGHUP stops each with everything it started', async () => {
    const tmp = await tempDir('flowbox-tmp-');
    const [a, b] = await Promise.all([startDev('launcher', tmp), startDev('launcher', tmp)]);
    for (const stack of [a, b]) {
      expect(existsSync(join(stack.dataDir, 'worker-cache', 'worker-0', 'engine'))).toBe(true);
      // Kept beside the embedded data, as the API key is: connections made now open next time.
      expect(readFileSync(join(stack.dataDir, 'connections-key'), 'utf8')).toMatch(/^[A-Za-z0-9+/]{43}=\n$/);
    }
    // Not the worker's default `<tmpdir>/flowbox-worker-worker-0`, which both would share.
    expect(await flowboxEntries(tmp)).toEqual([]);

    const pids = [a, b].flatMap((stack) => [
      stack.launcherPid,
      ...Object.values(stackProcesses(stack.launcherPid)).flat(),
    ]);
    process.kill(a.launcherPid, 'SIGTERM');
    process.kill(b.launcherPid, 'SIGHUP');
    expect(await a.started.exited).toMatchObject({ code: 0, signal: null });
    expect(await b.started.exited).toMatchObject({ code: 0, signal: null });
    await waitUntilGone(pids);
    expect(await flowboxEntries(tmp)).toEqual([]);
  }, 240_000);

  it('stops everything when the launcher’s parent is SIGKILLed', async () => {
    const tmp = await tempDir('flowbox-tmp-');
    const stack = await startDev('wrapped', tmp);
    const pids = [stack.launcherPid, ...Object.values(stackProcesses(stack.launcherPid)).flat()];

    process.kill(stack.started.pid, 'SIGKILL');
    await stack.started.waitForLine(/the process that started flowbox dev is gone/, STOPPED_WITHIN_MS);
    await waitUntilGone(pids);
    // It shut down cleanly, as on SIGTERM.
    await stack.started.waitForLine(
      (line) => line.json?.name === 'dev' && line.json.msg === 'shut down cleanly',
      1_000,
    );
    expect(await flowboxEntries(tmp)).toEqual([]);
  }, 180_000);

  it('drains on a terminal’s Ctrl-C (SIGINT to the process group, then again from pnpm) in SANDBOXED mode, leaving no sandbox directory', async () => {
    const tmp = await tempDir('flowbox-tmp-');
    const stack = await startDev('launcher', tmp, { EXECUTION_MODE: 'SANDBOXED' });
    const pids = [stack.launcherPid, ...Object.values(stackProcesses(stack.launcherPid)).flat()];
    // Made while it ran, so the last check can fail.
    expect(await flowboxEntries(tmp)).toEqual([expect.stringMatching(/^flowbox-sandbox-/)]);

    process.kill(-stack.launcherPid, 'SIGINT');
    process.kill(stack.launcherPid, 'SIGINT');
    expect(await stack.started.exited).toMatchObject({ code: 0, signal: null });
    await waitUntilGone(pids);
    // Each process was asked once, by the launcher, and drained: none was cut short.
    expect(stack.lines.filter((line) => /asked again to stop|took too long/.test(line.raw))).toEqual([]);
    const cleanExits = stack.lines
      .filter((line) => line.json?.msg === 'shut down cleanly')
      .map((line) => line.json?.name);
    expect(cleanExits.sort()).toEqual(['app', 'dev', 'worker']);
    expect(await flowboxEntries(tmp)).toEqual([]);
  }, 180_000);

  it('stops everything when pnpm’s own PID gets SIGTERM (`pnpm dev` execs the launcher)', async () => {
    const tmp = await tempDir('flowbox-tmp-');
    const stack = await startDev('pnpm', tmp);
    const pids = [stack.launcherPid, ...Object.values(stackProcesses(stack.launcherPid)).flat()];

    // No shell between pnpm and the launcher, so pnpm's SIGTERM reaches the launcher itself.
    expect(childrenOf(stack.started.pid)).toEqual([stack.launcherPid]);

    process.kill(stack.started.pid, 'SIGTERM');
    await waitUntilGone(pids);
    const shuttingDown = stack.lines.find(
      (line) => line.json?.name === 'dev' && line.json.msg === 'shutting down',
    );
    expect(shuttingDown?.json?.signal).toBe('SIGTERM');
    expect(await flowboxEntries(tmp)).toEqual([]);
  }, 240_000);
});
