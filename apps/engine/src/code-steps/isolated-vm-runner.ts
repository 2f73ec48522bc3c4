import { FlowboxError } from '@flowbox/protocol';
import type { Isolate } from 'isolated-vm';
import { CODE_STEP_LINE_OFFSET, CODE_STEP_URL, type CodeRunner, type CodeRunRequest } from './code-runner.ts';
import { type CodeStepStop, toCodeStepError } from './code-step-error.ts';
import { isolateClosureBody } from './code-step-script.ts';

type IsolatedVm = typeof import('isolated-vm');

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
}

// isolated-vm reports its own `timeout` with this exact message and no other marker.
const IVM_TIMEOUT_MESSAGE = 'Script execution timed out.';
// V8's RangeError when isolated-vm's allocator refuses an ArrayBuffer past the memory limit.
const ALLOCATION_REFUSED_MESSAGE = 'Array buffer allocation failed';

/**
 * SANDBOX_CODE_ONLY: code steps in isolated-vm, with no require, process or network of their
 * own; console, timers and fetch reach the step's host through references.
 *
 * One isolate is reused with a fresh context per run (about 0.7 ms a run against 4 ms for a
 * fresh isolate, README). It is replaced after a timeout (its thread may still be busy), after
 * the memory limit (isolated-vm disposed it) and when a run asks for another limit. Runs are
 * serialised, so one run's timeout never disposes the isolate under another. The native addon
 * loads on the first run or `warmUp`, not with the engine.
 */
export function createIsolatedVmRunner(options: IsolatedVmRunnerOptions): IsolatedVmRunner {
  let library: Promise<IsolatedVm> | undefined;
  let current: { isolate: Isolate; memoryMb: number } | undefined;
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
    const context = await isolate.createContext();
    const ivm = await load();
    const { host } = request;
    const references = [
      new ivm.Reference((level: unknown, message: unknown) => host.log(level, message)),
      new ivm.Reference((ms: unknown) => host.sleep(ms)),
      new ivm.Reference((json: unknown) => host.fetch(json)),
    ];
    let stop: CodeStepStop | undefined;
    let guard: NodeJS.Timeout | undefined;
    try {
      const execution = context.evalClosure(
        isolateClosureBody(request.source),
        [JSON.stringify(request.inputs ?? null), ...references],
        {
          // Bounds synchronous execution (including microtasks)...
          timeout: request.timeoutMs,
          filename: CODE_STEP_URL,
          lineOffset: CODE_STEP_LINE_OFFSET,
          result: { promise: true, copy: true },
        },
      );
      // ...and this bounds promises that never settle, which `timeout` does not see.
      const wallClock = new Promise<never>((_resolve, reject) => {
        guard = setTimeout(() => {
          stop = { kind: 'timeout' };
          reject(new Error('wall-clock timeout'));
        }, request.timeoutMs);
      });
      // The losing promise rejects once the isolate is disposed; nobody awaits it then.
      execution.catch(() => {});
      const json: unknown = await Promise.race([execution, wallClock]);
      return typeof json === 'string' ? JSON.parse(json) : undefined;
    } catch (error) {
      if (stop === undefined && error instanceof Error && error.message === IVM_TIMEOUT_MESSAGE) {
        stop = { kind: 'timeout' };
      }
      // Only the memory limit disposes an isolate before we do: it is the reliable signal. An
      // ArrayBuffer past the limit is refused instead (the isolate is fine): the same limit.
      const limited = isolate.isDisposed || isAllocationRefused(error);
      stop ??= limited ? { kind: 'memory-limit', cause: error } : { kind: 'failed', error };
      throw toCodeStepError(stop, request);
    } finally {
      clearTimeout(guard);
      for (const reference of references) reference.release();
      if (stop?.kind === 'timeout' || isolate.isDisposed) {
        discard();
      } else {
        // The run is over and nothing of it runs on: its context can go, the isolate stays.
        context.release();
      }
    }
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

function isAllocationRefused(error: unknown): boolean {
  return error instanceof RangeError && error.message === ALLOCATION_REFUSED_MESSAGE;
}
