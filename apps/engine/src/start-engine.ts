import type { EngineRuntimeOptions } from './engine-runtime.ts';
import { type IpcPort, processIpcPort } from './host/ipc-port.ts';
import type { EngineRuntimeModule } from './load-runtime.ts';

/**
 * What both entries (main.ts, snapshot-main.ts) give the runtime: the relay socket (set only
 * for a SANDBOXED engine) and how to load isolated-vm.
 */
export type EngineLoadOptions = Pick<EngineRuntimeOptions, 'loadIsolatedVm' | 'relaySocket'>;

/**
 * The engine process's start, for both entries. `ready` goes out only once the whole runtime
 * (schemas, HTTP, code runners, isolated-vm) is loaded, so the worker's `bootMs` is the whole
 * cost of a fresh engine.
 */
export function startEngine(
  loadRuntime: () => Promise<EngineRuntimeModule> | EngineRuntimeModule,
  loadOptions: EngineLoadOptions,
): void {
  const port = processIpcPort(process);

  // The IPC channel closes when the worker dies: an engine without a worker must not linger,
  // not even to finish its job (the worker's side reports it; the app's sweeper ends the run).
  port.onDisconnect(() => process.exit(0));

  Promise.resolve()
    .then(loadRuntime)
    .then(async (loaded) => {
      const runtime = loaded.startEngineRuntime({
        port,
        onCatastrophicError: (msg) => abort(port, msg),
        ...loadOptions,
      });
      await runtime.warm;
      port.send({ version: 1, type: 'ready', pid: process.pid }, () => {});
    })
    .catch((error: unknown) => {
      fatal(port, 'the engine runtime failed to start', error, () => process.exit(1));
    });
}

/** isolated-vm lost control of an isolate: this process can no longer be trusted. */
function abort(port: IpcPort, message: string): void {
  fatal(port, 'isolated-vm catastrophic error', message, () => process.abort());
}

/** Tells the worker why the engine is about to end, then ends it (`then`). */
function fatal(port: IpcPort, msg: string, error: unknown, then: () => void): void {
  const data = error instanceof Error ? { message: error.message, stack: error.stack } : { message: error };
  if (!port.connected) {
    then();
    return;
  }
  port.send({ version: 1, type: 'log', level: 'fatal', msg, data }, then);
}
