import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Logger } from '@flowbox/node-kit';
import type { EngineSandbox } from './engine-sandbox.ts';

/** What starts an engine's process: its code, its Node flags and environment, what it runs under. */
export interface EngineLaunch {
  entry: string;
  /**
   * A startup snapshot of the engine (engine-snapshot.ts): the process starts from it
   * (`node --snapshot-blob <blob>`) instead of loading `entry`.
   */
  snapshotBlob?: string | undefined;
  /** Node flags for the engine; the worker's own flags are not inherited. */
  execArgv?: string[];
  /** The engine's environment; empty by default so it never sees the worker's token. */
  env?: Record<string, string>;
  /** Starts the engine inside a sandbox instead of forking it (EXECUTION_MODE=SANDBOXED). */
  sandbox?: EngineSandbox;
  /**
   * A command the engine's node runs under, with the IPC channel and environment passed through
   * (bubblewrap.ts's pidNamespaceLauncher): `pid` is then the launcher's, the engine's ancestor.
   */
  launcher?: { command: string; args: string[] };
}

/** Starts the engine's process with its IPC channel: what fork() does, with the launcher (if any) in front. */
export function spawnEngine(launch: EngineLaunch): ChildProcess {
  const { sandbox } = launch;
  const { snapshotBlob } = launch;
  const nodeArgs = [
    ...(launch.execArgv ?? []),
    // With a snapshot, Node's arguments take the place of a script to load.
    ...(snapshotBlob !== undefined ? ['--snapshot-blob', snapshotBlob] : [launch.entry]),
  ];
  const { launcher } = launch;
  const [command, args] =
    sandbox !== undefined
      ? [sandbox.command, sandbox.args]
      : launcher !== undefined
        ? [launcher.command, [...launcher.args, process.execPath, ...nodeArgs]]
        : [process.execPath, nodeArgs];
  return spawn(command, args, {
    env: launch.env ?? {},
    stdio: ['ignore', 'pipe', 'pipe', 'ipc', ...(sandbox?.extraFds ?? [])],
    serialization: 'json',
  });
}

/** The engine logs over IPC; anything on stdout/stderr is unexpected (a crash trace) and kept. */
export function forwardOutput(child: ChildProcess, logger: Logger): void {
  for (const [stream, source] of [
    ['stdout', child.stdout],
    ['stderr', child.stderr],
  ] as const) {
    if (source === null) continue;
    createInterface({ input: source }).on('line', (line) => logger.warn({ stream }, line));
  }
}
