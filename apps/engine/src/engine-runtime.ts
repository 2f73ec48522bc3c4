import type { PreloadRequest } from '@flowbox/protocol';
import { config } from 'zod';
import type { CodeRunners } from './code-steps/code-runner.ts';
import { createIsolatedVmRunner, type IsolatedVmRunnerOptions } from './code-steps/isolated-vm-runner.ts';
import { createNodeVmRunner } from './code-steps/node-vm-runner.ts';
import { createEngine } from './engine.ts';
import { createFlowBundleLoader } from './flows/flow-bundle-loader.ts';
import { createFlowExecutor, type FlowExecutor } from './flows/flow-executor.ts';
import { createHttpClient } from './host/http-client.ts';
import { createIpcAppClient } from './host/ipc-app-client.ts';
import { createIpcChannel } from './host/ipc-channel.ts';
import type { IpcPort } from './host/ipc-port.ts';
import { createRelayEgressFetch } from './host/relay-fetch.ts';
import { createRunIsolation, type RunIsolation } from './isolate/run-isolation.ts';
import { createPieceLoader } from './pieces/piece-loader.ts';
import { createPollExecutor } from './pieces/poll-executor.ts';

// zod compiles a parser (new Function) for each object schema on its first parse. A warm engine
// pays that once per schema, but a fresh one pays it on its first run for every piece's input
// schema, which the startup snapshot cannot hold (pieces load after it). Its plain parser costs
// microseconds more per parse of these small objects. zod reads the setting when a schema is
// built: the protocol's schemas, built before this line, keep their compiled parsers, which the
// snapshot's warm-up compiles (snapshot-warm-up.ts); the pieces' schemas, built by their modules
// with this zod (shared-piece-modules.ts) when they load, get the plain one.
config({ jitless: true });

export interface EngineRuntimeOptions {
  port: IpcPort;
  onCatastrophicError(message: string): void;
  /**
   * In a sandbox (EXECUTION_MODE=SANDBOXED) the worker's relay socket: the log upload and code
   * steps' fetch go through it, since the engine has no network (callbacks go over IPC).
   */
  relaySocket?: string | undefined;
  /**
   * How isolated-vm loads. A snapshotted engine (snapshot-main.ts) has no dynamic `import()`
   * for its own code, so it requires it from its install folder instead.
   */
  loadIsolatedVm?: IsolatedVmRunnerOptions['loadIsolatedVm'];
}

export interface EngineRuntime {
  /** Resolves once HTTP and isolated-vm are loaded: the engine can run a job without loading anything. */
  readonly warm: Promise<void>;
  /** Waits for the job in progress, then lets go of sockets and isolates (in-process use). */
  close(): Promise<void>;
}

/**
 * Everything the engine runs jobs with, built once per process (main.ts). It starts taking
 * frames from the port, then loads node:http and isolated-vm so the first job does not pay
 * for them; main.ts says `ready` when that is done.
 */
export function startEngineRuntime(options: EngineRuntimeOptions): EngineRuntime {
  const channel = createIpcChannel(options.port);
  const http = createHttpClient({ socketPath: options.relaySocket });
  const isolated = createIsolatedVmRunner({
    onCatastrophicError: options.onCatastrophicError,
    ...(options.loadIsolatedVm === undefined ? {} : { loadIsolatedVm: options.loadIsolatedVm }),
  });
  const codeRunners: CodeRunners = {
    SANDBOX_CODE_ONLY: isolated,
    SANDBOXED: isolated,
    UNSANDBOXED: createNodeVmRunner(),
  };
  const { relaySocket } = options;
  const runIsolation = createRunIsolation({
    library: isolated.library,
    log: channel.log,
    onCatastrophicError: options.onCatastrophicError,
  });
  const pieces = createPieceLoader();
  const executor = createFlowExecutor({
    bundles: createFlowBundleLoader(),
    pieces,
    codeRunners,
    http,
    log: channel.log,
    runIsolation,
    // Callbacks ride the worker's IPC channel and socket, sandboxed or not: no request of their own.
    appClient: (options) => createIpcAppClient(channel, options),
    ...(relaySocket === undefined
      ? {}
      : { egressFetch: (_policy, budget) => createRelayEgressFetch(relaySocket, budget) }),
  });
  const polls = createPollExecutor({
    bundles: createFlowBundleLoader(),
    pieces,
    log: channel.log,
    ...(relaySocket === undefined
      ? {}
      : { egressFetch: (_policy, budget) => createRelayEgressFetch(relaySocket, budget) }),
  });
  const engine = createEngine({
    channel,
    polls,
    executor: { ...executor, preload: (request) => preload(executor, runIsolation, request) },
    afterJob: () => {
      flushCompileCache();
      // RUN_ISOLATION=isolate: the next run's context is made now, off its path (a no-op otherwise).
      runIsolation.prepareNext();
    },
  });
  engine.start();
  // What the first job would load otherwise; a job that arrives meanwhile waits on the same loads.
  const warm = Promise.all([http.warmUp(), codeRunners.SANDBOX_CODE_ONLY.warmUp()])
    .then(flushCompileCache)
    .catch((error: unknown) => {
      // The first job that needs it will try again and fail with the reason.
      const message = error instanceof Error ? error.message : String(error);
      channel.log('warn', 'engine warm-up failed', { message });
    });
  return {
    warm,
    async close() {
      await engine.close();
      http.close();
      runIsolation.close();
      for (const runner of new Set(Object.values(codeRunners))) runner.close();
    },
  };
}

/**
 * With NODE_COMPILE_CACHE set (README.md), Node writes the code it compiled at exit, which an
 * engine the worker kills never reaches: write it now, so the next engine boots from it.
 * Only new entries are written; without the variable this does nothing.
 */
function flushCompileCache(): void {
  process.getBuiltinModule('node:module').flushCompileCache();
}

/**
 * A preload before the engine's first job. For a job in its own context (`isolate`) the pieces
 * are not imported into the engine's realm, where its runs never use them: the engine builds their
 * isolate snapshot and the first run's context instead, which is most of a first isolate run's
 * CPU (benchmark/results/2026-11-29-vm-isolate-memory-10k.md). The executor's preload comes last,
 * for its primes and its `preloaded pieces` line, which then says that all of it is done.
 */
async function preload(
  executor: FlowExecutor,
  runIsolation: RunIsolation,
  request: PreloadRequest,
): Promise<void> {
  if (request.isolation !== 'isolate') return executor.preload(request);
  const { pieces, codeStepMemoryMb, isolateMaxRuns } = request;
  if (codeStepMemoryMb !== undefined) {
    await runIsolation
      .prepare({
        pieces,
        memoryMb: codeStepMemoryMb,
        ...(isolateMaxRuns === undefined ? {} : { maxRuns: isolateMaxRuns }),
      })
      .catch(() => {
        // Not the job's failure: it builds them again, and fails with the reason if it stands.
      });
  }
  await executor.preload({ ...request, pieces: [] });
}
