import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EgressFetch, FetchBudget } from '@flowbox/egress';
import type { Logger } from '@flowbox/node-kit';
import { type EgressPolicy, FlowboxError, RELAY_SOCKET_IN_SANDBOX } from '@flowbox/protocol';
import type { EngineSandbox } from '../engines/engine-process.ts';
import { type SandboxLimits, sandboxCommand } from './bubblewrap.ts';
import { startEngineRelay } from './engine-relay.ts';
import { noNewProcessesFilter } from './seccomp-filter.ts';

export interface SandboxedEngineOptions {
  /** The installed engine (`<cache>/engine/<sha256>/engine.mjs`). */
  entry: string;
  /** Its startup snapshot in the same folder, to start from instead of `entry`. */
  snapshotBlob?: string | undefined;
  isolatedVmDir: string;
  /** The cache's flow bundles and pieces directories, bound read-only. */
  readOnlyDirs: string[];
  egressFetch(policy: EgressPolicy, budget: FetchBudget): EgressFetch;
  limits: SandboxLimits;
  logger: Logger;
}

/** The fd the seccomp program has in the child: after stdin, stdout, stderr and IPC. */
const SECCOMP_FD = 4;

/**
 * One sandboxed engine's launch: its relay on a socket in a fresh directory, its seccomp
 * program, and the prlimit + bwrap command (bubblewrap.ts). Returns the sandbox for
 * startEngineProcess and the engine's whole environment.
 */
export async function prepareSandboxedEngine(
  options: SandboxedEngineOptions,
): Promise<{ sandbox: EngineSandbox; env: Record<string, string> }> {
  const filter = noNewProcessesFilter();
  if (filter === null) {
    throw new FlowboxError('INTERNAL', `EXECUTION_MODE=SANDBOXED has no seccomp filter for ${process.arch}`);
  }
  for (const dir of options.readOnlyDirs) await mkdir(dir, { recursive: true });
  // Short, so the socket path stays under the 108 bytes a Unix socket address may hold.
  const workDir = await mkdtemp(path.join(tmpdir(), 'flowbox-sandbox-'));
  const relay = await startEngineRelay({
    socketDir: path.join(workDir, 'relay'),
    egressFetch: options.egressFetch,
    logger: options.logger,
  });
  const filterPath = path.join(workDir, 'seccomp.bpf');
  await writeFile(filterPath, filter);
  const filterFd = openSync(filterPath, 'r');
  const { command, args } = sandboxCommand(
    {
      engineDir: path.dirname(options.entry),
      isolatedVmDir: options.isolatedVmDir,
      readOnlyDirs: options.readOnlyDirs,
      relayDir: relay.socketDir,
      seccompFd: SECCOMP_FD,
      limits: options.limits,
    },
    // The blob is in the engine's folder, which the sandbox binds read-only like the entry.
    options.snapshotBlob === undefined ? [options.entry] : ['--snapshot-blob', options.snapshotBlob],
  );

  let disposed: Promise<void> | undefined;
  const sandbox: EngineSandbox = {
    command,
    args,
    extraFds: [filterFd],
    admit: (job) => relay.admit(job),
    release: () => relay.release(),
    dispose() {
      disposed ??= (async () => {
        closeSync(filterFd);
        await relay.close();
        await rm(workDir, { recursive: true, force: true });
      })();
      return disposed;
    },
  };
  // Nothing else: no NODE_COMPILE_CACHE (the cache is read-only inside), no worker variable.
  const env = { FLOWBOX_RELAY_SOCKET: RELAY_SOCKET_IN_SANDBOX, HOME: '/tmp' };
  return { sandbox, env };
}
