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
  /** Isolates created so far: one, plus one after each timeout or memory-limit stop and per step run at once. */
  isolatesCreated: number;
  runs: number;
  /** The live isolate's heap, when there is one. */
  heap: { usedBytes: number; totalBytes: number; externalBytes: number } | null;
}

export interface IsolatedVmRunner extends CodeRunner {
  endRun(run: object): void;
  stats(): Promise<IsolatedVmRunnerStats>;
  /** The native addon, loaded once (also for runs in their own isolate, RUN_ISOLATION=isolate). */
  library(): Promise<IsolatedVm>;
}

/** Code steps running at once (a loop's iterations) each get an isolate, up to this many; more wait. */
export const MAX_CONCURRENT_ISOLATES = 16;

/** An isolate of the runner, with the next run's context made ahead in it. */
interface Slot {
  isolate: Isolate;
  memoryMb: number;
  ahead: Promise<Context> | undefined;
}

/**
 * SANDBOX_CODE_ONLY: code steps in isolated-vm, with no require, process or network of their
 * own; console, timers and fetch reach the step's host through references.
 *
 * One isolate is reused with a fresh context per run (about 0.7 ms a run against 4 ms for a
 * fresh isolate, README). It is replaced after a timeout (its thread may still be busy), after
 * the memory limit (isolated-vm disposed it) and when a run asks for another limit. An isolate
 * runs one step at a time, so one run's timeout never disposes the isolate under another: steps
 * that run at once (a loop's concurrent iterations) each take an isolate of their own, up to
 * MAX_CONCURRENT_ISOLATES; once none runs, one isolate stays. The native addon loads on the first
 * run or `warmUp`, not with the engine.
 *
 * A new context is most of a run's cost here (about 0.37 ms of CPU: V8 deserializes the built-in
 * context; scripts/measure-code-runners.ts), so the next run's is made as soon as a run ends, on
 * the isolate's thread while the engine answers and uploads its log. It is as fresh as one made
 * on demand: nothing runs in it before the run it goes to, and it goes with its isolate.
 */
export function createIsolatedVmRunner(options: IsolatedVmRunnerOptions): IsolatedVmRunner {
  let library: Promise<IsolatedVm> | undefined;
  let idle: Slot[] = [];
  const busy = new Set<Slot>();
  /** Isolates being made, counted against MAX_CONCURRENT_ISOLATES. */
  let making = 0;
  const waiting: (() => void)[] = [];
  /** The isolate the last run ended in, while it lives (stats). */
  let last: Slot | undefined;
  let isolatesCreated = 0;
  let runs = 0;
  /** Each run's own context (CodeRunRequest.run), in the isolate its first step ran in. */
  const runContexts = new Map<object, { slot: Slot; context: Context }>();

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

  const dispose = (slot: Slot): void => {
    if (!slot.isolate.isDisposed) slot.isolate.dispose();
    if (last === slot) last = undefined;
    for (const [run, held] of runContexts) if (held.slot === slot) runContexts.delete(run);
  };

  /** The run's own context, when the isolate it is in is idle: it takes that isolate. */
  const takeRunContext = (
    run: object | undefined,
    memoryMb: number,
  ): { slot: Slot; context: Context } | undefined => {
    const held = run === undefined ? undefined : runContexts.get(run);
    if (held === undefined || held.slot.memoryMb !== memoryMb || !idle.includes(held.slot)) return undefined;
    idle = idle.filter((slot) => slot !== held.slot);
    busy.add(held.slot);
    return held;
  };

  const acquire = async (memoryMb: number): Promise<Slot> => {
    for (;;) {
      const fit = idle.find((slot) => slot.memoryMb === memoryMb && !slot.isolate.isDisposed);
      if (fit !== undefined) {
        idle = idle.filter((slot) => slot !== fit);
        busy.add(fit);
        return fit;
      }
      // Idle isolates of another limit (or disposed) serve no one.
      for (const slot of idle) dispose(slot);
      idle = [];
      if (busy.size + making < MAX_CONCURRENT_ISOLATES) {
        making += 1;
        try {
          const ivm = await load();
          const isolate = new ivm.Isolate({
            memoryLimit: memoryMb,
            onCatastrophicError: options.onCatastrophicError,
          });
          isolatesCreated += 1;
          const slot: Slot = { isolate, memoryMb, ahead: undefined };
          busy.add(slot);
          return slot;
        } finally {
          making -= 1;
        }
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
  };

  /** Back to the idle isolates, with the next context made ahead; or disposed (`keep` false). */
  const release = (slot: Slot, keep: boolean): void => {
    busy.delete(slot);
    if (keep && !slot.isolate.isDisposed) {
      // One context made ahead per isolate, for the next run's first step.
      if (slot.ahead === undefined) {
        const context = slot.isolate.createContext();
        // Rejects only when its isolate is disposed first, and then nobody takes it.
        context.catch(() => {});
        slot.ahead = context;
      }
      idle.push(slot);
      last = slot;
    } else {
      dispose(slot);
    }
    // With nothing running, one isolate stays: a burst's others go.
    if (busy.size === 0) {
      while (idle.length > 1) {
        const extra = idle.shift();
        if (extra !== undefined) dispose(extra);
      }
    }
    waiting.shift()?.();
  };

  const runOnce = async (request: CodeRunRequest): Promise<unknown> => {
    runs += 1;
    const { run } = request;
    const held = takeRunContext(run, request.memoryMb);
    const slot = held?.slot ?? (await acquire(request.memoryMb));
    let keep = false;
    try {
      let context = held?.context;
      if (context === undefined) {
        const made = slot.ahead;
        slot.ahead = undefined;
        context = await (made ?? slot.isolate.createContext());
      }
      // The run's first step makes the run's context; a step that runs while it is busy gets one of its own.
      const own = held !== undefined || (run !== undefined && !runContexts.has(run));
      if (own && run !== undefined) runContexts.set(run, { slot, context });
      const ivm = await load();
      const outcome = await evalCodeStep(ivm, slot.isolate, context, request);
      if ('output' in outcome) {
        // The step is over and nothing of it runs on: its context can go (the run's stays), the isolate stays.
        if (!own) context.release();
        keep = true;
        return outcome.output;
      }
      if (!outcome.mustDispose) {
        if (!own) context.release();
        keep = true;
      }
      throw outcome.error;
    } finally {
      release(slot, keep);
    }
  };

  const closeAll = (): void => {
    for (const slot of [...idle, ...busy]) dispose(slot);
    idle = [];
    busy.clear();
  };

  return {
    run: runOnce,
    async warmUp() {
      await load();
    },
    library: load,
    endRun(run) {
      const held = runContexts.get(run);
      runContexts.delete(run);
      if (held !== undefined && !held.slot.isolate.isDisposed) held.context.release();
    },
    async stats() {
      const isolate = last?.isolate;
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
    close: closeAll,
  };
}
