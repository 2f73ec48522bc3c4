import { closeSync, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EgressFetch, FetchBudget } from '@flowbox/egress';
import type { Logger } from '@flowbox/node-kit';
import { type EgressPolicy, FlowboxError, RELAY_SOCKET_IN_SANDBOX } from '@flowbox/protocol';
import { noNewProcessesFilter } from '@flowbox/sandbox';
import { ENGINE_NODE_FLAGS } from '../engines/engine-node-flags.ts';
import type { EngineSandbox } from '../engines/engine-sandbox.ts';
import { type SandboxLimits, sandboxCommand } from './bubblewrap.ts';
import { startEngineRelay } from './engine-relay.ts';
import { createJobView } from './job-view.ts';

export interface SandboxedEngineOptions {
  /** The installed engine (`<cache>/engine/<sha256>/engine.mjs`). */
  entry: string;
  /** Its startup snapshot in the same folder, to start from instead of `entry`. */
  snapshotBlob?: string | undefined;
  isolatedVmDir: string;
  /** The cache's flow bundles and pieces directories: the engine sees its job's entries of them only. */
  artifactDirs: string[];
  /** Where on the cache's filesystem the engine's view of them is made (job-view.ts). */
  viewsDir: string;
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
  const view = await createJobView({ artifactDirs: options.artifactDirs, viewsDir: options.viewsDir });
  // Short, so the socket path stays under the 108 bytes a Unix socket address may hold.
  const workDir = await mkdtemp(path.join(tmpdir(), 'flowbox-sandbox-'));
  const relay = await startEngineRelay({
    socketDir: path.join(workDir, 'relay'),
    egressFetch: options.egressFetch,
    logger: options.logger,
  }).catch(async (error: unknown) => {
    await view.dispose();
    await rm(workDir, { recursive: true, force: true });
    throw error;
  });
  const filterPath = path.join(workDir, 'seccomp.bpf');
  await writeFile(filterPath, filter);
  const filterFd = openSync(filterPath, 'r');
  const { command, args } = sandboxCommand(
    {
      engineDir: path.dirname(options.entry),
      isolatedVmDir: options.isolatedVmDir,
      readOnlyBinds: view.binds,
      relayDir: relay.socketDir,
      seccompFd: SECCOMP_FD,
      limits: options.limits,
    },
    // The blob is in the engine's folder, which the sandbox binds read-only like the entry.
    [
      ...ENGINE_NODE_FLAGS,
      ...(options.snapshotBlob === undefined ? [options.entry] : ['--snapshot-blob', options.snapshotBlob]),
    ],
  );

  let disposed: Promise<void> | undefined;
  const sandbox: EngineSandbox = {
    command,
    args,
    extraFds: [filterFd],
    async admit(job) {
      // Exactly this job's entries: the last job's that it does not share go now.
      await view.show([job.bundlePath, ...job.pieces.map((piece) => piece.dir)]);
      return relay.admit(job);
    },
    async admitPoll(job) {
      await view.show([job.bundlePath, ...job.pieces.map((piece) => piece.dir)]);
      relay.admitPoll(job);
      return job;
    },
    async expose(pieces) {
      await view.show(pieces.map((piece) => piece.dir));
    },
    endUpload(runId) {
      relay.endUpload(runId);
    },
    async release() {
      relay.release();
      // The view keeps the job's entries until the next job is admitted: an idle engine holds
      // them in memory anyway, and unlinking and relinking a flow's files around every job of
      // it would cost a sandboxed worker much of its CPU per warm job (architecture.md, Sandbox modes).
    },
    dispose() {
      disposed ??= (async () => {
        closeSync(filterFd);
        await relay.close();
        await view.dispose();
        await rm(workDir, { recursive: true, force: true });
      })();
      return disposed;
    },
  };
  // Nothing else: no NODE_COMPILE_CACHE (the cache is read-only inside), no worker variable.
  const env = { FLOWBOX_RELAY_SOCKET: RELAY_SOCKET_IN_SANDBOX, HOME: '/tmp' };
  return { sandbox, env };
}
