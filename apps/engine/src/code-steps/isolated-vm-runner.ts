import { FlowboxError } from '@flowbox/protocol';
import type { Context, Isolate } from 'isolated-vm';
import type { CodeRunner, CodeRunRequest } from './code-runner.ts';
import { evalCodeStep } from './eval-code-step.ts';

export type IsolatedVm = typeof import('isolated-vm');

export interface IsolatedVmRunnerOptions {
  /** v8 lost control of an isolate: the process must log and abort (isolated-vm's advice). */
  onCatastrophicError(message: string): void;
  /** How the native addon is loaded; `import('isolated-vm')` unless a test stands in. */
  loadIsolatedVm?: () => Promise<{ default: IsolatedVm }>;
}

export interface IsolatedVmRunnerStats {
  /** Isolates created so far: one, plus one after each timeout or memory-limit stop. */
  isolatesCreated: number;
  runs: number;
  /** The live isolate's heap, when there is one. */
  heap: { usedBytes: number; totalBytes: number; externalBytes: number } | null;
}

export interface IsolatedVmRunner extends CodeRunner {
  stats(): Promise<IsolatedVmRunnerStats>;
  /** The native addon, loaded once (also for runs in their own isolate, RUN_ISOLATION=isolate). */
  library(): Promise<IsolatedVm>;
}

/**
 * SANDBOX_CODE_ONLY: code steps in isolated-vm, with no require, process or network of their
 * own; console, timers and fetch reach the step's host through references.
 *
 * One isolate is reused with a fresh context per run (about 0.7 ms a run against 4 ms for a
 * fresh isolate, README). It is replaced after a timeout (its thread may still be busy), after
 * the memory limit (isolated-vm disposed it) and when a run asks for another limit. Runs are
 * serialised, so one run's timeout never disposes the isolate under another. The native addon
 * loads on the first run or `warmUp`, not with the engine.
 *
 * A new context is most of a run's cost here (about 0.37 ms of CPU: V8 deserializes the built-in
 * context; scripts/measure-code-runners.ts), so the next run's is made as soon as a run ends, on
 * the isolate's thread while the engine answers and uploads its log. It is as fresh as one made
 * on demand: nothing runs in it before the run it goes to, and it goes with its isolate.
 */
export function createIsolatedVmRunner(options: IsolatedVmRunnerOptions): IsolatedVmRunner {
  let library: Promise<IsolatedVm> | undefined;
  let current: { isolate: Isolate; memoryMb: number } | undefined;
  /** The next run's context, made ahead in the current isolate. */
  let ahead: { isolate: Isolate; context: Promise<Context> } | undefined;
  let turn: Promise<unknown> = Promise.resolve();
  let isolatesCreated = 0;
  let runs = 0;

  const load = (): Promise<IsolatedVm> => {
    library ??= (options.loadIsolatedVm ?? (() => import('isolated-vm')))().then(
      (loaded) => loaded.default,
      (error: unknown) => {
        library = undefined;
        // The engine's installation is broken, not the user's flow.
        const reason = error instanceof Error ? error.message : String(error);
        throw new FlowboxError('INTERNAL', `isolated-vm could not be loaded: ${reason}`, { cause: error });
      },
    );
    return library;
  };

  const discard = (): void => {
    if (current !== undefined && !current.isolate.isDisposed) current.isolate.dispose();
    current = undefined;
    ahead = undefined;
  };

  const makeAhead = (isolate: Isolate): void => {
    if (isolate.isDisposed) return;
    const context = isolate.createContext();
    // Rejects only when its isolate is disposed first, and then nobody takes it.
    context.catch(() => {});
    ahead = { isolate, context };
  };

  const contextIn = (isolate: Isolate): Promise<Context> => {
    const made = ahead?.isolate === isolate ? ahead.context : undefined;
    ahead = undefined;
    return made ?? isolate.createContext();
  };

  const isolateFor = async (memoryMb: number): Promise<Isolate> => {
    if (current !== undefined && !current.isolate.isDisposed && current.memoryMb === memoryMb) {
      return current.isolate;
    }
    discard();
    const ivm = await load();
    const isolate = new ivm.Isolate({
      memoryLimit: memoryMb,
      onCatastrophicError: options.onCatastrophicError,
    });
    isolatesCreated += 1;
    current = { isolate, memoryMb };
    return isolate;
  };

  const runOnce = async (request: CodeRunRequest): Promise<unknown> => {
    runs += 1;
    const isolate = await isolateFor(request.memoryMb);
    const context = await contextIn(isolate);
    const ivm = await load();
    const outcome = await evalCodeStep(ivm, isolate, context, request);
    if ('output' in outcome) {
      // The run is over and nothing of it runs on: its context can go, the isolate stays.
      context.release();
      makeAhead(isolate);
      return outcome.output;
    }
    if (outcome.mustDispose) discard();
    else {
      context.release();
      makeAhead(isolate);
    }
    throw outcome.error;
  };

  return {
    run(request) {
      const result = turn.then(() => runOnce(request));
      turn = result.catch(() => {});
      return result;
    },
    async warmUp() {
      await load();
    },
    library: load,
    async stats() {
      const isolate = current?.isolate;
      if (isolate === undefined || isolate.isDisposed) return { isolatesCreated, runs, heap: null };
      const heap = await isolate.getHeapStatistics();
      return {
        isolatesCreated,
        runs,
        heap: {
          usedBytes: heap.used_heap_size,
          totalBytes: heap.total_heap_size,
          externalBytes: heap.externally_allocated_size,
        },
      };
    },
    close: discard,
  };
}
